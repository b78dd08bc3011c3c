import json
import os
import os.path as osp
from typing import Any, Optional


def atomic_write(path: str, text: str) -> None:
    """Write a text file so that an interrupted write never leaves a file
    a rerun would trust."""
    tmp = path + '.tmp'
    with open(tmp, 'w') as f:
        f.write(text)
    os.replace(tmp, path)


def atomic_torch_save(obj: Any, path: str) -> None:
    """``torch.save`` through a temporary file in the same folder, renamed
    over ``path`` once complete: a kill or an error mid-write leaves
    ``path`` as it was (absent, or the previous file), never a partial
    file under its name."""
    import torch
    tmp = f'{path}.tmp-{os.getpid()}'
    try:
        with open(tmp, 'wb') as f:
            torch.save(obj, f)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    finally:
        if osp.exists(tmp):
            os.remove(tmp)


def atomic_json(path: str, obj: Any) -> None:
    """:func:`atomic_write` of ``obj`` as indented JSON."""
    atomic_write(path, json.dumps(obj, indent=2))


def load_json(path: str) -> Optional[Any]:
    """The JSON content of ``path``, or None when there is no such file."""
    if osp.exists(path):
        with open(path) as f:
            return json.load(f)
    return None
