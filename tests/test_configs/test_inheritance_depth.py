"""Config inheritance stays shallow, as in mmpretrain's own configs.

A top-level config lists sibling bases (model, data, schedule, runtime) and
a variant inherits at most one top-level config: the ImageNet configs are
at most two levels deep. The Fashion-MNIST catalogue (variants of the tiny
config, whose budget base extends the runtime base) is at most three.
"""
import ast
import glob
import os.path as osp

import pytest
from mmengine.config import Config

ROOT = osp.dirname(osp.dirname(osp.dirname(osp.abspath(__file__))))
# the shipped configs and the studies' settings (projects/*/configs/)
CONFIGS = sorted(
    p for p in
    glob.glob(osp.join(ROOT, 'configs', '**', '*.py'), recursive=True) +
    glob.glob(osp.join(ROOT, 'projects', '*', 'configs', '*.py'))
    if '/_base_/' not in p)


def local_bases(path):
    for node in ast.parse(open(path).read()).body:
        if isinstance(node, ast.Assign) and \
                getattr(node.targets[0], 'id', None) == '_base_':
            value = ast.literal_eval(node.value)
            names = [value] if isinstance(value, str) else list(value)
            return [
                osp.normpath(osp.join(osp.dirname(path), n)) for n in names
                if '::' not in n
            ]
    return []


def depth(path):
    bases = local_bases(path)
    return 1 + max(map(depth, bases)) if bases else 0


@pytest.mark.parametrize(
    'path', CONFIGS, ids=[osp.relpath(p, ROOT) for p in CONFIGS])
def test_inheritance_is_shallow(path):
    most = 2 if path.endswith('_in1k.py') else 3
    assert depth(path) <= most, (
        f'{osp.relpath(path, ROOT)} inherits {depth(path)} levels deep '
        f'(at most {most}): list sibling bases instead of a chain')


def test_the_two_schedules_group_weight_decay_alike():
    base = osp.join(ROOT, 'configs', 'pretrain', '_base_')
    imagenet = Config.fromfile(osp.join(base, 'adamw_coslr_400e.py'))
    fashion = Config.fromfile(osp.join(base, 'fashionmnist_budget.py'))
    assert imagenet.no_decay == fashion.no_decay == dict(
        bias_decay_mult=0.0, flat_decay_mult=0.0)
    assert imagenet.optim_wrapper.paramwise_cfg == imagenet.no_decay


def test_the_data_base_crops_on_the_models_patch_grid():
    base = osp.join(ROOT, 'configs', 'pretrain', '_base_')
    model = Config.fromfile(osp.join(base, 'siameseim_vit-base-p16.py'))
    data = Config.fromfile(osp.join(base, 'imagenet_two_view_masked.py'))
    assert data.crop_size == model.img_size
    assert data.mask_grid == model.patch_grid
