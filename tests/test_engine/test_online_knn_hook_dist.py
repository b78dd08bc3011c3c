"""OnlineKNNHook under two gloo ranks: each encodes its share, the features
are gathered, and the sampler's padding is dropped."""
import socket

import torch
import torch.multiprocessing as mp
from mmengine.dataset import DefaultSampler, default_collate
from mmpretrain.structures import DataSample
from torch.utils.data import DataLoader

from mmsiameseim.engine.hooks import OnlineKNNHook


class _Pre(torch.nn.Module):

    def forward(self, data, training=False):
        return data


class _Model(torch.nn.Module):

    def __init__(self):
        super().__init__()
        self.data_preprocessor = _Pre()
        self.backbone = torch.nn.Linear(4, 3)
        torch.nn.init.eye_(self.backbone.weight)
        torch.nn.init.zeros_(self.backbone.bias)


def _dataset(n):
    g = torch.Generator().manual_seed(n)
    x = torch.randn(n, 4, generator=g)
    return [
        dict(
            inputs=x[i],
            data_samples=DataSample(metainfo=dict(sample_idx=i)).set_gt_label(
                i % 2)) for i in range(n)
    ]


def _loader(n):
    data = _dataset(n)
    return DataLoader(
        data,
        batch_size=2,
        collate_fn=default_collate,
        sampler=DefaultSampler(data, shuffle=False))


def _worker(rank, port, out):
    torch.distributed.init_process_group(
        'gloo', init_method=f'tcp://127.0.0.1:{port}', rank=rank, world_size=2)
    hook = OnlineKNNHook({}, {})
    hook.loaders = dict(bank=_loader(5), query=_loader(3))
    model = _Model()
    x, y, capped = hook.encode(model, model.backbone, 'bank', None)
    if rank == 0:
        # numpy, not tensors: a tensor travels as a shared-memory handle
        # that the parent cannot open once this process has exited
        out.put((x.numpy(), y.numpy(), capped))
    torch.distributed.destroy_process_group()


def test_two_ranks_gather_every_sample_once():
    with socket.socket() as s:
        s.bind(('127.0.0.1', 0))
        port = s.getsockname()[1]
    ctx = mp.get_context('spawn')
    out = ctx.Queue()
    procs = [
        ctx.Process(target=_worker, args=(r, port, out)) for r in range(2)
    ]
    for p in procs:
        p.start()
    x, y, capped = out.get(timeout=120)
    x, y = torch.from_numpy(x), torch.from_numpy(y)
    for p in procs:
        p.join(timeout=60)
        assert p.exitcode == 0
    data = _dataset(5)
    # 5 samples over 2 ranks: 6 encoded (one padded twice), 5 kept
    assert x.shape == (5, 3) and not capped
    expected = torch.stack([d['inputs'][:3] for d in data])
    # each sample exactly once, with its own label
    match = torch.cdist(x, expected) < 1e-6
    assert match.sum(0).tolist() == [1] * 5
    assert y.tolist() == [match[j].nonzero().item() % 2 for j in range(5)]
