"""Lets mmengine 0.10.7 checkpoints save and resume under torch >= 2.6.

torch >= 2.6 loads checkpoints with ``weights_only=True``. mmengine's
checkpoints carry a few plain Python/numpy objects (the message hub's
``HistoryBuffer`` with numpy arrays and scalars) that the weights-only
unpickler refuses. Instead of turning ``weights_only`` off (which would let an
untrusted checkpoint run code), the exact classes and numpy reconstructors
that mmengine stores are allow-listed. Anything else still fails with torch's
own "Weights only load failed" error.

``HistoryBuffer`` also pickles its statistics functions, which needs
``getattr`` in the checkpoint; allowing ``getattr`` would hand an attacker
any attribute of any allowed class (``ndarray.tofile`` writes files), so
instead the buffer stops pickling them: they are class-level registrations
that every process rebuilds on load anyway (mmengine's ``__setstate__``).
Checkpoints written by mmengine without this layer still carry ``getattr``
and are refused with torch's error.
"""
import numpy as np
import torch


def _numpy_globals() -> list:
    """Numpy objects that pickled arrays, dtypes and scalars refer to."""
    names = []
    for module_name in ('numpy._core.multiarray', 'numpy.core.multiarray'):
        try:
            module = __import__(module_name, fromlist=['_reconstruct'])
        except ImportError:
            continue
        names += [module._reconstruct, module.scalar]
        break
    names += [np.ndarray, np.dtype]
    # numpy >= 1.25 pickles dtypes by their concrete class (Float64DType ...)
    dtypes = getattr(np, 'dtypes', None)
    if dtypes is not None:
        names += [
            getattr(dtypes, n) for n in dir(dtypes) if n.endswith('DType')
        ]
    return names


def _history_buffer_state(self) -> dict:
    """``HistoryBuffer.__getstate__`` without the statistics functions."""
    self.__dict__.pop('statistics_methods', None)
    return dict(self.__dict__)


def allow_mmengine_checkpoints() -> None:
    """Allow-list the globals that mmengine checkpoints need."""
    add_safe_globals = getattr(torch.serialization, 'add_safe_globals', None)
    if add_safe_globals is None:  # torch < 2.4 does not load weights-only
        return
    from mmengine.logging.history_buffer import HistoryBuffer
    HistoryBuffer.__getstate__ = _history_buffer_state
    add_safe_globals([HistoryBuffer] + _numpy_globals())


allow_mmengine_checkpoints()
