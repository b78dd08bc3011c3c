"""Exact gradient accumulation (``micro_batches``) and activation
checkpointing: k parts of B/k give the gradient of one batch of B (exactly
with a batch-independent neck norm; with the recipe's token BatchNorm, only
the normalisation statistics differ, far less than with mmengine's plain
``accumulative_counts``), and checkpointing changes no gradient."""
import copy
import os

import pytest
import torch
import torch.distributed as dist
import torch.multiprocessing as mp
from mmengine.logging import MessageHub
from mmengine.optim import OptimWrapper
from mmpretrain.registry import MODELS

import mmsiameseim  # noqa: F401
from tests.helpers import random_batch, tiny_siameseim_cfg
from tests.test_models.test_algorithms.test_siameseim_distributed import \
    _free_port

B = 8


class GradKeepingWrapper(OptimWrapper):
    """Keeps the gradients of each step (by parameter name) before the
    optimizer uses them."""

    def step(self, **kwargs):
        self.grads = [p.grad.clone() for p in self._params()]
        super().step(**kwargs)

    def _params(self):
        return [
            p for g in self.optimizer.param_groups for p in g['params']
            if p.grad is not None
        ]


def _model(**overrides):
    norm = overrides.pop('norm_cfg', None)
    cfg = tiny_siameseim_cfg(**({} if norm is None else dict(norm_cfg=norm)))
    cfg['data_preprocessor']['type'] = 'EagerSelfSupDataPreprocessor'
    cfg.update(overrides)
    torch.manual_seed(0)
    model = MODELS.build(cfg)
    model.init_weights()
    with torch.no_grad():  # a target that differs from the online weights
        for p in model.target.parameters():
            p.add_(0.01 * torch.randn_like(p))
    return model.train()


def _data(n=B, seed=0):
    views, samples = random_batch(n, seed=seed)
    return dict(
        inputs=[(v * 60 + 127).clamp(0, 255) for v in views],
        data_samples=samples)


def _step(model, data, accumulative_counts=1):
    """One optimizer step's gradient (a flat vector) and logged loss."""
    hub = MessageHub.get_instance('test_siameseim_accumulation')
    hub.update_info('iter', 0)
    hub.update_info('max_iters', 10)
    wrapper = GradKeepingWrapper(
        torch.optim.SGD(model.parameters(), lr=0.),
        accumulative_counts=accumulative_counts)
    if accumulative_counts == 1:
        log = model.train_step(data, wrapper)
    else:  # what mmengine does: k iterations of B/k
        k = accumulative_counts
        size = B // k
        for i in range(k):
            part = dict(
                inputs=[v[i * size:(i + 1) * size] for v in data['inputs']],
                data_samples=data['data_samples'][i * size:(i + 1) * size])
            log = model.train_step(part, wrapper)
    return torch.cat([g.reshape(-1) for g in wrapper.grads]), log


def _relative(a, b):
    return float((a - b).norm() / b.norm())


def test_micro_batches_give_the_whole_batch_gradient():
    """With a batch-independent neck norm (LayerNorm), k parts of B/k give
    the gradient and the loss of the batch of B to fp32 rounding."""
    norm = dict(type='LN', eps=1e-6)
    whole = _model(norm_cfg=norm)
    data = _data()
    g1, log1 = _step(whole, data)
    for k in (2, 4):
        parts = _model(norm_cfg=norm, micro_batches=k)
        gk, logk = _step(parts, data)
        assert _relative(gk, g1) <= 1e-6, k
        torch.testing.assert_close(
            logk['loss'], log1['loss'], rtol=1e-6, atol=0)
        # one momentum update per step, as for the whole batch
        for (name, a), b in zip(whole.target.named_parameters(),
                                parts.target.parameters()):
            torch.testing.assert_close(a, b, rtol=0, atol=0, msg=name)


def _per_part_statistics(monkeypatch, parts):
    """TokenBN of a whole batch normalising each part of its images by the
    part's own statistics (what the parts of micro_batches see); ``parts``:

    their number (equal parts) or their sizes in images.
    """
    import torch.nn.functional as F

    from mmsiameseim.models import TokenBatchNorm

    def forward(self, x):
        sizes = [len(x) // parts] * parts if isinstance(parts, int) else parts
        out = [
            F.batch_norm(
                g.reshape(-1, x.shape[-1]).float(), None, None, self.weight,
                self.bias, True, 0., self.eps).reshape(g.shape)
            for g in x.split(sizes)
        ]
        return torch.cat(out)

    monkeypatch.setattr(TokenBatchNorm, 'forward', forward)


def test_with_token_batchnorm_only_the_statistics_differ(monkeypatch):
    """The recipe's token BatchNorm normalises each part by its own
    statistics, and that is the only difference: the parts' gradient is the
    whole batch's with each part's statistics, to fp32 rounding.

    The difference from the whole batch's own gradient shrinks as the parts
    grow (docs/pretraining/memory.md).
    """
    errors = {}
    for n, k in ((8, 4), (32, 2)):
        data = _data(n)
        whole, _ = _step(_model(), data)
        parts, _ = _step(_model(micro_batches=k), data)
        errors[n // k] = _relative(parts, whole)
        with monkeypatch.context() as patch:
            _per_part_statistics(patch, k)
            reference, _ = _step(_model(), data)
        assert _relative(parts, reference) <= 1e-6, (n, k)
    assert 0 < errors[16] < errors[2] / 4, errors


@pytest.mark.person_matrix(
    'train', 'micro_batches',
    "a batch that micro_batches does not divide (an epoch's last, 10 images "
    'in 4 parts; 8 in 3) trains in parts as even as it allows, with the '
    "whole batch's gradient and loss")
def test_a_ragged_batch_trains_in_uneven_parts_with_its_whole_gradient():
    """Parts of 3, 3, 2, 2 images (10 in 4), 3, 3, 2 (8 in 3) and of one
    image each (3 images, micro_batches 4) give the gradient and the loss
    of the whole batch: each part's loss and its share of the correlation
    weighted by its images."""
    from mmsiameseim.models.algorithms.exact_accumulation import part_sizes
    assert part_sizes(10, 4) == [3, 3, 2, 2]
    assert part_sizes(64, 3) == [22, 21, 21]
    assert part_sizes(3, 4) == [1, 1, 1]
    norm = dict(type='LN', eps=1e-6)
    for n, k in ((10, 4), (8, 3), (3, 4)):
        data = _data(n)
        g1, log1 = _step(_model(norm_cfg=norm), data)
        gk, logk = _step(_model(norm_cfg=norm, micro_batches=k), data)
        assert _relative(gk, g1) <= 1e-6, (n, k)
        torch.testing.assert_close(
            logk['loss'], log1['loss'], rtol=1e-6, atol=0)


def test_uneven_parts_with_token_batchnorm(monkeypatch):
    """With the recipe's token BatchNorm, uneven parts differ from the whole
    batch only by each part's own statistics, as equal parts do."""
    data = _data(10)
    parts, _ = _step(_model(micro_batches=4), data)
    _per_part_statistics(monkeypatch, [3, 3, 2, 2])
    reference, _ = _step(_model(), data)
    assert _relative(parts, reference) <= 1e-6


def test_micro_batches_are_refused_where_they_cannot_be_exact():
    with pytest.raises(ValueError, match='positive integer'):
        _model(micro_batches=0)
    cfg = tiny_siameseim_cfg()
    cfg['head']['loss'] = dict(type='UniGradLoss', target_norm='moco-like')
    with pytest.raises(ValueError, match="target_norm='moco-like' cannot"):
        MODELS.build(dict(cfg, micro_batches=2))


def test_accumulative_counts_on_top_of_micro_batches():
    """Two batches of 4 in 2 parts each, accumulated by mmengine over two
    iterations, give the gradient of the two batches' losses averaged (the
    correlation exact within each batch): one step, after the second."""
    norm = dict(type='LN', eps=1e-6)
    data = _data()
    halves = [
        dict(
            inputs=[v[i * 4:(i + 1) * 4] for v in data['inputs']],
            data_samples=data['data_samples'][i * 4:(i + 1) * 4])
        for i in range(2)
    ]
    reference = _model(norm_cfg=norm)
    wrapper = GradKeepingWrapper(
        torch.optim.SGD(reference.parameters(), lr=0.), accumulative_counts=2)
    for half in halves:
        reference.train_step(half, wrapper)
    expected = torch.cat([g.reshape(-1) for g in wrapper.grads])
    model = _model(norm_cfg=norm, micro_batches=2)
    wrapper = GradKeepingWrapper(
        torch.optim.SGD(model.parameters(), lr=0.), accumulative_counts=2)
    model.train_step(halves[0], wrapper)
    assert not hasattr(wrapper, 'grads')  # no step after the first batch
    model.train_step(halves[1], wrapper)
    got = torch.cat([g.reshape(-1) for g in wrapper.grads])
    assert wrapper._inner_count == 2
    assert _relative(got, expected) <= 1e-6


def test_activation_checkpointing_changes_no_gradient():
    data = _data()
    g1, log1 = _step(_model(), data)
    model = _model(activation_checkpointing=True)
    assert model.backbone.with_cp and model.neck.with_cp
    gc, logc = _step(model, data)
    assert _relative(gc, g1) <= 1e-6
    torch.testing.assert_close(logc['loss'], log1['loss'], rtol=0, atol=0)
    # with drop path: the recomputed blocks draw the same paths
    g1, _ = _step(
        _model(
            backbone=dict(
                tiny_siameseim_cfg()['backbone'], drop_path_rate=0.3)), data)
    gc, _ = _step(
        _model(
            backbone=dict(
                tiny_siameseim_cfg()['backbone'], drop_path_rate=0.3),
            activation_checkpointing=True), data)
    assert _relative(gc, g1) <= 1e-6


def _ddp_worker(rank, world, port, queue):
    os.environ.update(MASTER_ADDR='127.0.0.1', MASTER_PORT=str(port))
    dist.init_process_group('gloo', rank=rank, world_size=world)
    from mmsiameseim.models.algorithms import SiameseIMDistributedDataParallel
    model = _model(norm_cfg=dict(type='LN', eps=1e-6), micro_batches=2)
    ddp = SiameseIMDistributedDataParallel(
        module=model, device_ids=None, broadcast_buffers=False)
    data = _data()
    half = B // world
    mine = dict(
        inputs=[v[rank * half:(rank + 1) * half] for v in data['inputs']],
        data_samples=data['data_samples'][rank * half:(rank + 1) * half])
    hub = MessageHub.get_instance('test_siameseim_accumulation')
    hub.update_info('iter', 0)
    hub.update_info('max_iters', 10)
    wrapper = GradKeepingWrapper(torch.optim.SGD(ddp.parameters(), lr=0.))
    log = ddp.train_step(mine, wrapper)
    if rank == 0:
        grad = torch.cat([g.reshape(-1) for g in wrapper.grads])
        queue.put((float(log['loss']), grad.numpy()))
    dist.destroy_process_group()


def test_two_ranks_with_micro_batches_equal_one_process():
    """DDP x accumulation: 2 gloo ranks of B/2 images in 2 parts each give
    the one-process gradient of the batch of B (gradients all-reduced once,
    with the last part; the correlation over both ranks and all parts)."""
    g1, _ = _step(_model(norm_cfg=dict(type='LN', eps=1e-6)), _data())
    ctx = mp.get_context('spawn')
    queue = ctx.Queue()
    port = _free_port()
    procs = [
        ctx.Process(target=_ddp_worker, args=(r, 2, port, queue))
        for r in range(2)
    ]
    for p in procs:
        p.start()
    _, grad = queue.get(timeout=180)
    for p in procs:
        p.join(timeout=60)
    assert _relative(torch.from_numpy(grad), g1) <= 1e-6


def test_the_runner_wraps_a_micro_batch_model_for_its_accumulation():
    """The model names the wrapper it needs; the runner reads no
    ``micro_batches`` of its own."""
    from mmsiameseim.engine.runner.distributed_env import default_wrapper_cfg
    from mmsiameseim.models.algorithms import SiameseIMDistributedDataParallel
    model = _model(micro_batches=2)
    assert model.ddp_wrapper is SiameseIMDistributedDataParallel
    assert _model(micro_batches=1).ddp_wrapper is None
    wrapper = default_wrapper_cfg(model.ddp_wrapper, dict())
    assert wrapper['type'] is SiameseIMDistributedDataParallel
    copy.deepcopy(model)  # deep-copyable (the target)


@pytest.mark.person_matrix(
    'train', 'micro_batches', 'model.micro_batches=4 on 21 images a batch of '
    '8 (epochs end with a batch of 5): two epochs train through the real '
    'runner, and a resume from the middle gives the uninterrupted weights')
@pytest.mark.person_matrix(
    'resume', 'micro_batches', '--resume of a run with micro_batches whose '
    'epochs end in a ragged batch trains the rest to the uninterrupted '
    'weights')
def test_an_epoch_with_a_ragged_last_batch_trains_and_resumes(tmp_path):
    import shutil

    from mmengine.config import Config
    from mmengine.registry import RUNNERS

    from tests.helpers import ROOT

    def cfg(work_dir, **options):
        cfg = Config.fromfile(
            os.path.join(ROOT, 'tests', 'data', 'configs',
                         'siameseim_tiny_fashionmnist.py'))
        cfg.work_dir = str(work_dir)
        cfg.train_cfg.max_epochs = 2
        cfg.merge_from_dict({
            'model.micro_batches': 4,
            'train_dataloader.dataset.indices': 21,
            **options
        })
        return cfg

    whole = RUNNERS.build(cfg(tmp_path / 'whole'))
    whole.train()
    assert whole.iter == 6  # 3 batches an epoch: 8, 8 and 5 images
    (tmp_path / 'resumed').mkdir()
    shutil.copy(tmp_path / 'whole' / 'iter_4.pth', tmp_path / 'resumed')
    resumed = RUNNERS.build(
        cfg(tmp_path / 'resumed',
            resume=True,
            load_from=str(tmp_path / 'resumed' / 'iter_4.pth')))
    resumed.train()
    assert resumed.iter == 6
    want, got = whole.model.state_dict(), resumed.model.state_dict()
    assert want.keys() == got.keys()
    for name in want:
        torch.testing.assert_close(
            got[name], want[name], rtol=0, atol=0, msg=name)


class WithAMetric(mmsiameseim.models.SiameseIM):
    """A subclass that adds a loss term and a logged metric through the
    extension point."""

    def extra_losses(self, inputs, data_samples, latent, pred, target, mask):
        return dict(
            loss_pred_norm=1e-3 * pred.float().pow(2).mean(),
            masked_share=mask.float().mean())


class IgnoresTheTarget(mmsiameseim.models.SiameseIM):
    """A subclass that overrides loss() without passing target= on."""

    def loss(self, inputs, data_samples, **kwargs):
        return super().loss(inputs, data_samples)


def test_micro_batches_keep_every_logged_key_as_the_whole_batch_value():
    data = _data()
    whole = _model()
    whole.__class__ = WithAMetric
    _, log = _step(whole, copy.deepcopy(data))
    parts = _model(micro_batches=4)
    parts.__class__ = WithAMetric
    _, log4 = _step(parts, copy.deepcopy(data))
    assert set(log4) == set(log) >= {
        'loss', 'momentum', 'alignment', 'correlation', 'loss_pred_norm',
        'masked_share'
    }
    for key in ('masked_share', 'alignment'):
        torch.testing.assert_close(log4[key], log[key], rtol=2e-2, atol=1e-4)


def test_a_loss_override_that_ignores_the_target_is_refused_with_parts():
    model = _model(micro_batches=2)
    model.__class__ = IgnoresTheTarget
    with pytest.raises(
            RuntimeError,
            match='IgnoresTheTarget.loss updated the momentum '
            'target.*extra_losses'):
        _step(model, _data())
