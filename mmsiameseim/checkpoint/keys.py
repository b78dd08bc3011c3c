"""Naming the keys of a state dict: selecting them under a prefix and
describing them in error messages (what a file holds, what it lacks)."""
from collections import Counter
from typing import Dict, Iterable, TypeVar

V = TypeVar('V')


def strip_prefix(state: Dict[str, V],
                 prefix: str,
                 keep_others: bool = False) -> Dict[str, V]:
    """Remove ``prefix`` from the keys of ``state``.

    Args:
        state (dict): A state dict.
        prefix (str): E.g. ``'backbone.'``, or ``'module.'`` of a model
            saved inside its DDP wrapper. ``''`` keeps every key.
        keep_others (bool): Keep the keys without the prefix as they are
            (for a wrapper's prefix). Defaults to False: only the keys under
            ``prefix`` are returned.

    Returns:
        dict: The (selected) entries with the prefix removed, in order.
    """
    n = len(prefix)
    return {
        (k[n:] if k.startswith(prefix) else k): v
        for k, v in state.items() if keep_others or k.startswith(prefix)
    }


def short_list(keys: Iterable[str], limit: int = 10) -> str:
    """The first ``limit`` keys, and how many there are in all."""
    keys = list(keys)
    head = ', '.join(keys[:limit])
    return head + (f', ... ({len(keys)} in all)' if len(keys) > limit else '')


def group_keys(keys: Iterable[str], depth: int = 1) -> Dict[str, int]:
    """How many keys share each first ``depth`` name parts, in order:

    ``{'backbone': 28, 'neck': 12}``.
    """
    return dict(Counter('.'.join(k.split('.')[:depth]) for k in keys))


def describe_keys(keys: Iterable[str], depth: int = 2, limit: int = 12) -> str:
    """What a state dict holds, grouped by the first ``depth`` name parts:

    ``'122 tensors: backbone.conv1 (1), backbone.bn1 (5), ...'``.
    """
    keys = list(keys)
    groups = group_keys(keys, depth)
    parts = [f'{name} ({n})' for name, n in list(groups.items())[:limit]]
    if len(groups) > limit:
        parts.append(f'... ({len(groups)} groups in all)')
    return f'{len(keys)} tensors: ' + (', '.join(parts) or 'none')
