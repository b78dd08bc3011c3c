"""The ADE20k smoke config (configs/benchmarks/mmseg/smoke/: the benchmark
config shrunk to the Fashion-MNIST demo model) end to end on a CPU, run as
it is from a folder holding what it reads: ADE20k-layout data made from real
Fashion-MNIST pixels under data/smoke and a SiameseIM pretraining checkpoint
at work_dirs/demo/siameseim/epoch_1.pth; 2 training iterations, then the
evaluation (mIoU)."""
import glob
import json
import math
import os

import torch
from mmengine import Config

from mmsiameseim.testing.ade20k import make_smoke_ade20k
from tests.test_seg.test_upernet_ade20k_config import ROOT

FASHION = os.path.join(ROOT, 'data', 'fashion_mnist')
SMOKE_CONFIG = os.path.join(
    ROOT, 'configs', 'benchmarks', 'mmseg', 'smoke',
    'upernet_vit-tiny-p4-siameseim-pre_1xb2-2iter_smoke-ade20k-64x64.py')
PRETRAIN_CONFIG = os.path.join(
    ROOT, 'configs', 'pretrain',
    'siameseim_vit-tiny-p4_1xb64-bf16-coslr-1e_fashionmnist.py')


def _fashion_mnist_pretrain_checkpoint(path):
    """The CPU demo's SiameseIM (128 wide, 4 blocks, patch 4, 1 channel),
    freshly initialised and saved as mmengine's Runner saves it."""
    from mmpretrain.registry import MODELS

    import mmsiameseim  # noqa: F401
    torch.manual_seed(0)
    model = MODELS.build(Config.fromfile(PRETRAIN_CONFIG).model)
    model.init_weights()
    torch.save({'meta': {}, 'state_dict': model.state_dict()}, path)


def test_two_iterations_from_a_siameseim_checkpoint_then_miou(
        tmp_path, monkeypatch):
    from mmengine.runner import Runner

    # The Runner logs and dumps the config several times, each through yapf,
    # which takes ~8 s for mmseg's config on these CPUs: skip the formatting.
    monkeypatch.setattr('mmengine.config.config.FormatCode',
                        lambda text, **kwargs: (text, False))
    make_smoke_ade20k(
        FASHION, str(tmp_path / 'data' / 'smoke'), num_train=4, num_val=2)
    ckpt = 'work_dirs/demo/siameseim/epoch_1.pth'
    (tmp_path / ckpt).parent.mkdir(parents=True)
    _fashion_mnist_pretrain_checkpoint(tmp_path / ckpt)

    cfg = Config.fromfile(SMOKE_CONFIG)
    cfg.work_dir = str(tmp_path / 'work')
    monkeypatch.chdir(tmp_path)  # the config's relative paths
    runner = Runner.from_cfg(cfg)
    runner.train()

    log = open(glob.glob(str(tmp_path / 'work' / '*' / '*.log'))[0]).read()
    assert (f'SiameseIM -> mmseg MAE {ckpt}: 50 loaded, 2 adapted, 16 new '
            '(model init), 0 dropped') in log
    assert 'Iter(train) [2/2]' in log
    scalars = [
        json.loads(line) for line in open(
            glob.glob(
                str(tmp_path / 'work' / '*' / 'vis_data' / 'scalars.json'))[0])
    ]
    val = [s for s in scalars if 'mIoU' in s]
    assert len(val) == 1 and val[0]['step'] == 2
    for metric in ('aAcc', 'mIoU', 'mAcc'):
        assert math.isfinite(val[0][metric]) and 0 <= val[0][metric] <= 100

    # Layer-wise lr decay 0.65 over the 4 blocks: block i gets
    # 0.65 ** (4 - i), the heads 1.
    groups = {
        name: g['lr_scale']
        for g in runner.optim_wrapper.optimizer.param_groups
        for name in g['param_names']
    }
    for i in range(4):
        assert math.isclose(groups[f'backbone.layers.{i}.attn.qkv.weight'],
                            0.65**(4 - i))
    assert groups['backbone.patch_embed.projection.weight'] == 0.65**5
    assert groups['decode_head.conv_seg.weight'] == 1.0
