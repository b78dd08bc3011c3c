"""tools/model_converters/export.py: ViT checkpoints exported as folders
that timm and transformers load by themselves, giving our features on a
real photograph (max abs difference <= 1e-5 in fp32), for ViT-S/B (ViT-L in
the slow tier) and a non-224 input; wrong checkpoints refused by
name."""
import json
import os
import re

import numpy as np
import pytest
import torch
from PIL import Image

from mmsiameseim.apis.export import TIMM_BASE_MODEL, load_backbone
from tests.helpers import load_tool

MEAN = [123.675, 116.28, 103.53]
STD = [58.395, 57.12, 57.375]


def _checkpoint(path,
                arch,
                img_size=224,
                patch_size=16,
                final_norm=False,
                in_channels=3,
                mean=MEAN,
                std=STD):
    """An mmpretrain MAE pretraining checkpoint as mmengine's Runner saves
    it (the config's text under meta.cfg), with random weights."""
    from mmpretrain.models import VisionTransformer
    cfg = (f'model = dict(type=\'MAE\', backbone=dict(type=\'MAEViT\', '
           f'arch={arch!r}, img_size={img_size!r}, in_channels={in_channels}, '
           f'patch_size={patch_size}), data_preprocessor=dict('
           f'mean={mean}, std={std}, to_rgb={in_channels == 3}))\n'
           'train_cfg = dict(max_epochs=3)\n')
    torch.manual_seed(0)
    vit = VisionTransformer(
        arch=arch,
        img_size=img_size,
        patch_size=patch_size,
        in_channels=in_channels,
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


def _recipe(page_text, marker):
    """The python block of ``page_text`` (a markdown page) holding
    ``marker``."""
    blocks = re.findall(r'```python\n(.*?)```', page_text, re.S)
    found = [b for b in blocks if marker in b]
    assert len(found) == 1, (marker, len(found))
    return found[0]


def _run(code, **names):
    """Run a documented recipe with its folder and image names replaced;
    its ``tokens``."""
    for old, new in names.items():
        code = code.replace(old, new)
    scope = {}
    with torch.no_grad():
        exec(code, scope)
    return scope['tokens'], scope


def _ours(ckpt, path, grey):
    """Our tokens of the evaluation view
    (tools/evaluation/extract_features.py)."""
    from mmsiameseim.evaluation.folder_embeddings import load_centre_crop
    backbone, _, mean, std = load_backbone(ckpt)
    size = backbone.patch_resolution[0] * backbone.patch_embed.projection.\
        stride[0]
    img = load_centre_crop(path, size, 0.875, grey).astype(np.float32)
    x = torch.from_numpy(img)
    x = x[None, None] if grey else x.permute(2, 0, 1)[None]
    with torch.no_grad():
        return backbone((x - mean) / std)[-1]


@pytest.mark.person_matrix(
    'converters', 'recipe', 'the timm and transformers recipes of '
    'docs/using_a_backbone.md and of the model card, run as written on a '
    "photograph: the export's own input size, channels, mean and std "
    '(timm.data.resolve_model_data_config, AutoImageProcessor) and our '
    'tokens (3 channels at 224 px, 1 channel at 32 px)')
@pytest.mark.parametrize('grey', [False, True])
def test_the_documented_recipes_give_our_features(tmp_path, grey):
    import timm
    from sklearn.datasets import load_sample_images

    from tests.helpers import ROOT
    mean, std = ([72.9], [90.0]) if grey else (MEAN, STD)
    ckpt = _checkpoint(
        tmp_path / 'mae.pth',
        'deit-tiny',
        img_size=32 if grey else 224,
        patch_size=4 if grey else 16,
        in_channels=1 if grey else 3,
        mean=mean,
        std=std)
    photos = os.path.join(
        os.path.dirname(load_sample_images.__code__.co_filename), 'images')
    photo = os.path.join(photos, 'china.jpg')  # 427 x 640
    square = str(tmp_path / 'square.png')  # even margins at any size
    Image.open(photo).crop((100, 0, 527, 427)).save(square)
    page = open(os.path.join(ROOT, 'docs', 'using_a_backbone.md')).read()
    timm_dir = _export(ckpt, 'timm', tmp_path / 'vit_timm')
    hf_dir = _export(ckpt, 'transformers', tmp_path / 'vit_hf')
    mode = ".convert('L')" if grey else ".convert('RGB')"
    hf_image = ("np.asarray(Image.open(PATH).convert('L'))[..., None]"
                if grey else "Image.open(PATH).convert('RGB')")
    for path, with_hf in ((photo, False), (square, True)):
        want = _ours(ckpt, path, grey)
        got, scope = _run(
            _recipe(page, 'local-dir:'), **{
                "'local-dir:vit_timm'": repr(f'local-dir:{timm_dir}'),
                "'photo.jpg'": repr(path),
                ".convert('RGB')": mode
            })
        data_cfg = scope['data_cfg']
        assert data_cfg['input_size'] == (1 if grey else 3,
                                          *[32 if grey else 224] * 2)
        assert data_cfg['mean'] == pytest.approx([m / 255 for m in mean])
        assert data_cfg['std'] == pytest.approx([s / 255 for s in std])
        assert (got - want).abs().max() <= 1e-4
        card = open(os.path.join(timm_dir, 'README.md')).read()
        got, _ = _run(
            _recipe(card, 'local-dir:'), DIR=timm_dir, PATH=repr(path))
        assert (got - want).abs().max() <= 1e-4
        card = open(os.path.join(hf_dir, 'README.md')).read()
        got, scope = _run(
            _recipe(card, 'AutoImageProcessor'), DIR=hf_dir, PATH=repr(path))
        assert (got - want).abs().max() <= 1e-4 or not with_hf
        if with_hf:
            got, _ = _run(
                _recipe(page, 'AutoImageProcessor'), **{
                    "'vit_hf'":
                    repr(hf_dir),
                    "Image.open('photo.jpg').convert('RGB')":
                    hf_image.replace('PATH', repr(path)),
                    'from PIL import Image':
                    'import numpy as np\n'
                    'from PIL import Image'
                })
            assert (got - want).abs().max() <= 1e-4
    # the old recipe kept vit_base_patch16_224's data config
    old = timm.create_model(
        TIMM_BASE_MODEL,
        pretrained=True,
        pretrained_cfg_overlay=dict(
            file=os.path.join(timm_dir, 'model.safetensors'), num_classes=0),
        **json.load(open(os.path.join(timm_dir, 'config.json')))['model_args'])
    assert timm.data.resolve_model_data_config(old)['mean'] != \
        pytest.approx([m / 255 for m in mean])


@pytest.mark.person_matrix(
    'converters', 'existing_output', 'export.py into a folder that holds '
    'files: refused before any work, naming it and --overwrite, which then '
    'replaces them; the card names the checkpoint and config as given; '
    'files 0666 less the umask')
def test_an_existing_folder_is_refused_and_files_get_the_users_mode(
        tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    ckpt = _checkpoint(tmp_path / 'mae.pth', 'deit-tiny')
    config = tmp_path / 'pretrain_cfg.py'
    config.write_text(torch.load(ckpt, weights_only=False)['meta']['cfg'])
    out = tmp_path / 'out'
    out.mkdir()
    (out / 'mine.txt').write_text('keep')
    tool = load_tool(os.path.join('model_converters', 'export.py'))
    with pytest.raises(SystemExit, match='already holds files.*--overwrite'):
        tool.main(['mae.pth', '--format', 'timm', '--out', 'out'])
    assert sorted(os.listdir(out)) == ['mine.txt']
    old = os.umask(0o022)
    try:
        tool.main([
            'mae.pth', '--format', 'timm', '--out', 'out', '--config',
            'pretrain_cfg.py', '--overwrite'
        ])
    finally:
        os.umask(old)
    for name in ('model.safetensors', 'config.json', 'README.md'):
        assert os.stat(out / name).st_mode & 0o777 == 0o644, name
    card = (out / 'README.md').read_text()
    assert 'from `mae.pth`' in card and 'Config: `pretrain_cfg.py`' in card
    tool.main(['mae.pth', '--format', 'transformers', '--out', 'hf'])
    card = (tmp_path / 'hf' / 'README.md').read_text()
    assert 'Config: `stored in the checkpoint (meta.cfg)`' in card
    assert '/tmp' not in card.replace(str(tmp_path), '')
