"""tools/evaluation/extract_features.py: a folder of images of every kind
embedded in order, damaged files named and listed (never dropped silently),
features equal to the backbone's own, a killed run continued, and the 2-D
map."""
import os

import numpy as np
import pytest
import torch
from PIL import Image

from mmsiameseim.evaluation import (checkpoint_config, folder_embeddings,
                                    frozen_vit)
from mmsiameseim.evaluation.folder_embeddings import (embed_folder,
                                                      embed_images,
                                                      folder_classes,
                                                      load_centre_crop)
from tests.helpers import ROOT
from tests.test_tools.test_visualize_features import SIAMESEIM, _checkpoint


@pytest.fixture
def folder(tmp_path):
    rng = np.random.default_rng(0)
    root = tmp_path / 'images'
    (root / 'shirts').mkdir(parents=True)
    (root / 'shoes' / 'deep').mkdir(parents=True)
    for i in range(3):
        Image.fromarray(rng.integers(0, 255, (40, 30), np.uint8)).save(
            root / 'shirts' / f'{i}.png')
    Image.fromarray(rng.integers(0, 255, (50, 50, 3),
                                 np.uint8)).save(root / 'shoes' / 'a.jpg')
    # 16-bit grey: the strict loader scales it, mmcv's would clip it
    Image.fromarray(rng.integers(0, 65535, (36, 36),
                                 np.uint16)).save(root / 'shoes' / 'b.png')
    Image.fromarray(rng.integers(0, 255, (33, 33, 4), np.uint8),
                    'RGBA').save(root / 'shoes' / 'deep' / 'c.png')
    (root / 'shoes' / 'broken.jpg').write_bytes(b'not an image at all')
    (root / 'notes.txt').write_text('not an image')
    return root


def _tool():
    import sys
    sys.path.insert(0, os.path.join(ROOT, 'tools', 'evaluation'))
    import extract_features
    return extract_features


def test_a_folder_is_embedded_in_order_with_damage_named(
        folder, tmp_path, capsys):
    ckpt = _checkpoint(tmp_path / 'sim.pth', SIAMESEIM)
    out = str(tmp_path / 'emb.npz')
    _tool().main([
        ckpt, '--images',
        str(folder), '--out', out, '--feature', 'avg_featmap', '--plot'
    ])
    printed = capsys.readouterr().out
    z = np.load(out)
    files = z['files'].tolist()
    assert files == [
        'shirts/0.png', 'shirts/1.png', 'shirts/2.png', 'shoes/a.jpg',
        'shoes/b.png', 'shoes/deep/c.png'
    ]
    assert z['features'].shape == (6, 128)
    assert z['features'].dtype == np.float32
    assert z['skipped'][:, 0].tolist() == ['shoes/broken.jpg']
    assert 'cannot load image' in z['skipped'][0, 1]
    assert 'skipped shoes/broken.jpg' in printed
    assert '1 skipped' in printed and '1 files under' in printed
    assert os.path.getsize(str(tmp_path / 'emb.png')) > 10_000
    assert not os.path.exists(out + '.parts')
    # the features are the frozen backbone's, image by image
    net, mean, std = frozen_vit(ckpt, checkpoint_config(ckpt).model)
    img = load_centre_crop(str(folder / 'shoes' / 'b.png'), 32, 0.875, True)
    assert img.shape == (32, 32) and img.max() > 200  # scaled, not clipped
    want = embed_images(net, mean, std, img[None], 'avg_featmap')
    np.testing.assert_allclose(z['features'][4], want[0], atol=1e-5)


def test_patch_tokens_in_float16_and_a_config_gives_the_floor(
        folder, tmp_path, capsys):
    out = str(tmp_path / 'tokens')
    path = _tool().main([
        SIAMESEIM, '--images',
        str(folder), '--out', out, '--feature', 'patch_tokens', '--float16',
        '--size', '48'
    ])
    assert path == out + '.npz'
    assert 'random initial weights' in capsys.readouterr().out
    z = np.load(path)
    assert z['features'].shape == (6, 12 * 12, 128)  # 48 px, patch 4
    assert z['features'].dtype == np.float16
    with pytest.raises(SystemExit, match='missing.pth not found'):
        _tool().main([
            str(tmp_path / 'missing.pth'), '--images',
            str(folder), '--out', out
        ])


def test_a_killed_run_continues_from_its_chunks(folder, tmp_path, monkeypatch,
                                                capsys):
    torch.manual_seed(0)
    net, mean, std = frozen_vit(None, checkpoint_config(None, SIAMESEIM).model)
    files = sorted(
        os.path.relpath(os.path.join(d, f), folder)
        for d, _, fs in os.walk(folder) for f in fs if f != 'notes.txt')
    out = str(tmp_path / 'e.npz')
    real = folder_embeddings._embed_chunk
    calls, killed = [], []

    def dies_on_the_third(*args):
        calls.append(args[4])
        if len(calls) == 3 and not killed:
            killed.append(True)
            raise RuntimeError('killed')
        real(*args)

    monkeypatch.setattr(folder_embeddings, '_embed_chunk', dies_on_the_third)
    kw = dict(size=32, chunk=2, checkpoint=None)
    with pytest.raises(RuntimeError, match='killed'):
        embed_folder(net, mean, std, str(folder), files, out, **kw)
    assert not os.path.exists(out)
    calls.clear()
    result = embed_folder(net, mean, std, str(folder), files, out, **kw)
    assert len(calls) == 2  # the two chunks that were not done
    assert '2 of 4 chunks already embedded' in capsys.readouterr().out
    assert len(result['files']) == 6 and len(result['skipped']) == 1
    # other settings start over, and say so
    os.makedirs(out + '.parts')
    with open(os.path.join(out + '.parts', 'settings.json'), 'w') as f:
        f.write('{}')
    calls.clear()
    embed_folder(net, mean, std, str(folder), files, out, **kw)
    assert len(calls) == 4
    assert 'starting over' in capsys.readouterr().out


def test_options_out_of_range_are_refused(tmp_path):
    net = torch.nn.Identity()
    one = torch.zeros(1, 1, 1)
    with pytest.raises(ValueError, match="feature='mean'"):
        embed_folder(net, one, one, '.', ['a.png'], 'x.npz', 32, 'mean')
    with pytest.raises(ValueError, match='crop_fraction=1.5'):
        embed_folder(
            net, one, one, '.', ['a.png'], 'x.npz', 32, crop_fraction=1.5)
    with pytest.raises(ValueError, match='no image files'):
        embed_folder(net, one, one, str(tmp_path), [], 'x.npz', 32)
    names, classes = folder_classes(['a/x.png', 'b/c/y.png', 'z.png'])
    assert names == ['', 'a', 'b'] and classes.tolist() == [1, 2, 0]
