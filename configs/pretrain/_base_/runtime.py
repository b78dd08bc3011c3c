_base_ = 'mmpretrain::_base_/default_runtime.py'

custom_imports = dict(imports=['mmsiameseim'], allow_failed_imports=False)
# mmengine's Runner plus what a long run on a shared cluster needs
# (mmsiameseim.engine.runner.FaultTolerantRunner): checkpoints written
# atomically, a checkpoint and exit status 128+signal on SIGTERM / SIGUSR1
# (preemption), resume checks (model, optimizer, epoch length, schedule),
# no silent overwrite of a work dir's checkpoints, CPU multi-process
# launch. docs/pretraining/resume_and_preemption.md
runner_type = 'FaultTolerantRunner'
# Training from the start into a work dir holding checkpoints is refused;
# `--cfg-options overwrite=True` starts over there (same-named checkpoints
# are replaced).
overwrite = False
# PreemptionCheckpointHook's settings (None: no signal handling); slurm:
# `#SBATCH --signal=USR1@120` sends SIGUSR1 two minutes before the limit;
# Ctrl-C (SIGINT) also stops with a checkpoint (a second one at once).
preemption = dict(signals=('SIGTERM', 'SIGUSR1', 'SIGINT'), interval=1)
default_hooks = dict(
    logger=dict(type='LoggerHook', interval=50),
    checkpoint=dict(type='CheckpointHook', interval=10, max_keep_ckpts=3))
custom_hooks = [
    # Runs before the checkpoint hooks and checks the weights of every
    # checkpoint before it is written, whatever its loss-check interval.
    dict(type='StopOnNonFiniteLossHook', interval=50),
    # Iteration checkpoints beside the epoch ones, for an exact resume inside
    # an epoch (ExactResumeEpochBasedTrainLoop): 500 iterations of 4096
    # images, about 2.5 minutes at an estimated 0.3 s per iteration on 16
    # A100s (configs/pretrain/README.md, "Resuming").
    dict(
        type='CheckpointHook',
        by_epoch=False,
        interval=500,
        save_last=False,
        max_keep_ckpts=2),
]
randomness = dict(seed=0, diff_rank_seed=True)
# Resume only when asked: `mim train ... --resume` (the latest checkpoint of
# the work dir) or `--resume PATH`; `--cfg-options resume=True` does the
# same as `--resume`.
resume = False
# torch.compile the training step (mmengine's option; True or a dict of
# torch.compile's arguments, e.g. dict(mode='max-autotune')). Off by
# default: the compile takes minutes and pays off only on long runs; see
# configs/pretrain/README.md, "Compiled step".
compile = False
