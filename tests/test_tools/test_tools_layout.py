"""``tools/`` as OpenMMLab lays out its tools: train.py and test.py at the
root (mim runs them there), every other tool in its folder, each within 200
lines.

Nothing has been released: a moved tool keeps no alias at its old
path.
"""
import glob
import os.path as osp

import pytest

from tests.helpers import ROOT

TOOLS = osp.join(ROOT, 'tools')


def test_the_root_holds_train_test_their_launchers_and_the_set_up_only():
    root = {
        osp.basename(p)
        for p in glob.glob(osp.join(TOOLS, '*')) if osp.isfile(p)
    }
    assert root == {
        'train.py', 'test.py', 'dist_train.sh', 'dist_test.sh',
        'slurm_train.sh', 'slurm_test.sh', 'setup_env.sh'
    }
    folders = {
        osp.basename(p)
        for p in glob.glob(osp.join(TOOLS, '*'))
        if osp.isdir(p) and not p.endswith('__pycache__')
    }
    assert folders == {
        'analysis_tools', 'dataset_converters', 'docs', 'evaluation',
        'model_converters', 'visualization'
    }


def test_every_tool_is_within_200_lines():
    for path in glob.glob(osp.join(TOOLS, '**', '*.py'), recursive=True):
        with open(path) as f:
            assert len(f.read().splitlines()) <= 200, path


def test_the_evaluation_package_never_reaches_the_studies():
    """No alias of the studies' names: ``mmsiameseim.evaluation`` imports
    nothing of ``projects`` (the package's only import circle went
    with it)."""
    import mmsiameseim.evaluation as evaluation
    with pytest.raises(AttributeError):
        evaluation.FrozenBackboneProtocol
