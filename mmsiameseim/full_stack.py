"""The dense side's requirement: mmcv's compiled ops (and mmdet / mmseg).

``tools/setup_env.sh`` sets up the pretraining stack first, with mmcv
2.1.0's pure-Python part only (``mmcv-lite``, the same Python files), so
that ``make demo`` starts in minutes; the compiled ops (``mmcv._ext``,
about 15 minutes to build on 2 cores) come with ``make setup-full``, which
``make test`` runs. mmdet's and mmseg's models import ``mmcv.ops``, so
:mod:`mmsiameseim.det` and :mod:`mmsiameseim.seg` call
:func:`require_full_stack` before anything of theirs is imported: without
the ops they stop at once with the command that builds them, instead of a
missing-module or undefined-symbol error deep inside mmcv.
"""
import importlib
import importlib.util

SETUP_FULL = ('make setup-full (or: bash tools/setup_env.sh --full), which '
              "builds mmcv's compiled ops once (about 15 minutes on 2 cores) "
              'and caches the wheel by torch version')


class FullStackMissingError(RuntimeError):
    """The compiled mmcv ops or the dense library are missing or unusable.

    A RuntimeError, not an ImportError: mmengine's ``Config.fromfile``
    re-raises an ImportError from ``custom_imports`` as a generic
    "set PYTHONPATH" error, which would hide this message.
    """


def require_full_stack(importer: str, library: str) -> None:
    """Raise :class:`FullStackMissingError` unless ``mmcv._ext`` loads and
    ``library`` is installed.

    Args:
        importer (str): The module that needs the full stack, named in the
            message (e.g. ``'mmsiameseim.det'``).
        library (str): The dense library it registers into (``'mmdet'`` or
            ``'mmseg'``).
    """
    import torch  # noqa: F401  (mmcv._ext links against libtorch)
    problems = []
    try:
        importlib.import_module('mmcv._ext')
    except ImportError as e:
        problems.append(f"mmcv's compiled ops (mmcv._ext) do not load: {e}")
    if importlib.util.find_spec(library) is None:
        problems.append(f'{library} is not installed')
    if problems:
        raise FullStackMissingError(
            f'{importer} needs the full stack (mmcv 2.1.0 with compiled ops, '
            f'{library}); in this environment ' + '; '.join(problems) +
            f'.\nRun {SETUP_FULL}.')
