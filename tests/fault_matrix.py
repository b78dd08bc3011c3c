"""The vocabulary of the fault matrix (docs/reliability.md).

A test that proves one cell carries
``@pytest.mark.fault_matrix(ENTRY, FAULT, 'what happens')``: ENTRY and FAULT
are keys below (checked at collection by ``conftest.py``), the text is
the behaviour the test shows (a correct result, or the early error naming
the file or option). The reliability page's table is rendered from these
markers, so every cell names the test that proves it.
"""

ENTRIES = {
    'train':
    'training (`mim train mmpretrain`, mmpretrain `tools/train.py`)',
    'resume':
    '`--resume` / `resume=True`',
    'launch':
    'multi-process launch (`--launcher pytorch`, slurm)',
    'demo':
    '`make demo` (`projects/demo/tools/demo.py`)',
    'converters':
    'checkpoint converters (`tools/model_converters/`)',
    'evaluation': ('evaluation API (`mmsiameseim.evaluation`, the studies\' '
                   '`projects.common.evaluation`)'),
    'knn_hook':
    '`OnlineKNNHook`',
    'datasets':
    'datasets and image loading',
    'benchmarks':
    'speed benchmarks, kNN and few-shot scripts',
    'preflight':
    'preflight (`tools/analysis_tools/preflight.py`)',
    'detection':
    '`mim train|test mmdet` (configs/benchmarks/mmdet)',
    'segmentation':
    '`mim train|test mmseg` (configs/benchmarks/mmseg)',
    'folder_tools':
    'folder tools (`tools/evaluation/`)',
}

FAULTS = {
    'missing': 'missing file',
    'empty': 'empty file',
    'truncated': 'truncated file',
    'text': 'text or wrong-format file',
    'nonfinite': 'NaN / inf weights',
    'architecture': 'wrong architecture, width or depth',
    'samples': 'zero samples or fewer than needed',
    'image_mode': 'image mode or bit depth',
    'signal': 'a signal or kill (preemption, a dead rank)',
    'mid_write': 'a kill mid-write',
    'changed_run': "changing a finished run's settings",
    'rerun': "a run started again into a work dir holding a run's "
    'checkpoints',
    'schedule': 'an unusual schedule length',
}
