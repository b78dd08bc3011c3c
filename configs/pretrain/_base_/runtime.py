_base_ = 'mmpretrain::_base_/default_runtime.py'

custom_imports = dict(imports=['mmsiameseim'], allow_failed_imports=False)
default_hooks = dict(
    logger=dict(type='LoggerHook', interval=50),
    checkpoint=dict(type='CheckpointHook', interval=10, max_keep_ckpts=3))
custom_hooks = [dict(type='StopOnNonFiniteLossHook', interval=50)]
randomness = dict(seed=0, diff_rank_seed=True)
# resume from the latest checkpoint of work_dir when it exists
resume = True
