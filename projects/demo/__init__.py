"""The CPU demo's orchestration: pretraining once (resumable), the report,
the seed tables, what the console shows and the wall time summed over
invocations."""
from projects.demo.console import quiet_console, run_header
from projects.demo.pretraining import (INITIAL_WEIGHTS, initial_weights,
                                       prepare_pretrain_cfg, pretrain_once,
                                       set_max_epochs)
from projects.demo.report import (demo_results_data, describe_pretraining,
                                  draw_pipeline_sample, write_demo_report)
from projects.demo.seed_table import format_seed_table, mean_spread
from projects.demo.wall_time import WallTimeLedger

__all__ = [
    'quiet_console', 'run_header', 'INITIAL_WEIGHTS', 'initial_weights',
    'prepare_pretrain_cfg', 'pretrain_once', 'demo_results_data',
    'set_max_epochs', 'describe_pretraining', 'draw_pipeline_sample',
    'write_demo_report', 'format_seed_table', 'mean_spread', 'WallTimeLedger'
]
