"""Training-step speed of SiameseIM next to mmpretrain's MAE, same backbone.

    python tools/benchmark_pretrain.py [--arch b] [--batch 8] [--img-size 224]
        [--steps 5] [--warmup 2] [--precision fp32|bf16|fp16] [--device cpu]
        [--models siameseim,siameseim-lowres,mae] [--target-size 112] [--json]

Both models are built in this process and timed alternately on synthetic
inputs; a step is forward + backward + optimizer step (+ the momentum update
for SiameseIM). Prints arch, batch, image size, precision, device, step time
(median and min-max), images/s, peak memory (resident set on CPU,
max_memory_allocated on GPU) and the SiameseIM / MAE step-time ratio;
``siameseim-lowres`` is the efficient target option (view b encoded at
``--target-size``, the predictor predicting that grid).
"""
import argparse
import json
import os
import statistics
import threading
import time

import numpy as np
import torch

ARCHS = {  # embed dims, depth, heads
    't': (192, 12, 3),
    's': (384, 12, 6),
    'b': (768, 12, 12),
    'l': (1024, 24, 16),
}


class PeakRSS:
    """Samples the resident set size in a thread (CPU peak memory)."""

    def __init__(self):
        self.peak = 0
        self._stop = threading.Event()
        self._page = os.sysconf('SC_PAGE_SIZE')

    def _rss(self):
        with open('/proc/self/statm') as f:
            return int(f.read().split()[1]) * self._page

    def _run(self):
        while not self._stop.is_set():
            self.peak = max(self.peak, self._rss())
            time.sleep(0.002)

    def __enter__(self):
        self.peak = self._rss()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        self._thread.join()


def vit_arch(arch):
    dims, depth, heads = ARCHS[arch]
    return dict(embed_dims=dims, num_layers=depth, num_heads=heads,
                feedforward_channels=4 * dims)


def siameseim_cfg(arch, img, patch=16, target_img=None):
    dims, depth, heads = ARCHS[arch]
    grid = img // patch
    target_grid = target_img // patch if target_img else None
    return dict(
        type='SiameseIM',
        backbone=dict(type='SiameseIMViT', arch=vit_arch(arch),
                      img_size=img, patch_size=patch),
        neck=dict(type='RelPosDecoderNeck', in_channels=dims,
                  embed_dims=dims, grid_size=grid,
                  target_grid_size=target_grid, projector_depth=2,
                  predictor_depth=4, num_heads=16 if dims % 16 == 0 else
                  heads),
        head=dict(type='UniGradHead'))


def mae_cfg(arch, img, patch=16):
    dims, _, _ = ARCHS[arch]
    return dict(
        type='MAE',
        backbone=dict(type='MAEViT', arch=vit_arch(arch), img_size=img,
                      patch_size=patch, mask_ratio=0.75),
        neck=dict(type='MAEPretrainDecoder', num_patches=(img // patch)**2,
                  patch_size=patch, embed_dim=dims, decoder_embed_dim=512,
                  decoder_depth=8, decoder_num_heads=16),
        head=dict(type='MAEPretrainHead', norm_pix=True, patch_size=patch,
                  loss=dict(type='PixelReconstructionLoss', criterion='L2')))


def siameseim_batch(batch, img, patch, device, target_img=None):
    from mmpretrain.structures import DataSample
    grid = img // patch
    n_mask = int(round(0.6 * grid * grid))
    rng = np.random.default_rng(0)
    samples = []
    for _ in range(batch):
        mask = np.zeros(grid * grid, bool)
        mask[rng.permutation(grid * grid)[:n_mask]] = True
        ds = DataSample()
        ds.set_mask(torch.from_numpy(mask.reshape(grid, grid)))
        ds.set_field(np.array([[10, 20, 200, 180], [40, 5, 150, 220]],
                              np.float32), 'crop_boxes')
        ds.set_field(rng.random(2) < 0.5, 'flips')
        ds.set_field((256, 256), 'ori_shape', field_type='metainfo')
        samples.append(ds)
    views = [torch.randn(batch, 3, size, size, device=device)
             for size in (img, target_img or img)]
    return dict(inputs=views, data_samples=samples)


def mae_batch(batch, img, device):
    from mmpretrain.structures import DataSample
    return dict(inputs=torch.randn(batch, 3, img, img, device=device),
                data_samples=[DataSample() for _ in range(batch)])


class Bench:

    def __init__(self, name, model, data, args):
        self.name = name
        self.model = model.to(args.device).train()
        self.data = data
        self.args = args
        self.opt = torch.optim.AdamW(
            [p for p in model.parameters() if p.requires_grad], lr=1e-4,
            betas=(0.9, 0.95))
        self.scaler = torch.amp.GradScaler(
            'cuda', enabled=args.precision == 'fp16')
        self.times = []
        self.peak = 0

    def step(self):
        a = self.args
        dtype = {'bf16': torch.bfloat16, 'fp16': torch.float16}.get(
            a.precision)
        sync = torch.cuda.synchronize if a.device == 'cuda' else (
            lambda: None)
        sync()
        t0 = time.perf_counter()
        with torch.autocast(a.device, dtype=dtype or torch.float32,
                            enabled=dtype is not None):
            losses = self.model(**self.data, mode='loss')
        loss = sum(v for k, v in losses.items() if 'loss' in k)
        self.opt.zero_grad(set_to_none=True)
        self.scaler.scale(loss).backward()
        self.scaler.step(self.opt)
        self.scaler.update()
        sync()
        return time.perf_counter() - t0


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('--arch', default='b', choices=sorted(ARCHS))
    parser.add_argument('--batch', type=int, default=8)
    parser.add_argument('--img-size', type=int, default=224)
    parser.add_argument('--steps', type=int, default=5)
    parser.add_argument('--warmup', type=int, default=2)
    parser.add_argument('--precision', default='fp32',
                        choices=['fp32', 'bf16', 'fp16'])
    parser.add_argument('--device', default='cpu', choices=['cpu', 'cuda'])
    parser.add_argument('--models', default='siameseim,mae',
                        help='any of siameseim, siameseim-lowres (view b '
                        'encoded at --target-size), mae')
    parser.add_argument('--target-size', type=int, default=None,
                        help='view b size for siameseim-lowres (default '
                        'half of --img-size)')
    parser.add_argument('--json', action='store_true',
                        help='print one JSON object instead of a table')
    args = parser.parse_args(argv)
    if args.precision == 'fp16' and args.device != 'cuda':
        parser.error('fp16 AMP needs --device cuda (use bf16 on CPUs)')

    import mmsiameseim  # noqa: F401
    from mmpretrain.registry import MODELS
    torch.manual_seed(0)
    benches = []
    for name in args.models.split(','):
        if name == 'siameseim':
            model = MODELS.build(siameseim_cfg(args.arch, args.img_size))
            data = siameseim_batch(args.batch, args.img_size, 16,
                                   args.device)
        elif name == 'siameseim-lowres':  # the efficient target option
            target = args.target_size or args.img_size // 2
            model = MODELS.build(
                siameseim_cfg(args.arch, args.img_size, target_img=target))
            data = siameseim_batch(args.batch, args.img_size, 16,
                                   args.device, target_img=target)
        elif name == 'mae':
            model = MODELS.build(mae_cfg(args.arch, args.img_size))
            data = mae_batch(args.batch, args.img_size, args.device)
        else:
            parser.error(f'unknown model {name}')
        model.init_weights()
        benches.append(Bench(name, model, data, args))

    for b in benches:
        for _ in range(args.warmup):
            b.step()
    for _ in range(args.steps):  # alternate: both see the same noise
        for b in benches:
            if args.device == 'cuda':
                torch.cuda.reset_peak_memory_stats()
                b.times.append(b.step())
                b.peak = max(b.peak, torch.cuda.max_memory_allocated())
            else:
                with PeakRSS() as rss:
                    b.times.append(b.step())
                b.peak = max(b.peak, rss.peak)

    rows = []
    for b in benches:
        med = statistics.median(b.times)
        rows.append(dict(
            model=b.name, arch=f'vit-{args.arch}/16', batch=args.batch,
            img_size=args.img_size, precision=args.precision,
            device=args.device, step_s_median=med,
            step_s_min=min(b.times), step_s_max=max(b.times),
            images_per_s=args.batch / med,
            peak_mem_mb=b.peak / 2**20,
            peak_mem_kind='max_memory_allocated' if args.device == 'cuda'
            else 'RSS'))
    by = {r['model']: r for r in rows}
    ratio = by['siameseim']['step_s_median'] / by['mae']['step_s_median'] \
        if {'siameseim', 'mae'} <= set(by) else None
    gain = by['siameseim-lowres']['images_per_s'] / by['siameseim'][
        'images_per_s'] if {'siameseim', 'siameseim-lowres'} <= set(by) \
        else None
    if args.json:
        print(json.dumps(dict(rows=rows, siameseim_over_mae=ratio,
                              lowres_target_speedup=gain)))
        return
    head = ('model', 'arch', 'batch', 'img', 'prec', 'device', 'step s (med)',
            'min-max', 'img/s', f'peak mem MB ({rows[0]["peak_mem_kind"]})')
    print(' | '.join(head))
    print('|'.join('---' for _ in head))
    for r in rows:
        print(f'{r["model"]} | {r["arch"]} | {r["batch"]} | {r["img_size"]} '
              f'| {r["precision"]} | {r["device"]} | {r["step_s_median"]:.3f}'
              f' | {r["step_s_min"]:.3f}-{r["step_s_max"]:.3f} | '
              f'{r["images_per_s"]:.2f} | {r["peak_mem_mb"]:.0f}')
    if ratio:
        print(f'SiameseIM / MAE step time: {ratio:.2f}x')
    if gain:
        print(f'low-resolution target / default images/s: {gain:.2f}x')


if __name__ == '__main__':
    main()
