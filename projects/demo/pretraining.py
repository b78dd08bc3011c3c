import copy
import os.path as osp
from typing import Optional

import numpy as np
from mmengine.config import Config
from mmengine.hooks import Hook

from mmsiameseim.atomic_io import atomic_json, load_json
from projects.demo.wall_time import WallTimeLedger

INITIAL_WEIGHTS = 'initial_weights.pth'
#: The pretraining time of each invocation (a killed run resumed is several).
PRETRAIN_WALL_TIME = 'pretrain_wall_time.json'


def set_max_epochs(cfg: Config, epochs: int) -> None:
    """Train ``epochs`` epochs, the cosine schedule ending there."""
    cfg.train_cfg.max_epochs = epochs
    for sched in cfg.param_scheduler:
        if sched.get('type', '').endswith('CosineAnnealingLR'):
            sched.T_max = epochs - sched.begin
            sched.end = epochs


class _StartClock(Hook):
    """Starts a :class:`WallTimeLedger` when training starts."""

    def __init__(self, clock: WallTimeLedger) -> None:
        self.clock = clock

    def before_train(self, runner) -> None:
        self.clock.__enter__()


def pretrain_once(cfg: Config, save_initial_weights: bool = True) -> dict:
    """Pretrain with the config's runner (``runner_type``, as mmpretrain's
    tools/train.py builds it: ``FaultTolerantRunner`` for the pretraining
    configs), once: a finished run is reused, an interrupted one (killed,
    or preempted by SIGTERM, which leaves an iteration checkpoint) resumes
    from its last checkpoint.

    ``{work_dir}/pretrain_done.json`` marks a finished run and holds what
    it returns. The training time of every invocation (each resume of a
    killed run too) is kept in ``{work_dir}/pretrain_wall_time.json`` and
    ``wall_s`` is their sum.

    Args:
        cfg (Config): A pretraining config with ``work_dir`` set.
        save_initial_weights (bool): Add ``SaveInitialWeightsHook``: the
            run's own initial weights, the floor of what pretraining adds.

    Returns:
        dict: ``checkpoint`` (the last epoch's), ``initial_weights``,
        ``wall_s`` (summed over ``invocations``), ``invocations``,
        ``resumed``, ``epochs``, ``images`` and ``images_per_s`` (batch /
        median logged iteration time).
    """
    from mmengine.registry import RUNNERS

    from projects.common.visualization import read_scalars
    from projects.demo.console import run_header
    done_path = osp.join(cfg.work_dir, 'pretrain_done.json')
    done = load_json(done_path)
    if done:
        print(
            f'{cfg.work_dir}: pretraining already finished, reusing '
            f'{done["checkpoint"]}',
            flush=True)
        return done
    cfg = copy.deepcopy(cfg)
    cfg.resume = True
    if save_initial_weights:
        cfg.custom_hooks = list(cfg.get('custom_hooks', [])) + [
            dict(type='SaveInitialWeightsHook', filename=INITIAL_WEIGHTS)
        ]
    resumed = osp.exists(osp.join(cfg.work_dir, 'last_checkpoint'))
    runner = RUNNERS.build(cfg)
    print(
        run_header(cfg, runner.model, len(runner.train_dataloader.dataset)),
        flush=True)
    # the clock starts once the run holds its work dir's lock and passed
    # its checks (before_train): a refused run records no invocation
    clock = WallTimeLedger(osp.join(cfg.work_dir, PRETRAIN_WALL_TIME))
    runner.register_hook(_StartClock(clock), 'HIGHEST')
    try:
        runner.train()
    finally:
        if clock.started:
            clock.__exit__(None, None, None)
    times = [r['time'] for r in read_scalars(cfg.work_dir) if 'time' in r]
    epochs = cfg.train_cfg.max_epochs
    done = dict(
        checkpoint=osp.join(cfg.work_dir, f'epoch_{epochs}.pth'),
        initial_weights=osp.join(cfg.work_dir, INITIAL_WEIGHTS)
        if save_initial_weights else None,
        wall_s=clock.total_s(),
        invocations=len(clock.invocations()),
        resumed=resumed,
        epochs=epochs,
        images=len(runner.train_dataloader.dataset) * epochs,
        images_per_s=cfg.train_dataloader.batch_size /
        float(np.median(times)) if times else None)
    atomic_json(done_path, done)
    return done


def initial_weights(done: dict, run_dir: Optional[str] = None) -> str:
    """The initial-weights file of a finished :func:`pretrain_once` run,
    with a clear error when the run did not save it."""
    path = done.get('initial_weights')
    if not path or not osp.exists(path):
        raise FileNotFoundError(
            f'{run_dir or osp.dirname(done["checkpoint"])}: this pretraining '
            f'finished without saving its initial weights '
            f'({INITIAL_WEIGHTS}); delete that folder to rerun it')
    return path


def prepare_pretrain_cfg(cfg: Config,
                         work_dir: str,
                         data_prefix: Optional[str] = None,
                         overrides: Optional[dict] = None,
                         hook_overrides: Optional[dict] = None,
                         epochs: Optional[int] = None,
                         seed: Optional[int] = None,
                         precision: Optional[str] = None) -> Config:
    """A pretraining config set up for one run, in place.

    Args:
        cfg (Config): The pretraining config.
        work_dir (str): The run's work dir.
        data_prefix (str, optional): Dataset folder of the training set and
            of the ``OnlineKNNHook`` loaders.
        overrides (dict, optional): Merged into the config (nested dicts,
            e.g. ``dict(train_dataloader=dict(batch_size=64))``).
        hook_overrides (dict, optional): Hook type -> dict merged into every
            ``custom_hooks`` entry of that type.
        epochs (int, optional): Pretraining epochs (see
            :func:`set_max_epochs`).
        seed (int, optional): Replaces ``randomness.seed`` only.
        precision (str, optional): 'float32', 'bfloat16' or 'float16' (see
            :func:`set_training_precision`), also of the ``OnlineKNNHook``
            rounds.

    Returns:
        Config: ``cfg``.
    """
    from mmsiameseim.evaluation import set_training_precision
    cfg.work_dir = osp.abspath(work_dir)
    if overrides:
        cfg.merge_from_dict(dict(overrides))
    if data_prefix is not None:
        cfg.train_dataloader.dataset.data_prefix = data_prefix
    for hook in cfg.get('custom_hooks', []):
        hook.update(
            Config._merge_a_into_b(
                dict((hook_overrides or {}).get(hook.get('type'), {})), hook))
        if hook.get('type') != 'OnlineKNNHook':
            continue
        if precision is not None:  # its rounds in the run's precision
            hook.precision = precision
        if data_prefix is not None:
            for loader in ('bank_dataloader', 'query_dataloader'):
                hook[loader]['dataset']['data_prefix'] = data_prefix
    if epochs:
        set_max_epochs(cfg, epochs)
    if seed is not None:
        cfg.randomness = dict(cfg.get('randomness', {}), seed=seed)
    if precision is not None:
        set_training_precision(cfg, precision)
    return cfg
