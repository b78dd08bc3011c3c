"""The claim study (projects/claim/tools/claim_study.py): SiameseIM against MAE
and
MoCo-v3 in miniature, its phases (plan.py), runner and loop (runner.py,
driver.py), its tests (statistics.py, verdicts.py), results file (data.py),
charts and published tables (tables.py)."""
from projects.claim.charts import (SERIES, plot_claim, plot_claim_table,
                                   plot_learning_curve)
from projects.claim.driver import (StudyInputs, current_records,
                                   describe_study, phase_runs, run_phases,
                                   study_inputs)
from projects.claim.plan import (PHASES, check_study, choices, equal_time,
                                 record_key)
from projects.claim.runner import Scorer, run_config, token_map_dim
from projects.claim.statistics import holm, one_sample_p, paired_p, welch_p
from projects.claim.study import PAIRS, PAPER_TABLE1, figures_dir, results_file
from projects.claim.verdicts import (curve_comparisons, summary,
                                     table_comparisons)
from projects.common.evaluation import build_dense_probe

__all__ = [
    'PAIRS', 'PAPER_TABLE1', 'PHASES', 'SERIES', 'Scorer', 'StudyInputs',
    'build_dense_probe', 'check_study', 'choices', 'current_records',
    'curve_comparisons', 'describe_study', 'equal_time', 'figures_dir', 'holm',
    'one_sample_p', 'paired_p', 'phase_runs', 'plot_claim', 'plot_claim_table',
    'plot_learning_curve', 'record_key', 'results_file', 'run_config',
    'run_phases', 'study_inputs', 'summary', 'table_comparisons',
    'token_map_dim', 'welch_p'
]
