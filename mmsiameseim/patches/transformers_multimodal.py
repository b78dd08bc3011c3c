"""Keeps ``import mmsiameseim`` (and every config) working beside a
``transformers`` that mmpretrain 1.2.0 cannot use.

mmpretrain 1.2.0 imports its multimodal models (BLIP, BLIP-2, OFA, LLaVA,
RAM ...) as soon as ``transformers >= 4.28`` is installed, and some of
them import names that later releases removed (4.57 and 5.x): ``import
mmpretrain.models`` then fails, and with it every config, although
SiameseIM needs none of those models. Before mmpretrain's models are first
imported, the names they import from ``transformers`` are looked up; when
one is missing, the multimodal models are left out, as mmpretrain itself
does without ``transformers`` (they become placeholders that say what to
install), with a warning that names the version and the missing name. The
pinned ``export`` extra (transformers 4.46.3) has them all.
"""
import ast
import importlib
import importlib.util
import os
import os.path as osp
import sys
import warnings
from typing import Iterator, Optional, Tuple


def _transformers_imports(folder: str) -> Iterator[Tuple[str, str]]:
    """(module, name) of every name that the Python files under ``folder``
    import from a ``transformers`` module."""
    for root, _, files in os.walk(folder):
        for file in sorted(f for f in files if f.endswith('.py')):
            with open(osp.join(root, file), encoding='utf-8') as f:
                tree = ast.parse(f.read())
            for node in ast.walk(tree):
                if isinstance(node, ast.ImportFrom) and node.module and \
                        node.module.split('.')[0] == 'transformers':
                    for alias in node.names:
                        yield node.module, alias.name


def missing_transformers_name(folder: str) -> Optional[str]:
    """The first ``module.name`` imported under ``folder`` that the installed
    ``transformers`` lacks; None when all are there."""
    for module, name in _transformers_imports(folder):
        try:
            found = hasattr(importlib.import_module(module), name)
        except Exception:  # noqa: BLE001  (a module that fails to import)
            found = False
        if not found:
            return f'{module}.{name}'
    return None


def _dependency_module(mmpretrain_init: str):
    """``mmpretrain.utils.dependency``, loaded on its own: importing it
    the usual way runs ``mmpretrain/__init__``, which imports the models,
    the very import that fails."""
    name = 'mmpretrain.utils.dependency'
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(
            name,
            osp.join(osp.dirname(mmpretrain_init), 'utils', 'dependency.py'))
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
    return sys.modules[name]


def guard_multimodal() -> Optional[str]:
    """Leave mmpretrain's multimodal models out when the installed
    ``transformers`` lacks a name they import; returns that name."""
    if 'mmpretrain.models' in sys.modules:
        return None  # already imported (it worked, or failed before us)
    spec = importlib.util.find_spec('mmpretrain')
    if spec is None or importlib.util.find_spec('transformers') is None:
        return None
    dependency = _dependency_module(spec.origin)
    if not dependency.WITH_MULTIMODAL:
        return None
    folder = osp.join(osp.dirname(spec.origin), 'models', 'multimodal')
    missing = missing_transformers_name(folder)
    if missing is not None:
        dependency.WITH_MULTIMODAL = False
        import transformers
        warnings.warn(
            f'transformers {transformers.__version__} has no {missing}, '
            'which mmpretrain 1.2.0\'s multimodal models import: they are '
            'left out (SiameseIM needs none of them). transformers 4.46.3 '
            '(pip install -e .[export]) has them all.')
    return missing


guard_multimodal()
