"""A mask generator off the backbone's patch grid, in any algorithm: refused
before any data is loaded with the value to set (FaultTolerantRunner builds
the loop), instead of a tensor-size error inside the model."""
import os

import pytest
from mmpretrain.registry import MODELS, TRANSFORMS

import mmsiameseim  # noqa: F401
from mmsiameseim.models.utils.pipeline_check import check_mask_grid
from tests.helpers import ROOT

SWIN = dict(
    type='SimMIMSwinTransformer',
    arch=dict(embed_dims=32, depths=[1, 1], num_heads=[2, 4]),
    img_size=192,
    out_indices=(1, ),
    stage_cfgs=[dict(window_size=6), dict(window_size=6)])


def _mask(**options):
    return TRANSFORMS.build(dict(options))


def test_the_backbones_grid_passes_and_another_is_named():
    swin = MODELS.build(SWIN)  # 192 px, patch 4: 48 x 48 patches
    check_mask_grid(swin, [
        _mask(
            type='BlockwiseMaskGenerator',
            input_size=48,
            num_masking_patches=1382),
        _mask(
            type='SimMIMMaskGenerator',
            input_size=192,
            mask_patch_size=32,
            model_patch_size=4)
    ])
    with pytest.raises(ValueError) as error:
        check_mask_grid(swin, [
            _mask(
                type='BlockwiseMaskGenerator',
                input_size=6,
                num_masking_patches=20)
        ])
    text = str(error.value)
    for part in ('BlockwiseMaskGenerator', 'input_size=(6, 6) (in patches)',
                 'SimMIMSwinTransformer (48x48 patches', 'set input_size=48'):
        assert part in text, text
    with pytest.raises(ValueError, match='model_patch_size=8'):
        check_mask_grid(swin, [
            _mask(
                type='SimMIMMaskGenerator',
                input_size=192,
                mask_patch_size=32,
                model_patch_size=8)
        ])
    check_mask_grid(object(), [
        _mask(
            type='RandomPatchMaskGenerator',
            input_size=3,
            num_masking_patches=1)
    ])


@pytest.mark.person_matrix(
    'train', 'mixing',
    "mmpretrain's SimMIM with a BlockwiseMaskGenerator off the Swin's patch "
    'grid: refused before any data is loaded, naming input_size, the '
    "backbone's grid and the value to set (was a tensor-size error)")
@pytest.mark.skipif(
    not os.path.exists(
        os.path.join(ROOT, 'data', 'fashion_mnist', 't10k-labels-idx1-ubyte')),
    reason='Fashion-MNIST not prepared (tools/setup_env.sh does it)')
def test_simmim_with_a_wrong_mask_grid_is_refused_before_training(tmp_path):
    from mmengine.config import Config

    from mmsiameseim.engine.runner import FaultTolerantRunner
    from tests.test_engine.test_frozen_feature_hooks_in_peers import ALGORITHMS
    cfg = ALGORITHMS['SimMIM'](tmp_path / 'run')
    assert isinstance(cfg, Config)
    mask = next(t for t in cfg.train_dataloader.dataset.pipeline
                if t.type == 'BlockwiseMaskGenerator')
    mask.update(input_size=6, num_masking_patches=20)
    runner = FaultTolerantRunner.from_cfg(cfg)
    with pytest.raises(ValueError, match='set input_size=8'):
        runner.train()
    # refused when the loop is built, before any data: nothing left behind
    assert not os.path.exists(tmp_path / 'run')
