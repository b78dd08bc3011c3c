"""Training-step speed of SiameseIM next to mmpretrain's MAE, same backbone.

    python tools/benchmark_pretrain.py [--arch b] [--batch 8] [--img-size 224]
        [--steps 5] [--warmup 2] [--precision fp32[,bf16[,fp16]]]
        [--device cpu] [--models siameseim,siameseim-lowres,mae,official]
        [--target-size 112] [--official-repo PATH] [--max-workers N]
        [--json]

Every (model, precision) pair gets its own worker process; the workers take
their timed steps in turns (one at a time, so all see the same machine
noise). Only as many workers are alive at once as the memory holds: the
first one's peak resident set is measured after its warm-up, and another
starts only while /proc/meminfo's MemAvailable (and on CUDA the device's
free memory) exceeds 1.5 times the largest peak so far plus 512 MiB; the
rest run in later groups (``--max-workers`` caps the group, 1 runs them in
sequence). A worker that dies is named with its exit code or signal
(SIGKILL: most likely the out-of-memory killer).

A step is forward + backward + optimizer step (+ the momentum update for
SiameseIM) on synthetic inputs. Prints arch, batch, image size,
precision, device, step time (median and min-max), images/s, GFLOP per step
(forward + backward, counted once with ``torch.utils.flop_counter``; the
attention counted through its matmul form), the GFLOP/s achieved, and peak
memory: on CPU the worker's peak resident set (VmHWM: interpreter, model,
optimizer state and the step), on GPU ``max_memory_allocated``. Then, per
precision, each model's step time and FLOPs over MAE's, each model's
images/s gain over fp32, the efficient target option's gain
(``siameseim-lowres``: view b encoded at ``--target-size``, the predictor
predicting that grid) and ours over the authors'.

``official`` times the authors' own implementation from a clone of
OpenGVLab/Siamese-Image-Modeling at ``--official-repo`` (same ViT, same
mask count and crop geometry; see ``tools/authors_siameseim.py``).
"""
import argparse
import json
import multiprocessing
import signal
import statistics
import sys
import time

import numpy as np
import torch

ARCHS = {  # embed dims, depth, heads
    't': (192, 12, 3),
    's': (384, 12, 6),
    'b': (768, 12, 12),
    'l': (1024, 24, 16),
}


def add_shape_options(parser):
    """--arch, --batch and --img-size, by default the setting the targets
    are stated at: ViT-B/16, batch 8, 224 px."""
    parser.add_argument('--arch', default='b', choices=sorted(ARCHS))
    parser.add_argument('--batch', type=int, default=8)
    parser.add_argument('--img-size', type=int, default=224)


def peak_rss_bytes():
    """Peak resident set of this process (VmHWM), Linux."""
    with open('/proc/self/status') as f:
        for line in f:
            if line.startswith('VmHWM:'):
                return int(line.split()[1]) * 1024
    raise RuntimeError('no VmHWM in /proc/self/status')


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


def synthetic_geometry(batch, grid):
    """Masks (B, grid, grid; 60 % masked), crop boxes (B, 2, 4), flips
    (B, 2) and source widths (B,) of a synthetic two-view batch."""
    rng = np.random.default_rng(0)
    n_mask = int(round(0.6 * grid * grid))
    masks = np.zeros((batch, grid * grid), bool)
    for mask in masks:
        mask[rng.permutation(grid * grid)[:n_mask]] = True
    boxes = np.tile(np.array([[10, 20, 200, 180], [40, 5, 150, 220]],
                             np.float32), (batch, 1, 1))
    flips = rng.random((batch, 2)) < 0.5
    return dict(masks=masks.reshape(batch, grid, grid), boxes=boxes,
                flips=flips, widths=np.full(batch, 256.))


def siameseim_batch(batch, img, patch, device, target_img=None):
    from mmpretrain.structures import DataSample
    geo = synthetic_geometry(batch, img // patch)
    samples = []
    for i in range(batch):
        ds = DataSample()
        ds.set_mask(torch.from_numpy(geo['masks'][i]))
        ds.set_field(geo['boxes'][i], 'crop_boxes')
        ds.set_field(geo['flips'][i], 'flips')
        ds.set_field((256, int(geo['widths'][i])), 'ori_shape',
                     field_type='metainfo')
        samples.append(ds)
    views = [torch.randn(batch, 3, size, size, device=device)
             for size in (img, target_img or img)]
    return dict(inputs=views, data_samples=samples)


def mae_batch(batch, img, device):
    from mmpretrain.structures import DataSample
    return dict(inputs=torch.randn(batch, 3, img, img, device=device),
                data_samples=[DataSample() for _ in range(batch)])


class Bench:
    """One model's training step at one precision (``args.precision``,
    ``args.device``)."""

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

    def _sync(self):
        if self.args.device == 'cuda':
            torch.cuda.synchronize()

    def _forward_backward(self):
        dtype = {'bf16': torch.bfloat16, 'fp16': torch.float16}.get(
            self.args.precision)
        with torch.autocast(self.args.device,
                            dtype=dtype or torch.float32,
                            enabled=dtype is not None):
            losses = self.model(**self.data, mode='loss')
        loss = sum(v for k, v in losses.items() if 'loss' in k)
        self.opt.zero_grad(set_to_none=True)
        self.scaler.scale(loss).backward()

    def step(self):
        """Seconds of one training step."""
        self._sync()
        t0 = time.perf_counter()
        self._forward_backward()
        self.scaler.step(self.opt)
        self.scaler.update()
        self._sync()
        return time.perf_counter() - t0

    def flops(self):
        """FLOPs of one forward + backward. Attention goes through its
        matmul form, which the counter knows (the CPU fused kernel it
        does not); the optimizer step is not counted."""
        from torch.nn.attention import SDPBackend, sdpa_kernel
        from torch.utils.flop_counter import FlopCounterMode
        counter = FlopCounterMode(display=False)
        with counter, sdpa_kernel(SDPBackend.MATH):
            self._forward_backward()
        self.opt.zero_grad(set_to_none=True)
        return counter.get_total_flops()


def build_bench(name, precision, args):
    """The model and synthetic batch called ``name`` (see --models)."""
    import mmsiameseim  # noqa: F401
    from mmengine.logging import MMLogger
    from mmpretrain.registry import MODELS
    torch.manual_seed(0)
    bench_args = argparse.Namespace(**vars(args))
    bench_args.precision = precision
    if name == 'siameseim':
        model = MODELS.build(siameseim_cfg(args.arch, args.img_size))
        data = siameseim_batch(args.batch, args.img_size, 16, args.device)
    elif name == 'siameseim-lowres':  # the efficient target option
        target = args.target_size or args.img_size // 2
        model = MODELS.build(
            siameseim_cfg(args.arch, args.img_size, target_img=target))
        data = siameseim_batch(args.batch, args.img_size, 16, args.device,
                               target_img=target)
    elif name == 'mae':
        model = MODELS.build(mae_cfg(args.arch, args.img_size))
        data = mae_batch(args.batch, args.img_size, args.device)
    elif name == 'official':  # the authors' code, from --official-repo
        import authors_siameseim
        dims, depth, heads = ARCHS[args.arch]
        model = authors_siameseim.build(args.official_repo, dims, depth,
                                         heads, args.img_size)
        geo = synthetic_geometry(args.batch, args.img_size // 16)
        data = authors_siameseim.batch(geo['boxes'], geo['flips'],
                                       geo['masks'], geo['widths'],
                                       args.img_size, args.device)
        return Bench(name, model, data, bench_args)
    else:
        raise ValueError(f'unknown model {name!r}')
    logger = MMLogger.get_current_instance()
    level = logger.level
    logger.setLevel('WARNING')  # init_weights logs every parameter
    try:
        model.init_weights()
    finally:
        logger.setLevel(level)
    return Bench(name, model, data, bench_args)


def mem_available_bytes():
    """MemAvailable of /proc/meminfo (Linux), or None."""
    try:
        with open('/proc/meminfo') as f:
            for line in f:
                if line.startswith('MemAvailable:'):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return None


# Another worker starts only while the free memory covers this many times
# the largest peak a worker has shown, plus the reserve: its own peak, and
# the step of a running worker (they step in turns) above its idle size.
HEADROOM = 1.5
RESERVE_BYTES = 512 * 2**20


def room_for_another(peaks, available):
    """Whether one more worker fits beside the running ones.

    Args:
        peaks (list[int]): Peak bytes of the workers measured so far.
        available (int | None): Free bytes now (MemAvailable, or the
            device's free memory); None (unknown) means no.
    """
    if available is None or not peaks:
        return False
    return available >= HEADROOM * max(peaks) + RESERVE_BYTES


def worker(conn, name, precision, args):
    """Runs in its own process: builds one bench, then answers 'step',
    'flops', 'memory' (the row's peak), 'rss' (peak resident set) and
    'device_free' until 'stop'."""
    try:
        bench = build_bench(name, precision, args)
        conn.send('ready')
        while True:
            command = conn.recv()
            if command == 'stop':
                return
            if command == 'step':
                if args.device == 'cuda':
                    torch.cuda.reset_peak_memory_stats()
                conn.send(bench.step())
            elif command == 'flops':
                conn.send(bench.flops())
            elif command == 'memory':
                conn.send(torch.cuda.max_memory_allocated()
                          if args.device == 'cuda' else peak_rss_bytes())
            elif command == 'rss':
                conn.send(peak_rss_bytes())
            elif command == 'device_free':
                conn.send(torch.cuda.mem_get_info()[0]
                          if args.device == 'cuda' else None)
    except (EOFError, BrokenPipeError):  # the parent has gone
        return
    except Exception as e:  # report, the parent raises
        conn.send(RuntimeError(f'{name} ({precision}): '
                               f'{type(e).__name__}: {e}'))


_DOING = {None: 'starting (importing, building the model)',
          'step': 'taking a training step', 'flops': 'counting FLOPs',
          'memory': 'reporting its memory', 'rss': 'reporting its memory',
          'device_free': 'reporting free device memory'}


class Worker:
    """Parent-side handle of a worker process."""

    def __init__(self, ctx, name, precision, args):
        self.name, self.precision = name, precision
        self.conn, child = ctx.Pipe()
        self.process = ctx.Process(target=worker,
                                   args=(child, name, precision, args),
                                   daemon=True)
        self.process.start()
        # Only the worker may hold its end: if it dies, recv() then ends
        # with EOFError instead of waiting forever.
        child.close()
        self.times = []
        self.peak = None  # peak resident set after warm-up
        self.ask(None)  # 'ready'

    def ask(self, command):
        try:
            if command is not None:
                self.conn.send(command)
            answer = self.conn.recv()
        except (EOFError, BrokenPipeError, ConnectionResetError):
            raise SystemExit(self.death(command)) from None
        if isinstance(answer, Exception):
            raise SystemExit(str(answer))
        return answer

    def death(self, command):
        """Why the worker went away, for the message."""
        self.process.join(timeout=30)
        code = self.process.exitcode
        hint = ''
        if code is None:
            why = 'closed its pipe but is still running'
        elif code < 0:
            try:
                sig = signal.Signals(-code).name
            except ValueError:
                sig = f'signal {-code}'
            why = f'was killed by {sig} (exit code {code})'
            if -code == signal.SIGKILL:
                hint = (': most likely out of memory (the kernel\'s OOM '
                        'killer sends SIGKILL; see dmesg). Run fewer workers'
                        ' at once with --max-workers 1, a smaller --batch, '
                        'or fewer --models/--precision')
        else:
            why = f'exited with code {code}'
        available = mem_available_bytes()
        memory = (f'; MemAvailable now {available / 2**30:.1f} GiB'
                  if available is not None else '')
        return (f'benchmark_pretrain: worker {self.name} ({self.precision}) '
                f'{why} while {_DOING.get(command, command)}{hint}{memory}')

    def stop(self):
        try:
            self.conn.send('stop')
        except OSError:  # already gone
            pass
        self.process.join(timeout=60)
        if self.process.is_alive():
            self.process.terminate()
            self.process.join()
        self.conn.close()


def pairs(args):
    """(precision, model) of every worker. The authors' code has autocast
    only through ``torch.cuda.amp`` (fp16 on CUDA), so it gets no bf16
    worker."""
    return [(precision, name) for precision in args.precision.split(',')
            for name in args.models.split(',')
            if not (name == 'official' and precision == 'bf16')]


def start_group(ctx, todo, args, group):
    """Start and warm up workers from ``todo`` (popped) into ``group`` while
    they fit: one at least; another only while ``room_for_another`` says
    the free memory (host, and on CUDA the device) holds one more worker of
    the largest peak measured so far; never more than ``--max-workers``."""
    host_peaks, device_peaks = [], []
    while todo:
        if group:
            if len(group) >= args.max_workers:
                break
            if not room_for_another(host_peaks, mem_available_bytes()):
                break
            if args.device == 'cuda' and not room_for_another(
                    device_peaks, group[0].ask('device_free')):
                break
        precision, name = todo.pop(0)
        w = Worker(ctx, name, precision, args)
        group.append(w)
        for _ in range(args.warmup):
            w.ask('step')
        w.peak = w.ask('rss')
        host_peaks.append(w.peak)
        if args.device == 'cuda':
            device_peaks.append(w.ask('memory'))


def run(args):
    """Rows (one per model and precision) from worker processes, in groups
    of as many workers as the memory holds (all of them when it does)."""
    ctx = multiprocessing.get_context('spawn')
    todo, rows, group = pairs(args), [], []
    try:
        while todo:
            start_group(ctx, todo, args, group)
            for _ in range(args.steps):  # in turns: all see the same noise
                for w in group:
                    w.times.append(w.ask('step'))
            for w in group:
                med = statistics.median(w.times)
                flops = w.ask('flops')
                rows.append(dict(
                    model=w.name, arch=f'vit-{args.arch}/16',
                    batch=args.batch, img_size=args.img_size,
                    precision=w.precision, device=args.device,
                    step_s_median=med, step_s_min=min(w.times),
                    step_s_max=max(w.times), images_per_s=args.batch / med,
                    gflop_per_step=flops / 1e9,
                    gflop_per_s=flops / 1e9 / med,
                    peak_mem_mb=w.ask('memory') / 2**20,
                    peak_mem_kind='max_memory_allocated'
                    if args.device == 'cuda' else 'peak RSS of the worker',
                    workers_alive=len(group)))
            for w in group:
                w.stop()
            group = []
    finally:
        for w in group:
            if w.process.is_alive():
                w.stop()
    return rows


def ratios(rows):
    """Per precision: each model's step time and FLOPs over MAE's; images/s
    gains over fp32, of the low-resolution target over the default, and of
    ours over the authors'."""
    by = {(r['model'], r['precision']): r for r in rows}
    out = dict(step_over_mae={}, flops_over_mae={}, speedup_over_fp32={},
               lowres_target_speedup={}, speedup_over_official={})

    def gain(row, base):
        return row['images_per_s'] / base['images_per_s']

    for (model, precision), r in by.items():
        if model != 'mae' and ('mae', precision) in by:
            mae = by['mae', precision]
            out['step_over_mae'].setdefault(model, {})[precision] = \
                r['step_s_median'] / mae['step_s_median']
            out['flops_over_mae'].setdefault(model, {})[precision] = \
                r['gflop_per_step'] / mae['gflop_per_step']
        if precision != 'fp32' and (model, 'fp32') in by:
            out['speedup_over_fp32'][f'{model} {precision}'] = gain(
                r, by[model, 'fp32'])
        if model == 'siameseim-lowres' and ('siameseim', precision) in by:
            out['lowres_target_speedup'][precision] = gain(
                r, by['siameseim', precision])
        if model == 'siameseim' and ('official', precision) in by:
            out['speedup_over_official'][precision] = gain(
                r, by['official', precision])
    return out


def format_table(rows, summary):
    head = ('model', 'arch', 'batch', 'img', 'prec', 'device', 'step s (med)',
            'min-max', 'img/s', 'GFLOP/step', 'GFLOP/s',
            f'peak mem MB ({rows[0]["peak_mem_kind"]})')
    lines = [' | '.join(head), '|'.join('---' for _ in head)]
    for r in rows:
        lines.append(
            f'{r["model"]} | {r["arch"]} | {r["batch"]} | {r["img_size"]} | '
            f'{r["precision"]} | {r["device"]} | {r["step_s_median"]:.3f} | '
            f'{r["step_s_min"]:.3f}-{r["step_s_max"]:.3f} | '
            f'{r["images_per_s"]:.2f} | {r["gflop_per_step"]:.0f} | '
            f'{r["gflop_per_s"]:.1f} | {r["peak_mem_mb"]:.0f}')
    alive = max(r['workers_alive'] for r in rows)
    lines.append(f'workers alive at once: at most {alive} of {len(rows)}' + (
        ' (all; timed in turns)' if alive == len(rows) else
        ' (groups timed one after another, each in turns: --max-workers or '
        'the free memory)'))
    for model, by_precision in summary['step_over_mae'].items():
        for precision, ratio in by_precision.items():
            flops = summary['flops_over_mae'][model][precision]
            lines.append(f'{model} / mae ({precision}): step time '
                         f'{ratio:.2f}x, FLOPs {flops:.2f}x')
    for key, value in summary['speedup_over_fp32'].items():
        lines.append(f'{key} / fp32 images/s: {value:.2f}x')
    for precision, value in summary['lowres_target_speedup'].items():
        lines.append(f'low-resolution target / default images/s '
                     f'({precision}): {value:.2f}x')
    for precision, value in summary['speedup_over_official'].items():
        lines.append(f'siameseim / official (the authors\') images/s '
                     f'({precision}): {value:.2f}x')
    return '\n'.join(lines)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    add_shape_options(parser)
    parser.add_argument('--steps', type=int, default=5)
    parser.add_argument('--warmup', type=int, default=2)
    parser.add_argument('--precision', default='fp32',
                        help='comma-separated: fp32, bf16 (autocast), fp16 '
                        '(AMP, CUDA only)')
    parser.add_argument('--device', default='cpu', choices=['cpu', 'cuda'])
    parser.add_argument('--models', default='siameseim,mae',
                        help='comma-separated: siameseim, siameseim-lowres '
                        '(view b encoded at --target-size), mae, official '
                        '(the authors\' code, from --official-repo)')
    parser.add_argument('--official-repo', default=None,
                        help='root of a clone of OpenGVLab/Siamese-Image-'
                        'Modeling, for --models official')
    parser.add_argument('--target-size', type=int, default=None,
                        help='view b size for siameseim-lowres (default '
                        'half of --img-size)')
    parser.add_argument('--max-workers', type=int, default=None,
                        help='most worker processes alive at once (default: '
                        'as many as the free memory holds, measured: see '
                        'the module doc; 1 runs them in sequence)')
    parser.add_argument('--json', action='store_true',
                        help='print one JSON object instead of a table')
    args = parser.parse_args(argv)
    if args.max_workers is None:
        args.max_workers = len(pairs(args))
    elif args.max_workers < 1:
        parser.error('--max-workers: at least 1')
    for precision in args.precision.split(','):
        if precision not in ('fp32', 'bf16', 'fp16'):
            parser.error(f'--precision: unknown {precision!r} (fp32, bf16, '
                         'fp16)')
        if precision == 'fp16' and args.device != 'cuda':
            parser.error('fp16 AMP needs --device cuda (use bf16 on CPUs)')
    for name in args.models.split(','):
        if name not in ('siameseim', 'siameseim-lowres', 'mae', 'official'):
            parser.error(f'--models: unknown {name!r} (siameseim, '
                         'siameseim-lowres, mae, official)')
    if 'official' in args.models.split(','):
        from authors_siameseim import checkout_problem
        problem = checkout_problem(args.official_repo)
        if problem:
            parser.error(f'--models official needs --official-repo: {problem}')
        if 'bf16' in args.precision.split(','):
            print('note: no bf16 row for official (its autocast is '
                  'torch.cuda.amp: fp32, or fp16 on CUDA)', file=sys.stderr)
    rows = run(args)
    summary = ratios(rows)
    if args.json:
        print(json.dumps(dict(rows=rows, **summary)))
    else:
        print(format_table(rows, summary))


if __name__ == '__main__':
    main()
