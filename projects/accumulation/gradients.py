"""How far each way of accumulating gradients is from the gradient of one
whole batch, on the demo's model (ViT-tiny/4, 32 px, fp32, no drop path).

For a batch of B images split into k parts: ``SiameseIM(micro_batches=k)``
(the exact accumulation: UniGrad correlation and momentum update of the
whole batch) and mmengine's plain ``accumulative_counts=k`` (k iterations
of B/k: correlation and momentum update per part), each with the recipe's
token BatchNorm in the neck and with LayerNorm (the ablation; batch
independent), with the target apart from the online weights (seeded
noise of 0.01). The figure is the relative difference of the step's
gradient from the whole batch's, ||g - g_B|| / ||g_B||.
"""
from typing import List

import torch
from mmengine.logging import MessageHub
from mmengine.optim import OptimWrapper

DEMO_CONFIG = ('configs/pretrain/'
               'siameseim_vit-tiny-p4_1xb64-bf16-coslr-1e_fashionmnist.py')


class _GradKeeping(OptimWrapper):

    def step(self, **kwargs):
        self.grad = torch.cat([
            p.grad.reshape(-1) for g in self.optimizer.param_groups
            for p in g['params'] if p.grad is not None
        ])
        super().step(**kwargs)


def _model(norm: str, micro_batches: int = 1):
    from projects.speed.models import _load, build_model
    cfg = _load(DEMO_CONFIG).model.to_dict()
    cfg['backbone']['drop_path_rate'] = 0.
    cfg['data_preprocessor']['type'] = 'EagerSelfSupDataPreprocessor'
    if norm == 'LN':
        cfg['neck']['norm_cfg'] = dict(type='LN', eps=1e-6)
    cfg['micro_batches'] = micro_batches
    model = build_model(cfg).train()
    # a target apart from the online weights, as once training has begun
    # (at the start they are equal and the momentum update moves nothing)
    g = torch.Generator().manual_seed(1)
    with torch.no_grad():
        for p in model.target.parameters():
            p.add_(0.01 * torch.randn(p.shape, generator=g))
    return model


def _data(batch: int) -> dict:
    from projects.speed.batches import siameseim_batch
    torch.manual_seed(batch)  # the views are drawn from torch's generator
    data = siameseim_batch(batch, 32, 4)
    # the demo's images are grey: one channel
    data['inputs'] = [(v[:, :1] * 60 + 127).clamp(0, 255)
                      for v in data['inputs']]
    return data


def _gradient(model, data: dict, accumulative_counts: int = 1):
    hub = MessageHub.get_current_instance()
    hub.update_info('iter', 0)
    hub.update_info('max_iters', 100)
    wrapper = _GradKeeping(
        torch.optim.SGD(model.parameters(), lr=0.),
        accumulative_counts=accumulative_counts)
    size = len(data['data_samples']) // accumulative_counts
    for i in range(accumulative_counts):
        model.train_step(
            dict(
                inputs=[v[i * size:(i + 1) * size] for v in data['inputs']],
                data_samples=data['data_samples'][i * size:(i + 1) * size]),
            wrapper)
    return wrapper.grad


def measure(cases) -> List[dict]:
    """Rows of (norm, batch, parts, exact difference, plain difference)."""
    rows = []
    for norm in ('TokenBN', 'LN'):
        for batch, parts in cases:
            data = _data(batch)
            whole = _gradient(_model(norm), data)

            def off(g):
                return float((g - whole).norm() / whole.norm())

            rows.append(
                dict(
                    norm=norm,
                    batch=batch,
                    parts=parts,
                    tokens_per_part=batch // parts * 64,
                    exact=off(_gradient(_model(norm, parts), data)),
                    plain=off(_gradient(_model(norm), data, parts))))
    return rows


def table(rows: List[dict]) -> str:
    lines = [
        '| neck norm | batch | parts | tokens per part | micro_batches '
        '(exact) | accumulative_counts (plain) |', '|---|---|---|---|---|---|'
    ]
    for r in rows:
        lines.append(f'| {r["norm"]} | {r["batch"]} | {r["parts"]} | '
                     f'{r["tokens_per_part"]} | {r["exact"]:.1e} | '
                     f'{r["plain"]:.1e} |')
    return '\n'.join(lines)
