"""Two gloo ranks on halves of a batch == one process on the whole batch."""
import os
import socket

import torch
import torch.distributed as dist
import torch.multiprocessing as mp

from tests.helpers import random_batch, tiny_siameseim_cfg

B = 4


def _free_port():
    with socket.socket() as s:
        s.bind(('127.0.0.1', 0))
        return s.getsockname()[1]


def _model():
    from mmpretrain.registry import MODELS

    import mmsiameseim  # noqa: F401
    torch.manual_seed(0)
    model = MODELS.build(tiny_siameseim_cfg())
    model.init_weights()
    # make the target differ from the online weights
    with torch.no_grad():
        for p in model.target.parameters():
            p.add_(0.01 * torch.randn_like(p))
    return model.train()


def _step(model, idx):
    views, samples = random_batch(B)
    loss = model.loss([v[idx] for v in views], [samples[i] for i in idx],
                      update_target=False)['loss']
    loss.backward()
    grad = torch.cat(
        [p.grad.reshape(-1) for p in model.parameters() if p.grad is not None])
    return loss.detach(), grad


def _worker(rank, world, port, queue):
    os.environ.update(MASTER_ADDR='127.0.0.1', MASTER_PORT=str(port))
    dist.init_process_group('gloo', rank=rank, world_size=world)
    half = B // world
    loss, grad = _step(_model(), list(range(rank * half, (rank + 1) * half)))
    dist.all_reduce(loss)
    dist.all_reduce(grad)
    if rank == 0:
        queue.put((float(loss) / world, (grad / world).numpy()))
    dist.destroy_process_group()


def _two_ranks():
    ctx = mp.get_context('spawn')
    queue = ctx.Queue()
    port = _free_port()
    procs = [
        ctx.Process(target=_worker, args=(r, 2, port, queue)) for r in range(2)
    ]
    for p in procs:
        p.start()
    loss, grad = queue.get(timeout=180)
    for p in procs:
        p.join(timeout=60)
    return loss, torch.from_numpy(grad)


def test_two_gloo_ranks_equal_one_process():
    loss1, grad1 = _step(_model(), list(range(B)))
    loss2, grad2 = _two_ranks()
    assert abs(loss2 - float(loss1)) <= 1e-5 * abs(float(loss1))
    assert float((grad2 - grad1).norm() / grad1.norm()) <= 1e-5


def test_unsynced_batchnorm_differs():
    """Without the sync the halves see other statistics (the switch works)."""
    from mmpretrain.registry import MODELS
    torch.manual_seed(0)
    synced = MODELS.build(tiny_siameseim_cfg())
    torch.manual_seed(0)
    local = MODELS.build(
        tiny_siameseim_cfg(norm_cfg=dict(type='TokenBN', sync=False)))
    assert all(m.sync for m in synced.modules() if hasattr(m, 'sync'))
    assert not any(m.sync for m in local.modules() if hasattr(m, 'sync'))
