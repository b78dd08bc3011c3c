"""Exact gradient accumulation for SiameseIM (``micro_batches`` > 1).

A batch of B images is trained as k parts as even as B allows (B / k when
k divides B; an epoch's ragged last batch, e.g. 10 images in 4 parts, as
3, 3, 2, 2; a batch of fewer than k images in parts of one), one part's
activations at a time, with the gradient of the whole batch: the targets of
every part come first (the target branch has no gradient), the UniGrad
correlation is taken over all of them (each part weighted by its images)
and all ranks and held fixed while each part's loss, weighted by its share
of the images, is computed. One momentum update and one optimizer step per
batch; mmengine's
``accumulative_counts`` can go on top (each batch exact in itself). Not
exact: the neck's BatchNorm normalises each part by its own statistics
(docs/pretraining/memory.md).

Off a step's path when ``micro_batches`` is 1, so it lives beside the
algorithm: :func:`check_micro_batches` (build time),
:func:`accumulated_train_step` and the DDP wrapper that
``FaultTolerantRunner`` picks for such a model.
"""
from contextlib import nullcontext
from typing import Dict, List, Optional, Union

import torch
import torch.nn as nn
from mmengine.model import MMDistributedDataParallel
from mmengine.optim import OptimWrapper
from mmengine.registry import MODEL_WRAPPERS

from ..losses.unigrad_loss import UniGradLoss, all_reduce_mean


def check_micro_batches_count(micro_batches: object) -> int:
    """``micro_batches`` when it is a count of parts: a positive integer.

    The one check of the value, at build time here and, for a config,
    before anything is built (``engine/runner/config_checks.py``, which
    adds the batch it must fit).
    """
    if (not isinstance(micro_batches, int) or isinstance(micro_batches, bool)
            or micro_batches < 1):
        raise ValueError(f'micro_batches={micro_batches!r}: give a positive '
                         'integer (1: no splitting)')
    return micro_batches


def check_micro_batches(micro_batches: int, head: nn.Module) -> int:
    """``micro_batches`` when SiameseIM can split its batches exactly: a
    positive count (:func:`check_micro_batches_count`) and, above 1, a
    ``UniGradHead`` whose ``UniGradLoss`` takes a fixed correlation (not
    with 'moco-like' normalisation)."""
    check_micro_batches_count(micro_batches)
    loss = getattr(head, 'loss_module', None)
    if micro_batches > 1 and not (isinstance(loss, UniGradLoss)
                                  and loss.target_norm != 'moco-like'):
        raise ValueError(
            f'SiameseIM micro_batches={micro_batches} needs a head whose '
            'loss can be split exactly (UniGradHead with UniGradLoss '
            f"target_norm 'mae-like' or 'none'); {type(head).__name__} with "
            f'{type(loss).__name__} '
            f"target_norm={getattr(loss, 'target_norm', None)!r} cannot: "
            "use optim_wrapper's accumulative_counts instead (inexact)")
    return micro_batches


def part_sizes(batch: int, micro_batches: int) -> List[int]:
    """The sizes of the parts a batch of ``batch`` images is trained in:

    ``micro_batches`` parts as even as the batch allows (sizes differ by one
    at most; a batch smaller than ``micro_batches``, such as an epoch's last,
    in parts of one image). No part is larger than
    ``ceil(batch / micro_batches)``.
    """
    k = min(micro_batches, batch)
    return [batch // k + (i < batch % k) for i in range(k)]


def unigrad_correlation(head: nn.Module, target: torch.Tensor) -> torch.Tensor:
    """This rank's UniGrad correlation of ``target`` as ``head`` scores it:

    its rows are tokens, or images for a 'global' head
    (:meth:`UniGradLoss.correlation`).
    """
    if head.loss_type == 'global' and target.dim() == 3:
        target = target.mean(dim=1)
    return head.loss_module.correlation(target)


def accumulated_train_step(
        model: nn.Module,
        data: Union[dict, tuple, list],
        optim_wrapper: OptimWrapper,
        wrapper: Optional[nn.Module] = None) -> Dict[str, torch.Tensor]:
    """One optimizer step on a batch trained in ``model.micro_batches``
    parts with the whole batch's gradient.

    Args:
        model (SiameseIM): The model.
        data: The data loader's batch.
        optim_wrapper (OptimWrapper): Steps once, after the last part.
        wrapper (nn.Module, optional): The DDP wrapper the parts' forwards
            go through (its gradient all-reduce runs with the last part
            only). Defaults to None (``model``).
    """
    with optim_wrapper.optim_context(model):
        data = model.data_preprocessor(data, True)
    inputs, samples = data['inputs'], data['data_samples']
    sizes = part_sizes(len(samples), model.micro_batches)
    k, starts = len(sizes), [sum(sizes[:i]) for i in range(len(sizes))]
    parts = [([view[s:s + n] for view in inputs], samples[s:s + n])
             for s, n in zip(starts, sizes)]
    # each part's share of the batch: its images (every image has the same
    # number of tokens), so the weighted means are the whole batch's
    shares = [n / len(samples) for n in sizes]
    logs = {}
    with optim_wrapper.optim_context(model):
        if model.target is not None:
            momentum = model.target.current_momentum()
            model.target.update_parameters(model.online(), momentum)
            logs['momentum'] = torch.tensor(momentum, dtype=torch.float32)
        targets = [model.target_features(views[1]) for views, _ in parts]
    corr = all_reduce_mean(
        sum(w * unigrad_correlation(model.head, t)
            for w, t in zip(shares, targets)))
    # mmengine's accumulative_counts on top (batches of one step each
    # exact, accumulated over iterations as mmengine does): its loss
    # scale and gradient sync are decided once per iteration
    scale = optim_wrapper.scale_loss(torch.ones(()))
    sync_last = optim_wrapper.should_sync()
    forward = wrapper or model
    no_sync = getattr(forward, 'no_sync', None)
    steps = model.target.steps.clone() if model.target is not None else None
    parts_logs = {}
    for i, ((views, part), target) in enumerate(zip(parts, targets)):
        sync = i == k - 1 and sync_last
        with nullcontext() if sync or no_sync is None else no_sync():
            with optim_wrapper.optim_context(model):
                loss = forward(
                    views, part, mode='loss', target=target, corr=corr)
            loss, log_vars = model.parse_losses(loss)
            optim_wrapper.backward(loss * (scale * shares[i]))
        if steps is not None and not torch.equal(model.target.steps, steps):
            raise RuntimeError(
                f'{type(model).__name__}.loss updated the momentum target '
                'while given a precomputed target= (micro_batches='
                f'{model.micro_batches}): a loss() override must pass '
                'target= and corr= on to SiameseIM.loss, or add its terms '
                'through extra_losses() instead of overriding loss()')
        # every logged value, the loss included, as the whole batch's: the
        # parts' values weighted by their images
        for key, value in log_vars.items():
            if key != 'momentum':
                parts_logs.setdefault(key,
                                      []).append(value.detach() * shares[i])
    # one iteration, whatever the number of parts
    optim_wrapper._inner_count -= k - 1
    if optim_wrapper.should_update():
        optim_wrapper.step()
        optim_wrapper.zero_grad()
    logs.update({
        key: torch.stack(values).sum()
        for key, values in parts_logs.items() if len(values) == k
    })
    return logs


@MODEL_WRAPPERS.register_module()
class SiameseIMDistributedDataParallel(MMDistributedDataParallel):
    """mmengine's DDP wrapper that trains a ``SiameseIM`` with
    ``micro_batches`` > 1 through its exact accumulation (the parts'
    forwards go through DDP; gradients are all-reduced once, with the last
    part).

    Such a model names it as its ``ddp_wrapper``, which
    ``FaultTolerantRunner`` uses where the config names no wrapper; other
    models train as with ``MMDistributedDataParallel``.
    """

    def train_step(self, data: Union[dict, tuple, list],
                   optim_wrapper: OptimWrapper) -> Dict[str, torch.Tensor]:
        if getattr(self.module, 'micro_batches', 1) == 1:
            return super().train_step(data, optim_wrapper)
        return accumulated_train_step(
            self.module, data, optim_wrapper, wrapper=self)
