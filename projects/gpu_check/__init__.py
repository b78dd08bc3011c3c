"""Every GPU figure in one command (projects/gpu_check/tools/gpu_check.py, make
gpu-check): the plan of jobs within the device-time budget, their run and
the published table."""
from projects.gpu_check.jobs import (BENCH_BATCH, BUDGET_S, DDP_CONFIG,
                                     FSDP_REASON, MAIN_CONFIGS,
                                     PREFLIGHT_ITERS, gpu_check_table,
                                     keep_records, last_json, not_planned,
                                     per_device_batch, plan, run_plan)

__all__ = [
    'BENCH_BATCH', 'BUDGET_S', 'DDP_CONFIG', 'FSDP_REASON', 'MAIN_CONFIGS',
    'PREFLIGHT_ITERS', 'gpu_check_table', 'keep_records', 'last_json',
    'not_planned', 'per_device_batch', 'plan', 'run_plan'
]
