import os.path as osp
from typing import Optional

import torch
from mmengine.config import Config
from mmengine.dist import master_only
from mmengine.model import is_model_wrapper
from mmengine.registry import RUNNERS
from mmengine.runner import BaseLoop, Runner
from mmengine.runner.checkpoint import _load_checkpoint_to_model

from ...models.utils import pipeline_check
from ..hooks import preemption_checkpoint_hook as preemption
from . import (atomic_checkpoints, config_checks, console_filter, dead_ranks,
               distributed_env, loaded_checkpoint, refused_run, resume_checks,
               resume_exactness, schedule_replan, scoped_collate,
               work_dir_lock)
from .refused_run import RunRefused

__all__ = ['FaultTolerantRunner', 'RunRefused']

console_filter.print_refusals_plainly(config_checks.ConfigMistake, RunRefused,
                                      work_dir_lock.WorkDirLocked)


# Registered in mmengine's root registry: mmpretrain's, mmdet's and mmseg's
# tools/train.py build `runner_type` from it before any default scope
# exists, and every library's RUNNERS finds it there.
@RUNNERS.register_module()
class FaultTolerantRunner(Runner):
    """mmengine's ``Runner`` for runs that must survive preemption, kills
    and mistakes without losing or silently mixing up training state.
    Selected by ``runner_type = 'FaultTolerantRunner'`` (the pretraining
    runtime bases set it), so ``mim train``, mmpretrain's ``tools/train.py``
    and ``torchrun ... --launcher pytorch`` get it without other changes.
    A Runner subclass, not only hooks, because what it guards happens
    outside any hook (checkpoint writes and reads, process-group set-up,
    model wrapping). What it adds, each in its module (``engine/runner/``
    unless named otherwise):

    * Config mistakes refused before anything is built: config_checks.py
    * One writer per work dir (``work_dir_lock``): work_dir_lock.py
    * No silent overwrite (``overwrite``): refused_run.py
    * The checkpoint ``--resume`` picks; a damaged one named:
      loaded_checkpoint.py
    * Resume checks what it resumes into: resume_checks.py
    * A changed schedule re-planned at resume: schedule_replan.py
    * Exact resume inside an epoch: resume_exactness.py
    * Atomic checkpoint writes: atomic_checkpoints.py
    * Preemption (``preemption``): hooks/preemption_checkpoint_hook.py
    * Nothing written by a refused run: refused_run.py
    * The training pipeline against the patch grid:
      models/utils/pipeline_check.py
    * A readable console: console_filter.py
    * A ``collate_fn`` inherited from another library: scoped_collate.py
    * CPU process group and the DDP wrapper choice: distributed_env.py
    * Dead ranks named when a collective fails: dead_ranks.py

    Args:
        *args: Arguments of mmengine's ``Runner``.
        **kwargs: Arguments of mmengine's ``Runner``. The config (``cfg``)
            may also hold ``overwrite`` (bool, default False),
            ``preemption`` (dict of :class:`PreemptionCheckpointHook`
            arguments, or None; default ``dict()``) and ``work_dir_lock``
            (dict of :class:`WorkDirLock` arguments, or None).
    """

    replans_schedules = True
    #: the runner itself warns about a checkpoint inside an epoch that the
    #: loop would not resume exactly (PreemptionCheckpointHook need not)
    warns_inexact_resume = True

    @classmethod
    def from_cfg(cls, cfg: Config) -> 'FaultTolerantRunner':
        return super().from_cfg(config_checks.checked_config(cfg))

    def __init__(self, *args, **kwargs) -> None:
        self._work_dir_existed = refused_run.existing_work_dir(args, kwargs)
        self._log_dir_existed = True
        self._dump_held = True
        self._checks_passed = self._resuming = self._training = False
        self._resumed_checkpoint: Optional[dict] = None
        self._rank_processes = self._lock = None
        try:
            super().__init__(*args, **kwargs)
        except Exception:  # a part refusing its settings, say
            if hasattr(self, '_log_dir'):
                refused_run.remove_own_files(self)
            raise

    def build_logger(self, *args, **kwargs):
        return console_filter.filter_console(super().build_logger(
            *args, **kwargs))

    @staticmethod
    def build_dataloader(dataloader, seed=None, diff_rank_seed=False):
        return Runner.build_dataloader(
            scoped_collate.scoped_collate_fn(
                console_filter.without_pin_memory_on_cpu(dataloader)), seed,
            diff_rank_seed)

    def setup_env(self, env_cfg: dict) -> None:
        distributed_env.setup_cpu_process_group(self, env_cfg)
        super().setup_env(env_cfg)
        self._log_dir_existed = osp.isdir(
            osp.join(self._work_dir, self._timestamp))
        if self.distributed:
            self._rank_processes = dead_ranks.rank_processes()

    def wrap_model(self, model_wrapper_cfg: Optional[dict], model):
        if self.distributed and model_wrapper_cfg is None:
            model_wrapper_cfg = distributed_env.default_wrapper_cfg(
                getattr(model, 'ddp_wrapper', None), self.cfg)
        return super().wrap_model(model_wrapper_cfg, model)

    def register_hook(self, hook, priority=None) -> None:
        super().register_hook(atomic_checkpoints.atomic_hook(hook), priority)

    def register_hooks(self, default_hooks=None, custom_hooks=None) -> None:
        super().register_hooks(default_hooks, custom_hooks)
        preemption.add_preemption_hook(self)

    def build_train_loop(self, loop):
        loop = resume_exactness.build_exact_train_loop(
            self.logger,
            super().build_train_loop, loop)
        pipeline_check.check_train_loop(self.model, loop)
        return loop

    def dump_config(self) -> None:
        # held back until the checks have passed (refused_run.py)
        if not self._dump_held:
            super().dump_config()

    def _release_config_dump(self) -> None:
        if self._dump_held:  # Runner.__init__ asked for the dump
            self._dump_held = False
            self.dump_config()

    def train(self) -> torch.nn.Module:
        self._training = True
        try:
            return super().train()
        except Exception as error:
            if not self._checks_passed:
                work_dir_lock.unlock_work_dir(self)
                refused_run.remove_own_files(self)
            elif self.distributed and dead_ranks.is_collective_failure(error):
                dead_ranks.report_dead_ranks(self, error)
            raise
        finally:
            work_dir_lock.unlock_work_dir(self)

    def val(self) -> dict:
        self._release_config_dump()
        return super().val()

    def test(self) -> dict:
        self._release_config_dump()
        return super().test()

    def load_or_resume(self) -> None:
        if self._has_loaded:
            return
        if self._training:
            work_dir_lock.lock_work_dir(self)
        resume_from = None
        if self._resume:
            resume_from = self._load_from or \
                loaded_checkpoint.auto_resume_path(self.work_dir, self.logger)
        if resume_from is None and self._training:
            refused_run.refuse_overwrite(self.work_dir,
                                         self.cfg.get('overwrite', False))
        if resume_from is not None:
            self.resume(resume_from)
        elif self._load_from is not None:
            self.load_checkpoint(self._load_from)
        self._has_loaded = self._checks_passed = True
        self._release_config_dump()
        atomic_checkpoints.remove_partial_files(self.work_dir, self.logger)

    def load_checkpoint(self,
                        filename: str,
                        map_location='cpu',
                        strict: bool = False,
                        revise_keys: list = [(r'^module.', '')]):
        checkpoint = loaded_checkpoint.read_checkpoint(filename, map_location,
                                                       self.work_dir,
                                                       self._resuming)
        if self._resuming:
            resume_checks.check_resume(self, checkpoint, filename, revise_keys)
            self._resumed_checkpoint = checkpoint
        self.call_hook('after_load_checkpoint', checkpoint=checkpoint)
        model = self.model.module if is_model_wrapper(
            self.model) else self.model
        checkpoint = _load_checkpoint_to_model(
            model, checkpoint, strict, revise_keys=revise_keys)
        self._has_loaded = True
        self.logger.info(f'Load checkpoint from {filename}')
        return checkpoint

    def resume(self,
               filename: str,
               resume_optimizer: bool = True,
               resume_param_scheduler: bool = True,
               map_location='default') -> None:
        config_plan = schedule_replan.config_schedule(self.param_schedulers,
                                                      self.optim_wrapper)
        self._resuming = True
        try:
            super().resume(filename, resume_optimizer, resume_param_scheduler,
                           map_location)
        finally:
            self._resuming = False
        checkpoint, self._resumed_checkpoint = self._resumed_checkpoint, None
        resume_exactness.warn_overrun(self.logger, self.train_loop, self.iter)
        if resume_param_scheduler and config_plan is not None:
            schedule_replan.follow_config_schedule(self, config_plan,
                                                   checkpoint)

    @master_only
    def save_checkpoint(self,
                        out_dir: str,
                        filename: str,
                        file_client_args: Optional[dict] = None,
                        save_optimizer: bool = True,
                        save_param_scheduler: bool = True,
                        meta: Optional[dict] = None,
                        by_epoch: bool = True,
                        backend_args: Optional[dict] = None) -> None:
        """The checkpoint of mmengine's ``save_checkpoint``, written under
        a temporary name and renamed when complete (atomic_checkpoints.py)."""
        if not by_epoch and isinstance(self._train_loop, BaseLoop):
            resume_exactness.warn_overrun(self.logger, self._train_loop,
                                          self.iter + 1,
                                          f'{filename} is inside an epoch: ')
        atomic_checkpoints.save_atomically(
            super().save_checkpoint, out_dir, filename,
            (file_client_args, save_optimizer, save_param_scheduler, meta,
             by_epoch, backend_args), self.work_dir)
