import copy
import os
import os.path as osp
import shutil
from functools import partial
from typing import Optional

import torch
from mmengine.config import Config
from mmengine.dist import broadcast_object_list, is_distributed, master_only
from mmengine.hooks import CheckpointHook
from mmengine.model import is_model_wrapper
from mmengine.optim import OptimWrapper
from mmengine.registry import RUNNERS
from mmengine.runner import BaseLoop, EpochBasedTrainLoop, Runner
from mmengine.runner.checkpoint import (_load_checkpoint,
                                        _load_checkpoint_to_model)

from ...atomic_io import commit, partial_name
from ...models.utils.pipeline_check import check_mask_grid
from ..checkpoint_files import (LAST_CHECKPOINT, checkpoint_damage,
                                checkpoint_files, newest_intact_checkpoint,
                                partial_files, read_last_checkpoint)
from ..hooks.atomic_checkpoint_hook import AtomicCheckpointHook
from ..hooks.preemption_checkpoint_hook import PreemptionCheckpointHook
from .config_checks import (ConfigMistake, apply_precision, check_config_keys,
                            check_gpu_config, check_micro_batches_fit)
from .console_filter import filter_console, print_refusals_plainly
from .distributed_env import dead_ranks, init_cpu_process_group, rank_processes
from .exact_resume_loop import finished_run_message
from .resume_checks import optimizer_mismatches, state_dict_mismatches
from .resume_exactness import exact_loop_cfg, overrun_note, replay_warning
from .schedule_replan import (config_schedule, follow_config_schedule,
                              pinned_schedule, saved_run_length)
from .scoped_collate import scoped_collate_fn
from .work_dir_lock import WorkDirLock, WorkDirLocked

_DOCS = 'docs/pretraining/resume_and_preemption.md'


def _listing(paths, shown: int = 5) -> str:
    names = [osp.basename(p) for p in paths]
    more = f' and {len(names) - shown} more' if len(names) > shown else ''
    return ', '.join(names[:shown]) + more


def _is_collective_failure(error: Exception) -> bool:
    """Whether ``error`` is a collective that lost a peer or timed out."""
    if isinstance(error, getattr(torch.distributed, 'DistError', ())):
        return True
    text = str(error)
    return isinstance(error, RuntimeError) and any(
        word in text
        for word in ('gloo', 'NCCL', 'Connection', 'Timed out', 'timed out'))


class RunRefused(RuntimeError):
    """A run or resume that would lose or mix up the user's training state,
    refused before its first step (the work dir is left as it was)."""


print_refusals_plainly(ConfigMistake, RunRefused, WorkDirLocked)


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
    outside any hook: the checkpoint file write (``save_checkpoint``), the
    choice and loading of the checkpoint to resume (``load_or_resume``,
    ``resume``, ``load_checkpoint``), process-group set-up (``setup_env``)
    and model wrapping. What it adds to mmengine's Runner:

    * **Atomic checkpoints.** Every checkpoint is written under a temporary
      name in its folder and renamed when complete; every ``CheckpointHook``
      of the config runs as :class:`AtomicCheckpointHook` (``last_checkpoint``
      replaced atomically, the oldest checkpoint deleted only after the new
      one is complete). Temporary files of an interrupted write are removed
      (and logged) when the next run starts.
    * **Preemption.** A :class:`PreemptionCheckpointHook` (settings:
      ``preemption = dict(...)`` in the config, ``None`` to leave it out)
      turns SIGTERM / SIGUSR1 into a checkpoint and a requeue-friendly exit.
    * **Exact resume inside an epoch.** mmengine's ``EpochBasedTrainLoop``
      (named by ``type`` or ``by_epoch=True``, in any library's config)
      runs as :class:`ExactResumeEpochBasedTrainLoop`, with a log line; a
      loop that would still replay an interrupted epoch (a subclass of the
      plain loop, a loop of unknown kind) is named in a warning at start,
      at every checkpoint written inside an epoch and at a resume inside
      one, with the iteration the resumed run will end at
      (``resume_exactness.py``).
    * **Damaged checkpoints are named.** A checkpoint that cannot be read
      (``--resume PATH`` or the one ``last_checkpoint`` names) is reported
      with what is wrong with the file and the newest intact checkpoint.
    * **Mistakes refused before anything is built.** Misspelt keys of the
      hooks, optimizer wrapper, optimizer, schedulers, loops, model,
      datasets and pipelines (with the nearest valid names),
      ``model.micro_batches`` larger than the batch, text given for a
      number, and a CUDA-only ``AmpOptimWrapper`` on a machine without a
      GPU (with the CPU route: the config key ``precision='float32'`` or
      ``'bfloat16'``).
    * **One writer per work dir.** Training takes the work dir's lock
      (:class:`WorkDirLock`; settings: ``work_dir_lock = dict(...)``,
      ``None`` to leave it out) before anything else: a second run into a
      work dir that a live run trains into is refused, naming that run; the
      lock of a run that died is taken over.
    * **No silent overwrite.** Training that does not resume is refused
      when the work dir holds checkpoints, naming them, unless the config
      says ``overwrite = True`` (testing or validating in it is not).
    * **Resume checks what it resumes into.** Refused before the first
      step, naming keys and shapes: missing or extra weights, weights or
      optimizer state of another shape, another number or size of optimizer
      param groups, another epoch length (batch size, number of processes
      or dataset changed), a finished run resumed without a longer
      schedule, and a longer run whose lr schedule stays where the old run
      ended (its ``end`` pinned in the config).
    * **A changed schedule is re-planned.** When the config's schedule
      differs from the checkpoint's (e.g. ``train_cfg.max_epochs`` raised to
      extend a finished run), the param schedulers are rebuilt from the
      config and stepped to the resumed iteration, so lr and target
      momentum (which follows ``max_iters``) are those of a run planned at
      the new length from the start, at every iteration from the resumed
      one on; the log says what changed.
    * **Nothing written by a refused run.** The config dump is written only
      once the checks have passed, and a run refused before its first step
      removes the log folder it created, so the work dir is as it was.
    * **A readable console.** The config, environment and hook-table dumps,
      per-parameter lines and repeated messages go to the log file only
      (:mod:`.console_filter`); ``pin_memory`` is left off without a GPU;
      a refusal prints its message without a traceback.
    * **Configs built on another library's.** A ``collate_fn`` inherited
      from an ``mmpretrain::`` (or ``mmdet::``, ``mmseg::``) base is looked
      up in its scope (``scoped_collate.py``); mmengine's Runner passes the
      scope tag to the function and fails at the first batch.
    * **CPU multi-process.** Without a GPU, ``--launcher pytorch`` creates a
      gloo process group (``env_cfg.dist_cfg``: its ``timeout`` bounds how
      long a rank waits for one that stopped answering) and wraps the model
      without device ids. When a collective fails, the log names the ranks
      on this host whose process is gone.

    Args:
        *args: Arguments of mmengine's ``Runner``.
        **kwargs: Arguments of mmengine's ``Runner``. The config (``cfg``)
            may also hold ``overwrite`` (bool, default False) and
            ``preemption`` (dict of :class:`PreemptionCheckpointHook`
            arguments, or None; default ``dict()``).
    """

    replans_schedules = True
    #: the runner itself warns about a checkpoint inside an epoch that the
    #: loop would not resume exactly (PreemptionCheckpointHook need not)
    warns_inexact_resume = True

    @classmethod
    def from_cfg(cls, cfg: Config) -> 'FaultTolerantRunner':
        cfg = copy.deepcopy(cfg)
        apply_precision(cfg)
        check_gpu_config(cfg)
        check_config_keys(cfg)
        check_micro_batches_fit(cfg)
        return super().from_cfg(cfg)

    def __init__(self, *args, **kwargs) -> None:
        work_dir = kwargs.get('work_dir', args[1] if len(args) > 1 else None)
        self._work_dir_existed = work_dir is not None and osp.isdir(work_dir)
        self._log_dir_existed = True
        self._defer_dump = True
        self._dump_pending = False
        self._checks_passed = False
        self._resuming = False
        self._resumed_checkpoint: Optional[dict] = None
        self._rank_processes = None
        self._training = False
        self._lock: Optional[WorkDirLock] = None
        try:
            super().__init__(*args, **kwargs)
        except Exception:
            # e.g. a model part that refuses its settings: leave the work
            # dir as it was (the log folder is made before the model)
            if hasattr(self, '_log_dir'):
                self._remove_own_files()
            raise

    # ------------------------------------------------------------ set-up
    def build_logger(self, *args, **kwargs):
        """mmengine's logger, its console without per-parameter lines,
        mmengine's deprecation notes and repeated messages (the log file
        keeps them: :mod:`.console_filter`)."""
        logger = super().build_logger(*args, **kwargs)
        filter_console(logger)
        return logger

    @staticmethod
    def build_dataloader(dataloader, seed=None, diff_rank_seed=False):
        """mmengine's, with ``pin_memory`` left off without a GPU (where
        torch ignores it with a warning) and a ``collate_fn`` inherited from
        another library's config (``_base_ = 'mmpretrain::...'``) looked up
        in that library's scope instead of failing at the first batch
        (``scoped_collate.py``)."""
        if isinstance(dataloader, dict) and dataloader.get('pin_memory') \
                and not torch.cuda.is_available():
            dataloader = dict(dataloader, pin_memory=False)
        return Runner.build_dataloader(
            scoped_collate_fn(dataloader), seed, diff_rank_seed)

    def setup_env(self, env_cfg: dict) -> None:
        if (self.distributed and not is_distributed()
                and not torch.cuda.is_available()):
            init_cpu_process_group(self.launcher,
                                   dict(env_cfg.get('dist_cfg', {})))
        super().setup_env(env_cfg)
        self._log_dir_existed = osp.isdir(
            osp.join(self._work_dir, self._timestamp))
        if self.distributed:
            self._rank_processes = rank_processes()

    def wrap_model(self, model_wrapper_cfg: Optional[dict], model):
        # a SiameseIM trained in micro-batches needs the wrapper that runs
        # its exact accumulation; CPU ranks need DDP without device ids
        micro = getattr(model, 'micro_batches', 1) > 1
        if self.distributed and model_wrapper_cfg is None and (
                micro or not torch.cuda.is_available()):
            model_wrapper_cfg = dict(
                type='SiameseIMDistributedDataParallel'
                if micro else 'MMDistributedDataParallel',
                broadcast_buffers=False,
                find_unused_parameters=self.cfg.get('find_unused_parameters',
                                                    False))
            if not torch.cuda.is_available():
                model_wrapper_cfg['device_ids'] = None
        return super().wrap_model(model_wrapper_cfg, model)

    def register_hook(self, hook, priority=None) -> None:
        if isinstance(hook, dict) and hook.get('type') in ('CheckpointHook',
                                                           CheckpointHook):
            hook = dict(hook, type=AtomicCheckpointHook)
        super().register_hook(hook, priority)

    def register_hooks(self, default_hooks=None, custom_hooks=None) -> None:
        super().register_hooks(default_hooks, custom_hooks)
        settings = self.cfg.get('preemption', dict())
        if settings is not None and not any(
                isinstance(h, PreemptionCheckpointHook) for h in self.hooks):
            self.register_hook(PreemptionCheckpointHook(**settings))

    def dump_config(self) -> None:
        if self._defer_dump:
            self._dump_pending = True
            return
        super().dump_config()

    def _flush_config_dump(self) -> None:
        self._defer_dump = False
        if self._dump_pending:
            self._dump_pending = False
            self.dump_config()

    # ------------------------------------------------------------ running
    def train(self) -> torch.nn.Module:
        self._training = True
        try:
            return super().train()
        except Exception as error:
            if not self._checks_passed:
                self._release_lock()
                self._remove_own_files()
            elif self.distributed and _is_collective_failure(error):
                self._report_dead_ranks(error)
            raise
        finally:
            self._release_lock()

    def build_train_loop(self, loop):
        """mmengine's, then the model's check of the training pipeline
        before any data is loaded: SiameseIM's ``check_train_pipeline``
        refuses a crop or mask generator off its patch grid, naming the
        options; for any other model, a mask generator off the backbone's
        patch grid is refused (``check_mask_grid``). mmengine's plain
        epoch loop runs as the exact-resume one; another loop that would
        replay an interrupted epoch is named."""
        loop, note = exact_loop_cfg(loop)
        if note:
            self.logger.info(note)
        loop = super().build_train_loop(loop)
        warning = replay_warning(loop)
        if warning:
            self.logger.warning(warning)
        model = self.model.module if is_model_wrapper(self.model) \
            else self.model
        check = getattr(model, 'check_train_pipeline', None)
        if check is None:
            check = partial(check_mask_grid, getattr(model, 'backbone', None))
        dataset = getattr(getattr(loop, 'dataloader', None), 'dataset', None)
        pipeline = getattr(dataset, 'pipeline', None)
        if pipeline is not None:
            check(getattr(pipeline, 'transforms', []))
        return loop

    def _release_lock(self) -> None:
        if self._lock is not None:
            self._lock.release()
            self._lock = None

    def val(self) -> dict:
        self._flush_config_dump()
        return super().val()

    def test(self) -> dict:
        self._flush_config_dump()
        return super().test()

    @master_only
    def _remove_own_files(self) -> None:
        """Undo what this run wrote before it was refused: its log folder
        and, when it created it and it is empty, the work dir."""
        logger = getattr(self, 'logger', None)
        for handler in list(logger.handlers if logger else []):
            if hasattr(handler, 'baseFilename'):
                handler.close()
                logger.removeHandler(handler)
        if not self._log_dir_existed and osp.isdir(self._log_dir):
            shutil.rmtree(self._log_dir, ignore_errors=True)
        if (not self._work_dir_existed and osp.isdir(self.work_dir)
                and not os.listdir(self.work_dir)):
            os.rmdir(self.work_dir)

    def _report_dead_ranks(self, error: Exception) -> None:
        dead = dead_ranks(self._rank_processes, self.rank)
        if dead:
            names = ', '.join(f'rank {r} (pid {pid})' for r, pid in dead)
            self.logger.error(
                f'rank {self.rank}: stopping at iteration {self.iter + 1}: '
                f'{names} died, and the collective waiting for it failed '
                f'({str(error).splitlines()[0][:200]}). Continue with '
                '--resume once every rank can run.')
        else:
            self.logger.error(
                f'rank {self.rank}: stopping at iteration {self.iter + 1}: '
                f'{type(error).__name__}: {str(error).splitlines()[0][:200]}'
                ' (no other rank on this host has died; see the other '
                "ranks' logs and the launcher's report)")

    # ----------------------------------------------- choosing a checkpoint
    def load_or_resume(self) -> None:
        if self._has_loaded:
            return
        if self._training:
            self._lock_work_dir()
        resume_from = None
        if self._resume:
            resume_from = self._load_from or self._auto_resume_path()
        if resume_from is None and self._training:
            self._refuse_overwrite()
        if resume_from is not None:
            self.resume(resume_from)
        elif self._load_from is not None:
            self.load_checkpoint(self._load_from)
        self._has_loaded = True
        self._checks_passed = True
        self._flush_config_dump()
        self._remove_partial_files()

    def _lock_work_dir(self) -> None:
        """Take the work dir's lock on rank 0; every rank stops when a live
        run holds it."""
        settings = self.cfg.get('work_dir_lock', dict())
        if settings is None:
            return
        refusal = [None]
        if self.rank == 0:
            self._lock = WorkDirLock(self.work_dir, **settings)
            try:
                note = self._lock.acquire()
                if note:
                    self.logger.warning(note)
            except WorkDirLocked as error:
                self._lock = None
                refusal = [str(error)]
        if self.distributed:
            broadcast_object_list(refusal, src=0)
        if refusal[0]:
            raise RunRefused(refusal[0])

    def _auto_resume_path(self) -> Optional[str]:
        """The checkpoint ``--resume`` (without a path) continues from."""
        last = read_last_checkpoint(self.work_dir)
        found = checkpoint_files(self.work_dir)
        pointer = osp.join(self.work_dir, LAST_CHECKPOINT)
        if last is None:
            if found:
                raise RunRefused(
                    f'--resume: {self.work_dir} has no {LAST_CHECKPOINT} '
                    f'file but holds checkpoints ({_listing(found)}); name '
                    f'the one to resume: --resume {self._newest_hint()}')
            self.logger.info(f'--resume: no checkpoint in {self.work_dir} '
                             'yet; training from the start')
            return None
        if not last:
            raise RunRefused(
                f'--resume: {pointer} is empty and names no checkpoint. '
                f'The newest intact checkpoint of the work dir is '
                f'{self._newest_hint()}: resume from it with --resume PATH')
        if not osp.isfile(last):
            moved = osp.join(self.work_dir, osp.basename(last))
            if osp.isfile(moved):
                self.logger.info(f'{pointer} names {last}, which is not '
                                 f'there; resuming from {moved} (the work '
                                 'dir was moved)')
                return moved
        self.logger.info(f'resuming from {last} (named by {pointer})')
        return last

    def _newest_hint(self, exclude: Optional[str] = None) -> str:
        newest = newest_intact_checkpoint(self.work_dir, exclude)
        return newest or f'(none: no intact checkpoint in {self.work_dir})'

    def _refuse_overwrite(self) -> None:
        if self.cfg.get('overwrite', False):
            return
        found = checkpoint_files(self.work_dir)
        if not found and not osp.exists(
                osp.join(self.work_dir, LAST_CHECKPOINT)):
            return
        last = read_last_checkpoint(self.work_dir) or '(none)'
        raise RunRefused(
            f'{self.work_dir} holds the checkpoints of an earlier run '
            f'({_listing(found) or "none"}; {LAST_CHECKPOINT}: {last}); '
            'training from the start here would replace them. Continue '
            'that run with --resume, train into another --work-dir, or '
            'start over in this one with --cfg-options overwrite=True '
            f'(checkpoints of the same name are then replaced; {_DOCS}).')

    @master_only
    def _remove_partial_files(self) -> None:
        for path in partial_files(self.work_dir):
            os.remove(path)
            self.logger.info(f'removed {path}, a checkpoint whose writing '
                             'was interrupted')

    # ----------------------------------------------------------- loading
    def load_checkpoint(self,
                        filename: str,
                        map_location='cpu',
                        strict: bool = False,
                        revise_keys: list = [(r'^module.', '')]):
        checkpoint = self._read_checkpoint(filename, map_location)
        if self._resuming:
            self._check_resume(checkpoint, filename, revise_keys)
            self._resumed_checkpoint = checkpoint
        self.call_hook('after_load_checkpoint', checkpoint=checkpoint)
        model = self.model.module if is_model_wrapper(
            self.model) else self.model
        checkpoint = _load_checkpoint_to_model(
            model, checkpoint, strict, revise_keys=revise_keys)
        self._has_loaded = True
        self.logger.info(f'Load checkpoint from {filename}')
        return checkpoint

    def _read_checkpoint(self, filename: str, map_location) -> dict:
        local = '://' not in filename
        try:
            return _load_checkpoint(filename, map_location=map_location)
        except Exception as error:
            if not local:
                raise
            damage = checkpoint_damage(filename)
            if damage is None:
                raise RuntimeError(
                    f'cannot load the checkpoint {filename}: {error}') \
                    from error
            folder = osp.dirname(osp.abspath(filename))
            newest = newest_intact_checkpoint(folder, exclude=filename)
            use = (f'--resume {newest}'
                   if self._resuming else f'--cfg-options load_from={newest}')
            hint = (f'The newest intact checkpoint beside it is {newest}: '
                    f'use it with {use}' if newest else
                    f'No intact checkpoint is beside it in {folder}.')
            named_by = ''
            if osp.abspath(read_last_checkpoint(self.work_dir) or '') == \
                    osp.abspath(filename):
                named_by = (f' (named by '
                            f'{osp.join(self.work_dir, LAST_CHECKPOINT)})')
            raise RunRefused(
                f'cannot read the checkpoint {filename}{named_by}: {damage}. '
                f'{hint}') from error

    # ---------------------------------------------------------- resuming
    def resume(self,
               filename: str,
               resume_optimizer: bool = True,
               resume_param_scheduler: bool = True,
               map_location='default') -> None:
        config_plan = config_schedule(self.param_schedulers,
                                      self.optim_wrapper)
        self._resuming = True
        try:
            super().resume(filename, resume_optimizer, resume_param_scheduler,
                           map_location)
        finally:
            self._resuming = False
        checkpoint, self._resumed_checkpoint = self._resumed_checkpoint, None
        overrun = overrun_note(self.train_loop, self.iter)
        if overrun:
            self.logger.warning(overrun)
        if resume_param_scheduler and config_plan is not None:
            message = follow_config_schedule(self, config_plan, checkpoint)
            if message:
                self.logger.info(message)

    def _check_resume(self, checkpoint: dict, filename: str,
                      revise_keys) -> None:
        """Refuse, naming what differs, a checkpoint this run cannot
        continue."""
        model = self.model.module if is_model_wrapper(
            self.model) else self.model
        problems = state_dict_mismatches(
            model, checkpoint.get('state_dict', checkpoint), revise_keys)
        saved_optim = checkpoint.get('optimizer')
        if isinstance(self.optim_wrapper, OptimWrapper) and isinstance(
                saved_optim, dict) and 'param_groups' in saved_optim:
            names = {id(p): n for n, p in model.named_parameters()}
            problems += optimizer_mismatches(self.optim_wrapper.optimizer,
                                             saved_optim, names)
        if problems:
            raise RunRefused(
                f'cannot resume from {filename}: the checkpoint is of '
                'another model than this config builds:\n  ' +
                '\n  '.join(problems) +
                '\nResume with the config that wrote it, or start a new '
                'run from its weights in another --work-dir with '
                f'--cfg-options load_from={filename}.')
        self._check_run_length(checkpoint, filename)

    def _check_run_length(self, checkpoint: dict, filename: str) -> None:
        loop = self.train_loop
        meta = checkpoint.get('meta', {})
        saved_epochs, saved_iters = saved_run_length(checkpoint)
        by_epoch = isinstance(loop, EpochBasedTrainLoop)
        max_epochs = loop.max_epochs if by_epoch else None
        saved_length = length = 1
        if by_epoch and saved_epochs and saved_iters:
            saved_length = saved_iters // saved_epochs
            length = loop.max_iters // max_epochs
            if saved_length != length:
                raise RunRefused(
                    f'cannot resume from {filename}: its run had epochs of '
                    f'{saved_length} iterations, this one has {length} '
                    '(batch size, number of processes or dataset changed), '
                    'so its iteration count and schedule do not map onto '
                    'this run. Resume with the batch size, processes and '
                    'dataset it was written with, or start a new run from '
                    'its weights in another --work-dir with --cfg-options '
                    f'load_from={filename}.')
        done = meta.get('iter', 0)
        if done >= loop.max_iters:
            raise RunRefused(
                finished_run_message(
                    filename,
                    meta.get('epoch'),
                    max_epochs,
                    done,
                    loop.max_iters,
                    replans=True))
        problem = pinned_schedule(
            checkpoint.get('param_schedulers'), saved_iters,
            self.param_schedulers, self.max_iters, length)
        if problem:
            raise RunRefused(f'cannot resume from {filename} into a longer '
                             f'run: {problem} ({_DOCS})')

    # ----------------------------------------------------------- writing
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
        """mmengine's ``save_checkpoint``, written under a temporary name
        and renamed when complete (local folders; other backends write as
        mmengine does)."""
        args = (file_client_args, save_optimizer, save_param_scheduler, meta,
                by_epoch, backend_args)
        if not by_epoch and isinstance(self._train_loop, BaseLoop):
            overrun = overrun_note(self._train_loop, self.iter + 1)
            if overrun:
                self.logger.warning(f'{filename} is inside an epoch: '
                                    f'{overrun}')
        if file_client_args or backend_args or '://' in str(out_dir):
            return super().save_checkpoint(out_dir, filename, *args)
        partial = partial_name(filename)
        try:
            super().save_checkpoint(out_dir, partial, *args)
            commit(osp.join(out_dir, partial), osp.join(out_dir, filename))
        except BaseException as error:
            path = osp.join(out_dir, partial)
            if osp.exists(path):
                os.remove(path)
            if isinstance(error, OSError):
                raise OSError(error.errno,
                              self._write_failure(out_dir, filename,
                                                  error)) from error
            raise

    def _write_failure(self, out_dir: str, filename: str,
                       error: OSError) -> str:
        """What a failed checkpoint write tells the user: the file, the
        system's reason, the free space, and what is left intact."""
        try:
            free = f'{shutil.disk_usage(out_dir).free / 2**20:.0f} MiB free'
        except OSError:
            free = 'free space unknown'
        newest = newest_intact_checkpoint(self.work_dir)
        kept = (f'the older checkpoints are intact (newest: {newest})'
                if newest else 'no earlier checkpoint exists')
        return (f'cannot write the checkpoint {osp.join(out_dir, filename)}: '
                f'{error.strerror or error} ({free} in {out_dir}). Nothing '
                f'was written under that name and {kept}. Free some space or '
                'fix the folder, then continue with --resume.')
