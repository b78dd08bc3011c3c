"""The paper's Table 3 in miniature (projects/table3/tools/ablation_table3.py):

the rows' switches, the runs, the report and the published table (tables.py).
"""
from projects.table3.study import (COLUMNS, COMPARISONS, LN_NORM_CFG, PREFIX,
                                   SWITCHES, apply_table3_row, check_row,
                                   paper_results, plot_table3, read_row,
                                   row_configs, write_table3_report)

__all__ = [
    'COLUMNS', 'COMPARISONS', 'LN_NORM_CFG', 'PREFIX', 'SWITCHES',
    'apply_table3_row', 'check_row', 'paper_results', 'plot_table3',
    'read_row', 'row_configs', 'write_table3_report'
]
