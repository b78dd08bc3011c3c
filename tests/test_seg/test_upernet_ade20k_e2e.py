"""The ADE20k benchmark config end to end on a CPU: shrunk by the same
--cfg-options as the README's smoke command, trained for 2 iterations from a
SiameseIM pretraining checkpoint on ADE20k-layout data made from real
Fashion-MNIST pixels, then evaluated (mIoU)."""
import argparse
import glob
import json
import math
import os

import torch
from mmengine import Config
from mmengine.config import DictAction

from tests.test_seg.test_upernet_ade20k_config import CONFIG, ROOT
from tests.test_tools.test_make_smoke_ade20k import FASHION, load_tool

PRETRAIN_CONFIG = os.path.join(
    ROOT, 'configs', 'pretrain',
    'siameseim_vit-tiny-p4_1xb64-bf16-coslr-1e_fashionmnist.py')

# The README's CPU smoke command, option for option.
SMOKE_OPTIONS = """
model.backbone.init_cfg.checkpoint={ckpt}
model.backbone.img_size=(64,64) model.backbone.patch_size=4
model.backbone.embed_dims=128 model.backbone.num_layers=4
model.backbone.num_heads=4 model.backbone.out_indices=[0,1,2,3]
model.neck.embed_dim=128 model.decode_head.in_channels=[128,128,128,128]
model.decode_head.channels=128 model.auxiliary_head.in_channels=128
model.data_preprocessor.size=(64,64)
model.data_preprocessor.mean=[72.94,72.94,72.94]
model.data_preprocessor.std=[90.02,90.02,90.02]
model.test_cfg.crop_size=(64,64) model.test_cfg.stride=(42,42)
optim_wrapper.type=OptimWrapper optim_wrapper.paramwise_cfg.num_layers=4
train_cfg.max_iters=2 train_cfg.val_interval=2 default_hooks.logger.interval=1
randomness.seed=0
train_dataloader.num_workers=0 train_dataloader.persistent_workers=False
train_dataloader.dataset.data_root={data}
train_dataloader.dataset.pipeline.2.scale=(256,64)
train_dataloader.dataset.pipeline.3.crop_size=(64,64)
val_dataloader.num_workers=0 val_dataloader.persistent_workers=False
val_dataloader.dataset.data_root={data}
val_dataloader.dataset.pipeline.1.scale=(256,64)
"""


def _fashion_mnist_pretrain_checkpoint(path):
    """The CPU demo's SiameseIM (128 wide, 4 blocks, patch 4, 1 channel),
    freshly initialised and saved as mmengine's Runner saves it."""
    import mmsiameseim  # noqa: F401
    from mmpretrain.registry import MODELS
    torch.manual_seed(0)
    model = MODELS.build(Config.fromfile(PRETRAIN_CONFIG).model)
    model.init_weights()
    torch.save({'meta': {}, 'state_dict': model.state_dict()}, path)


def smoke_cfg(data_root, checkpoint, work_dir):
    parser = argparse.ArgumentParser()
    parser.add_argument('--cfg-options', nargs='+', action=DictAction)
    options = SMOKE_OPTIONS.format(data=data_root, ckpt=checkpoint).split()
    cfg = Config.fromfile(CONFIG)
    cfg.merge_from_dict(parser.parse_args(
        ['--cfg-options', *options]).cfg_options)
    cfg.work_dir = str(work_dir)
    return cfg


def test_two_iterations_from_a_siameseim_checkpoint_then_miou(
        tmp_path, monkeypatch):
    from mmengine.runner import Runner

    # The Runner logs and dumps the config several times, each through yapf,
    # which takes ~8 s for mmseg's config on these CPUs: skip the formatting.
    monkeypatch.setattr('mmengine.config.config.FormatCode',
                        lambda text, **kwargs: (text, False))
    data_root = load_tool().make_smoke_ade20k(FASHION, str(tmp_path / 'data'),
                                              num_train=4, num_val=2)
    ckpt = tmp_path / 'pretrain.pth'
    _fashion_mnist_pretrain_checkpoint(ckpt)

    runner = Runner.from_cfg(smoke_cfg(data_root, ckpt, tmp_path / 'work'))
    runner.train()

    log = open(glob.glob(str(tmp_path / 'work' / '*' / '*.log'))[0]).read()
    assert (f'SiameseIM -> mmseg MAE {ckpt}: 50 loaded, 2 adapted, 16 new '
            '(model init), 0 dropped') in log
    assert 'Iter(train) [2/2]' in log
    scalars = [json.loads(line) for line in open(glob.glob(
        str(tmp_path / 'work' / '*' / 'vis_data' / 'scalars.json'))[0])]
    val = [s for s in scalars if 'mIoU' in s]
    assert len(val) == 1 and val[0]['step'] == 2
    for metric in ('aAcc', 'mIoU', 'mAcc'):
        assert math.isfinite(val[0][metric]) and 0 <= val[0][metric] <= 100

    # Layer-wise lr decay 0.65 over the 4 blocks: block i gets
    # 0.65 ** (4 - i), the heads 1.
    groups = {name: g['lr_scale']
              for g in runner.optim_wrapper.optimizer.param_groups
              for name in g['param_names']}
    for i in range(4):
        assert math.isclose(groups[f'backbone.layers.{i}.attn.qkv.weight'],
                            0.65**(4 - i))
    assert groups['backbone.patch_embed.projection.weight'] == 0.65**5
    assert groups['decode_head.conv_seg.weight'] == 1.0
