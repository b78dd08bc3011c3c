"""The demo's pretraining config: what ``prepare_pretrain_cfg`` merges into
a config and its kNN hook (work dir, data prefix, overrides, seed,
precision)."""
from mmengine.config import Config

from projects.demo import prepare_pretrain_cfg


def test_prepare_pretrain_cfg_merges_into_config_and_hooks(tmp_path):
    cfg = Config(
        dict(
            train_dataloader=dict(
                batch_size=8, dataset=dict(data_prefix='a/')),
            optim_wrapper=dict(
                type='AutocastOptimWrapper',
                dtype='bfloat16',
                optimizer=dict(type='SGD', lr=0.1)),
            randomness=dict(seed=0, diff_rank_seed=True),
            custom_hooks=[
                dict(
                    type='OnlineKNNHook',
                    interval=100,
                    bank_dataloader=dict(dataset=dict(indices=5)),
                    query_dataloader=dict(dataset=dict()))
            ]))
    prepare_pretrain_cfg(
        cfg,
        str(tmp_path),
        data_prefix='/data/',
        overrides=dict(train_dataloader=dict(dataset=dict(indices=64))),
        hook_overrides=dict(OnlineKNNHook=dict(interval=2)),
        seed=3,
        precision='float32')
    assert cfg.work_dir == str(tmp_path)
    assert cfg.train_dataloader.dataset == dict(
        data_prefix='/data/', indices=64)
    assert cfg.train_dataloader.batch_size == 8
    hook = cfg.custom_hooks[0]
    assert hook.interval == 2 and hook.bank_dataloader.dataset.indices == 5
    assert hook.query_dataloader.dataset.data_prefix == '/data/'
    assert hook.precision == 'float32'
    assert cfg.randomness == dict(seed=3, diff_rank_seed=True)
    assert cfg.optim_wrapper.type == 'OptimWrapper'
