"""The 1 % few-shot tool on a tiny ImageNet-layout folder and checkpoint."""
import json
import os
import subprocess
import sys

import pytest
import torch

from tests.helpers import load_tool, make_tiny_imagenet, tiny_siameseim_cfg

ROOT = os.path.dirname(
    os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TOOL = os.path.join(ROOT, 'tools', 'evaluation', 'fewshot_eval.py')
CONFIG = os.path.join(ROOT, 'configs', 'benchmarks', 'mmpretrain',
                      'vit-base-p16_siameseim-pre_1percent-logreg_in1k.py')


@pytest.fixture
def setup(tmp_path):
    """Data, a tiny pretraining checkpoint and the benchmark config scaled
    down to it (same datasets, pipeline steps and classifier settings)."""
    from mmpretrain.registry import MODELS

    import mmsiameseim  # noqa: F401
    data = tmp_path / 'imagenet'
    make_tiny_imagenet(data, per_class_train=6, listed_per_class=4)
    model = MODELS.build(tiny_siameseim_cfg())
    model.init_weights()
    ckpt = tmp_path / 'epoch_1.pth'
    torch.save({'meta': {}, 'state_dict': model.state_dict()}, ckpt)
    config = tmp_path / 'tiny_fewshot.py'
    config.write_text(f"""
_base_ = [{CONFIG!r}]
model = dict(
    data_preprocessor=dict(num_classes=3),
    backbone=dict(arch=dict(_delete_=True, embed_dims=32, num_layers=2,
                            num_heads=2, feedforward_channels=64),
                  img_size=32, patch_size=8))
test_pipeline = [
    dict(type='StrictLoadImageFromFile'),
    dict(type='ResizeEdge', scale=36, edge='short', backend='pillow',
         interpolation='bilinear'),
    dict(type='CenterCrop', crop_size=32),
    dict(type='PackInputs'),
]
classes = ('a', 'b', 'c')
train_dataloader = dict(dataset=dict(metainfo=dict(classes=classes),
                                     pipeline=test_pipeline))
test_dataloader = dict(dataset=dict(metainfo=dict(classes=classes),
                                    pipeline=test_pipeline))
""")
    return tmp_path, data, ckpt, config


def _tool_main():
    return load_tool('evaluation/fewshot_eval.py').main


def test_extracts_once_then_sweeps_c_from_the_cache(setup, monkeypatch,
                                                    capsys):
    tmp_path, data, ckpt, config = setup
    cache = tmp_path / 'cache'
    args = [
        str(config), '--checkpoint',
        str(ckpt), '--data-root',
        str(data), '--subset-list',
        str(data / '1percent.txt'), '--cache-dir',
        str(cache)
    ]
    out = subprocess.run([
        sys.executable, TOOL, *args, '--c-grid', '0.1,10', '--out',
        str(tmp_path / 'first.json')
    ],
                         capture_output=True,
                         text=True,
                         timeout=300)
    assert out.returncode == 0, (out.stdout + out.stderr)[-3000:]
    assert 'extracting train features of 12 images' in out.stdout
    assert 'extracting test features of 12 images' in out.stdout
    assert 'few-shot top-1' in out.stdout and '<- chosen' in out.stdout
    first = json.loads((tmp_path / 'first.json').read_text())
    assert first['train_samples'] == 12 and first['test_samples'] == 12
    assert set(first['cv_top1']) == {'0.1', '10.0'}
    assert first['cv_folds'] == 3
    # the classes differ in colour: even a random-init ViT separates them
    assert first['top1'] > 80
    assert len(list(cache.glob('*.npz'))) == 2

    import mmsiameseim.evaluation as evaluation

    def no_extraction(*args, **kwargs):
        raise AssertionError('features were extracted again')

    monkeypatch.setattr(evaluation, 'extract_features', no_extraction)
    _tool_main()([
        *args, '--c-grid', '1,100,1000', '--cv-folds', '2', '--out',
        str(tmp_path / 'second.json')
    ])
    printed = capsys.readouterr().out
    assert 'loaded cached features of 12 train images' in printed
    assert 'loaded cached features of 12 test images' in printed
    second = json.loads((tmp_path / 'second.json').read_text())
    assert set(second['cv_top1']) == {'1.0', '100.0', '1000.0'}
    assert second['best_c'] in (1, 100, 1000)


def test_missing_listed_image_is_a_clear_error(setup, capsys):
    tmp_path, data, ckpt, config = setup
    listed = (data / '1percent.txt').read_text().split()
    missing = data / 'train' / listed[0].split('_')[0] / listed[0]
    missing.unlink()
    with pytest.raises(SystemExit) as exit_:
        _tool_main()([
            str(config), '--checkpoint',
            str(ckpt), '--data-root',
            str(data), '--cache-dir', 'none'
        ])
    assert str(exit_.value.code) == (
        f'error: 1 of the 12 images listed in {data}/1percent.txt are '
        f'missing, the first: {missing}')


def test_random_init_features_are_not_cached(setup, capsys):
    tmp_path, data, _, config = setup
    _tool_main()([
        str(config), '--data-root',
        str(data), '--cache-dir',
        str(tmp_path / 'cache'), '--c-grid', '1'
    ])
    printed = capsys.readouterr().out
    assert 'no checkpoint: a randomly initialised backbone' in printed
    assert 'few-shot top-1' in printed
    assert not (tmp_path / 'cache').exists()


@pytest.mark.fault_matrix(
    'benchmarks', 'changed_run',
    'fewshot_eval: cached features are keyed by the '
    'checkpoint file (path, size, mtime), model, '
    'pipeline and images: a new checkpoint at the same '
    'path is extracted again')
def test_a_rewritten_checkpoint_is_not_served_from_the_cache(setup, capsys):
    tmp_path, data, ckpt, config = setup
    cache = tmp_path / 'cache'
    args = [
        str(config), '--checkpoint',
        str(ckpt), '--data-root',
        str(data), '--cache-dir',
        str(cache), '--c-grid', '1'
    ]
    _tool_main()(args)
    assert 'extracting train features' in capsys.readouterr().out
    os.utime(ckpt, ns=(1, 1))  # another run wrote the same path
    _tool_main()(args)
    printed = capsys.readouterr().out
    assert 'extracting train features of 12 images' in printed
    assert 'loaded cached' not in printed
    assert len(list(cache.glob('*.npz'))) == 4
