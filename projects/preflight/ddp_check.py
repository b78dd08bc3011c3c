"""Two DDP processes on halves of a batch == one process on the whole batch
(loss and averaged gradients), for the model of a pretraining config: the
token BatchNorm statistics and the UniGrad correlation must be synced
across ranks. On CUDA with NCCL (one GPU per rank), or on CPU with gloo.

The model is the config's ``model`` at its real size; the batch is
synthetic (random views, the benchmark's fixed crop geometry and masks).
"""
import os
import socket
from typing import Optional

import numpy as np
import torch
import torch.distributed as dist
import torch.multiprocessing as mp

from projects.speed.batches import synthetic_geometry


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(('127.0.0.1', 0))
        return s.getsockname()[1]


def _batch(cfg, batch: int, device: str) -> dict:
    from mmpretrain.structures import DataSample
    backbone = cfg.model.backbone
    size, patch = backbone.img_size, backbone.patch_size
    channels = backbone.get('in_channels', 3)
    geo = synthetic_geometry(batch, size // patch, source=4 * size)
    samples = []
    for i in range(batch):
        ds = DataSample()
        ds.set_mask(torch.from_numpy(geo['masks'][i]))
        ds.set_field(geo['boxes'][i] * size / 224, 'crop_boxes')
        ds.set_field(geo['flips'][i], 'flips')
        ds.set_field((geo['source'], geo['source']), 'crop_source_shape')
        samples.append(ds)
    g = torch.Generator().manual_seed(1)
    views = [
        torch.randn(batch, channels, size, size, generator=g).to(device)
        for _ in range(2)
    ]
    return dict(inputs=views, data_samples=samples)


def _step(config: str, batch: int, idx: list, device: str):
    """Loss and flat gradient of the config's model (seed 0) on the
    samples ``idx`` of the synthetic batch."""
    from mmengine.config import Config
    from mmengine.registry import init_default_scope
    from mmpretrain.registry import MODELS
    cfg = Config.fromfile(config)
    init_default_scope('mmpretrain')
    torch.manual_seed(0)
    model = MODELS.build(cfg.model)
    model.init_weights()
    model.to(device).train()
    data = _batch(cfg, batch, device)
    inputs = [v[idx] for v in data['inputs']]
    samples = [data['data_samples'][i] for i in idx]
    loss = model.loss(inputs, samples, update_target=False)['loss']
    loss.backward()
    grad = torch.cat(
        [p.grad.reshape(-1) for p in model.parameters() if p.grad is not None])
    return loss.detach(), grad


def _worker(rank: int, world: int, port: int, config: str, batch: int,
            backend: str, queue) -> None:
    os.environ.update(MASTER_ADDR='127.0.0.1', MASTER_PORT=str(port))
    dist.init_process_group(backend, rank=rank, world_size=world)
    device = f'cuda:{rank}' if backend == 'nccl' else 'cpu'
    if backend == 'nccl':
        torch.cuda.set_device(rank)
    half = batch // world
    loss, grad = _step(config, batch,
                       list(range(rank * half, (rank + 1) * half)), device)
    dist.all_reduce(loss)
    dist.all_reduce(grad)
    if rank == 0:
        queue.put((float(loss) / world, (grad / world).cpu().numpy()))
    dist.destroy_process_group()


def _wait(queue, procs, timeout_s: float):
    """Rank 0's result; a rank that died or the time running out is an
    error that says so."""
    import queue as queue_lib
    import time
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        try:
            return queue.get(timeout=2)
        except queue_lib.Empty:
            dead = [p.exitcode for p in procs if p.exitcode not in (None, 0)]
            if dead:
                raise RuntimeError(f'a DDP rank exited with status {dead} '
                                   '(its traceback is above)')
    raise TimeoutError(f'the two DDP ranks gave no result in {timeout_s} s')


def ddp_equivalence(config: str,
                    batch: int = 4,
                    backend: Optional[str] = None,
                    timeout_s: float = 600.) -> dict:
    """Loss and gradient of two ranks on halves of a batch against one
    process on the whole batch.

    Args:
        config (str): A SiameseIM pretraining config (its ``model``).
        batch (int): The whole batch (even). Defaults to 4.
        backend (str, optional): 'nccl' (two GPUs) or 'gloo' (CPU);
            default nccl when two GPUs are visible, else gloo.
        timeout_s (float): Longest wait for the ranks.

    Returns:
        dict: ``loss_one``, ``loss_two``, ``loss_rel_err``,
        ``grad_rel_err``, ``backend``.
    """
    if batch % 2:
        raise ValueError(f'batch must be even, got {batch}')
    if backend is None:
        backend = 'nccl' if torch.cuda.device_count() >= 2 else 'gloo'
    device = 'cuda:0' if backend == 'nccl' else 'cpu'
    loss1, grad1 = _step(config, batch, list(range(batch)), device)
    ctx = mp.get_context('spawn')
    queue = ctx.Queue()
    port = _free_port()
    procs = [
        ctx.Process(
            target=_worker, args=(r, 2, port, config, batch, backend, queue))
        for r in range(2)
    ]
    for p in procs:
        p.start()
    try:
        loss2, grad2 = _wait(queue, procs, timeout_s)
    finally:
        for p in procs:
            p.join(timeout=60)
            if p.is_alive():
                p.kill()
    grad1 = grad1.cpu().numpy()
    return dict(
        backend=backend,
        batch=batch,
        loss_one=float(loss1),
        loss_two=loss2,
        loss_rel_err=abs(loss2 - float(loss1)) / abs(float(loss1)),
        grad_rel_err=float(
            np.linalg.norm(grad2 - grad1) / np.linalg.norm(grad1)))


def main(argv=None) -> int:
    """``python -m projects.preflight.ddp_check CONFIG [--batch B]
    [--backend nccl|gloo] [--tolerance T]``: prints the result as one JSON
    line; exit status 1 when a relative error exceeds the tolerance."""
    import argparse
    import json
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('config')
    parser.add_argument('--batch', type=int, default=4)
    parser.add_argument('--backend', choices=['nccl', 'gloo'], default=None)
    parser.add_argument(
        '--tolerance',
        type=float,
        default=1e-4,
        help='largest relative error of loss and gradient')
    args = parser.parse_args(argv)
    out = ddp_equivalence(args.config, args.batch, args.backend)
    out['tolerance'] = args.tolerance
    out['equal'] = max(out['loss_rel_err'],
                       out['grad_rel_err']) <= args.tolerance
    print(json.dumps(out))
    return 0 if out['equal'] else 1


if __name__ == '__main__':
    raise SystemExit(main())
