"""The preflight report: a human-readable text, and the results table of
``projects/preflight/results/preflight.json``."""
from typing import Optional

from projects.common.results import (read_results, results_table, run_meta,
                                     write_results)

# Encoder sizes of the paper's backbones (ViT-B/16 86M, ViT-L/16 304M), to
# set a config's backbone beside.
PAPER_ENCODERS = {768: ('ViT-B/16', 86e6), 1024: ('ViT-L/16', 304e6)}


def _m(n: Optional[float]) -> str:
    return '-' if n is None else f'{n / 1e6:.1f}M'


def _duration(seconds: Optional[float]) -> str:
    if seconds is None:
        return '-'
    if seconds < 120:
        return f'{seconds:.1f} s'
    if seconds < 2 * 3600:
        return f'{seconds / 60:.1f} min'
    if seconds < 3 * 86400:
        return f'{seconds / 3600:.1f} h'
    return f'{seconds / 86400:.1f} days'


def paper_size(record: dict) -> str:
    """The paper's encoder size nearest the config's backbone, as text."""
    backbone = record.get('params', {}).get('backbone')
    if not backbone:
        return ''
    name, size = min(
        PAPER_ENCODERS.values(), key=lambda v: abs(v[1] - backbone))
    if abs(backbone - size) > 0.25 * size:  # another model (a tiny ViT)
        return ''
    return f' (the paper\'s {name} encoder: {size / 1e6:.0f}M)'


def format_report(record: dict) -> str:
    """The preflight of one config, for people."""
    lines = [f'preflight of {record["config"]} on {record["device"]}']
    for note in record.get('overrides', []):
        lines.append(f'  override: {note}')
    lines.append(f'  data: {record.get("data", "-")}')
    params = record.get('params', {})
    if params:
        lines.append(
            '  parameters: ' + ', '.join(f'{k} {_m(v)}'
                                         for k, v in params.items()) +
            f'; total {_m(record.get("params_total"))}, trainable '
            f'{_m(record.get("params_trainable"))}{paper_size(record)}')
    lines.append(f'  input size: {record.get("input_size")}, batch '
                 f'{record.get("batch")}')
    if record.get('step_s') is not None:
        steps = record.get('step_times_s')
        lines.append(f'  step time: {record["step_s"]:.3f} s '
                     f'({record["images_per_s"]:.2f} images/s)' +
                     (', steps ' + ', '.join(f'{t:.2f}'
                                             for t in steps) if steps else ''))
    for key in ('val_s', 'test_s'):
        if key in record:
            lines.append(f'  {key[:-2]} loop on its preflight subset: '
                         f'{record[key]:.2f} s')
    if record.get('peak_memory_mb') is not None:
        lines.append(f'  peak memory: {record["peak_memory_mb"]:.0f} MiB '
                     f'({record["memory_kind"]})')
    lines += _memory_model_lines(record.get('memory_model'))
    if record.get('flops_per_image'):
        lines.append(f'  FLOPs per image: '
                     f'{record["flops_per_image"] / 1e9:.1f} G '
                     f'({record["flops_counted"]})')
    if 'params_without_grad' in record:
        missing = record['params_without_grad']
        still = record.get('encoder_params_with_zero_grad', [])
        bad = record.get('params_with_nonfinite_grad', [])
        if not (missing or still or bad):
            lines.append('  gradients: every trainable parameter got a '
                         'finite one, non-zero for every encoder parameter')
        for problem, names in (('MISSING', missing),
                               ('identically zero (encoder)',
                                still), ('NOT FINITE', bad)):
            if names:
                lines.append(f'  gradients: {problem} for {len(names)}: '
                             f'{names[:10]}')
    groups = record.get('param_groups')
    if groups:
        detail = groups.get('lr_scale_by_depth') or groups.get('lr_scales')
        lines.append(f'  optimizer: {groups["constructor"]}, '
                     f'{groups["groups"]} groups, {groups["no_decay"]} '
                     f'tensors without weight decay, {groups["decayed"]} '
                     f'with; lr scales {detail}')
        if groups.get('decayed_embeddings'):
            lines.append('    weight decay on the embeddings '
                         f'{groups["decayed_embeddings"]} (as the '
                         'constructor\'s recipe does)')
        for problem in record.get('param_group_problems', [])[:10]:
            lines.append(f'    PROBLEM: {problem}')
    if record.get('losses'):
        lines.append('  losses (last step): ' +
                     ', '.join(f'{k} {v:.4g}'
                               for k, v in record['losses'].items()))
    if 'checkpoint_mb' in record:
        lines.append(
            f'  checkpoint: {record["checkpoint_mb"]:.0f} MiB, '
            'resumed ' +
            ('with every weight restored' if record['checkpoint_reloaded'] else
             'WITHOUT restoring every weight'))
    proj = record.get('projection')
    if proj:
        lines.append(
            f'  schedule: {proj["devices"]} devices x '
            f'{proj["global_batch"] // proj["devices"]} images, '
            f'{proj["total_iters"]} iterations; at '
            f'{proj["images_per_s_per_device"]:.3g} images/s per device '
            f'({record["projection_rate"]}): epoch '
            f'{_duration(proj.get("epoch_s"))}, total '
            f'{_duration(proj["total_s"])}')
    if record.get('note'):
        lines.append(f'  note: {record["note"]}')
    failures = record.get('failures', [])
    lines.append('  FAILED: ' +
                 '; '.join(failures) if failures else '  all checks passed')
    return '\n'.join(lines)


@results_table('preflight')
def preflight_table(results: dict) -> str:
    """Markdown table of the results file ``preflight.json``: one row per
    config (parameters, input, step time and peak memory on the machine
    named in each row)."""
    rows = [
        '| config | params (backbone) | input | batch | step (s) | peak '
        'memory (MiB) | FLOPs / image (G) | checks | measured on |',
        '|---|---|---|---|---|---|---|---|---|'
    ]
    for config, r in sorted(results['data'].items()):
        size = 'x'.join(str(s) for s in r.get('input_size') or []) or '-'
        step = r.get('step_s')
        flops = r.get('flops_per_image')
        mem = r.get('peak_memory_mb')
        rows.append(
            f'| `{config.split("/")[-1][:-3]}` | {_m(r.get("params_total"))}'
            f' ({_m(r.get("params", {}).get("backbone"))}) | {size} | '
            f'{r.get("batch")} | '
            f'{"-" if step is None else f"{step:.2f}"} | '
            f'{"-" if mem is None else f"{mem:.0f}"} | '
            f'{"-" if not flops else f"{flops / 1e9:.1f}"} | '
            f'{"pass" if not r.get("failures") else "FAIL"} | '
            f'{r.get("machine", "-")}, {r.get("date", "-")[:10]} |')
    return '\n'.join(rows)


@results_table('preflight:memory')
def preflight_memory_table(results: dict) -> str:
    """The memory model of each preflighted training config: the largest
    per-device batch projected for 24 / 40 / 80 GB, without and with
    activation checkpointing (``memory_model.py``)."""
    rows = [
        '| config | precision | static (GiB) | activations / image (MiB) | '
        'max batch 24 / 40 / 80 GB | with checkpointing | measured on |',
        '|---|---|---|---|---|---|---|'
    ]
    for config, r in sorted(results['data'].items()):
        model = r.get('memory_model')
        if not model or 'error' in model:
            continue

        def batches(key):
            b = model.get(key)
            return ' / '.join(str(v) for v in b.values()) if b else '-'

        rows.append(
            f'| `{config.split("/")[-1][:-3]}` | {model["precision"]} | '
            f'{sum(model["static_bytes"].values()) / 2**30:.2f} | '
            f'{model["activations"]["per_image"] / 2**20:.0f} | '
            f'{batches("max_batch_per_device")} | '
            f'{batches("max_batch_per_device_checkpointed")} | '
            f'{r.get("machine", "-")}, {r.get("date", "-")[:10]} |')
    return '\n'.join(rows)


# the paper's recipe: 16 GPUs x 256 images
RECIPE_CONFIGS = ('siameseim_vit-base-p16_16xb256-amp-coslr-400e_in1k',
                  'siameseim_vit-large-p16_16xb256-amp-coslr-1600e_in1k')


@results_table('preflight:recipes')
def preflight_recipes_table(results: dict) -> str:
    """Settings that reach the paper's 4096 images a step on 1-8 devices of
    24 / 40 / 80 GB, from the memory model of the ViT-B and ViT-L
    pretraining configs (:func:`memory_model.recipe`)."""
    from projects.preflight.memory_model import DEVICES_GB, recipe
    rows = [
        '| config | GPUs x GB | batch_size | micro_batches | '
        'accumulative_counts | projected peak (GB) | with checkpointing |',
        '|---|---|---|---|---|---|---|'
    ]
    for config, r in sorted(results['data'].items()):
        name = config.split('/')[-1][:-3]
        model = r.get('memory_model')
        if name not in RECIPE_CONFIGS or not model or 'error' in model:
            continue
        for gpus in (1, 2, 4, 8):
            for gb in DEVICES_GB:
                plain = recipe(model, gpus, gb)
                cp = recipe(model, gpus, gb, checkpointed=True)
                rows.append(f'| `{name}` | {gpus} x {gb} | ' +
                            (f'{plain["batch_size"]} | '
                             f'{plain["micro_batches"]} | '
                             f'{plain["accumulative_counts"]} | '
                             f'{plain["peak_gb"]:.1f} | '
                             if plain else '- | - | - | - | ') +
                            (f'{cp["batch_size"]} / {cp["micro_batches"]} / '
                             f'{cp["accumulative_counts"]}' if cp else '-') +
                            ' |')
    return '\n'.join(rows)


def save_records(records: dict,
                 command: Optional[str] = None,
                 results_dir: Optional[str] = None) -> str:
    """Add ``{config: record}`` to the results file ``preflight.json`` (records
    of other configs kept), each record stamped with its own run's date,
    machine, command and commit; returns the file's path."""
    try:
        data = read_results('preflight', results_dir)['data']
    except FileNotFoundError:
        data = {}
    meta = run_meta(command)
    for config, record in records.items():
        data[config] = dict(
            record, **{
                k: meta[k]
                for k in ('date', 'machine', 'command', 'commit', 'dirty')
            })
    return write_results('preflight', data, command, results_dir)


def _memory_model_lines(model) -> list:
    """The per-device batch projection of the memory model, if any."""
    if not model:
        return []
    if 'error' in model:
        return [f'  memory model: not measured ({model["error"]})']
    static = sum(model['static_bytes'].values()) / 2**30
    line = model['activations']
    out = [
        f'  memory model ({model["precision"]}): static {static:.2f} GiB + '
        f'{line["per_image"] / 2**20:.0f} MiB of activations per image '
        f'(check at batch {model["check"]["batch"]}: '
        f'{100 * model["check"]["error"]:.1f} % off)'
    ]
    for suffix, name in (('', 'largest batch per device'),
                         ('_checkpointed', 'with activation checkpointing')):
        batches = model.get(f'max_batch_per_device{suffix}')
        if batches:
            out.append(f'  {name} (projected): ' +
                       ', '.join(f'{gb} {n}' for gb, n in batches.items()))
    return out
