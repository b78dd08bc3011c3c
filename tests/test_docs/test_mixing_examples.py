"""docs/mixing.md's examples of mixing into mmpretrain's own configs, run as
written: each is saved as the file it names and trained two iterations
from the repository root by FaultTolerantRunner, with a tiny model and data
set through overrides (what `--cfg-options` would set)."""
import os
import re

import pytest
from mmengine.config import Config

import mmsiameseim  # noqa: F401
from mmsiameseim.engine.hooks import OnlineKNNHook
from mmsiameseim.evaluation import native_bf16
from tests.test_docs.helpers import DOCS, ROOT

pytestmark = pytest.mark.skipif(
    not os.path.exists(
        os.path.join(ROOT, 'data', 'fashion_mnist', 't10k-labels-idx1-ubyte')),
    reason='Fashion-MNIST not prepared (tools/setup_env.sh does it)')


def examples():
    """Name -> text of each ```python block of docs/mixing.md whose first
    line names its file and that inherits an mmpretrain config (the page's
    child of our own config is tests/test_configs/test_patch_grid.py's)."""
    with open(os.path.join(DOCS, 'mixing.md')) as f:
        text = f.read()
    blocks = re.findall(r'^```python\n(.*?)^```', text, re.M | re.S)
    return {
        b.splitlines()[0][2:]: b
        for b in blocks
        if re.match(r'# \S+\.py\n', b) and "_base_ = 'mmpretrain::" in b
    }


VIT = dict(embed_dims=64, num_layers=2, num_heads=2, feedforward_channels=128)
TINY = {
    'mae_fashionmnist.py': {
        'model.backbone.arch': VIT,
        'model.neck.embed_dim': 64,
        'model.neck.decoder_embed_dim': 32,
        'model.neck.decoder_depth': 1,
        'model.neck.decoder_num_heads': 2,
    },
    'simmim_blockwise_fashionmnist.py': {
        'model.backbone.arch':
        dict(embed_dims=16, depths=[1, 1, 1, 1], num_heads=[1, 1, 2, 2]),
        'model.neck.in_channels':
        16 * 2**3,
    },
}


def _tiny(cfg, name, work_dir):
    for key, value in TINY[name].items():  # replaced, not merged
        *path, last = key.split('.')
        node = cfg
        for part in path:
            node = node[part]
        node[last] = value
    cfg.work_dir = str(work_dir)
    cfg.train_dataloader.update(
        batch_size=4, num_workers=0, persistent_workers=False)
    cfg.train_dataloader.dataset.indices = 8
    cfg.train_cfg.max_epochs = 1
    cfg.param_scheduler = []
    cfg.default_hooks.logger.interval = 1
    cfg.log_level = 'WARNING'
    if not native_bf16():
        cfg.precision = 'float32'
    for hook in cfg.get('custom_hooks', []):
        for key in [k for k in hook if k.endswith('_dataloader')]:
            hook[key].batch_size = 4
            hook[key].dataset.indices = 8
        hook.update({k: 1 for k in ('interval', 'val_interval') if k in hook})
    return cfg


def test_the_page_has_the_examples():
    assert sorted(examples()) == sorted(TINY)
    for text in examples().values():
        assert "_base_ = 'mmpretrain::" in text
        assert "custom_imports = dict(imports=['mmsiameseim']" in text


@pytest.mark.person_matrix(
    'train', 'mixing',
    'a child of an mmpretrain:: config (MAE, SimMIM) trains under '
    'FaultTolerantRunner as written: the inherited collate_fn is looked up '
    "in its scope (mmengine's Runner fails at the first batch with "
    "default_collate() got an unexpected keyword argument '_scope_')")
@pytest.mark.parametrize('name', sorted(TINY))
def test_an_example_trains_as_written(name, tmp_path, monkeypatch):
    from mmengine.registry import RUNNERS
    path = tmp_path / name
    path.write_text(examples()[name])
    monkeypatch.chdir(ROOT)  # its data_root is the checkout's data/
    cfg = Config.fromfile(str(path))
    assert cfg.train_dataloader.collate_fn.get('_scope_') == 'mmpretrain'
    cfg = _tiny(cfg, name, tmp_path / 'work')
    runner = RUNNERS.build(cfg)
    runner.train()
    assert runner.iter == 2
    assert type(runner.train_loop).__name__ == \
        'ExactResumeEpochBasedTrainLoop'
    if name.startswith('mae'):
        hook = next(h for h in runner.hooks if isinstance(h, OnlineKNNHook))
        assert hook.forward_kwargs == dict(mask=None)
        assert runner.message_hub.get_scalar('knn/top1') is not None
        assert runner.message_hub.get_scalar('linear/top1') is not None


def test_mmengines_runner_needs_the_collate_workaround(tmp_path, monkeypatch):
    from mmengine.runner import Runner
    name = 'mae_fashionmnist.py'
    path = tmp_path / name
    text = examples()[name].replace("runner_type = 'FaultTolerantRunner'", '')
    path.write_text(text)
    monkeypatch.chdir(ROOT)

    def runner(work_dir):
        cfg = _tiny(Config.fromfile(str(path)), name, work_dir)
        cfg.optim_wrapper = dict(
            type='OptimWrapper', optimizer=dict(type='AdamW', lr=1e-4))
        cfg.custom_hooks = []
        return Runner.from_cfg(cfg)

    with pytest.raises(
            TypeError, match='unexpected keyword argument '
            "'_scope_'"):
        runner(tmp_path / 'plain').train()
    path.write_text(
        text.replace(
            '    batch_size=64,', '    collate_fn=dict(_delete_=True, '
            "type='default_collate'),\n    batch_size=64,", 1))
    trained = runner(tmp_path / 'workaround')
    trained.train()
    assert trained.iter == 2
