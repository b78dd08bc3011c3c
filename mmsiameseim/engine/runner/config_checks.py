"""A training config's mistakes, refused before the runner builds anything.

mmengine hands a hook's, optimizer's, scheduler's or loop's settings to its
class as keyword arguments, and some classes take any keyword:
``CheckpointHook(intervall=1)`` is accepted and fails at the first
checkpoint, hours later. A string where a number belongs
(``--cfg-options optim_wrapper.optimizer.lr=abc``) fails deep inside torch
without the option's name. Here each such setting is compared with the
signature of the class it builds, and every misspelt key (with the nearest
valid names) and every text given for a number or a switch is named with
its place in the config.

A GPU config on a machine without a GPU (mmengine's CUDA-only
``AmpOptimWrapper``, from the config or ``--amp``) is refused with its CPU
route: the config key ``precision`` ('float32' or 'bfloat16'), which
:func:`apply_precision` turns into a CPU-ready optimizer wrapper.
"""
import difflib
import inspect
from typing import Iterable, List, Optional, Tuple

import torch
from mmengine.config import Config
from mmengine.hooks import CheckpointHook
from mmengine.registry import (HOOKS, LOOPS, OPTIM_WRAPPERS, OPTIMIZERS,
                               PARAM_SCHEDULERS)

from ...precision import set_training_precision

CPU_ROUTE_DOCS = 'docs/get_started.md#gpu-configs-on-a-cpu'
_CPU_PRECISIONS = ('float32', 'bfloat16')


class ConfigMistake(ValueError):
    """A config key or value that the class it builds does not take."""


def apply_precision(cfg: Config) -> None:
    """Switch ``cfg.optim_wrapper`` to the config's ``precision`` key
    ('float32': mmengine's ``OptimWrapper``; 'bfloat16' / 'float16':

    ``AutocastOptimWrapper``), whatever wrapper the config or ``--amp``
    chose (``AmpOptimWrapper``'s loss scaling dropped). Nothing happens
    without the key.
    """
    precision = cfg.get('precision')
    if precision is None or not cfg.get('optim_wrapper'):
        return
    set_training_precision(cfg, precision)


def _amp_device_available() -> bool:
    from mmengine.device import (is_mlu_available, is_musa_available,
                                 is_npu_available)
    return (torch.cuda.is_available() or is_npu_available()
            or is_mlu_available() or is_musa_available())


def check_gpu_config(cfg: Config) -> None:
    """Refuse mmengine's ``AmpOptimWrapper`` where it cannot run, offering
    the CPU route (the ``precision`` key)."""
    wrapper = cfg.get('optim_wrapper') or {}
    if wrapper.get('type') != 'AmpOptimWrapper' or _amp_device_available():
        return
    raise ConfigMistake(
        f'{cfg.filename or "the config"}: optim_wrapper.type='
        "'AmpOptimWrapper' (float16 autocast with loss scaling, from the "
        'config or --amp) needs a CUDA GPU, and this machine has none. On a '
        'CPU, train it with --cfg-options precision=float32 (plain fp32) or '
        'precision=bfloat16 (bf16 autocast: fast on CPUs with AVX-512 BF16 '
        f'or AMX); the key overrides --amp and the config\'s wrapper '
        f'({CPU_ROUTE_DOCS}).')


def _accepted(cls) -> Tuple[Optional[set], dict]:
    """The keyword names ``cls(...)`` takes and their parameters, following
    ``**kwargs`` up the classes it is handed to; None when a class takes
    any keyword (nothing to check)."""
    names, params = set(), {}
    for klass in cls.__mro__:
        if '__init__' not in klass.__dict__:
            continue
        if klass is object:
            return None, params
        try:
            signature = inspect.signature(klass.__init__)
        except (TypeError, ValueError):
            return None, params
        var_keyword = False
        for name, param in list(signature.parameters.items())[1:]:
            if param.kind == param.VAR_KEYWORD:
                var_keyword = True
            elif param.kind != param.VAR_POSITIONAL:
                names.add(name)
                params.setdefault(name, param)
        # CheckpointHook hands **kwargs to Runner.save_checkpoint, every
        # argument of which it already passes itself
        if not var_keyword or klass is CheckpointHook:
            return names, params
    return None, params


def _value_problem(where: str, key: str, value, param, cls) -> Optional[str]:
    default = param.default
    if not isinstance(value, str) or default is inspect.Parameter.empty:
        return None
    if isinstance(default, bool):
        return (f'{where}.{key}={value!r}: {cls.__name__} takes True or '
                f'False here (default {default})')
    if isinstance(default, (int, float)):
        return (f'{where}.{key}={value!r}: {cls.__name__} takes a number '
                f'here (default {default})')
    return None


def _check(item,
           registry,
           scope: Optional[str],
           where: str,
           extra: Iterable[str] = (),
           default_type=None) -> List[str]:
    if not isinstance(item, dict):
        return []
    kind = item.get('type', default_type)
    if isinstance(kind, str):
        scope = item.get('_scope_', scope)
        with registry.switch_scope_and_registry(scope) as scoped:
            cls = scoped.get(kind)
    else:
        cls = kind
    if not inspect.isclass(cls):
        return []  # mmengine names an unknown type itself
    names, params = _accepted(cls)
    problems = []
    valid = (names or set()) | set(extra) | {'type', '_scope_'}
    for key, value in item.items():
        if names is not None and key not in valid:
            near = difflib.get_close_matches(key, sorted(valid), 3, 0.6)
            hint = (f"did you mean {' or '.join(repr(n) for n in near)}? "
                    if near else '')
            shown = sorted(valid - {'type', '_scope_'})
            problems.append(f'{where}: {cls.__name__} takes no {key!r}; {hint}'
                            f'(it takes {", ".join(shown)})')
        elif key in params:
            problem = _value_problem(where, key, value, params[key], cls)
            if problem:
                problems.append(problem)
    return problems


def check_config_keys(cfg: Config) -> None:
    """Refuse, naming each, the keys and values of the config's hooks,
    optimizer wrapper, optimizer, lr / momentum schedulers and loops that
    their classes do not take.

    Args:
        cfg (Config): A training config (after ``--cfg-options``).

    Raises:
        ConfigMistake: Every problem found, one a line.
    """
    scope = cfg.get('default_scope')
    problems = []
    for name, hook in (cfg.get('default_hooks') or {}).items():
        problems += _check(hook, HOOKS, scope, f'default_hooks.{name}')
    for i, hook in enumerate(cfg.get('custom_hooks') or []):
        problems += _check(
            hook, HOOKS, scope, f'custom_hooks.{i}', extra=('priority', ))
    wrapper = cfg.get('optim_wrapper')
    if isinstance(wrapper, dict) and 'constructor' not in wrapper:
        problems += _check(
            wrapper,
            OPTIM_WRAPPERS,
            scope,
            'optim_wrapper',
            extra=('optimizer', 'paramwise_cfg'),
            default_type='OptimWrapper')
        problems += _check(
            wrapper.get('optimizer'), OPTIMIZERS, scope,
            'optim_wrapper.optimizer')
    schedulers = cfg.get('param_scheduler') or []
    if isinstance(schedulers, dict):
        schedulers = [schedulers]
    for i, scheduler in enumerate(schedulers):
        problems += _check(
            scheduler,
            PARAM_SCHEDULERS,
            scope,
            f'param_scheduler.{i}',
            extra=('convert_to_iter_based', ))
    for name, default in (('train_cfg', None), ('val_cfg', 'ValLoop'),
                          ('test_cfg', 'TestLoop')):
        loop = cfg.get(name)
        if not isinstance(loop, dict):
            continue
        if name == 'train_cfg':
            default = ('EpochBasedTrainLoop'
                       if loop.get('by_epoch', True) else 'IterBasedTrainLoop')
        problems += _check(
            loop,
            LOOPS,
            scope,
            name,
            extra=('by_epoch', ),
            default_type=default)
    if problems:
        raise ConfigMistake(
            f'{cfg.filename or "the config"} (with its --cfg-options) has '
            'settings that would fail or be ignored later:\n  ' +
            '\n  '.join(problems))
