"""Our side of ``projects/side_by_side/tools/side_by_side.py`` (the authors'
SiameseIM and
ours trained side by side on Fashion-MNIST): the shared settings read off our
config, the training subset, our run's config, the authors' data and the table.

What runs the authors' code (and the shims it needs) stays in
``tools/``.
"""
import os.path as osp
import time

import numpy as np
from mmengine.config import Config

from projects.demo.cli import ROOT, precision_override


def demo_overrides(args) -> dict:
    """The demo evaluation's subset sizes from the tool's arguments (the
    same test images every run); the kNN bank is the probe's images, as
    in the demo, where the two sizes agree, else a bank of its own."""
    return {
        'evaluation.knn.bank':
        'probe' if args.knn_train == args.probe_train else 'own',
        'evaluation.knn.train_samples':
        args.knn_train,
        'evaluation.linear.train_samples':
        args.probe_train,
        'evaluation.linear.epochs':
        args.probe_epochs,
        'evaluation.fewshot.fraction':
        args.fewshot_fraction,
        'evaluation.test_samples':
        args.test_images if args.test_images < 10000 else None,
        'evaluation.test_seed':
        1,
    }


def train_indices(n):
    """The training images both sides pretrain on (seed 0, fixed)."""
    if not 0 < n <= 60000:
        raise ValueError(f'--train-images must be in 1..60000, got {n}')
    rng = np.random.default_rng(0)
    return np.sort(rng.choice(60000, n, replace=False)).tolist()


def ours_cfg(args, demo_cfg, seed, run_dir, indices):
    """Our pretraining config, set up for one seed's run."""
    from projects.demo import prepare_pretrain_cfg
    return prepare_pretrain_cfg(
        Config.fromfile(osp.join(ROOT, demo_cfg.pretrain_configs.siameseim)),
        osp.join(run_dir, 'ours'),
        osp.abspath(args.data_root) + '/',
        overrides=dict(train_dataloader=dict(dataset=dict(indices=indices))),
        epochs=args.epochs,
        seed=seed,
        precision=precision_override(args.fp32))


def format_table(runs, args, batch, protocol_lines=()):
    from projects.demo import format_seed_table
    return format_seed_table(
        runs, dict(ours='ours (mmsiameseim)', authors='the authors\' code'), [
            f'Budget per run: {args.train_images} training images x '
            f'{args.epochs} epoch(s) at batch {batch}; evaluated as the demo:',
            '', *protocol_lines
        ])


def settings(cfg):
    """The shared settings, read off our Fashion-MNIST config."""
    model = cfg.model
    arch = cfg.vit_arch
    pipe = {t['type']: t for t in cfg.train_dataloader.dataset.pipeline}
    crop, mask = pipe['TwoViewRandomResizedCrop'], \
        pipe['BlockwiseMaskGenerator']
    opt = cfg.optim_wrapper
    warmup = [s for s in cfg.param_scheduler if s.type.endswith('LinearLR')][0]
    cosine = [
        s for s in cfg.param_scheduler if s.type.endswith('CosineAnnealingLR')
    ][0]
    return dict(
        img=cfg.img_size,
        patch=cfg.patch_size,
        in_chans=1,
        dims=arch['embed_dims'],
        depth=arch['num_layers'],
        heads=arch['num_heads'],
        decoder_heads=model.neck.num_heads,
        projector_depth=model.neck.projector_depth,
        predictor_depth=model.neck.predictor_depth,
        neg_weight=model.head.loss.lambda_neg,
        crop_min=crop['scale'][0],
        num_masking_patches=mask['num_masking_patches'],
        min_mask_patches=mask['min_num_patches'],
        batch=cfg.train_dataloader.batch_size,
        lr=opt.optimizer.lr,
        beta2=opt.optimizer.betas[1],
        weight_decay=opt.optimizer.weight_decay,
        clip_grad=opt.clip_grad.max_norm,
        warmup_epochs=warmup.end,
        min_lr=cosine.eta_min,
        mm=1. - model.base_momentum,
        mean=cfg.data_preprocessor.mean[0] / 255.,
        std=cfg.data_preprocessor.std[0] / 255.)


class TimedLoader:
    """Their loader, recording when each batch is handed out."""

    def __init__(self, loader):
        self.loader = loader
        self.stamps = []

    def __len__(self):
        return len(self.loader)

    def __iter__(self):
        for batch in self.loader:
            self.stamps.append(time.perf_counter())
            yield batch
        self.stamps.append(time.perf_counter())


def padded_images(data_root, indices, size):
    """Fashion-MNIST training images, zero-padded bottom/right to ``size``
    like our ``Pad``."""
    from mmsiameseim.datasets import LocalFashionMNIST  # never downloads
    ds = LocalFashionMNIST(data_prefix=data_root + '/', test_mode=False)
    out = []
    for i in indices:
        img = ds.get_data_info(int(i))['img']
        h, w = img.shape[:2]
        out.append(np.pad(img, ((0, size - h), (0, size - w))))
    return out
