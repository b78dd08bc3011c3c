"""What a resume compares between a checkpoint and the model and optimizer
it resumes into.

Each function returns lines that name what differs (empty when nothing
does); ``FaultTolerantRunner`` refuses the resume with them before any
state is loaded.
"""
import re
from typing import Dict, List, Optional, Sequence, Tuple

import torch
import torch.nn as nn

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
