"""Train the authors' SiameseIM and ours side by side on Fashion-MNIST.

    python tools/side_by_side.py --official-repo PATH [--seeds 0,1,2]
        [--train-images 12800] [--epochs 1] [--knn-train 10000]
        [--probe-train 10000] [--probe-epochs 3] [--fewshot-fraction 0.01]
        [--test-images 10000] [--work-dir work_dirs/side_by_side] [--fp32]

For each seed, both implementations pretrain on the same training images
(``--train-images`` drawn once, seed 0, from the 60k) with the settings of
``configs/pretrain/siameseim_vit-tiny-p4_1xb64-bf16-coslr-1e_fashionmnist.py``
and are then evaluated by ``tools/demo.py``'s own evaluation (its ``Demo``
class: weighted kNN, linear probe, 1 % few-shot, on the 10k test images or
a fixed subset of ``--test-images``).

* **Ours**: the config through mmengine's Runner (``Demo.pretrain``), seed
  ``--seed``.
* **The authors'**: their code from a clone at ``--official-repo`` (nothing
  of it is shipped), run in a child process: their ``SiameseIMViT``
  (``models_sim``), their augmentation
  (``main_pretrain.DataAugmentationForSIM``),
  their blockwise ``MaskingGenerator``, timm's ``param_groups_weight_decay``
  and AdamW as in their ``main``, their ``NativeScalerWithGradNormCount``,
  and their loop ``engine_pretrain.train_one_epoch`` (per-iteration lr and
  momentum schedules). Their weights are then converted with
  ``mmsiameseim.apis.build_from_official`` and evaluated like ours.

Same settings on both sides: the 28 x 28 images zero-padded to 32 x 32
(bottom and right, as our ``Pad``), one channel, patch 4, a 128-wide 4-block
ViT with 4 heads, 128-wide projector (2 blocks) and predictor (2 blocks) with
4 heads and BatchNorm, frozen patch embedding, lambda 0.02; crops of 25-100 %
of the area resized to 32; 38 of 64 patches masked in blocks of >= 4; batch
64, AdamW (0.9, 0.95) lr 1e-3, weight decay 0.05, a 0.1-epoch linear warm-up
then cosine to 1e-6, gradient clip 1.0; target momentum 0.99 -> 1 on a
cosine; bf16 autocast on CPUs with native bf16 (their torch.cuda.amp mapped
to CPU autocast; ``--fp32`` for both in fp32); one data-loading worker each.
What stays the authors' own: their colour augmentation (ColorJitter(0.4,
0.4, 0.2, 0.1) p 0.8, grayscale p 0.2, blur sigma 0.1-2 with p 1.0 / 0.1,
solarize p 0.2 on view b) where our miniature config uses brightness, a
milder blur and solarize; their normalisation is given the dataset's mean
and std (theirs hard-codes ImageNet's three-channel values). Drop-last
batches as in their loader; ours keeps the last partial batch.

images/s: batch / median iteration time (data and step), as mmengine logs
it; measured on the same machine in turns, so each row sees similar load.

Writes ``WORK_DIR/side_by_side.md`` (the table) and ``side_by_side.json``
(every run), updated after each run; finished runs are reused by a rerun.
The shims their code needs on a current stack live in
``tools/authors_siameseim.py``.
"""
import argparse
import json
import os
import os.path as osp
import statistics
import subprocess
import sys
import time

import numpy as np

ROOT = osp.dirname(osp.dirname(osp.abspath(__file__)))
TOOLS = osp.join(ROOT, 'tools')
OURS_CFG = osp.join(
    ROOT, 'configs/pretrain/'
    'siameseim_vit-tiny-p4_1xb64-bf16-coslr-1e_fashionmnist.py')
IMPLS = ('ours', 'authors')


def say(msg):
    print(f'\033[1m[side-by-side]\033[0m {msg}', flush=True)


def train_indices(n):
    """The training images both sides pretrain on (seed 0, fixed)."""
    if not 0 < n <= 60000:
        raise ValueError(f'--train-images must be in 1..60000, got {n}')
    rng = np.random.default_rng(0)
    return np.sort(rng.choice(60000, n, replace=False)).tolist()


# ---------------------------------------------------------------- settings
def settings(cfg):
    """The shared settings, read off our Fashion-MNIST config."""
    model = cfg.model
    arch = cfg.vit_arch
    pipe = {t['type']: t for t in cfg.train_dataloader.dataset.pipeline}
    crop, mask = pipe['TwoViewRandomResizedCrop'], \
        pipe['BlockwiseMaskGenerator']
    opt = cfg.optim_wrapper
    warmup = [s for s in cfg.param_scheduler
              if s.type.endswith('LinearLR')][0]
    cosine = [s for s in cfg.param_scheduler
              if s.type.endswith('CosineAnnealingLR')][0]
    return dict(
        img=cfg.img_size, patch=cfg.patch_size, in_chans=1,
        dims=arch['embed_dims'], depth=arch['num_layers'],
        heads=arch['num_heads'], decoder_heads=model.neck.num_heads,
        projector_depth=model.neck.projector_depth,
        predictor_depth=model.neck.predictor_depth,
        neg_weight=model.head.loss.lambda_neg,
        crop_min=crop['scale'][0],
        num_masking_patches=mask['num_masking_patches'],
        min_mask_patches=mask['min_num_patches'],
        batch=cfg.train_dataloader.batch_size,
        lr=opt.optimizer.lr, beta2=opt.optimizer.betas[1],
        weight_decay=opt.optimizer.weight_decay,
        clip_grad=opt.clip_grad.max_norm,
        warmup_epochs=warmup.end, min_lr=cosine.eta_min,
        mm=1. - model.base_momentum,
        mean=cfg.data_preprocessor.mean[0] / 255.,
        std=cfg.data_preprocessor.std[0] / 255.)


# ---------------------------------------------------- the authors' training
class _TimedLoader:
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


def authors_child(opts):
    """Pretrain with the authors' code; runs in its own process."""
    import random

    import torch
    sys.path.insert(0, TOOLS)
    import authors_siameseim as authors
    s = opts['settings']
    dtype = None if opts['fp32'] else torch.bfloat16
    authors.install_training_shims(opts['repo'], dtype or torch.bfloat16)
    main_pretrain = authors.import_main_pretrain(opts['repo'])
    import engine_pretrain
    import torchvision.transforms as T
    from timm.optim.optim_factory import param_groups_weight_decay
    from util.masking_generator import MaskingGenerator
    from util.misc import NativeScalerWithGradNormCount
    from PIL import Image

    seed = opts['seed']
    torch.manual_seed(seed)
    np.random.seed(seed)
    random.seed(seed)
    args = authors.model_args(
        s['dims'], projector_depth=s['projector_depth'],
        predictor_depth=s['predictor_depth'], neg_weight=s['neg_weight'],
        input_size=s['img'], crop_min=s['crop_min'], accum_iter=1,
        epochs=opts['epochs'], lr=s['lr'], min_lr=s['min_lr'],
        warmup_epochs=s['warmup_epochs'], mm=s['mm'], mmschedule='cosine',
        clip_grad=s['clip_grad'], fp32=opts['fp32'])

    transform = main_pretrain.DataAugmentationForSIM(args)
    # the dataset's statistics, one channel (theirs: ImageNet's, three)
    transform.format_transform = T.Compose(
        [T.ToTensor(), T.Normalize([s['mean']], [s['std']])])
    grid = s['img'] // s['patch']
    masks = MaskingGenerator((grid, grid), s['num_masking_patches'],
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
    loader = _TimedLoader(torch.utils.data.DataLoader(
        Data(), sampler=sampler, batch_size=s['batch'], num_workers=1,
        persistent_workers=True, drop_last=True))

    model = authors.build_model(
        opts['repo'], s['dims'], s['depth'], s['heads'], s['img'],
        s['patch'], in_chans=s['in_chans'], decoder_heads=s['decoder_heads'],
        args=args)
    model.train()
    groups = param_groups_weight_decay(model, s['weight_decay'])
    optimizer = torch.optim.AdamW(groups, lr=s['lr'],
                                  betas=(0.9, s['beta2']))

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
            model, loader, optimizer, torch.device('cpu'), epoch, scaler,
            log_writer=None, args=args)
    wall = time.time() - t0
    torch.save({'model': model.state_dict()}, opts['checkpoint'])
    iters = np.diff(loader.stamps)
    return dict(wall_s=wall, epochs=opts['epochs'],
                images=len(loader) * s['batch'] * opts['epochs'],
                images_per_s=s['batch'] / float(np.median(iters)),
                last_loss=stats.get('loss'))


def padded_images(data_root, indices, size):
    """Fashion-MNIST training images, zero-padded bottom/right to ``size``
    like our ``Pad``."""
    from mmpretrain.datasets import FashionMNIST
    ds = FashionMNIST(data_prefix=data_root + '/', test_mode=False)
    out = []
    for i in indices:
        img = ds.get_data_info(int(i))['img']
        h, w = img.shape[:2]
        out.append(np.pad(img, ((0, size - h), (0, size - w))))
    return out


def run_authors(args, seed, run_dir, settings_, indices, demo):
    """Their pretraining in a child process; returns what
    ``Demo.pretrain`` returns (checkpoint in our format)."""
    out_dir = osp.join(run_dir, 'authors')
    done_path = osp.join(out_dir, 'pretrain_done.json')
    if osp.exists(done_path):
        with open(done_path) as f:
            return json.load(f)
    os.makedirs(out_dir, exist_ok=True)
    from demo import bf16_capable
    opts = dict(repo=osp.abspath(args.official_repo), seed=seed,
                settings=settings_, indices=indices, epochs=args.epochs,
                fp32=args.fp32 or not bf16_capable(),
                data_root=osp.abspath(args.data_root),
                checkpoint=osp.join(out_dir, 'official.pth'))
    opts_path = osp.join(out_dir, 'opts.json')
    child_path = osp.join(out_dir, 'child.json')
    if osp.exists(child_path):  # trained, not yet converted
        with open(opts_path) as f:
            if json.load(f) != opts:
                sys.exit(f'{out_dir} holds a run with other settings: '
                         'delete it or use another --work-dir')
    else:
        with open(opts_path, 'w') as f:
            json.dump(opts, f)
        say(f'seed {seed}: the authors\' code pretraining '
            f'({len(indices)} images x {args.epochs} epoch(s)), log '
            f'{out_dir}/train.log')
        with open(osp.join(out_dir, 'train.log'), 'w') as log:
            proc = subprocess.run(
                [sys.executable, osp.abspath(__file__), '--_authors-child',
                 opts_path], stdout=log, stderr=subprocess.STDOUT, cwd=ROOT)
        if proc.returncode:
            sys.exit(f'the authors\' training failed (exit '
                     f'{proc.returncode}): see {out_dir}/train.log')
    with open(child_path) as f:
        done = json.load(f)
    # their weights in our format, for the demo's evaluation
    import torch
    from mmsiameseim.apis import build_from_official
    model = build_from_official(opts['checkpoint'],
                                num_heads=settings_['heads'],
                                decoder_num_heads=settings_['decoder_heads'])
    done['checkpoint'] = osp.join(out_dir, f'epoch_{args.epochs}.pth')
    torch.save({'state_dict': model.state_dict()}, done['checkpoint'])
    demo_atomic_json(done_path, done)
    return done


def demo_atomic_json(path, obj):
    from demo import atomic_json
    atomic_json(path, obj)


# ------------------------------------------------------------------- ours
def make_demo(args, seed, run_dir, indices):
    from demo import Demo

    class SideBySideDemo(Demo):
        """The demo's pretraining and evaluation, our config on the
        side-by-side training subset."""

        def pretrain_cfg(self, method):
            from mmengine.config import Config
            return Config.fromfile(OURS_CFG)

        def pretrain_run_cfg(self, method):
            cfg = super().pretrain_run_cfg(method)
            cfg.train_dataloader.dataset.indices = indices
            return cfg

        def _subsets(self):
            subsets = super()._subsets()
            if args.test_images < 10000:  # the same test images every run
                rng = np.random.default_rng(1)
                subsets['test'] = np.sort(
                    rng.choice(10000, args.test_images, replace=False))
            return subsets

    demo_args = argparse.Namespace(
        work_dir=run_dir, data_root=args.data_root, compare=[],
        epochs=args.epochs, seed=seed, fp32=args.fp32,
        knn_train=args.knn_train, probe_train=args.probe_train,
        probe_epochs=args.probe_epochs,
        fewshot_fraction=args.fewshot_fraction, smoke=False,
        smoke_images=0)
    return SideBySideDemo(demo_args)


# ------------------------------------------------------------------ table
def _mean_spread(values):
    if not values:
        return '-'
    mean = statistics.mean(values)
    if len(values) == 1:
        return f'{mean:.2f}'
    return (f'{mean:.2f} ± {statistics.stdev(values):.2f} '
            f'({min(values):.2f}-{max(values):.2f})')


def format_table(runs, args):
    head = ('implementation', 'seeds', 'kNN top-1', 'linear probe top-1',
            '1 % few-shot top-1', 'images/s')
    lines = ['| ' + ' | '.join(head) + ' |',
             '|' + '---|' * len(head)]
    for impl in IMPLS:
        rows = [r for r in runs if r['impl'] == impl]
        if not rows:
            continue
        name = 'ours (mmsiameseim)' if impl == 'ours' else \
            'the authors\' code'
        lines.append(' | '.join([
            f'| {name}', ','.join(str(r['seed']) for r in rows),
            _mean_spread([r['knn'] for r in rows]),
            _mean_spread([r['linear'] for r in rows]),
            _mean_spread([r['fewshot'] for r in rows]),
            _mean_spread([r['images_per_s'] for r in rows])]) + ' |')
    lines += [
        '', 'mean ± sample standard deviation (min-max) over the seeds. '
        f'Budget per run: {args.train_images} training images x '
        f'{args.epochs} epoch(s) at batch 64; evaluation as tools/demo.py '
        f'with kNN on {args.knn_train} and the linear probe '
        f'({args.probe_epochs} epochs) on {args.probe_train} training '
        f'images, {args.fewshot_fraction:.0%} few-shot, all scored on '
        f'{"the 10k" if args.test_images >= 10000 else args.test_images} '
        'test images.', '', 'Per run:', '',
        '| implementation | seed | kNN | linear | few-shot | images/s | '
        'pretraining wall s |', '|---|---|---|---|---|---|---|']
    for r in runs:
        lines.append(f'| {r["impl"]} | {r["seed"]} | {r["knn"]:.2f} | '
                     f'{r["linear"]:.2f} | {r["fewshot"]:.2f} | '
                     f'{r["images_per_s"]:.0f} | {r["wall_s"]:.0f} |')
    return '\n'.join(lines) + '\n'


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('--official-repo',
                        help='root of a clone of '
                        'OpenGVLab/Siamese-Image-Modeling')
    parser.add_argument('--seeds', default='0,1,2',
                        type=lambda s: [int(x) for x in s.split(',')])
    parser.add_argument('--impls', default=','.join(IMPLS),
                        type=lambda s: s.split(','))
    parser.add_argument('--train-images', type=int, default=12800)
    parser.add_argument('--epochs', type=int, default=1)
    parser.add_argument('--knn-train', type=int, default=10000)
    parser.add_argument('--probe-train', type=int, default=10000)
    parser.add_argument('--probe-epochs', type=int, default=3)
    parser.add_argument('--fewshot-fraction', type=float, default=0.01)
    parser.add_argument('--test-images', type=int, default=10000,
                        help='score on this many of the 10k test images '
                        '(a fixed random subset when fewer)')
    parser.add_argument('--data-root', default='data/fashion_mnist')
    parser.add_argument('--work-dir', default='work_dirs/side_by_side')
    parser.add_argument('--fp32', action='store_true',
                        help='both sides in fp32 (default: bf16 autocast '
                        'on CPUs with native bf16)')
    parser.add_argument('--_authors-child', dest='authors_child',
                        help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    sys.path.insert(0, TOOLS)
    if args.authors_child:
        with open(args.authors_child) as f:
            opts = json.load(f)
        done = authors_child(opts)
        path = osp.join(osp.dirname(args.authors_child), 'child.json')
        with open(path + '.tmp', 'w') as f:
            json.dump(done, f)
        os.replace(path + '.tmp', path)
        return
    from authors_siameseim import checkout_problem
    bad = [i for i in args.impls if i not in IMPLS]
    if bad:
        parser.error(f'--impls: unknown {bad}; choose from {IMPLS}')
    if 'authors' in args.impls and checkout_problem(args.official_repo):
        parser.error(f'--official-repo: '
                     f'{checkout_problem(args.official_repo)}')
    os.chdir(ROOT)
    sys.path.insert(0, ROOT)
    import mmsiameseim  # noqa: F401
    from demo import check_dataset
    from mmengine.config import Config
    check_dataset(osp.abspath(args.data_root))
    settings_ = settings(Config.fromfile(OURS_CFG))
    indices = train_indices(args.train_images)
    wd = osp.abspath(args.work_dir)
    os.makedirs(wd, exist_ok=True)
    runs = []
    for seed in args.seeds:
        run_dir = osp.join(wd, f'seed{seed}')
        demo = make_demo(args, seed, run_dir, indices)
        os.makedirs(osp.join(run_dir, 'results'), exist_ok=True)
        for impl in args.impls:
            if impl == 'ours':
                pre = demo.pretrain('ours')
            else:
                pre = run_authors(args, seed, run_dir, settings_, indices,
                                  demo)
            res = demo.evaluate(impl, pre['checkpoint'])
            runs.append(dict(impl=impl, seed=seed, knn=res['knn'],
                             linear=res['linear'], fewshot=res['fewshot'],
                             images_per_s=pre['images_per_s'],
                             wall_s=pre['wall_s']))
            say(f'seed {seed} {impl}: kNN {res["knn"]:.2f}, linear '
                f'{res["linear"]:.2f}, few-shot {res["fewshot"]:.2f}, '
                f'{pre["images_per_s"]:.0f} images/s')
            table = format_table(runs, args)
            with open(osp.join(wd, 'side_by_side.md'), 'w') as f:
                f.write(table)
            with open(osp.join(wd, 'side_by_side.json'), 'w') as f:
                json.dump(dict(runs=runs, settings=settings_,
                               args=vars(args)), f, indent=2)
    print(format_table(runs, args))


if __name__ == '__main__':
    main()
