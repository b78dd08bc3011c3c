"""The UniGrad loss benchmark's measurements
(``projects/speed/tools/unigrad.py``): the chunked path against plain
autograd, forward + backward time and the extra memory of one call."""
import argparse
import statistics
import time

import torch

from projects.speed.memory import peak_rss_bytes, reset_peak_rss, rss_bytes
from projects.speed.workers import build_step

VARIANTS = {'chunked': True, 'autograd': False}
DTYPES = {'fp32': torch.float32, 'bf16': torch.bfloat16}


def build_loss(variant):
    from mmpretrain.registry import MODELS

    import mmsiameseim  # noqa: F401
    return MODELS.build(
        dict(type='UniGradLoss', memory_efficient=VARIANTS[variant]))


def make_inputs(args, scale=1):
    shape = (max(1, args.batch // scale), args.tokens, args.channels)
    dtype = DTYPES[args.dtype]
    pred = torch.randn(shape, device=args.device).to(dtype)
    target = torch.randn(shape, device=args.device).to(dtype)
    return pred.requires_grad_(), target


def sync(device):
    if device == 'cuda':
        torch.cuda.synchronize()


def fwd_bwd(loss, pred, target, device):
    pred.grad = None
    sync(device)
    t0 = time.perf_counter()
    loss(pred, target).backward()
    sync(device)
    return time.perf_counter() - t0


def memory_child(args, variant):
    """Runs in a fresh process: prints the extra memory in MB."""
    loss = build_loss(variant)
    small_pred, small_target = make_inputs(args, scale=args.batch)
    fwd_bwd(loss, small_pred[:, :8], small_target[:, :8], 'cpu')
    pred, target = make_inputs(args)
    before = rss_bytes()
    reset_peak_rss()
    fwd_bwd(loss, pred, target, 'cpu')
    peak = peak_rss_bytes()
    print((peak - before - pred.grad.nbytes) / 2**20)


def measure_step_seconds(args):
    """Median step of the ViT-B SiameseIM of
    projects/speed/tools/pretrain.py."""
    precision = 'bf16' if args.dtype == 'bf16' else 'fp32'
    bench = build_step(
        'siameseim', precision,
        argparse.Namespace(
            arch='b', img_size=224, batch=args.batch, device=args.device))
    bench.step()  # warm-up
    return statistics.median(bench.step() for _ in range(2))


def timed_rows(args, extra_memory_mb) -> tuple:
    """Both variants timed in turns (one warm-up, ``args.repeats`` runs);
    ``extra_memory_mb(args, variant)`` gives each one's memory.

    Returns the rows and the step time (s) they are compared with, if any.
    """
    torch.manual_seed(0)
    losses = {v: build_loss(v) for v in VARIANTS}
    pred, target = make_inputs(args)
    times = {v: [] for v in VARIANTS}
    for v in VARIANTS:  # warm-up
        fwd_bwd(losses[v], pred, target, args.device)
    for _ in range(args.repeats):
        for v in VARIANTS:
            times[v].append(fwd_bwd(losses[v], pred, target, args.device))
    step = measure_step_seconds(args) if args.measure_step \
        else args.step_seconds

    rows = []
    for v in VARIANTS:
        med = statistics.median(times[v])
        rows.append(
            dict(
                variant=v,
                batch=args.batch,
                tokens=args.tokens,
                channels=args.channels,
                dtype=args.dtype,
                device=args.device,
                fwd_bwd_ms_median=med * 1e3,
                fwd_bwd_ms_min=min(times[v]) * 1e3,
                fwd_bwd_ms_max=max(times[v]) * 1e3,
                extra_mem_mb=extra_memory_mb(args, v),
                extra_mem_kind='max_memory_allocated'
                if args.device == 'cuda' else 'peak RSS growth',
                pct_of_step=100 * med / step if step else None))
    return rows, step
