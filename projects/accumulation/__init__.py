"""Gradient accumulation: how far exact and plain accumulation are from one
whole batch's gradient (projects/accumulation/tools/accumulation.py), and the
study of
training with them (projects/accumulation/configs/accumulation_study.py); their
published
tables (tables.py)."""
from projects.accumulation.gradients import DEMO_CONFIG, measure, table

__all__ = ['DEMO_CONFIG', 'measure', 'table']
