"""The two segmentation commands of docs/benchmarks.md ("Your own detection
or segmentation data"), as written, on photographs with masks: `mim train`
then `mim test` of the checkpoint it saved, the config's model shrunk to
the CPU demo's ViT (as the smoke config does), through FaultTolerantRunner
as `mim` builds it."""
import math
import os

import pytest
from mmengine.config import Config
from mmengine.registry import RUNNERS

import mmsiameseim.seg  # noqa: F401
from tests.test_docs.helpers import documented_commands, parse_command
from tests.test_seg.test_segmentation_folder import (CLASSES, ROOT,
                                                     make_photo_masks)
from tests.test_seg.test_upernet_ade20k_e2e import \
    _fashion_mnist_pretrain_checkpoint

DOC = os.path.join(ROOT, 'docs', 'benchmarks.md')
SECTION = '## Your own detection or segmentation data'


def shrunk(command, work_dir):
    """The command's config and options, on the CPU demo's ViT at 64 px,
    2 iterations (what the ADE20k smoke config changes)."""
    cfg = Config.fromfile(os.path.join(ROOT, command['config']))
    cfg.merge_from_dict(command['options'])
    cfg.work_dir = str(work_dir)
    crop, scale = (64, 64), (256, 64)
    m = cfg.model
    m.data_preprocessor.update(size=crop, mean=[72.94] * 3, std=[90.02] * 3)
    m.backbone.update(
        img_size=crop,
        patch_size=4,
        embed_dims=128,
        num_layers=4,
        num_heads=4,
        out_indices=[0, 1, 2, 3])
    m.neck.embed_dim = 128
    m.decode_head.update(in_channels=[128] * 4, channels=128)
    m.auxiliary_head.in_channels = 128
    m.test_cfg.update(crop_size=crop, stride=(42, 42))
    cfg.optim_wrapper.type = 'OptimWrapper'  # AMP needs a GPU
    cfg.optim_wrapper.paramwise_cfg.num_layers = 4
    cfg.train_cfg.update(max_iters=2, val_interval=2)
    cfg.visualizer.name = f'visualizer_{work_dir}'
    for key in ('train_dataloader', 'val_dataloader', 'test_dataloader'):
        cfg[key].update(num_workers=0, persistent_workers=False)
        for t in cfg[key].dataset.pipeline:
            if t.type in ('RandomResize', 'Resize'):
                t.scale = scale
            if t.type == 'RandomCrop':
                t.crop_size = crop
    return cfg


@pytest.fixture
def fast_config_dump(monkeypatch):
    monkeypatch.setattr('mmengine.config.config.FormatCode',
                        lambda text, **kwargs: (text, False))


@pytest.mark.person_matrix(
    'segmentation', 'test_command', 'the own-folder config, whose test '
    'settings were None, evaluates with the documented `mim test` command '
    '(test_dataloader.dataset.data_root=DIR)')
def test_documented_train_then_test_commands_run(tmp_path, fast_config_dump):
    data = make_photo_masks(tmp_path / 'seg')
    pretrain = tmp_path / 'epoch_1.pth'
    _fashion_mnist_pretrain_checkpoint(pretrain)
    work = tmp_path / 'work'
    subs = {
        'PRETRAINING.pth': str(pretrain),
        'WORK_DIR/iter_160000.pth': str(work / 'iter_2.pth'),
        'WORK_DIR': str(work),
        'DIR': str(data),
    }
    train, test = [
        parse_command(c, subs) for c in documented_commands(DOC, SECTION)
        if c[2] == 'mmsegmentation'
    ]
    assert (train['action'], test['action']) == ('train', 'test')
    assert train['options']['model.decode_head.num_classes'] == len(CLASSES)

    runner = RUNNERS.build(shrunk(train, work))
    assert type(runner).__name__ == 'FaultTolerantRunner'
    runner.train()
    assert runner.iter == 2 and os.path.isfile(work / 'iter_2.pth')

    cfg = shrunk(test, tmp_path / 'test')
    cfg.load_from = test['checkpoint']
    metrics = RUNNERS.build(cfg).test()
    assert math.isfinite(metrics['mIoU']) and 0 <= metrics['mIoU'] <= 100
