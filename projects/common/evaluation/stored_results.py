"""Results kept on disk together with the settings that produced them, so
that a later run reuses them only under the same settings."""
import json
from typing import Any, Dict, List, Optional

from mmsiameseim.atomic_io import atomic_json, load_json


def _flat(obj: Any, prefix: str = '') -> Dict[str, Any]:
    if isinstance(obj, dict) and obj:
        out = {}
        for key, value in obj.items():
            out.update(_flat(value, f'{prefix}{key}.'))
        return out
    return {prefix[:-1]: obj}


def settings_difference(stored: dict, now: dict) -> List[str]:
    """``'knn.k: 20 there, 10 now'`` for every setting that differs
    (nested dicts compared key by key)."""
    # through JSON, as stored: tuples become lists, keys strings
    stored, now = (
        _flat(json.loads(json.dumps(d, default=str))) for d in (stored, now))
    return [
        f'{key}: {stored.get(key, "(absent)")} there, '
        f'{now.get(key, "(absent)")} now'
        for key in sorted(set(stored) | set(now))
        if stored.get(key) != now.get(key)
    ]


def refuse_other_settings(path: str, stored: Optional[dict],
                          now: dict) -> None:
    """Raise when ``stored`` (the settings saved with ``path``) are not
    ``now``.

    Raises:
        ValueError: The message names the file, each differing setting
            with both values, and what to do; nothing is changed.
    """
    if stored is None:
        found = 'holds no record of its settings (written by an earlier ' \
            'version)'
    else:
        diff = settings_difference(stored, now)
        if not diff:
            return
        found = 'was computed with other settings: ' + '; '.join(diff)
    raise ValueError(
        f'{path} {found}. Not reusing it: evaluate into another work_dir, '
        'or delete the file to compute it again with these settings.')


def load_result(path: str, settings: dict) -> Dict[str, Any]:
    """The result stored at ``path`` by :func:`save_result` under equal
    ``settings``; ``{}`` when there is none.

    Raises:
        ValueError: The file holds a result of other settings (see
            :func:`refuse_other_settings`).
    """
    try:
        stored = load_json(path)
    except ValueError as e:  # cut or overwritten by something else
        raise ValueError(
            f'{path}: not a results file (JSON of a result and its '
            f'settings was expected; {e}). Not reusing it: delete the file '
            'to compute it again.') from e
    if stored is None:
        return {}
    if not isinstance(stored, dict) or 'result' not in stored:
        refuse_other_settings(path, None, settings)
    refuse_other_settings(path, stored.get('settings'), settings)
    return stored['result']


def save_result(path: str, settings: dict, result: Dict[str, Any]) -> None:
    """Write ``result`` and its ``settings`` to ``path`` atomically."""
    atomic_json(
        path,
        dict(
            settings=json.loads(json.dumps(settings, default=str)),
            result=result))
