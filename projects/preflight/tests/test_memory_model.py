"""The preflight's memory model on the tiny SiameseIM: static memory counted
tensor by tensor, saved activations linear in the batch (checked at a batch
the fit did not use), checkpointing keeping less, and the projection."""
import torch
from mmengine.logging import MessageHub
from mmengine.optim import OptimWrapper
from mmpretrain.registry import MODELS

import mmsiameseim  # noqa: F401
from projects.preflight.memory_model import (DEVICES_GB, activation_bytes,
                                             memory_model, static_bytes)
from tests.helpers import random_batch, tiny_siameseim_cfg


def _model():
    cfg = tiny_siameseim_cfg()
    cfg['data_preprocessor']['type'] = 'EagerSelfSupDataPreprocessor'
    torch.manual_seed(0)
    model = MODELS.build(cfg)
    model.init_weights()
    return model.train()


def _batch(n):
    views, samples = random_batch(n, seed=n)
    return dict(
        inputs=[(v * 60 + 127).clamp(0, 255) for v in views],
        data_samples=samples)


def _trained():
    model = _model()
    MessageHub.get_instance('test_memory_model').update_info('iter', 0)
    wrapper = OptimWrapper(torch.optim.AdamW(model.parameters(), lr=1e-3))
    model.train_step(_batch(2), wrapper)
    return model, wrapper.optimizer


def test_static_memory_is_counted_tensor_by_tensor():
    model, optimizer = _trained()
    static = static_bytes(model, optimizer)
    trainable = [p for p in model.parameters() if p.requires_grad]
    weights = sum(p.numel() * 4 for p in model.parameters()) + sum(
        b.numel() * b.element_size() for b in model.buffers())
    assert static['weights'] == weights
    assert static['gradients'] == sum(p.numel() * 4 for p in trainable)
    # AdamW: exp_avg and exp_avg_sq of every trainable parameter, + steps
    assert 2 * static['gradients'] <= static['optimizer_state'] \
        <= 2 * static['gradients'] + 8 * len(trainable)


def test_activations_grow_linearly_and_checkpointing_keeps_less():
    model, optimizer = _trained()
    out = memory_model(model, optimizer, _batch, 'float32')
    for suffix in ('', '_checkpointed'):
        assert out[f'check{suffix}']['error'] < 0.15, out[f'check{suffix}']
        assert out[f'activations{suffix}']['per_image'] > 0
        batches = out[f'max_batch_per_device{suffix}']
        assert list(batches) == [f'{gb}GB' for gb in DEVICES_GB]
        assert batches['24GB'] < batches['40GB'] < batches['80GB']
    assert out['activations_checkpointed']['per_image'] < \
        out['activations']['per_image']
    assert out['max_batch_per_device_checkpointed']['24GB'] > \
        out['max_batch_per_device']['24GB']

    # per image, bf16 autocast saves fewer bytes than fp32 (its fixed part,
    # the weights' bf16 copies, is larger)
    def per_image(precision):
        batches = [model.data_preprocessor(_batch(n), True) for n in (4, 2)]
        four, two = (activation_bytes(model, b, precision) for b in batches)
        return four - two

    assert per_image('bfloat16') < per_image('float32')


def test_recipes_and_max_batch_count_the_rebuilt_block_alike():
    """With checkpointing, a step's peak holds the block being rebuilt too:

    the recipe splits a batch where the projected maximum says it must.
    """
    from projects.preflight.memory_model import recipe
    gib = 2**30
    record = dict(
        static_bytes=dict(weights=0, gradients=0, optimizer_state=0),
        held_per_image=0.,
        activations=dict(per_image=gib, fixed=0.),
        activations_checkpointed=dict(
            per_image=gib, fixed=0., recomputed_block_per_image=gib))
    # 24 GB keep 10 % and 1 GiB free: 20.6 GiB, 20 images of 1 GiB, 10 of 2
    plain = recipe(record, 1, 24, total_batch=16)
    assert (plain['batch_size'], plain['micro_batches']) == (16, 1)
    cp = recipe(record, 1, 24, total_batch=16, checkpointed=True)
    assert (cp['batch_size'], cp['micro_batches']) == (16, 2)
    assert cp['peak_gb'] == 16.
