"""What a resume checks about the run it resumes into, before any state is
loaded: refused, naming keys and shapes, are missing or extra weights,
weights or optimizer state of another shape, another number or size of
optimizer param groups, another epoch length (batch size, number of
processes or dataset changed), a finished run resumed without a longer
schedule, and a longer run whose lr schedule stays where the old run ended
(its ``end`` pinned in the config).

:func:`check_resume` is what ``FaultTolerantRunner.load_checkpoint`` calls
when it reads the checkpoint of a resume; the ``*_mismatches`` functions
return lines that name what differs (empty when nothing does).
"""
import re
from typing import Dict, List, Optional, Sequence, Tuple

import torch
import torch.nn as nn
from mmengine.model import is_model_wrapper
from mmengine.optim import OptimWrapper
from mmengine.runner import EpochBasedTrainLoop

from .exact_resume_loop import finished_run_message
from .refused_run import RESUME_DOCS, RunRefused
from .schedule_replan import pinned_schedule, saved_run_length

_SHOWN = 8  # lines of a list shown before "... and N more"


def _shape(value) -> Optional[Tuple[int, ...]]:
    return tuple(value.shape) if isinstance(value, torch.Tensor) else None


def _some(lines: List[str], what: str) -> List[str]:
    if len(lines) <= _SHOWN:
        return lines
    return lines[:_SHOWN] + [f'... and {len(lines) - _SHOWN} more {what}']


def state_dict_mismatches(
    model: nn.Module,
    saved: dict,
    revise_keys: Sequence[Tuple[str, str]] = ((r'^module\.', ''), )
) -> List[str]:
    """Keys missing on either side and tensors whose shapes differ.

    Args:
        model (nn.Module): The model being resumed (unwrapped).
        saved (dict): The checkpoint's ``state_dict``.
        revise_keys (Sequence[tuple]): (pattern, replacement) applied to
            the saved keys, as mmengine does when loading.
    """
    for pattern, replacement in revise_keys:
        saved = {re.sub(pattern, replacement, k): v for k, v in saved.items()}
    current = model.state_dict()
    shapes = [
        f'{key}: checkpoint {_shape(saved[key])}, model {_shape(value)}'
        for key, value in current.items()
        if key in saved and _shape(saved[key]) != _shape(value)
    ]
    missing = [k for k in current if k not in saved]
    unexpected = [k for k in saved if k not in current]
    lines = _some(shapes, 'tensors of another shape')
    if missing:
        lines.append(f'{len(missing)} model tensors are not in the '
                     f'checkpoint: {", ".join(_some(missing, "keys"))}')
    if unexpected:
        lines.append(f'{len(unexpected)} checkpoint tensors are not in the '
                     f'model: {", ".join(_some(unexpected, "keys"))}')
    return lines


def optimizer_mismatches(optimizer: torch.optim.Optimizer, saved: dict,
                         names: Dict[int, str]) -> List[str]:
    """Param groups of another number or size, and optimizer state (e.g.
    AdamW moments) whose shape is not the parameter's.

    Args:
        optimizer (Optimizer): The optimizer built for this run.
        saved (dict): The checkpoint's optimizer ``state_dict``.
        names (dict): ``id(parameter)`` -> parameter name, for messages.
    """
    groups, state = saved.get('param_groups', []), saved.get('state', {})
    current = optimizer.param_groups
    if len(groups) != len(current):
        return [
            f'optimizer: the checkpoint has {len(groups)} param groups, '
            f'this config builds {len(current)} (another depth or '
            'paramwise_cfg)'
        ]
    lines = []
    for i, (old, new) in enumerate(zip(groups, current)):
        if len(old['params']) != len(new['params']):
            lines.append(f'optimizer param group {i}: the checkpoint has '
                         f'{len(old["params"])} parameters, this config '
                         f'{len(new["params"])}')
            continue
        for index, param in zip(old['params'], new['params']):
            for key, value in state.get(index, {}).items():
                shape = _shape(value)
                if shape and shape != tuple(param.shape):
                    lines.append(
                        f'optimizer state {key} of '
                        f'{names.get(id(param), f"group {i}")}: checkpoint '
                        f'{shape}, parameter {tuple(param.shape)}')
    return _some(lines, 'optimizer tensors of another shape')


def check_resume(runner, checkpoint: dict, filename: str, revise_keys) -> None:
    """Refuse, naming what differs, a checkpoint ``runner`` cannot
    continue: another model or optimizer (:func:`state_dict_mismatches`,
    :func:`optimizer_mismatches`), then another run length
    (:func:`check_run_length`).

    Args:
        runner (Runner): The runner resuming (model, optimizer, loop and
            schedulers built).
        checkpoint (dict): The checkpoint read from ``filename``.
        filename (str): The checkpoint's path, for messages.
        revise_keys (list): The ``(pattern, replacement)`` pairs the
            weights' keys are loaded with.
    """
    model = runner.model.module if is_model_wrapper(
        runner.model) else runner.model
    problems = state_dict_mismatches(model,
                                     checkpoint.get('state_dict', checkpoint),
                                     revise_keys)
    saved_optim = checkpoint.get('optimizer')
    if isinstance(runner.optim_wrapper, OptimWrapper) and isinstance(
            saved_optim, dict) and 'param_groups' in saved_optim:
        names = {id(p): n for n, p in model.named_parameters()}
        problems += optimizer_mismatches(runner.optim_wrapper.optimizer,
                                         saved_optim, names)
    if problems:
        raise RunRefused(
            f'cannot resume from {filename}: the checkpoint is of '
            'another model than this config builds:\n  ' +
            '\n  '.join(problems) +
            '\nResume with the config that wrote it, or start a new '
            'run from its weights in another --work-dir with '
            f'--cfg-options load_from={filename}.')
    check_run_length(runner, checkpoint, filename)


def check_run_length(runner, checkpoint: dict, filename: str) -> None:
    """Refuse a checkpoint of another epoch length, of a run as long as
    this one (finished), or whose lr schedule is pinned to its old length
    (:func:`~.schedule_replan.pinned_schedule`)."""
    loop = runner.train_loop
    meta = checkpoint.get('meta', {})
    saved_epochs, saved_iters = saved_run_length(checkpoint)
    by_epoch = isinstance(loop, EpochBasedTrainLoop)
    max_epochs = loop.max_epochs if by_epoch else None
    saved_length = length = 1
    if by_epoch and saved_epochs and saved_iters:
        saved_length = saved_iters // saved_epochs
        length = loop.max_iters // max_epochs
        if saved_length != length:
            raise RunRefused(
                f'cannot resume from {filename}: its run had epochs of '
                f'{saved_length} iterations, this one has {length} '
                '(batch size, number of processes or dataset changed), '
                'so its iteration count and schedule do not map onto '
                'this run. Resume with the batch size, processes and '
                'dataset it was written with, or start a new run from '
                'its weights in another --work-dir with --cfg-options '
                f'load_from={filename}.')
    done = meta.get('iter', 0)
    if done >= loop.max_iters:
        raise RunRefused(
            finished_run_message(
                filename,
                meta.get('epoch'),
                max_epochs,
                done,
                loop.max_iters,
                replans=True))
    problem = pinned_schedule(
        checkpoint.get('param_schedulers'), saved_iters,
        runner.param_schedulers, runner.max_iters, length)
    if problem:
        raise RunRefused(f'cannot resume from {filename} into a longer '
                         f'run: {problem} ({RESUME_DOCS})')
