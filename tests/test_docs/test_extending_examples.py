"""docs/extending.md's own package and configs, run as written from a folder
outside the checkout: each config trains two iterations (a tiny model and
data set through overrides, what `--cfg-options` would set) and logs what
the page says."""
import os
import re
import sys

import pytest
from mmengine.config import Config

import mmsiameseim  # noqa: F401
from mmsiameseim.evaluation import native_bf16
from tests.test_docs.helpers import DOCS, ROOT

pytestmark = pytest.mark.skipif(
    not os.path.exists(
        os.path.join(ROOT, 'data', 'fashion_mnist', 't10k-labels-idx1-ubyte')),
    reason='Fashion-MNIST not prepared (tools/setup_env.sh does it)')


def examples():
    """File name -> text of each ```python block of docs/extending.md."""
    with open(os.path.join(DOCS, 'extending.md')) as f:
        blocks = re.findall(r'^```python\n(.*?)^```', f.read(), re.M | re.S)
    return {b.splitlines()[0][2:]: b for b in blocks}


@pytest.fixture(scope='module')
def own_folder(tmp_path_factory):
    """The page's files in a folder of the user's, its package importable
    (once: a package registers its classes once per process)."""
    folder = tmp_path_factory.mktemp('own')
    for name, text in examples().items():
        path = folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    sys.path.insert(0, str(folder))
    yield folder
    sys.path.remove(str(folder))


def _tiny(cfg, work_dir):
    dims = 32
    cfg.model.backbone.arch = dict(
        embed_dims=dims, num_layers=1, num_heads=2, feedforward_channels=64)
    cfg.model.neck.update(
        in_channels=dims,
        embed_dims=dims,
        num_heads=2,
        projector_depth=1,
        predictor_depth=1)
    cfg.embed_dims = dims
    cfg.train_dataloader.update(
        batch_size=4, num_workers=0, persistent_workers=False)
    cfg.train_dataloader.dataset.indices = 8
    cfg.train_dataloader.dataset.data_root = os.path.join(
        ROOT, 'data', 'fashion_mnist')
    cfg.custom_hooks = [
        h for h in cfg.get('custom_hooks', [])
        if 'KNN' not in h['type'] and 'Linear' not in h['type']
    ]
    cfg.default_hooks.logger.interval = 1
    cfg.log_level = 'WARNING'
    cfg.work_dir = str(work_dir)
    if not native_bf16():
        cfg.precision = 'float32'
    return cfg


def test_the_page_has_its_package_and_configs():
    assert sorted(examples()) == [
        'my_siameseim/__init__.py',
        'siameseim-cosine_vit-tiny-p4_fashionmnist.py',
        'siameseim-spread_vit-tiny-p4_fashionmnist.py'
    ]


@pytest.mark.parametrize('name, logged', [
    ('siameseim-spread_vit-tiny-p4_fashionmnist.py',
     {'loss_spread', 'pred_spread', 'alignment', 'correlation', 'momentum'}),
    ('siameseim-cosine_vit-tiny-p4_fashionmnist.py', {'momentum'}),
])
def test_an_example_trains_from_an_own_folder(own_folder, name, logged,
                                              monkeypatch):
    from mmengine.registry import RUNNERS

    from mmsiameseim.engine.runner.config_checks import checked_config
    monkeypatch.chdir(own_folder)
    cfg = _tiny(
        Config.fromfile(str(own_folder / name)), own_folder / name[:-3])
    runner = RUNNERS.build(checked_config(cfg))
    runner.train()
    assert runner.iter == 2
    model = runner.model
    scalars = set(runner.message_hub.log_scalars)
    assert {f'train/{k}' for k in logged} <= scalars, scalars
    if 'spread' in name:
        assert type(model).__name__ == 'SiameseIMWithSpread'
        assert model.micro_batches == 2
        assert type(model.neck).__name__ == 'NormedRelPosDecoderNeck'
    else:
        assert type(model.head.loss_module).__name__ == 'CosineAlignLoss'
        assert 'train/alignment' not in scalars  # its own loss, no terms
