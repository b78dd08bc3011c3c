"""Find the tensors of a state dict that hold NaN or inf, and refuse such
weights before they are converted, loaded or saved."""
from typing import Any, List, Mapping

import torch

from .coverage import short_list


def nonfinite_tensors(state: Mapping[str, Any]) -> List[str]:
    """The names of the floating-point tensors of ``state`` that hold a
    NaN or an infinite value, in the state dict's order (entries that are
    not tensors, integer tensors and meta tensors, which hold no values,
    are skipped)."""
    return [
        name for name, value in state.items()
        if isinstance(value, torch.Tensor) and not value.is_meta and (
            value.is_floating_point() or value.is_complex())
        and not bool(torch.isfinite(value).all())
    ]


def describe_nonfinite(state: Mapping[str, Any],
                       names: List[str],
                       limit: int = 5) -> str:
    """``'2 of 28 tensors hold NaN or inf: a (3 NaN, 0 inf of 64 values),
    ...'`` for the ``names`` found by :func:`nonfinite_tensors`."""
    parts = []
    for name in names[:limit]:
        value = state[name]
        parts.append(f'{name} ({int(torch.isnan(value).sum())} NaN, '
                     f'{int(torch.isinf(value).sum())} inf of '
                     f'{value.numel()} values)')
    more = f', ... ({len(names)} in all: {short_list(names[limit:], 20)})' \
        if len(names) > limit else ''
    return (f'{len(names)} of {len(state)} tensors hold NaN or inf: ' +
            ', '.join(parts) + more)


def check_finite(state: Mapping[str, Any], source: str) -> None:
    """Refuse a state dict with non-finite weights.

    Args:
        state: The tensors about to be converted or loaded, named as the
            user's file names them.
        source: The file (and which part of it), for the message.

    Raises:
        ValueError: Some floating-point tensor holds NaN or inf; the
            message names ``source``, the tensors and their counts.
    """
    bad = nonfinite_tensors(state)
    if bad:
        raise ValueError(
            f'{source}: refusing weights that are not finite: '
            f'{describe_nonfinite(state, bad)} (a training run that diverged '
            'leaves such weights; take an earlier checkpoint of the run)')
