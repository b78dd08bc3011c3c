"""tools/model_converters/export.py: ViT checkpoints exported as folders
that timm and transformers load by themselves, giving our features on a
real photograph (max abs difference <= 1e-5 in fp32), for ViT-S/B (ViT-L in
the slow tier) and a non-224 input; wrong checkpoints refused by
name."""
import json
import os

import numpy as np
import pytest
import torch
from PIL import Image

from mmsiameseim.apis.export import TIMM_BASE_MODEL, load_backbone
from tests.helpers import load_tool

MEAN = [123.675, 116.28, 103.53]
STD = [58.395, 57.12, 57.375]


def _checkpoint(path, arch, img_size=224, patch_size=16, final_norm=False):
    """An mmpretrain MAE pretraining checkpoint as mmengine's Runner saves
    it (the config's text under meta.cfg), with random weights."""
    from mmpretrain.models import VisionTransformer
    cfg = (f'model = dict(type=\'MAE\', backbone=dict(type=\'MAEViT\', '
           f'arch={arch!r}, img_size={img_size!r}, '
           f'patch_size={patch_size}), data_preprocessor=dict('
           f'mean={MEAN}, std={STD}, to_rgb=True))\n'
           'train_cfg = dict(max_epochs=3)\n')
    torch.manual_seed(0)
    vit = VisionTransformer(
        arch=arch,
        img_size=img_size,
        patch_size=patch_size,
        final_norm=final_norm)
    vit.init_weights()
    with torch.no_grad():  # off the initialisation: a swapped key shows
        for p in vit.parameters():
            p.add_(torch.randn_like(p) * 0.02)
    state = {f'backbone.{k}': v for k, v in vit.state_dict().items()}
    torch.save(dict(meta=dict(cfg=cfg), state_dict=state), path)
    return str(path)


def _photo(size):
    """A real photograph (scikit-learn's sample), (1, 3, H, W) normalised
    as the checkpoint's config says."""
    from sklearn.datasets import load_sample_images
    folder = os.path.join(
        os.path.dirname(load_sample_images.__code__.co_filename), 'images')
    img = Image.open(os.path.join(folder, 'china.jpg')).convert('RGB')
    img = np.asarray(img.resize((size[1], size[0]), Image.BICUBIC))
    x = torch.from_numpy(img.astype(np.float32)).permute(2, 0, 1)[None]
    return (x - torch.tensor(MEAN).view(1, 3, 1, 1)) / torch.tensor(STD).view(
        1, 3, 1, 1)


def _export(ckpt, fmt, out):
    load_tool(os.path.join('model_converters', 'export.py')).main(
        [ckpt, '--format', fmt, '--out',
         str(out)])
    return str(out)


def _check_both(tmp_path, ckpt, size):
    import timm
    from transformers import ViTModel
    ours, _, _, _ = load_backbone(ckpt)
    x = _photo(size)
    with torch.no_grad():
        want = ours(x)[-1]
    folder = _export(ckpt, 'timm', tmp_path / 'timm')
    cfg = json.load(open(os.path.join(folder, 'config.json')))
    model = timm.create_model(
        TIMM_BASE_MODEL,
        pretrained=True,
        pretrained_cfg_overlay=dict(
            file=os.path.join(folder, 'model.safetensors'), num_classes=0),
        **cfg['model_args']).eval()
    with torch.no_grad():
        got = model.forward_features(x)
    assert (got - want).abs().max() <= 1e-5
    assert cfg['pretrained_cfg']['mean'] == pytest.approx(
        [m / 255 for m in MEAN])
    card = open(os.path.join(folder, 'README.md')).read()
    assert 'MAE, 3 epoch(s)' in card and 'library_name: timm' in card
    folder = _export(ckpt, 'transformers', tmp_path / 'hf')
    model = ViTModel.from_pretrained(
        folder, add_pooling_layer=False, local_files_only=True).eval()
    with torch.no_grad():
        out = model(x, output_hidden_states=True)
    # the last block's tokens; last_hidden_state adds the final LayerNorm
    # (the checkpoint's, or one without learned scale when it has none)
    got = out.last_hidden_state if ours.final_norm else out.hidden_states[-1]
    assert (got - want).abs().max() <= 1e-5
    assert os.path.isfile(os.path.join(folder, 'preprocessor_config.json'))
    return want


@pytest.mark.parametrize('arch', ['deit-small', 'b'])
def test_vit_s_and_b_load_in_timm_and_transformers_with_our_features(
        tmp_path, arch):
    ckpt = _checkpoint(tmp_path / 'mae.pth', arch)
    assert _check_both(tmp_path, ckpt, (224, 224)).shape[1] == 197


def test_a_non_224_input_with_a_final_norm(tmp_path):
    # (the converters read the grid off pos_embed: square grids only)
    ckpt = _checkpoint(
        tmp_path / 'mae.pth', 'deit-tiny', img_size=96, final_norm=True)
    want = _check_both(tmp_path, ckpt, (96, 96))
    assert want.shape[1] == 1 + 6 * 6


@pytest.mark.slow
def test_vit_l_loads_in_timm_and_transformers_with_our_features(tmp_path):
    ckpt = _checkpoint(tmp_path / 'mae.pth', 'l')
    _check_both(tmp_path, ckpt, (224, 224))


def test_wrong_or_incomplete_checkpoints_are_refused_by_name(tmp_path):
    ckpt = _checkpoint(tmp_path / 'mae.pth', 'deit-tiny')
    state = torch.load(ckpt, weights_only=False)
    del state['state_dict']['backbone.layers.0.attn.qkv.weight']
    torch.save(state, tmp_path / 'holed.pth')
    with pytest.raises(SystemExit, match='layers.0.attn.qkv.weight'):
        _export(str(tmp_path / 'holed.pth'), 'timm', tmp_path / 'x')
    torch.save(dict(state_dict=state['state_dict']), tmp_path / 'bare.pth')
    with pytest.raises(SystemExit, match='holds no config'):
        _export(str(tmp_path / 'bare.pth'), 'transformers', tmp_path / 'y')
    assert not os.path.exists(tmp_path / 'x')
