"""The CPU demo's orchestration: pretraining once (resumable), the report
and the seed tables."""
from .pretraining import (INITIAL_WEIGHTS, initial_weights,
                          prepare_pretrain_cfg, pretrain_once, set_max_epochs)
from .report import (describe_pretraining, draw_pipeline_sample,
                     write_demo_report)
from .seed_table import format_seed_table, mean_spread

__all__ = [
    'INITIAL_WEIGHTS', 'initial_weights', 'prepare_pretrain_cfg',
    'pretrain_once', 'set_max_epochs', 'describe_pretraining',
    'draw_pipeline_sample', 'write_demo_report', 'format_seed_table',
    'mean_spread'
]
