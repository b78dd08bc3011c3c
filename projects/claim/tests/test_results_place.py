"""Where the claim tool writes: a published results file in its project's
``results/`` and its charts in the ``figures/`` beside it (the accumulation
study's in projects/accumulation/), a smoke or held-out run in its work dir,
and a results name without a home is refused naming where to add it."""
import argparse
import os.path as osp

import pytest

from projects.claim.study import figures_dir, results_file
from tests.helpers import ROOT


def _args(**kwargs):
    args = dict(
        results_name=None,
        holdout=False,
        results_dir=None,
        smoke=False,
        work_dir='work_dirs/claim',
        figures_dir=None)
    return argparse.Namespace(**dict(args, **kwargs))


@pytest.mark.parametrize('name, project',
                         [(None, 'claim'),
                          ('accumulation_study', 'accumulation')])
def test_a_published_results_file_and_its_charts_go_to_its_project(
        name, project):
    args = _args(results_name=name)
    file, folder = results_file(args)
    home = osp.join(ROOT, 'projects', project)
    assert folder == osp.join(home, 'results')
    assert figures_dir(args, folder, file) == osp.join(home, 'figures')


def test_a_smoke_or_other_folder_keeps_its_files_in_the_work_dir(tmp_path):
    args = _args(smoke=True, work_dir=str(tmp_path))
    assert results_file(args) == ('claim', str(tmp_path))
    assert figures_dir(args, str(tmp_path),
                       'claim') == str(tmp_path / 'figures')
    args = _args(results_dir=str(tmp_path / 'r'), results_name='other')
    assert results_file(args) == ('other', str(tmp_path / 'r'))
    assert figures_dir(args, str(tmp_path / 'r'), 'other') == osp.join(
        osp.abspath('work_dirs/claim'), 'figures', 'other')


def test_a_results_name_without_a_home_is_refused():
    with pytest.raises(
            SystemExit, match='RESULTS_HOMES in projects/common/'
            'results.py'):
        results_file(_args(results_name='nonesuch'))
