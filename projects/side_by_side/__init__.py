"""Ours beside the authors' code (projects/side_by_side/tools/side_by_side.py):

the shared settings, the runs and the published table (tables.py).
"""
from projects.side_by_side.study import (TimedLoader, demo_overrides,
                                         format_table, ours_cfg, padded_images,
                                         settings, train_indices)

__all__ = [
    'TimedLoader', 'demo_overrides', 'format_table', 'ours_cfg',
    'padded_images', 'settings', 'train_indices'
]
