"""Every SiameseIM pretraining config puts its crop, its mask generator and its
neck on one patch grid (``patch_grid``), and a pipeline off the model's grid
fails at the first step, before any update, whichever loop trains."""
import argparse
import glob
import os

import numpy as np
import pytest
import torch
from mmengine.config import Config, DictAction
from mmpretrain.registry import MODELS, TRANSFORMS

import mmsiameseim  # noqa: F401
from mmsiameseim.engine.runner.config_checks import check_grid_variables
from tests.helpers import ROOT, TINY_SIAMESEIM_CONFIG


def _siameseim_configs():
    paths = glob.glob(
        os.path.join(ROOT, 'configs', 'pretrain', '**', '*.py'),
        recursive=True)
    return sorted(p for p in paths if '_base_' not in p.split(os.sep)
                  and Config.fromfile(p).model.type == 'SiameseIM')


CONFIGS = _siameseim_configs()


def test_every_siameseim_pretraining_config_is_checked():
    names = [os.path.relpath(p, ROOT) for p in CONFIGS]
    # ImageNet (400e, 1600e, ViT-L, target112, deviceaug), own images (ViT-B
    # and ViT-S _folder), Fashion-MNIST (demo bf16, demo fp32, target16),
    # mix/ (pixel, ViT-S, ViT-L), the ten Table 3 rows and accumulation/
    # (micro-batches, accumulative_counts, batch 16)
    assert len(names) == 26, names
    assert sum(n.endswith('_folder.py') for n in names) == 2
    assert sum('ablations' in n for n in names) == 10


@pytest.mark.parametrize(
    'path', CONFIGS, ids=[os.path.basename(p)[:-3] for p in CONFIGS])
def test_crop_mask_and_neck_share_the_patch_grid(path):
    from mmengine.registry import init_default_scope
    init_default_scope('mmpretrain')  # for the transforms' own builds
    cfg = Config.fromfile(path)
    with torch.device('meta'):  # shapes only, no memory
        model = MODELS.build(cfg.model)
    transforms = [
        TRANSFORMS.build(t) for t in cfg.train_dataloader.dataset.pipeline
    ]
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
    check_grid_variables(cfg)  # the variables agree with what they built


def _runner(tmp_path,
            mask_grid,
            crop_size=None,
            train_cfg=None,
            runner_type=None):
    from mmengine.runner import Runner
    from PIL import Image
    rng = np.random.default_rng(0)
    for i in range(4):
        Image.fromarray(rng.integers(0, 255, (40, 40, 3),
                                     np.uint8)).save(tmp_path / f'{i}.png')
    cfg = Config.fromfile(TINY_SIAMESEIM_CONFIG)
    pipeline = [
        dict(type='LoadImageFromFile'),
        dict(type='TwoViewRandomResizedCrop', size=crop_size or cfg.img_size),
        dict(
            type='BlockwiseMaskGenerator',
            input_size=mask_grid,
            num_masking_patches=6,
            min_num_patches=2),
        dict(
            type='PackInputs',
            algorithm_keys=['crop_boxes', 'flips', 'crop_source_shape']),
    ]
    return (runner_type or Runner)(
        model=cfg.model,
        work_dir=str(tmp_path / 'work'),
        train_dataloader=dict(
            batch_size=2,
            num_workers=0,
            sampler=dict(type='DefaultSampler', shuffle=False),
            collate_fn=dict(type='default_collate'),
            dataset=dict(
                type='CustomDataset',
                data_root=str(tmp_path),
                with_label=False,
                pipeline=pipeline)),
        train_cfg=train_cfg
        or dict(type='ExactResumeEpochBasedTrainLoop', max_epochs=1),
        optim_wrapper=dict(optimizer=dict(type='AdamW', lr=1e-4)),
        default_scope='mmpretrain',
        default_hooks=dict(
            logger=dict(type='LoggerHook', interval=1), checkpoint=None),
        log_level='WARNING')


@pytest.mark.parametrize(
    'train_cfg', [
        dict(type='EpochBasedTrainLoop', max_epochs=1),
        dict(type='IterBasedTrainLoop', max_iters=2),
        dict(type='ExactResumeEpochBasedTrainLoop', max_epochs=1),
    ],
    ids=lambda c: c['type'])
def test_an_off_grid_pipeline_fails_before_the_first_step_in_any_loop(
        tmp_path, train_cfg):
    """Before: only ExactResumeEpochBasedTrainLoop checked the pipeline;
    mmengine's own loops trained on it. Now SiameseIM checks every batch,
    and the error names every option at fault."""
    # the tiny model: 32 px, patch 8, grid 4; a 40 px crop and a 5x5 mask
    runner = _runner(tmp_path, mask_grid=5, crop_size=40, train_cfg=train_cfg)
    with pytest.raises(ValueError) as err:
        runner.train()
    message = str(err.value)
    assert message.startswith("this batch is off the model's patch grid "
                              '(backbone patch size 8x8, neck grid_size=4, '
                              'target_grid_size=None): ')
    assert "the masks are 5x5 patches but the neck's grid_size is 4: give " \
        "the mask generator's input_size=4" in message
    assert 'view a is 40x40 pixels, not the model\'s 32x32' in message
    assert 'give TwoViewRandomResizedCrop size=32' in message
    assert 'give TwoViewRandomResizedCrop target_size=32' in message
    # before the first step: no update, no iteration counted
    assert runner.iter == 0
    assert runner.optim_wrapper.optimizer.state_dict()['state'] == {}


def test_a_pipeline_on_the_grid_trains(tmp_path):
    runner = _runner(tmp_path, mask_grid=4)
    runner.train()
    assert runner.iter == 2


def test_the_runner_refuses_an_off_grid_pipeline_before_loading_data(tmp_path):
    """FaultTolerantRunner (tools/train.py, the configs' runner_type) asks
    the model to check the built pipeline when it builds the training loop:
    the crop and mask options are named before a worker decodes an
    image."""
    from mmsiameseim.engine.runner import FaultTolerantRunner
    runner = _runner(
        tmp_path, mask_grid=5, crop_size=40, runner_type=FaultTolerantRunner)
    with pytest.raises(ValueError) as err:
        runner.train()
    message = str(err.value)
    assert message.startswith('the training pipeline does not use the '
                              "model's patch grid (neck grid_size=4, ")
    assert 'TwoViewRandomResizedCrop size=(40, 40) is not the 4x4 patch ' \
        'grid at patch size 8x8' in message
    assert 'BlockwiseMaskGenerator input_size=(5, 5)' in message
    assert not list((tmp_path / 'work').rglob('*.pth'))  # nothing trained


FMNIST_CONFIG = os.path.join(
    ROOT, 'configs', 'pretrain',
    'siameseim_vit-tiny-p4_1xb64-bf16-coslr-1e_fashionmnist.py')


def _docs_example():
    """docs/mixing.md's child config that changes the grid and width."""
    import re
    with open(os.path.join(ROOT, 'docs', 'mixing.md')) as f:
        blocks = re.findall(r'^```python\n(.*?)^```', f.read(), re.M | re.S)
    return next(
        b for b in blocks
        if b.startswith('# siameseim_vit-tiny-p8-w64_fashionmnist'))


def _built(cfg):
    from mmengine.registry import init_default_scope

    from mmsiameseim.engine.runner.config_checks import checked_config
    from tests.helpers import random_batch
    init_default_scope('mmpretrain')
    cfg = checked_config(cfg)
    torch.manual_seed(0)
    model = MODELS.build(cfg.model)
    model.init_weights()
    model.check_train_pipeline(
        [TRANSFORMS.build(t) for t in cfg.train_dataloader.dataset.pipeline])
    views, samples = random_batch(
        2, img_size=32, grid=4, num_mask=10, in_channels=1)
    loss = model.loss(views, samples)['loss']
    loss.backward()
    assert torch.isfinite(loss)
    assert model.backbone.layers[0].attn.qkv.weight.grad.abs().sum() > 0
    return model


def test_the_docs_child_config_trains_on_its_own_grid_and_width(tmp_path):
    """Saved outside the checkout, inheriting the shipped config as
    ``mmsiameseim::``, the docs' example builds a 4 x 4, 64-wide model."""
    path = tmp_path / 'siameseim_vit-tiny-p8-w64_fashionmnist.py'
    path.write_text(_docs_example())
    model = _built(Config.fromfile(str(path)))
    assert tuple(model.backbone.patch_resolution) == (4, 4)
    assert model.backbone.embed_dims == 64 and model.neck.embed_dims == 64
    assert model.neck.grid_size == 4


def test_the_docs_cfg_options_change_the_grid():
    import re
    with open(os.path.join(ROOT, 'docs', 'mixing.md')) as f:
        text = ' '.join(f.read().split())
    options = re.search(r'the same change is `--cfg-options ([^`]*)`',
                        text).group(1).split()
    parser = argparse.ArgumentParser()  # as tools/train.py reads them
    parser.add_argument('--cfg-options', nargs='+', action=DictAction)
    cfg = Config.fromfile(FMNIST_CONFIG)
    cfg.merge_from_dict(
        parser.parse_args(['--cfg-options', *options]).cfg_options)
    model = _built(cfg)
    assert tuple(model.backbone.patch_resolution) == (4, 4)


@pytest.mark.parametrize('variables, named', [
    (dict(patch_grid=4), 'patch_grid=4 but model.neck.grid_size=8'),
    (dict(patch_size=8,
          patch_grid=4), 'patch_size=8 but model.backbone.patch_size=4'),
    (dict(embed_dims=64), 'embed_dims=64 but model.neck.embed_dims=128'),
])
def test_a_grid_variable_changed_alone_is_refused(tmp_path, variables, named):
    """``--cfg-options patch_grid=4`` or ``patch_grid = 4`` in a child config
    changes the variable and nothing it built: refused, naming both."""
    from mmsiameseim.engine.runner.config_checks import (ConfigMistake,
                                                         checked_config)
    cfg = Config.fromfile(FMNIST_CONFIG)
    cfg.merge_from_dict(variables)
    with pytest.raises(ConfigMistake, match=named + '.*Set the options'):
        checked_config(cfg)
    child = tmp_path / 'child.py'
    child.write_text(f'_base_ = {FMNIST_CONFIG!r}\n' +
                     ''.join(f'{k} = {v!r}\n' for k, v in variables.items()))
    with pytest.raises(ConfigMistake, match=named):
        checked_config(Config.fromfile(str(child)))
