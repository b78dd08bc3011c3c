"""Ratios and the tables of the benchmark tools' runs
(``tools/benchmark_{pretrain,unigrad,attention}.py``)."""
from typing import List, Optional

from projects.speed.workers import GEMM


def ratios(rows: List[dict]) -> dict:
    """Per precision: each model's GFLOP/s over the GEMM peak, its step
    time and FLOPs over MAE's; images/s gains over fp32, of the
    low-resolution target over the default, and of ours over the
    authors'."""
    by = {(r['model'], r['precision']): r for r in rows}
    out = dict(
        fraction_of_gemm_peak={},
        step_over_mae={},
        flops_over_mae={},
        speedup_over_fp32={},
        lowres_target_speedup={},
        speedup_over_official={})

    def gain(row, base):
        return row['images_per_s'] / base['images_per_s']

    for (model, precision), r in by.items():
        if model == GEMM:
            continue
        if (GEMM, precision) in by:
            out['fraction_of_gemm_peak'].setdefault(model, {})[precision] = \
                r['gflop_per_s'] / by[GEMM, precision]['gflop_per_s']
        if model != 'mae' and ('mae', precision) in by:
            mae = by['mae', precision]
            out['step_over_mae'].setdefault(model, {})[precision] = \
                r['step_s_median'] / mae['step_s_median']
            out['flops_over_mae'].setdefault(model, {})[precision] = \
                r['gflop_per_step'] / mae['gflop_per_step']
        if precision != 'fp32' and (model, 'fp32') in by:
            out['speedup_over_fp32'][f'{model} {precision}'] = gain(
                r, by[model, 'fp32'])
        if model == 'siameseim-lowres' and ('siameseim', precision) in by:
            out['lowres_target_speedup'][precision] = gain(
                r, by['siameseim', precision])
        if model == 'siameseim' and ('official', precision) in by:
            out['speedup_over_official'][precision] = gain(
                r, by['official', precision])
    return out


def format_table(rows: List[dict], summary: dict) -> str:
    """Markdown table of the rows, then the ratios, one per line."""
    head = ('model', 'arch', 'batch', 'img', 'prec', 'device', 'compiled',
            'first step s', 'step s (med)', 'min-max', 'img/s', 'GFLOP/step',
            'GFLOP/s', '% of GEMM peak',
            f'peak mem MB ({rows[0]["peak_mem_kind"]})')
    lines = [' | '.join(head), '|'.join('---' for _ in head)]
    peak = summary['fraction_of_gemm_peak']
    for r in rows:
        frac = peak.get(r['model'], {}).get(r['precision'])
        gemm = r['model'] == GEMM
        lines.append(' | '.join([
            r['model'], '-' if gemm else r['arch'],
            '-' if gemm else str(r['batch']),
            '-' if gemm else str(r['img_size']), r['precision'], r['device'],
            'yes' if r['compiled'] else 'no', f'{r["first_step_s"]:.2f}',
            f'{r["step_s_median"]:.3f}',
            f'{r["step_s_min"]:.3f}-{r["step_s_max"]:.3f}',
            '-' if gemm else f'{r["images_per_s"]:.2f}',
            f'{r["gflop_per_step"]:.4g}', f'{r["gflop_per_s"]:.1f}',
            '100 (the peak)' if gemm else
            ('-' if frac is None else f'{100 * frac:.1f}'),
            f'{r["peak_mem_mb"]:.0f}'
        ]))
    alive = max(r['workers_alive'] for r in rows)
    lines.append(f'workers alive at once: at most {alive} of {len(rows)}' + (
        ' (all; timed in turns)' if alive == len(rows) else
        ' (groups timed one after another, each in turns: --max-workers or '
        'the free memory)'))
    for model, by_precision in summary['step_over_mae'].items():
        for precision, ratio in by_precision.items():
            flops = summary['flops_over_mae'][model][precision]
            lines.append(f'{model} / mae ({precision}): step time '
                         f'{ratio:.2f}x, FLOPs {flops:.2f}x')
    for key, value in summary['speedup_over_fp32'].items():
        lines.append(f'{key} / fp32 images/s: {value:.2f}x')
    for precision, value in summary['lowres_target_speedup'].items():
        lines.append(f'low-resolution target / default images/s '
                     f'({precision}): {value:.2f}x')
    for precision, value in summary['speedup_over_official'].items():
        lines.append(f'siameseim / official (the authors\') images/s '
                     f'({precision}): {value:.2f}x (step time ratio '
                     f'{1 / value:.2f})')
    return '\n'.join(lines)


def format_unigrad_table(rows: List[dict], step: Optional[float],
                         batch: int) -> str:
    """Markdown table of a ``projects/speed/tools/unigrad.py`` run (and the
    step time when given)."""
    head = ('variant', 'B x N x C', 'dtype', 'device', 'fwd+bwd ms (med)',
            'min-max', f'extra mem MB ({rows[0]["extra_mem_kind"]})',
            '% of step')
    lines = [' | '.join(head), '|'.join('---' for _ in head)]
    for r in rows:
        pct = f'{r["pct_of_step"]:.2f}' if step else '-'
        lines.append(
            f'{r["variant"]} | {r["batch"]} x {r["tokens"]} x '
            f'{r["channels"]} | {r["dtype"]} | {r["device"]} | '
            f'{r["fwd_bwd_ms_median"]:.1f} | {r["fwd_bwd_ms_min"]:.1f}-'
            f'{r["fwd_bwd_ms_max"]:.1f} | {r["extra_mem_mb"]:.1f} | {pct}')
    if step:
        lines.append(f'step: {step:.3f} s (batch {batch})')
    return '\n'.join(lines)


def format_attention_table(rows: List[dict]) -> str:
    """Markdown table of a ``projects/speed/tools/attention.py`` run: per
    attention call, the median ms of each variant and the fastest."""
    variants = list(rows[0]['ms'])
    head = ['call', 'B x heads x tokens x dim', 'per step', 'grad'
            ] + [f'{v} ms' for v in variants] + ['fastest']
    lines = [' | '.join(head), '|'.join('---' for _ in head)]
    for r in rows:
        shape = ' x '.join(map(str, r['shape'])) if r['shape'] else ''
        calls = str(r['calls']) if r['calls'] else ''
        grad = '' if r['backward'] is None else (
            'fwd+bwd' if r['backward'] else 'fwd')
        lines.append(' | '.join([r['call'], shape, calls, grad] +
                                [f'{r["ms"][v]:.1f}'
                                 for v in variants] + [r['fastest']]))
    return '\n'.join(lines)
