"""The authors' SiameseIM pretraining on Fashion-MNIST, for
projects/side_by_side/tools/side_by_side.py (which starts it in a child process
per run).

    python projects/side_by_side/tools/side_by_side_authors.py OPTS_JSON

OPTS_JSON holds ``repo`` (a clone of OpenGVLab/Siamese-Image-Modeling),
``seed``, ``settings`` (``projects.side_by_side.settings`` of our
config), ``indices`` of the training images, ``epochs``, ``fp32``,
``data_root`` and ``checkpoint`` (where their weights go). Their model,
augmentation, mask generator, optimizer groups, scaler and loop
``engine_pretrain.train_one_epoch`` run as in their ``main``; the shims their
code needs on a current stack live in projects/common/authors/code.py. Writes
``child.json`` (wall time, images/s, last loss) beside OPTS_JSON.

Shared with ours (read off our config): the images zero-padded to 32 px
(bottom/right), one channel, patch, widths, depths, heads, BatchNorm, frozen
patch embedding, lambda, crop scale, mask count and block size, batch,
AdamW, lr, weight decay, warm-up, cosine floor, clipping, target momentum,
bf16 autocast (their torch.cuda.amp mapped to the CPU), one loader worker.
Their own: their colour augmentation (ours is the miniature config's), their
normalisation given the dataset's mean and std, drop-last batches.
"""
import json
import os
import os.path as osp
import sys
import time

import numpy as np

from projects.side_by_side import TimedLoader, padded_images


# ---------------------------------------------------- the authors' training
def authors_child(opts):
    """Pretrain with the authors' code; runs in its own process."""
    import random

    import torch

    from projects.common import authors
    s = opts['settings']
    dtype = None if opts['fp32'] else torch.bfloat16
    authors.install_training_shims(opts['repo'], dtype or torch.bfloat16)
    main_pretrain = authors.import_main_pretrain(opts['repo'])
    import engine_pretrain
    import torchvision.transforms as T
    from PIL import Image
    from timm.optim.optim_factory import param_groups_weight_decay
    from util.masking_generator import MaskingGenerator
    from util.misc import NativeScalerWithGradNormCount

    seed = opts['seed']
    torch.manual_seed(seed)
    np.random.seed(seed)
    random.seed(seed)
    args = authors.model_args(
        s['dims'],
        projector_depth=s['projector_depth'],
        predictor_depth=s['predictor_depth'],
        neg_weight=s['neg_weight'],
        input_size=s['img'],
        crop_min=s['crop_min'],
        accum_iter=1,
        epochs=opts['epochs'],
        lr=s['lr'],
        min_lr=s['min_lr'],
        warmup_epochs=s['warmup_epochs'],
        mm=s['mm'],
        mmschedule='cosine',
        clip_grad=s['clip_grad'],
        fp32=opts['fp32'])

    transform = main_pretrain.DataAugmentationForSIM(args)
    # the dataset's statistics, one channel (theirs: ImageNet's, three)
    transform.format_transform = T.Compose(
        [T.ToTensor(), T.Normalize([s['mean']], [s['std']])])
    grid = s['img'] // s['patch']
    masks = MaskingGenerator((grid, grid),
                             s['num_masking_patches'],
                             min_num_patches=s['min_mask_patches'],
                             fixed_num_masking_patches=True)
    images = padded_images(opts['data_root'], opts['indices'], s['img'])

    class Data(torch.utils.data.Dataset):  # as their ImagenetWithMask

        def __len__(self):
            return len(images)

        def __getitem__(self, i):
            return transform(Image.fromarray(images[i])), 0, masks()

    sampler = torch.utils.data.DistributedSampler(
        Data(), num_replicas=1, rank=0, shuffle=True, seed=seed)
    loader = TimedLoader(
        torch.utils.data.DataLoader(
            Data(),
            sampler=sampler,
            batch_size=s['batch'],
            num_workers=1,
            persistent_workers=True,
            drop_last=True))

    model = authors.build_model(
        opts['repo'],
        s['dims'],
        s['depth'],
        s['heads'],
        s['img'],
        s['patch'],
        in_chans=s['in_chans'],
        decoder_heads=s['decoder_heads'],
        args=args)
    model.train()
    groups = param_groups_weight_decay(model, s['weight_decay'])
    optimizer = torch.optim.AdamW(groups, lr=s['lr'], betas=(0.9, s['beta2']))

    class Scaler(NativeScalerWithGradNormCount):
        """Their scaler, disabled: bf16 needs no loss scaling (on a CPU
        their enabled GradScaler disables itself, and then has no 'scale'
        for their loop to log: it logs 1)."""

        def state_dict(self):
            return {'scale': 1.0}

    scaler = Scaler(enabled=False)
    t0 = time.time()
    for epoch in range(opts['epochs']):
        sampler.set_epoch(epoch)
        stats = engine_pretrain.train_one_epoch(
            model,
            loader,
            optimizer,
            torch.device('cpu'),
            epoch,
            scaler,
            log_writer=None,
            args=args)
    wall = time.time() - t0
    torch.save({'model': model.state_dict()}, opts['checkpoint'])
    iters = np.diff(loader.stamps)
    return dict(
        wall_s=wall,
        epochs=opts['epochs'],
        images=len(loader) * s['batch'] * opts['epochs'],
        images_per_s=s['batch'] / float(np.median(iters)),
        last_loss=stats.get('loss'))


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    if len(argv) != 1:
        sys.exit(__doc__.split('\n\n')[1])
    with open(argv[0]) as f:
        opts = json.load(f)
    done = authors_child(opts)
    path = osp.join(osp.dirname(argv[0]), 'child.json')
    with open(path + '.tmp', 'w') as f:
        json.dump(done, f)
    os.replace(path + '.tmp', path)


if __name__ == '__main__':
    main()
