"""The claim study (tools/studies/claim_study.py): SiameseIM against MAE and
MoCo-v3 in miniature, its charts and its published tables (tables.py)."""
from .charts import SERIES, plot_claim, plot_claim_table, plot_learning_curve
from .study import (PAIRS, PAPER_TABLE1, check_features, check_study,
                    claim_reading, claim_results_data, dense_scores, describe,
                    figures_dir, orderings, pending, planned_runs, record_key,
                    results_file, reusable_records, run_config, run_key,
                    run_once, selected_runs, study_settings, summary,
                    welch_threshold)

__all__ = [
    'PAIRS', 'PAPER_TABLE1', 'check_features', 'check_study', 'claim_reading',
    'claim_results_data', 'dense_scores', 'describe', 'figures_dir',
    'orderings', 'pending', 'planned_runs', 'record_key', 'results_file',
    'reusable_records', 'run_config', 'run_key', 'run_once', 'selected_runs',
    'study_settings', 'summary', 'welch_threshold', 'SERIES', 'plot_claim',
    'plot_claim_table', 'plot_learning_curve'
]
