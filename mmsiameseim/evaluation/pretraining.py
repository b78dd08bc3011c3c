import copy
import os.path as osp
import time
from typing import Optional

import numpy as np
from mmengine.config import Config

from .report_io import atomic_json, load_json

INITIAL_WEIGHTS = 'initial_weights.pth'


def set_max_epochs(cfg: Config, epochs: int) -> None:
    """Train ``epochs`` epochs, the cosine schedule ending there."""
    cfg.train_cfg.max_epochs = epochs
    for sched in cfg.param_scheduler:
        if sched.get('type', '').endswith('CosineAnnealingLR'):
            sched.T_max = epochs - sched.begin
            sched.end = epochs


def pretrain_once(cfg: Config, save_initial_weights: bool = True) -> dict:
    """Pretrain with mmengine's Runner, once: a finished run is reused, an
    interrupted one resumes from its last checkpoint.

    ``{work_dir}/pretrain_done.json`` marks a finished run and holds what
    it returns.

    Args:
        cfg (Config): A pretraining config with ``work_dir`` set.
        save_initial_weights (bool): Add ``SaveInitialWeightsHook``: the
            run's own initial weights, the floor of what pretraining adds.

    Returns:
        dict: ``checkpoint`` (the last epoch's), ``initial_weights``,
        ``wall_s``, ``resumed``, ``epochs``, ``images`` and ``images_per_s``
        (batch / median logged iteration time).
    """
    from mmengine.runner import Runner

    from mmsiameseim.visualization import read_scalars
    done_path = osp.join(cfg.work_dir, 'pretrain_done.json')
    done = load_json(done_path)
    if done:
        print(f'{cfg.work_dir}: pretraining already finished, reusing '
              f'{done["checkpoint"]}', flush=True)
        return done
    cfg = copy.deepcopy(cfg)
    cfg.resume = True
    if save_initial_weights:
        cfg.custom_hooks = list(cfg.get('custom_hooks', [])) + [
            dict(type='SaveInitialWeightsHook', filename=INITIAL_WEIGHTS)]
    resumed = osp.exists(osp.join(cfg.work_dir, 'last_checkpoint'))
    runner = Runner.from_cfg(cfg)
    t0 = time.time()
    runner.train()
    wall = time.time() - t0
    times = [r['time'] for r in read_scalars(cfg.work_dir) if 'time' in r]
    epochs = cfg.train_cfg.max_epochs
    done = dict(
        checkpoint=osp.join(cfg.work_dir, f'epoch_{epochs}.pth'),
        initial_weights=osp.join(cfg.work_dir, INITIAL_WEIGHTS)
        if save_initial_weights else None,
        wall_s=wall, resumed=resumed, epochs=epochs,
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
