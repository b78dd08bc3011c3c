"""A training config's mistakes, refused before the runner builds anything.

mmengine hands a hook's, optimizer's, scheduler's, loop's, model part's,
dataset's or transform's settings to its class as keyword arguments, and
some classes take any keyword: ``CheckpointHook(intervall=1)`` is accepted
and fails at the first checkpoint, hours later; ``model.neck.num_layer=2``
fails with a bare ``TypeError`` once the runner has created its log
folder. A string where a number belongs
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
import copy
import difflib
import inspect
import re
from typing import Iterable, List, Optional, Tuple

import torch
from mmengine.config import Config
from mmengine.hooks import CheckpointHook
from mmengine.registry import (DATA_SAMPLERS, DATASETS, HOOKS, LOOPS, MODELS,
                               OPTIM_WRAPPERS, OPTIMIZERS, PARAM_SCHEDULERS,
                               TRANSFORMS)

from ...docs_page import docs_page
from ...models.algorithms.exact_accumulation import check_micro_batches_count
from ...precision import set_training_precision

CPU_ROUTE_DOCS = docs_page('get_started.md#gpu-configs-on-a-cpu')
_CPU_PRECISIONS = ('float32', 'bfloat16')


class ConfigMistake(ValueError):
    """A config key or value that the class it builds does not take."""


def checked_config(cfg: Config) -> Config:
    """A copy of ``cfg`` with its ``precision`` applied
    (:func:`apply_precision`), refused (:class:`ConfigMistake`) for a GPU
    setting without a GPU, a misspelt key or a text given for a number,
    grid variables that disagree with the model they set, or
    ``model.micro_batches`` larger than the batch."""
    cfg = copy.deepcopy(cfg)
    apply_precision(cfg)
    check_gpu_config(cfg)
    check_config_keys(cfg)
    check_grid_variables(cfg)
    check_micro_batches_fit(cfg)
    return cfg


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


# `super().__init__(..., **kwargs)`: the keywords go up the class's MRO
_KWARGS_TO_SUPER = re.compile(
    r'super\([^)]*\)\.__init__\((?:[^()]|\([^()]*\))*\*\*kwargs', re.S)


def _hands_kwargs_to_super(klass) -> bool:
    try:
        source = inspect.getsource(klass.__init__)
    except (OSError, TypeError):
        return False
    return bool(_KWARGS_TO_SUPER.search(source))


def _accepted(cls) -> Tuple[Optional[set], dict]:
    """The keyword names ``cls(...)`` takes and their parameters, following
    ``**kwargs`` up the classes it is handed to (``super().__init__(...,
    **kwargs)``); None when a class takes any keyword (nothing to
    check)."""
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
        if not _hands_kwargs_to_super(klass):
            return None, params
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


def _nearest(key: str, valid) -> str:
    """'; did you mean ...?' with the names of ``valid`` nearest ``key``, or
    nothing."""
    near = difflib.get_close_matches(key, sorted(valid), 3, 0.6)
    return (f"; did you mean {' or '.join(repr(n) for n in near)}?"
            if near else '')


def _check(item,
           registry,
           scope: Optional[str],
           where: str,
           extra: Iterable[str] = (),
           default_type=None,
           values: bool = True) -> List[str]:
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
            hint = _nearest(key, valid)
            shown = sorted(valid - {'type', '_scope_'})
            problems.append(f'{where}: {cls.__name__} takes no {key!r}{hint}'
                            f' (it takes {", ".join(shown)})')
        elif values and key in params:
            problem = _value_problem(where, key, value, params[key], cls)
            if problem:
                problems.append(problem)
    return problems


# the registry that builds a setting, by the key holding it; a setting under
# another key is looked up in these in turn
_REGISTRY_OF_KEY = {
    'model': MODELS,
    'dataset': DATASETS,
    'datasets': DATASETS,
    'pipeline': TRANSFORMS,
    'transforms': TRANSFORMS,
    'sampler': DATA_SAMPLERS
}
_GUESSES = (MODELS, DATASETS, TRANSFORMS, DATA_SAMPLERS)


def _registry_of(kind: str, scope: Optional[str], first) -> Optional[object]:
    for registry in ((first, ) if first else ()) + _GUESSES:
        with registry.switch_scope_and_registry(scope) as scoped:
            if inspect.isclass(scoped.get(kind)):
                return registry
    return None


def _nested(item,
            scope: Optional[str],
            where: str,
            registry=None) -> List[str]:
    """The problems of every typed setting in ``item`` (a model, a data
    loader, a hook's settings), each checked against the class it builds.

    ``*_cfg`` settings (``norm_cfg``, ``init_cfg``: built by helpers that
    take keys of their own) are left to those helpers.
    """
    if isinstance(item, (list, tuple)):
        return sum((_nested(value, scope, f'{where}.{i}', registry)
                    for i, value in enumerate(item)), [])
    if not isinstance(item, dict):
        return []
    problems = []
    if isinstance(item.get('type'), str):
        scope = item.get('_scope_', scope)
        found = _registry_of(item['type'], scope, registry)
        if found is not None:
            # keys only: text is a valid value of many of these settings
            # (GaussianBlur's magnitude_std='inf')
            problems += _check(item, found, scope, where, values=False)
    for key, value in item.items():
        if key != 'type' and not key.endswith(('_cfg', '_cfgs')):
            problems += _nested(value, scope, f'{where}.{key}',
                                _REGISTRY_OF_KEY.get(key, registry))
    return problems


#: The top-level variables of the shipped SiameseIM pretraining configs and
#: the model option each one was substituted into when its file was parsed.
GRID_VARIABLES = {
    'img_size': 'model.backbone.img_size',
    'crop_size': 'model.backbone.img_size',
    'patch_size': 'model.backbone.patch_size',
    'patch_grid': 'model.neck.grid_size',
    'mask_grid': 'model.neck.grid_size',
    'embed_dims': 'model.neck.embed_dims',
}
GRID_DOCS = docs_page('mixing.md#changing-the-patch-grid-width-or-patch-size')


def check_grid_variables(cfg: Config) -> None:
    """Refuse a SiameseIM config whose top-level grid variables
    (:data:`GRID_VARIABLES`) disagree with the model they built.

    mmengine substitutes a variable where the file that defines it is
    parsed: ``--cfg-options patch_grid=4``, or ``patch_grid = 4`` in a child
    config, changes the variable and nothing that was built from it, so the
    run would train the old grid while its dumped config says otherwise.
    """
    model = cfg.get('model')
    if not isinstance(model, dict) or 'SiameseIM' not in str(
            model.get('type', '')):
        return
    problems = []
    for name, option in GRID_VARIABLES.items():
        if name not in cfg:
            continue
        node = model
        for key in option.split('.')[1:]:
            node = node.get(key) if isinstance(node, dict) else None
        if node is None or node == cfg[name]:
            continue
        problems.append(f'{name}={cfg[name]!r} but {option}={node!r}')
    if problems:
        raise ConfigMistake(
            f'{cfg.filename or "the config"}: the config\'s variables '
            'disagree with the model they set: ' + '; '.join(problems) +
            '. A variable is substituted where its own file is parsed, so '
            'changing it with --cfg-options or in a child config changes '
            'nothing else. Set the options themselves: '
            'model.backbone.img_size and patch_size, model.neck.grid_size '
            '(img_size // patch_size), model.neck.in_channels (the '
            "backbone's width), the crop's size and the mask generator's "
            'input_size in the training pipeline, and the variables to '
            f'match ({GRID_DOCS})')


def check_micro_batches_fit(cfg: Config) -> None:
    """Refuse ``model.micro_batches`` that cannot split the training
    batches: not a positive integer, or more parts than a batch has
    images."""
    model, loader = cfg.get('model') or {}, cfg.get('train_dataloader') or {}
    batch = loader.get('batch_size')
    try:
        micro = check_micro_batches_count(model.get('micro_batches', 1))
    except ValueError as e:
        raise ConfigMistake(f'{cfg.filename or "the config"}: model.{e}')
    if isinstance(batch, int) and micro > batch:
        raise ConfigMistake(
            f'{cfg.filename or "the config"}: model.micro_batches={micro} '
            f'is more parts than train_dataloader.batch_size={batch} has '
            f'images; give micro_batches between 1 and {batch} (each batch '
            'is trained in that many parts, as even as the batch allows; '
            f'{docs_page("pretraining/memory.md")}).')


#: The ``paramwise_cfg`` keys each optimizer-wrapper constructor reads
#: (mmengine's default and its subclasses, mmpretrain's and mmseg's layer
#: decay, the plugin's ViTDet layer decay).
_DEFAULT_PARAMWISE = frozenset({
    'bias_lr_mult', 'bias_decay_mult', 'norm_decay_mult', 'dwconv_decay_mult',
    'dcn_offset_lr_mult', 'flat_decay_mult', 'custom_keys', 'bypass_duplicate'
})
PARAMWISE_KEYS = {
    'DefaultOptimWrapperConstructor':
    _DEFAULT_PARAMWISE,
    'SkipFrozenOptimWrapperConstructor':
    _DEFAULT_PARAMWISE,
    'LearningRateDecayOptimWrapperConstructor':
    frozenset({
        'layer_decay_rate', 'custom_keys', 'bias_decay_mult',
        'norm_decay_mult', 'flat_decay_mult'
    }),
    'LayerDecayOptimizerConstructor':
    frozenset({'num_layers', 'layer_decay_rate', 'decay_rate', 'decay_type'}),
    'ViTLayerDecayOptimWrapperConstructor':
    frozenset(
        {'decay_rate', 'num_layers', 'norm_decay_mult', 'no_decay_names'}),
}
_CUSTOM_KEY_OPTIONS = frozenset({'lr_mult', 'decay_mult'})


def check_optim_wrapper(wrapper, scope: Optional[str]) -> List[str]:
    """The problems of ``optim_wrapper``: the wrapper's keys, the
    optimizer's keys and values (a learning rate given as text), and, with a
    constructor named or not, the ``paramwise_cfg`` keys the constructor
    reads (:data:`PARAMWISE_KEYS`; an unknown constructor's are left to
    it)."""
    if not isinstance(wrapper, dict):
        return []
    constructor = wrapper.get('constructor', 'DefaultOptimWrapperConstructor')
    problems = _check(
        wrapper,
        OPTIM_WRAPPERS,
        scope,
        'optim_wrapper',
        extra=('optimizer', 'paramwise_cfg', 'constructor'),
        default_type='OptimWrapper')
    problems += _check(
        wrapper.get('optimizer'), OPTIMIZERS, scope, 'optim_wrapper.optimizer')
    paramwise = wrapper.get('paramwise_cfg') or {}
    valid = PARAMWISE_KEYS.get(
        constructor if isinstance(constructor, str
                                  ) else getattr(constructor, '__name__', ''))
    if valid is None or not isinstance(paramwise, dict):
        return problems
    for key in paramwise:
        if key not in valid:
            hint = _nearest(key, valid)
            problems.append(f'optim_wrapper.paramwise_cfg: {constructor} '
                            f'reads no {key!r}{hint} (it reads '
                            f'{", ".join(sorted(valid))})')
        elif key.endswith('_mult') or key in ('layer_decay_rate',
                                              'decay_rate'):
            value = paramwise[key]
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                problems.append(f'optim_wrapper.paramwise_cfg.{key}='
                                f'{value!r}: {constructor} takes a number')
    # custom_keys may carry an optimizer's own group options (LARS's
    # lars_exclude): only the multipliers' values are checked
    for name, options in (paramwise.get('custom_keys') or {}).items():
        for key, value in (options.items() if isinstance(options, dict) else
                           ()):
            if key in _CUSTOM_KEY_OPTIONS and (isinstance(
                    value, bool) or not isinstance(value, (int, float))):
                problems.append(
                    f'optim_wrapper.paramwise_cfg.custom_keys.{name}.{key}='
                    f'{value!r}: {constructor} takes a number')
    return problems


def check_config_keys(cfg: Config) -> None:
    """Refuse, naming each, the keys and values of the config's hooks,
    optimizer wrapper, optimizer, lr / momentum schedulers, loops, model
    (every part of it), datasets and pipelines (the training, validation and
    test loaders' and those in hook settings) that their classes do not
    take. A class that takes any keyword (``**kwargs`` not handed to its
    base class) is not checked.

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
    problems += check_optim_wrapper(cfg.get('optim_wrapper'), scope)
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
    for name, hook in (cfg.get('default_hooks') or {}).items():
        problems += _nested(
            dict(hook, type=None) if isinstance(hook, dict) else hook, scope,
            f'default_hooks.{name}')
    for i, hook in enumerate(cfg.get('custom_hooks') or []):
        problems += _nested(
            dict(hook, type=None) if isinstance(hook, dict) else hook, scope,
            f'custom_hooks.{i}')
    for name in ('model', 'train_dataloader', 'val_dataloader',
                 'test_dataloader'):
        problems += _nested(
            cfg.get(name), scope, name, _REGISTRY_OF_KEY.get(name))
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
