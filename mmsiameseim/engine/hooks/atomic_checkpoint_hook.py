import os.path as osp

from mmengine.dist import is_main_process
from mmengine.hooks import CheckpointHook
from mmpretrain.registry import HOOKS

from ...atomic_io import atomic_write
from ..checkpoint_files import LAST_CHECKPOINT


@HOOKS.register_module()
class AtomicCheckpointHook(CheckpointHook):
    """mmengine's ``CheckpointHook`` that never leaves the work dir without
    an intact checkpoint, whenever the process is killed.

    mmengine's hook, when ``max_keep_ckpts`` is reached, first deletes the
    oldest checkpoint, then writes the new one, then rewrites
    ``last_checkpoint`` in place: a kill during the write leaves one
    checkpoint fewer than asked and a partial file, and a kill during the
    rewrite an empty ``last_checkpoint``. This hook writes the new
    checkpoint (under a temporary name, renamed when complete, by
    ``FaultTolerantRunner.save_checkpoint``), then points
    ``last_checkpoint`` at it (atomically), and only then deletes the
    oldest one. While it writes, the folder holds one checkpoint more than
    ``max_keep_ckpts``.

    mmengine's hooks also share one message-hub entry (``keep_ckpt_ids``)
    for the checkpoints they keep, so after a resume an epoch hook and an
    iteration hook each track the other's list and old checkpoints are
    never deleted. This hook keeps its list under its own entry too
    (``keep_ckpt_ids:{filename_tmpl}``) and reads that one when resuming.

    ``FaultTolerantRunner`` builds every ``CheckpointHook`` of a config as
    this class. Arguments are those of ``CheckpointHook``.

    Args:
        **kwargs: Arguments of mmengine's ``CheckpointHook`` (``interval``,
            ``by_epoch``, ``max_keep_ckpts``, ``save_last``, ...).
    """

    @property
    def _keep_key(self) -> str:
        return f'keep_ckpt_ids:{self.filename_tmpl}'

    def before_train(self, runner) -> None:
        hub = runner.message_hub
        own = hub.get_info(self._keep_key)
        shared = hub.get_info('keep_ckpt_ids')
        if own is not None:
            hub.update_info('keep_ckpt_ids', list(own))
        super().before_train(runner)
        if own is not None and shared is not None:
            hub.update_info('keep_ckpt_ids', shared)

    def _keep(self, hub, ids) -> None:
        hub.update_info(self._keep_key, list(ids))
        hub.update_info('keep_ckpt_ids', list(ids))

    def _save_checkpoint_with_step(self, runner, step, meta) -> None:
        hub = runner.message_hub
        kept = list(self.keep_ckpt_ids) if self.max_keep_ckpts > 0 else []
        new = self.max_keep_ckpts > 0 and kept[-1:] != [step]
        drop = kept[0] if new and len(kept) == self.max_keep_ckpts else None
        if new:
            # in the message hub before the save, so the checkpoint has it
            self._keep(hub, kept[1 if drop is not None else 0:] + [step])
        filename = self.filename_tmpl.format(step)
        previous = self.last_ckpt, hub.get_info('last_ckpt')
        self.last_ckpt = self.file_backend.join_path(self.out_dir, filename)
        hub.update_info('last_ckpt', self.last_ckpt)
        try:
            runner.save_checkpoint(
                self.out_dir,
                filename,
                self.file_client_args,
                save_optimizer=self.save_optimizer,
                save_param_scheduler=self.save_param_scheduler,
                meta=meta,
                by_epoch=self.by_epoch,
                backend_args=self.backend_args,
                **self.args)
        except BaseException:
            self.last_ckpt = previous[0]
            hub.update_info('last_ckpt', previous[1])
            if new:
                self._keep(hub, kept)
            raise
        if new:
            self.keep_ckpt_ids.append(step)
        if not is_main_process():
            return
        atomic_write(
            osp.join(runner.work_dir, LAST_CHECKPOINT), self.last_ckpt)
        if drop is not None:
            path = self.file_backend.join_path(self.out_dir,
                                               self.filename_tmpl.format(drop))
            if self.file_backend.isfile(path):
                self.file_backend.remove(path)
            elif self.file_backend.isdir(path):
                self.file_backend.rmtree(path)
