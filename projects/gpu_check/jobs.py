"""The GPU check: every GPU figure the README lacks, in one command and inside
a device-time budget (``projects/gpu_check/tools/gpu_check.py``, ``make
gpu-check``).

A plan of jobs, each a command line with its own time box, run in order of
importance until the budget is spent (the rest is recorded as skipped):

1. ``projects/speed/tools/pretrain.py`` SiameseIM and MAE, fp16 and bf16,
   eager, with the device's measured GEMM peak (its ``gemm`` rows);
2. the preflight of the main configs at their documented per-GPU batch
   (``train_dataloader.batch_size``);
3. the two-process DDP equivalence (NCCL) when two or more GPUs are seen;
4. the same benchmark compiled (``--compile``);
5. the preflight of the remaining configs (ablations, mix catalogue,
   robustness, Fashion-MNIST);
6. the data pipeline's images/s per worker process
   (``projects/speed/tools/pipeline.py``), beside the GPU's step rate;
7. the accelerator option's augmentation on the GPU
   (``DeviceAugmentDataPreprocessor``,
   ``python -m projects.speed.device_augment``), whose CPU
   share is the pipeline benchmark's ``deviceaug-cpu`` row.

Results: ``projects/gpu_check/results/gpu_check.json`` (every job's command,
status, seconds and JSON output) and its markdown table.
"""
import json
import os.path as osp
import subprocess
import sys
import time
from typing import List, Optional

from projects.common.results import REPO, results_table
from projects.preflight.configs import shipped_configs

BUDGET_S = 30 * 60
# the configs preflighted first (step 2); the rest come in step 5
MAIN_CONFIGS = (
    'configs/pretrain/siameseim_vit-base-p16_16xb256-amp-coslr-1600e_in1k.py',
    'configs/pretrain/siameseim_vit-large-p16_16xb256-amp-coslr-1600e_in1k.py',
    'configs/pretrain/'
    'siameseim-target112_vit-base-p16_16xb256-amp-coslr-1600e_in1k.py',
    'configs/benchmarks/mmpretrain/'
    'vit-base-p16_siameseim-pre_8xb128-coslr-100e_in1k.py',
    'configs/benchmarks/mmpretrain/'
    'vit-base-p16_siameseim-pre_8xb2048-linear-coslr-90e_in1k.py',
    'configs/benchmarks/mmdet/'
    'mask-rcnn_vitdet-b-siameseim-pre_16xb4-lsj-100e_coco.py',
    'configs/benchmarks/mmdet/'
    'mask-rcnn_vitdet-b-siameseim-pre_16xb4-lsj-100e_lvis-v1.py',
    'configs/benchmarks/mmseg/'
    'upernet_vit-base-p16-siameseim-pre_8xb2-amp-160k_ade20k-512x512.py',
)
DDP_CONFIG = MAIN_CONFIGS[0]
BENCH_BATCH = 64
PREFLIGHT_ITERS = 3


def per_device_batch(config: str) -> int:
    """``train_dataloader.batch_size`` of a config (its per-GPU batch)."""
    from mmengine.config import Config
    cfg = Config.fromfile(osp.join(REPO, config), import_custom_modules=False)
    return int(cfg.train_dataloader.batch_size)


def plan(num_gpus: int,
         python: str = sys.executable,
         cache_dir: str = '/tmp/gpu_check_data',
         configs: Optional[List[str]] = None) -> List[dict]:
    """The jobs, most important first: ``name``, ``argv``, ``timeout_s``.

    Args:
        num_gpus (int): GPUs seen (the DDP job needs two).
        python (str): Interpreter of the commands.
        cache_dir (str): Miniature data shared by the preflights.
        configs (list[str], optional): Configs to preflight (default: every
            shipped one, :func:`shipped_configs`).
    """
    configs = shipped_configs() if configs is None else configs
    tool = osp.join(REPO, 'tools')
    bench = [
        python,
        osp.join(REPO, 'projects', 'speed', 'tools',
                 'pretrain.py'), '--device', 'cuda', '--precision',
        'fp16,bf16', '--models', 'siameseim,mae', '--batch',
        str(BENCH_BATCH), '--steps', '10', '--warmup', '3', '--json'
    ]

    def preflight(config):
        return dict(
            name=f'preflight {osp.basename(config)[:-3]}',
            kind='preflight',
            config=config,
            timeout_s=100,
            argv=[
                python,
                osp.join(tool, 'analysis_tools', 'preflight.py'),
                osp.join(REPO, config), '--iters',
                str(PREFLIGHT_ITERS), '--batch-size',
                str(per_device_batch(config)), '--num-workers', '8',
                '--cache-dir', cache_dir, '--json'
            ])

    jobs = [
        dict(
            name='benchmark eager fp16,bf16',
            kind='benchmark',
            argv=bench,
            timeout_s=240)
    ]
    main = [c for c in MAIN_CONFIGS if c in configs]
    jobs += [preflight(c) for c in main]
    if num_gpus >= 2:
        jobs.append(
            dict(
                name='DDP two ranks == one process (NCCL)',
                kind='ddp',
                timeout_s=240,
                argv=[
                    python, '-m', 'projects.preflight.ddp_check',
                    osp.join(REPO, DDP_CONFIG), '--batch', '8'
                ]))
    jobs.append(
        dict(
            name='benchmark compiled fp16,bf16',
            kind='benchmark',
            argv=bench + ['--compile'],
            timeout_s=420))
    jobs += [preflight(c) for c in configs if c not in main]
    jobs.append(
        dict(
            name='data pipeline per worker',
            kind='pipeline',
            timeout_s=180,
            argv=[
                python,
                osp.join(REPO, 'projects', 'speed', 'tools', 'pipeline.py'),
                '--json'
            ]))
    jobs.append(
        dict(
            name='device augmentation (DeviceAugmentDataPreprocessor)',
            kind='device_augment',
            timeout_s=120,
            argv=[
                python, '-m', 'projects.speed.device_augment', '--device',
                'cuda', '--batch', '256', '--json'
            ]))
    return jobs


FSDP_REASON = (
    "no sharded config to check: mmengine 0.10.7's FSDPStrategy and "
    'DeepSpeedStrategy run under FlexibleRunner, the configs under '
    'FaultTolerantRunner (a Runner: atomic checkpoints, preemption, resume '
    'checks); a SiameseIM-aware sharding strategy comes first '
    '(docs/pretraining/memory.md, "Not here")')


def not_planned(num_gpus: int) -> List[dict]:
    """What the plan leaves out, and why."""
    out = [
        dict(
            name='FSDP ViT-L two ranks == DDP',
            status='skipped',
            reason=FSDP_REASON)
    ]
    if num_gpus < 2:
        out.append(
            dict(
                name='DDP two ranks == one process (NCCL)',
                status='skipped',
                reason=f'{num_gpus} GPU seen, '
                'two needed'))
    return out


def last_json(text: str) -> Optional[dict]:
    """The JSON object on the last line of a command's output, if any."""
    lines = [line for line in text.strip().splitlines() if line.strip()]
    if not lines:
        return None
    try:
        out = json.loads(lines[-1])
    except json.JSONDecodeError:
        return None
    return out if isinstance(out, dict) else None


def run_plan(jobs: List[dict],
             budget_s: float = BUDGET_S,
             clock=time.monotonic) -> List[dict]:
    """Run the jobs in order, each inside its time box and the remaining
    budget; a job that cannot get its whole box is skipped (recorded)."""
    start, done = clock(), []
    for job in jobs:
        left = budget_s - (clock() - start)
        record = dict(
            name=job['name'], kind=job['kind'], command=' '.join(job['argv']))
        if 'config' in job:
            record['config'] = job['config']
        if left < job['timeout_s']:
            record.update(
                status='skipped',
                reason=f'{left:.0f} s of the '
                f'budget left, its time box is '
                f'{job["timeout_s"]} s')
            done.append(record)
            continue
        t0 = clock()
        try:
            out = subprocess.run(
                job['argv'],
                capture_output=True,
                text=True,
                timeout=job['timeout_s'],
                cwd=REPO)
            record.update(
                status='ok'
                if out.returncode == 0 else f'failed (exit {out.returncode})',
                output=last_json(out.stdout))
            if out.returncode:
                record['stderr_tail'] = out.stderr[-1500:]
        except subprocess.TimeoutExpired:
            record.update(status=f'timed out ({job["timeout_s"]} s)')
        record['seconds'] = clock() - t0
        done.append(record)
    return done


def keep_records(done: List[dict], earlier: dict) -> List[dict]:
    """``done`` with the records of an earlier results file (its ``data``
    and ``meta``) for the jobs not run now, each marked with the date and
    commit of the run that made it: a rerun of some jobs keeps the rest."""
    names = {r['name'] for r in done}
    meta = earlier.get('meta', {})
    kept = [
        dict(
            r,
            kept_from=f'{meta.get("date", "?")[:16]}, commit '
            f'{str(meta.get("commit", "?"))[:7]}')
        for r in earlier['data'].get('jobs', [])
        if r['name'] not in names and r.get('status') != 'skipped'
    ]
    return kept + done


def _cell(record: dict) -> str:
    out = record.get('output') or {}
    kind = record.get('kind')  # a job left out of the plan has none
    if kind == 'preflight' and out:
        from projects.preflight.run import CUDA_PEAK
        mem = out.get('peak_memory_mb')
        step = out.get('step_s')
        ips = out.get('images_per_s')
        if out.get('memory_kind') != CUDA_PEAK:
            # read once at the end: mmengine's log processor had reset the
            # counter at its last log line, so it missed the steps
            peak = 'peak not read (the logger reset the counter)'
        else:
            peak = 'peak ' + ('-' if mem is None else f'{mem / 1024:.1f} GiB')
        fits = out.get('max_batch_per_device')
        model = '' if not fits else '; memory model here: max batch ' + \
            '/'.join(str(v) for v in fits.values()) + ' at ' + \
            '/'.join(fits) + ' (' + '/'.join(
                str(v) for v in out.get('max_batch_per_device_checkpointed',
                                        {}).values()) + ' checkpointed)'
        return (f'batch {out.get("batch")}: step '
                f'{"-" if step is None else f"{step:.3f} s"}, '
                f'{"-" if ips is None else f"{ips:.0f} img/s"}, {peak}'
                f'{model}')
    if kind == 'benchmark' and out:
        rows = out.get('rows', [])
        return '; '.join(
            f'{r["model"]} {r["precision"]} {r["images_per_s"]:.0f} img/s' + (
                f' ({100 * out["fraction_of_gemm_peak"][r["model"]][r["precision"]]:.0f}% of GEMM peak)'  # noqa: E501
                if r['model'] in out.get('fraction_of_gemm_peak', {}) else '')
            for r in rows)
    if kind == 'ddp' and out:
        return (f'loss rel. err {out["loss_rel_err"]:.1e}, grad rel. err '
                f'{out["grad_rel_err"]:.1e}')
    if kind == 'device_augment' and out:
        return (f'{out["s_per_batch"] * 1e3:.1f} ms per batch of '
                f'{out["batch"]} pairs, {out["images_per_s"]:.0f} img/s')
    if out:
        return json.dumps(out)[:200]
    return record.get('reason', '')


@results_table('gpu_check')
def gpu_check_table(results: dict) -> str:
    """Markdown table of the results file ``gpu_check.json``."""
    data = results['data']
    rows = [
        f'Device: {data.get("device", "-")}; budget '
        f'{data.get("budget_s", 0) / 60:.0f} min, used '
        f'{data.get("used_s", 0) / 60:.1f} min.', '',
        '| job | status | s | result |', '|---|---|---|---|'
    ]
    for r in data.get('jobs', []):
        seconds = r.get('seconds')
        status = r['status'] + (f' (run of {r["kept_from"]})'
                                if r.get('kept_from') else '')
        rows.append(f'| {r["name"]} | {status} | '
                    f'{"-" if seconds is None else f"{seconds:.0f}"} | '
                    f'{_cell(r)} |')
    return '\n'.join(rows)
