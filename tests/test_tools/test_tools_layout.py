"""``tools/`` as OpenMMLab lays out its tools: train.py and test.py at the
root (mim runs them there), every other tool in its folder, each within 200
lines; the user's tools that moved keep their old command line as a thin
alias that names the new path."""
import ast
import glob
import os
import os.path as osp
import subprocess
import sys
import warnings

import pytest

from tests.helpers import ROOT

TOOLS = osp.join(ROOT, 'tools')
# the old command line -> the tool it runs now
ALIASES = {
    'evaluate_folder.py': 'evaluation/evaluate_folder.py',
    'extract_features.py': 'evaluation/extract_features.py',
    'visualize_features.py': 'visualization/visualize_features.py',
    'preflight.py': 'analysis_tools/preflight.py',
    'benchmarks/knn_eval.py': 'evaluation/knn_eval.py',
    'benchmarks/fewshot_eval.py': 'evaluation/fewshot_eval.py',
}


def test_the_root_holds_train_test_and_the_aliases_only():
    root = {
        osp.basename(p)
        for p in glob.glob(osp.join(TOOLS, '*')) if osp.isfile(p)
    }
    assert root == {'train.py', 'test.py', 'setup_env.sh'
                    } | {a
                         for a in ALIASES if '/' not in a}
    folders = {
        osp.basename(p)
        for p in glob.glob(osp.join(TOOLS, '*'))
        if osp.isdir(p) and not p.endswith('__pycache__')
    }
    assert folders == {
        'analysis_tools', 'benchmarks', 'dataset_converters', 'docs',
        'evaluation', 'misc', 'model_converters', 'speed_benchmarks',
        'studies', 'visualization'
    }
    assert {
        osp.basename(p)
        for p in glob.glob(osp.join(TOOLS, 'benchmarks', '*.py'))
    } == {'knn_eval.py', 'fewshot_eval.py'}  # the aliases alone


def test_every_tool_is_within_200_lines():
    for path in glob.glob(osp.join(TOOLS, '**', '*.py'), recursive=True):
        with open(path) as f:
            assert len(f.read().splitlines()) <= 200, path


@pytest.mark.parametrize('old, new', sorted(ALIASES.items()))
def test_an_old_command_line_runs_the_moved_tool_with_a_note(old, new):
    with open(osp.join(TOOLS, old)) as f:
        tree = ast.parse(f.read())
    assert f'tools/{new}' in ast.get_docstring(tree)
    run = subprocess.run(
        [sys.executable, osp.join(TOOLS, old), '--help'],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=ROOT,
        env=dict(os.environ, PYTHONPATH=ROOT, OMP_NUM_THREADS='1'))
    assert run.returncode == 0, run.stderr[-2000:]
    assert f'tools/{old} is deprecated: run tools/{new}' in run.stderr
    assert f'usage: {osp.basename(new)}' in run.stdout


def test_the_studies_evaluation_names_resolve_with_a_warning():
    import mmsiameseim.evaluation as evaluation
    from mmsiameseim_lab.evaluation import FrozenBackboneProtocol
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter('always')
        assert evaluation.FrozenBackboneProtocol is FrozenBackboneProtocol
    assert any(
        'mmsiameseim_lab.evaluation.FrozenBackboneProtocol' in str(w.message)
        and w.category is DeprecationWarning for w in caught)
    with pytest.raises(AttributeError, match='no_such_name'):
        evaluation.no_such_name
