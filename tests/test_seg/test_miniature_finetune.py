"""The miniature ADE20k config (configs/benchmarks/mmseg/miniature/: the
UperNet benchmark config at the size of the Fashion-MNIST demo) fine-tunes
at smoke size, run as `mim train` runs it (its FaultTolerantRunner) from a
folder holding what it reads: miniature data under data/miniature and a
freshly built demo pretraining checkpoint, loaded by the SiameseIM loader.
A few dozen iterations must raise the mIoU above the model's as loaded."""
import glob
import os

import pytest

from projects.downstream_miniature.layouts import make_miniature_datasets
from tests.test_det.helpers import (ROOT, finetune_before_after,
                                    save_demo_pretrain_checkpoint)

CONFIG = os.path.join(
    ROOT, 'configs', 'benchmarks', 'mmseg', 'miniature',
    'upernet_vit-tiny-p4-siameseim-pre_1xb8-600it_miniature-ade20k-128x128.py')
FMNIST = os.path.join(ROOT, 'data', 'fashion_mnist')
ITERS = 30


def poly_schedule(cfg, iters):
    """The config's shape (linear warm-up, then linear decay to 0) over
    ``iters`` iterations, with 5 warm-up iterations, at batch 4 (smoke
    size)."""
    cfg.train_dataloader.batch_size = 4
    warmup, poly = cfg.param_scheduler
    warmup.end = poly.begin = 5
    poly.end = iters


@pytest.mark.slow
def test_ade20k_miniature_finetune_raises_miou(tmp_path, monkeypatch):
    monkeypatch.setattr('mmengine.config.config.FormatCode',
                        lambda text, **kwargs: (text, False))
    # ADE20k's layout only needs no LVIS long tail, but the builder makes
    # all three: its smallest build.
    make_miniature_datasets(
        FMNIST,
        str(tmp_path / 'data' / 'miniature'),
        num_train=300,
        num_val=16)
    ckpt = tmp_path / 'work_dirs' / 'demo' / 'siameseim' / 'epoch_1.pth'
    ckpt.parent.mkdir(parents=True)
    save_demo_pretrain_checkpoint(ckpt)
    before, after = finetune_before_after(CONFIG, tmp_path, tmp_path / 'work',
                                          ITERS, poly_schedule)
    (log, ) = glob.glob(str(tmp_path / 'work' / '*' / '*.log'))
    assert ('SiameseIM -> mmseg MAE work_dirs/demo/siameseim/epoch_1.pth: '
            '50 loaded, 2 adapted, 16 new (model init), 0 dropped'
            ) in open(log).read()
    assert after['mIoU'] > before['mIoU'], (before, after)
    assert 0 < after['mIoU'] <= 100
