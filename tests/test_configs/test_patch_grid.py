"""Every SiameseIM pretraining config puts its crop, its mask generator and
its neck on one patch grid (``patch_grid``), and a pipeline off the model's
grid fails when the Runner builds its training loop."""
import glob
import os

import numpy as np
import pytest
import torch
from mmengine.config import Config
from mmpretrain.registry import MODELS, TRANSFORMS

import mmsiameseim  # noqa: F401
from tests.helpers import ROOT, TINY_SIAMESEIM_CONFIG


def _siameseim_configs():
    paths = glob.glob(os.path.join(ROOT, 'configs', 'pretrain', '**', '*.py'),
                      recursive=True)
    return sorted(p for p in paths if '_base_' not in p.split(os.sep)
                  and Config.fromfile(p).model.type == 'SiameseIM')


CONFIGS = _siameseim_configs()


def test_every_siameseim_pretraining_config_is_checked():
    names = [os.path.relpath(p, ROOT) for p in CONFIGS]
    # ImageNet (400e, 1600e, ViT-L, target112), Fashion-MNIST (demo bf16,
    # demo fp32, target16), mix/ (pixel, ViT-S, ViT-L) and the ten Table 3
    # rows
    assert len(names) == 20, names
    assert sum('ablations' in n for n in names) == 10


@pytest.mark.parametrize('path', CONFIGS,
                         ids=[os.path.basename(p)[:-3] for p in CONFIGS])
def test_crop_mask_and_neck_share_the_patch_grid(path):
    from mmengine.registry import init_default_scope
    init_default_scope('mmpretrain')  # for the transforms' own builds
    cfg = Config.fromfile(path)
    with torch.device('meta'):  # shapes only, no memory
        model = MODELS.build(cfg.model)
    transforms = [TRANSFORMS.build(t)
                  for t in cfg.train_dataloader.dataset.pipeline]
    kinds = {type(t).__name__: t for t in transforms}
    crop = kinds['TwoViewRandomResizedCrop']
    mask = kinds.get('BlockwiseMaskGenerator',
                     kinds.get('RandomPatchMaskGenerator'))
    patch = model.backbone.patch_embed.projection.stride
    grid = (cfg.patch_grid, cfg.patch_grid)  # the one variable
    assert tuple(model.backbone.patch_resolution) == grid
    assert (model.neck.grid_size, ) * 2 == grid
    assert (mask.height, mask.width) == grid
    assert (crop.size[0] // patch[0], crop.size[1] // patch[1]) == grid
    target = model.neck.target_grid_size or model.neck.grid_size
    assert crop.target_size[0] // patch[0] == target
    model.check_train_pipeline(transforms)


def _runner(tmp_path, mask_grid):
    from mmengine.runner import Runner
    from PIL import Image
    rng = np.random.default_rng(0)
    for i in range(4):
        Image.fromarray(rng.integers(0, 255, (40, 40, 3), np.uint8)).save(
            tmp_path / f'{i}.png')
    cfg = Config.fromfile(TINY_SIAMESEIM_CONFIG)
    pipeline = [
        dict(type='LoadImageFromFile'),
        dict(type='TwoViewRandomResizedCrop', size=cfg.img_size),
        dict(type='BlockwiseMaskGenerator', input_size=mask_grid,
             num_masking_patches=6, min_num_patches=2),
        dict(type='PackInputs',
             algorithm_keys=['crop_boxes', 'flips', 'crop_source_shape']),
    ]
    return Runner(
        model=cfg.model,
        work_dir=str(tmp_path / 'work'),
        train_dataloader=dict(
            batch_size=2, num_workers=0,
            sampler=dict(type='DefaultSampler', shuffle=False),
            collate_fn=dict(type='default_collate'),
            dataset=dict(type='CustomDataset', data_root=str(tmp_path),
                         with_label=False, pipeline=pipeline)),
        train_cfg=dict(type='ExactResumeEpochBasedTrainLoop', max_epochs=1),
        optim_wrapper=dict(optimizer=dict(type='AdamW', lr=1e-4)),
        default_scope='mmpretrain',
        default_hooks=dict(logger=dict(type='LoggerHook', interval=1),
                           checkpoint=None),
        log_level='WARNING')


def test_a_mask_grid_off_the_neck_fails_when_the_loop_is_built(tmp_path):
    runner = _runner(tmp_path, mask_grid=5)  # the tiny model's grid is 4
    with pytest.raises(ValueError, match=r"does not use the model's patch "
                       r'grid \(neck grid_size=4.*BlockwiseMaskGenerator '
                       r'input_size=\(5, 5\)'):
        runner.build_train_loop(runner._train_loop)


def test_a_pipeline_on_the_grid_trains(tmp_path):
    runner = _runner(tmp_path, mask_grid=4)
    runner.train()
    assert runner.iter == 2
