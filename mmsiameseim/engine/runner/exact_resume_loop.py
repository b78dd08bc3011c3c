import random
from typing import Optional, Sequence

import numpy as np
import torch
from mmengine.logging import print_log
from mmengine.runner import EpochBasedTrainLoop, find_latest_checkpoint
from mmpretrain.registry import LOOPS

from ...docs_page import docs_page

RNG_STATE_KEY = 'train_rng_state'


def _rng_state() -> dict:
    state = dict(
        python=random.getstate(),
        numpy=np.random.get_state(),
        torch=torch.get_rng_state())
    if torch.cuda.is_available() and torch.cuda.is_initialized():
        state['cuda'] = torch.cuda.get_rng_state_all()
    return state


def _set_rng_state(state: dict) -> None:
    random.setstate(state['python'])
    np.random.set_state(state['numpy'])
    torch.set_rng_state(state['torch'])
    if 'cuda' in state and torch.cuda.is_available():
        torch.cuda.set_rng_state_all(state['cuda'])


def finished_run_message(path: str, epoch: Optional[int],
                         max_epochs: Optional[int], done: int, max_iters: int,
                         replans: bool) -> str:
    """Why a finished run is not resumed, and what works instead.

    Args:
        path (str): The checkpoint.
        epoch (int, optional): Its epoch.
        max_epochs (int, optional): This run's ``max_epochs``.
        done (int): Its iteration.
        max_iters (int): This run's iterations.
        replans (bool): Whether the runner rebuilds the lr schedule for a
            longer run (``FaultTolerantRunner``); mmengine's Runner keeps
            the checkpoint's schedule, whose lr stays at its end value.
    """
    longer = (
        'To train longer, resume with a larger train_cfg.max_epochs: the lr '
        'schedule and the target momentum are re-planned for the new length'
        if replans else
        'Raising train_cfg.max_epochs would not help here: this runner keeps'
        " the checkpoint's lr schedule, which stays at its end value; use "
        "runner_type='FaultTolerantRunner' to extend a run")
    return (f'nothing to resume: the checkpoint {path} is of a finished run '
            f'(epoch {epoch} of {max_epochs}, iteration {done} of '
            f'{max_iters}). Train in another --work-dir, or start over in '
            'this one without --resume and with --cfg-options '
            f'overwrite=True. {longer} '
            f'({docs_page("pretraining/resume_and_preemption.md")}).')


class _SkipBatches:
    """A batch sampler that leaves out the first ``n`` batches of
    ``batch_sampler`` (index lists only: no data is loaded) and keeps its
    length, so that batch indices and ``len(dataloader)`` stay those of the
    whole epoch.

    Batch-level, so that a batch sampler that does not cut its sampler's
    order into consecutive batches (mmdet's ``AspectRatioBatchSampler``)
    gives the remaining batches exactly. The loop sets ``n`` to 0 when the
    epoch ends: a DataLoader with persistent workers keeps this sampler for
    the later epochs (and iterates it twice when it starts its workers).
    """

    def __init__(self, batch_sampler, n: int) -> None:
        self.batch_sampler, self.n = batch_sampler, n

    def __iter__(self):
        iterator = iter(self.batch_sampler)
        for _ in range(self.n):
            next(iterator, None)
        return iterator

    def __len__(self) -> int:
        return len(self.batch_sampler)

    def __getattr__(self, name):
        if name == 'batch_sampler':  # not yet set (copying, unpickling)
            raise AttributeError(name)
        return getattr(self.batch_sampler, name)


def empty_epoch_message(dataloader) -> str:
    """Why an epoch of ``dataloader`` has no batch, naming the dataset's
    folder, its size and the batch (mmengine would stop later with
    ``epoch_length must be a positive integer, but got 0``)."""
    dataset = dataloader.dataset
    root = getattr(dataset, 'data_root', None) or getattr(
        dataset, 'data_prefix', None) or type(dataset).__name__
    batch = dataloader.batch_size
    ranks = ''
    sampler = getattr(dataloader, 'sampler', None)
    world = getattr(sampler, 'world_size', 1)
    if world > 1:
        ranks = f' on each of {world} ranks (the sampler splits them)'
    return (f'train_dataloader: {len(dataset)} image(s) in {root} make no '
            f'batch of {batch}{ranks} with drop_last=True: an epoch would '
            'have no iteration. Add images, or lower '
            'train_dataloader.batch_size to at most the images per rank.')


@LOOPS.register_module()
class ExactResumeEpochBasedTrainLoop(EpochBasedTrainLoop):
    """``EpochBasedTrainLoop`` that resumes exactly from a checkpoint taken
    inside an epoch.

    mmengine's loop replays the whole epoch after resuming from an iteration
    checkpoint, so the run trains more iterations than its schedule (lr and
    momentum schedules overrun). This loop:

    * skips the batches of the resumed epoch that were already trained, in
      that epoch's order, under any batch sampler (mmdet's
      ``AspectRatioBatchSampler`` too; index lists are dropped before any
      data is loaded), and keeps batch indices as in the uninterrupted
      epoch;
    * keeps the host RNG state (python, numpy, torch, CUDA) after every step
      in the message hub, so that every checkpoint carries it, and restores
      it on resume. With ``num_workers=0`` the data augmentation then draws
      exactly what the uninterrupted run draws; with worker processes the
      remaining batches and the schedules are exact but the workers' random
      draws restart from their seeds;
    * refuses to "resume" a finished run instead of exiting without
      training.

    Args:
        runner (Runner): The runner.
        dataloader (DataLoader | dict): The training dataloader.
        max_epochs (int): Total training epochs.
        **kwargs: Other arguments of ``EpochBasedTrainLoop``.
    """

    def __init__(self, runner, dataloader, max_epochs: int, **kwargs) -> None:
        super().__init__(runner, dataloader, max_epochs, **kwargs)
        self._restore_rng = True
        if len(self.dataloader) == 0:
            raise ValueError(empty_epoch_message(self.dataloader))

    def run(self) -> torch.nn.Module:
        if self._iter > 0 and self._iter >= self._max_iters:
            path = (
                getattr(self.runner, '_load_from', None)
                or find_latest_checkpoint(self.runner.work_dir))
            raise RuntimeError(
                finished_run_message(
                    path,
                    self._epoch,
                    self._max_epochs,
                    self._iter,
                    self._max_iters,
                    replans=getattr(self.runner, 'replans_schedules', False)))
        return super().run()

    def run_epoch(self) -> None:
        """Iterate one epoch, or what is left of it after a resume."""
        self.runner.call_hook('before_train_epoch')
        self.runner.model.train()
        done = self._iter - self._epoch * len(self.dataloader)
        batch_sampler = self.dataloader.batch_sampler
        if done > 0:
            print_log(
                f'resuming inside epoch {self._epoch + 1}: skipping its '
                f'{done} trained batches of {len(self.dataloader)}',
                logger='current')
            # DataLoader refuses to set batch_sampler once built; its
            # iterators read it afresh at every epoch
            skip = _SkipBatches(batch_sampler, done)
            object.__setattr__(self.dataloader, 'batch_sampler', skip)
        # The saved state is the one the next batch drew from. At an epoch
        # start, the uninterrupted run drew the dataloader's base seed from
        # it; inside an epoch, it did not.
        state = self.runner.message_hub.get_info(RNG_STATE_KEY)
        restore = self._restore_rng and self._iter > 0 and state is not None
        self._restore_rng = False
        try:
            if restore and done == 0:
                _set_rng_state(state)
            batches = iter(self.dataloader)
            if restore and done > 0:
                _set_rng_state(state)
            for idx, data_batch in enumerate(batches, start=max(done, 0)):
                self.run_iter(idx, data_batch)
        finally:
            if done > 0:
                skip.n = 0
                object.__setattr__(self.dataloader, 'batch_sampler',
                                   batch_sampler)
        self.runner.call_hook('after_train_epoch')
        self._epoch += 1

    def run_iter(self, idx: int, data_batch: Sequence[dict]) -> None:
        """One step; the RNG state after it goes to the message hub before
        the ``after_train_iter`` hooks, so a checkpoint they write has it."""
        self.runner.call_hook(
            'before_train_iter', batch_idx=idx, data_batch=data_batch)
        outputs = self.runner.model.train_step(
            data_batch, optim_wrapper=self.runner.optim_wrapper)
        self.runner.message_hub.update_info(RNG_STATE_KEY, _rng_state())
        self.runner.call_hook(
            'after_train_iter',
            batch_idx=idx,
            data_batch=data_batch,
            outputs=outputs)
        self._iter += 1
