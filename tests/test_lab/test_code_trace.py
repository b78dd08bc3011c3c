"""The count of what one training step runs (tools/trace_step.py)."""
import os.path as osp

from mmsiameseim_lab.code_trace import count_lines, trace_snapshot
from tests.helpers import ROOT


def test_code_lines_leave_out_blanks_comments_and_docstrings(tmp_path):
    path = tmp_path / 'm.py'
    path.write_text('"""Module\ndocstring."""\n\n# a comment\n'
                    'def f(x):\n    """One line."""\n'
                    '    return (x +\n            1)  # trailing\n')
    assert count_lines(str(path)) == dict(lines=8, code_lines=3)


def test_a_step_of_the_own_images_config_runs_the_method_files():
    config = osp.join(
        ROOT, 'configs', 'pretrain',
        'siameseim_vit-small-p16_16xb256-amp-coslr-400e_folder.py')
    snap = trace_snapshot(config)
    paths = [f['path'] for f in snap['files']]
    for needed in ('mmsiameseim/models/algorithms/siameseim.py',
                   'mmsiameseim/models/backbones/siameseim_vit.py',
                   'mmsiameseim/models/necks/relpos_decoder_neck.py',
                   'mmsiameseim/models/heads/unigrad_head.py',
                   'mmsiameseim/models/losses/unigrad_loss.py',
                   'mmsiameseim/models/utils/geometry.py',
                   'mmsiameseim/datasets/transforms/two_view_crop.py',
                   'mmsiameseim/datasets/transforms/mask_generators.py'):
        assert needed in paths, paths
    assert all(p.startswith('mmsiameseim/') for p in paths)
    assert snap['total_files'] == len(paths)
    assert snap['total_code_lines'] == sum(f['code_lines']
                                           for f in snap['files'])
