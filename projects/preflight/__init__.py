"""Preflight of the shipped configs at their real size (full model, input
size, optimizer, layer decay and schedules) for a few iterations on this
machine, on miniature data in each config's format or on the real data:

parameters, step time, peak memory, FLOPs, gradients, optimizer groups, finite
loss, a checkpoint round trip and a projection of the whole schedule. Command
line: ``tools/analysis_tools/preflight.py``; docs/preflight.md.
"""
from projects.preflight.configs import (config_groups, excluded_reason,
                                        is_quick, shipped_configs)
from projects.preflight.report import (format_report, preflight_table,
                                       save_records)
from projects.preflight.run import PreflightError, preflight

__all__ = [
    'config_groups', 'excluded_reason', 'is_quick', 'shipped_configs',
    'format_report', 'preflight_table', 'save_records', 'PreflightError',
    'preflight'
]
