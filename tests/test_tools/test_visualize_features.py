"""tools/visualization/visualize_features.py: every picture from checkpoints
that carry their config (as mmengine's Runner saves them), on Fashion-MNIST and
the sample photos; a checkpoint without a config is refused by name."""
import os

import pytest
import torch
from mmengine.config import Config
from mmengine.registry import init_default_scope

from mmsiameseim.evaluation import checkpoint_config
from projects.common.evaluation import pca_rgb
from tests.helpers import ROOT

DATA = os.path.join(ROOT, 'data', 'fashion_mnist')
SIAMESEIM = os.path.join(
    ROOT, 'configs', 'pretrain',
    'siameseim_vit-tiny-p4_1xb64-bf16-coslr-1e_fashionmnist.py')
MAE = os.path.join(ROOT, 'configs', 'pretrain', 'peers',
                   'mae_vit-tiny-p4_1xb64-bf16-coslr-1e_fashionmnist.py')


def _checkpoint(path, config):
    """A freshly initialised model saved the way mmengine's Runner saves it:

    the config's text under meta.cfg.
    """
    from mmpretrain.registry import MODELS
    init_default_scope('mmpretrain')
    cfg = Config.fromfile(config)
    torch.manual_seed(0)
    model = MODELS.build(cfg.model)
    model.init_weights()
    torch.save(
        dict(meta=dict(cfg=cfg.pretty_text), state_dict=model.state_dict()),
        path)
    return str(path)


def test_config_is_read_from_the_checkpoint_or_refused(tmp_path):
    ckpt = _checkpoint(tmp_path / 'a.pth', SIAMESEIM)
    assert checkpoint_config(ckpt).model.type == 'SiameseIM'
    bare = tmp_path / 'bare.pth'
    torch.save(dict(state_dict={}), bare)
    with pytest.raises(ValueError, match=f'{bare}: holds no config'):
        checkpoint_config(str(bare))
    assert checkpoint_config(str(bare), MAE).model.type == 'MAE'


def test_cls_attention_is_the_last_blocks_softmax_per_head():
    from mmpretrain.models import VisionTransformer

    from projects.common.visualization.feature_pictures import cls_attention
    torch.manual_seed(0)
    net = VisionTransformer(
        arch='deit-tiny', img_size=32, patch_size=8, out_type='raw')
    net.eval()
    x = torch.randn(2, 3, 32, 32)
    att = cls_attention(net, x)
    assert att.shape == (2, 3, 16)  # deit-tiny: 3 heads; 4 x 4 patches
    # with the cls token's own share, each head's row is a distribution
    block = net.layers[-1]
    seen = []
    block.register_forward_hook(lambda m, a, out: seen.append(a[0]))
    net(x)
    q, k, _ = block.attn.qkv(block.ln1(seen[0])).reshape(2, 17, 3, 3,
                                                         64).permute(
                                                             2, 0, 3, 1, 4)
    full = torch.softmax(q @ k.transpose(-2, -1) / 8, -1)[:, :, 0]
    torch.testing.assert_close(att, full[..., 1:])
    assert torch.all(att.sum(-1) < 1)


def test_pca_colours_are_shared_and_in_range():
    feats = torch.randn(2, 4, 4, 8)
    rgb = pca_rgb(feats)
    assert rgb.shape == (2, 4, 4, 3) and rgb.min() >= 0 and rgb.max() <= 1
    with pytest.raises(ValueError, match='3 components of 2-wide'):
        pca_rgb(torch.randn(1, 2, 2, 2))


@pytest.mark.skipif(
    not os.path.exists(os.path.join(DATA, 't10k-labels-idx1-ubyte')),
    reason='Fashion-MNIST not prepared (tools/setup_env.sh does it)')
def test_every_picture_of_two_checkpoints(tmp_path, monkeypatch, capsys):
    monkeypatch.syspath_prepend(os.path.join(ROOT, 'tools', 'visualization'))
    monkeypatch.chdir(ROOT)
    import visualize_features
    sim = _checkpoint(tmp_path / 'sim.pth', SIAMESEIM)
    mae = _checkpoint(tmp_path / 'mae.pth', MAE)
    out = tmp_path / 'pictures'
    visualize_features.main([
        sim, mae, '--names', 'siameseim,mae', '--out',
        str(out), '--study', 'projects/claim/configs/claim_study_smoke.py',
        '--count', '3', '--photo-size', '64'
    ])
    printed = capsys.readouterr().out
    for name in ('pca_photos.png', 'attention_photos.png', 'pca_mosaics.png',
                 'neighbours.png', 'dense_maps.png',
                 'prediction_pairs_siameseim.png'):
        assert (out / name).stat().st_size > 10_000, name
        assert f'wrote {out / name}' in printed
    assert not (out / 'prediction_pairs_mae.png').exists()  # SiameseIM's own
    with pytest.raises(SystemExit, match='1 names for 2 checkpoints'):
        visualize_features.main([sim, mae, '--names', 'x'])


def test_prediction_similarity_per_patch_of_seeded_pairs(tmp_path):
    import numpy as np

    from projects.common.visualization.prediction_pairs import (
        load_siameseim, prediction_similarity, two_view_pairs)
    ckpt = _checkpoint(tmp_path / 'sim.pth', SIAMESEIM)
    cfg = checkpoint_config(ckpt)
    model = load_siameseim(ckpt, cfg)
    images = np.random.default_rng(0).integers(0, 255, (2, 28, 28), np.uint8)
    pairs = two_view_pairs(cfg, list(images))
    sim = prediction_similarity(model, pairs)
    assert sim.shape == (2, 8, 8) and np.all(np.abs(sim) <= 1 + 1e-6)
    assert sim.std() > 0  # per patch, not one number
    # the pairs are the seeded pipeline's: drawn again, the same
    again = prediction_similarity(model, two_view_pairs(cfg, list(images)))
    np.testing.assert_allclose(sim, again)
    with pytest.raises(ValueError, match="type='MAE'"):
        load_siameseim(ckpt, Config.fromfile(MAE))
