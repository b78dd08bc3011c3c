"""tools/visualization/show_downstream_predictions.py: the miniature
detection and segmentation configs' predictions beside the ground truth,
drawn from a checkpoint of the config's own model (as built, untrained) on
the first validation images of a small miniature build."""
import os
import sys

import cv2
import pytest
import torch
from mmengine.config import Config

from projects.downstream_miniature.layouts import make_miniature_datasets
from tests.helpers import ROOT

sys.path.insert(0, os.path.join(ROOT, 'tools', 'visualization'))
import show_downstream_predictions as tool  # noqa: E402

CONFIGS = {
    'coco':
    'configs/benchmarks/mmdet/miniature/mask-rcnn_vitdet-tiny-p4-siameseim-'
    'pre_1xb4-300it_miniature-coco-128.py',
    'ade20k':
    'configs/benchmarks/mmseg/miniature/upernet_vit-tiny-p4-siameseim-pre_'
    '1xb8-600it_miniature-ade20k-128x128.py',
}


@pytest.fixture(scope='module')
def mini_root(tmp_path_factory):
    root = tmp_path_factory.mktemp('miniature')
    make_miniature_datasets(
        os.path.join(ROOT, 'data', 'fashion_mnist'),
        str(root / 'data' / 'miniature'),
        num_train=300,  # the smallest build with LVIS's three groups
        num_val=3)
    return root


def untrained_checkpoint(config, path):
    """The config's model as built, saved as the Runner saves it."""
    from mmengine.registry import init_default_scope
    cfg = Config.fromfile(os.path.join(ROOT, config))
    init_default_scope(cfg.default_scope)
    if cfg.default_scope == 'mmdet':
        from mmdet.registry import MODELS
    else:
        from mmseg.registry import MODELS
    cfg.model.backbone.init_cfg = None
    torch.save({'state_dict': MODELS.build(cfg.model).state_dict()}, path)
    return str(path)


@pytest.mark.parametrize('task', ['coco', 'ade20k'])
def test_ground_truth_beside_prediction_for_each_image(task, mini_root,
                                                       tmp_path, monkeypatch,
                                                       capsys):
    config = os.path.join(ROOT, CONFIGS[task])
    ckpt = untrained_checkpoint(CONFIGS[task], tmp_path / 'model.pth')
    monkeypatch.chdir(mini_root)  # the configs' relative data paths
    tool.main([config, ckpt, '--count', '3', '--score-thr', '0.0'])
    out = tmp_path / 'predictions.png'
    sheet = cv2.imread(str(out))
    # three rows of 128-pixel images enlarged 3 times; ground truth and
    # prediction side by side (mmseg's visualizer leaves a margin between)
    assert sheet.shape[0] == 3 * 3 * 128
    assert sheet.shape[1] >= 2 * 3 * 128
    assert f'3 images: ground truth (left), prediction (right) in {out}' \
        in capsys.readouterr().out


def test_a_config_of_another_codebase_is_refused(tmp_path):
    config = os.path.join(
        ROOT, 'configs', 'pretrain',
        'siameseim_vit-tiny-p4_1xb64-bf16-coslr-1e_fashionmnist.py')
    (tmp_path / 'x.pth').write_bytes(b'')
    with pytest.raises(SystemExit, match='an mmdet or mmseg config'):
        tool.main([config, str(tmp_path / 'x.pth')])
    with pytest.raises(SystemExit, match='no such file'):
        tool.main([config, str(tmp_path / 'missing.pth')])
