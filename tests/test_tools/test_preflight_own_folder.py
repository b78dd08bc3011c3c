"""The preflight of an own-images config (``*_folder*.py``) reads the folder
it is given (``--data-root DIR`` or ``data_root`` with ``--cfg-options``),
says so, and stops before training when the folder holds fewer images than
iterations x batch (issue 37)."""
import json
import os

import pytest
from mmengine.config import Config

from projects.preflight.data import fill_image_folder, user_folder
from tests.helpers import ROOT, load_tool
from tests.test_datasets.image_folder_photos import (
    make_labelled_photo_folder, sample_photos)

PRETRAIN = os.path.join(
    ROOT, 'configs', 'pretrain',
    'siameseim_vit-small-p16_16xb256-amp-coslr-400e_folder.py')
LINEAR = os.path.join(
    ROOT, 'configs', 'benchmarks', 'mmpretrain',
    'vit-base-p16_siameseim-pre_8xb128-linear-coslr-90e_folder.py')
SEG = os.path.join(
    ROOT, 'configs', 'benchmarks', 'mmseg',
    'linear_vit-base-p16-siameseim-pre-frozen_8xb2-40k_folder-512x512.py')


def photo_folder(root, count):
    """``count`` photos (JPEG / PNG), some in a sub-folder."""
    photos = [p.convert('RGB') for p in sample_photos(width=64).values()]
    for i in range(count):
        ext = 'png' if i % 3 else 'jpg'
        path = root / ('sub' if i % 2 else '') / f'{i}.{ext}'
        path.parent.mkdir(parents=True, exist_ok=True)
        photos[i % len(photos)].save(path)
    return root


def run_tool(capsys, *argv):
    code = load_tool('analysis_tools/preflight.py').main([*argv])
    out, err = capsys.readouterr()
    return code, json.loads(out.strip().splitlines()[-1]), out, err


@pytest.mark.person_matrix(
    'preflight', 'own_folder', 'a folder given with --cfg-options holding '
    'fewer images than iterations x batch: stopped before training, naming '
    'the folder, its images and the number needed')
def test_a_folder_too_small_stops_before_training(tmp_path, capsys):
    folder = photo_folder(tmp_path / 'photos', 3)
    code, record, out, err = run_tool(
        capsys, PRETRAIN, '--cfg-options',
        f'train_dataloader.dataset.data_root={folder}')
    assert code == 1
    assert f'train_dataloader.dataset.data_root={folder}: the folder ' \
        f'({folder}) holds 3 image(s); the preflight needs 4 (2 iterations ' \
        'x batch 2 per process)' in err
    assert '--iters 1' in err
    assert record['data'] == f'your folder {folder}'
    assert f'data: your folder {folder}' in out
    assert 'step_s' not in record and 'params_total' not in record  # no run
    assert 'miniature' not in out


@pytest.mark.person_matrix(
    'preflight', 'own_folder', '--data-root DIR of an own-images config is '
    'the folder read (not DIR/imagenet/train), and the report says so')
def test_the_folder_given_by_data_root_is_read(tmp_path, capsys):
    folder = photo_folder(tmp_path / 'photos', 4)
    code, record, out, err = run_tool(capsys, PRETRAIN, '--data-root',
                                      str(folder))
    assert code == 0, err
    assert record['failures'] == []
    assert record['data'] == \
        f'your folder (train_dataloader: 4 images in {folder})'
    assert 'miniature' not in out
    assert record['iters'] == 2


@pytest.mark.person_matrix(
    'preflight', 'own_folder', 'a labelled folder (--data-root) too small '
    'for the preflight: stopped before training, naming the split')
def test_a_labelled_folder_is_read_and_counted(tmp_path, capsys):
    root = tmp_path / 'labelled'
    make_labelled_photo_folder(str(root), train_per_class=2, val_per_class=1)
    code, record, out, err = run_tool(capsys, LINEAR, '--data-root', str(root),
                                      '--iters', '5')
    assert code == 1
    assert f"the folder ({root}, split 'train') holds 8 image(s); the " \
        'preflight needs 10 (5 iterations x batch 2 per process)' in err
    assert '--iters 4' in err
    assert 'val_dataloader.dataset.data_root unset -> ' \
        f'{root} (your folder)' in out
    assert 'step_s' not in record


@pytest.mark.person_matrix(
    'preflight', 'own_folder', 'a SegmentationFolder (--data-root) with one '
    'image for a batch of 2: stopped before training, naming the folder')
def test_a_segmentation_folder_too_small_stops(tmp_path, capsys):
    from tests.test_seg.test_segmentation_folder import make_photo_masks
    root = make_photo_masks(tmp_path / 'seg', per_split=(1, 1))
    code, record, out, err = run_tool(capsys, SEG, '--data-root', str(root),
                                      '--iters', '1')
    assert code == 1
    assert f"the folder ({root}, split 'train') holds 1 image(s); the " \
        'preflight needs 2 (1 iterations x batch 2 per process)' in err
    assert '--batch-size 1 --iters 1' in err
    assert 'step_s' not in record


def test_a_folder_given_to_one_loader_fills_the_others(tmp_path, monkeypatch):
    cfg = Config.fromfile(LINEAR)
    monkeypatch.chdir(tmp_path)
    cfg.train_dataloader.dataset.data_root = 'data/mine'  # relative
    mine = str(tmp_path / 'data' / 'mine')
    note = fill_image_folder(cfg)
    assert cfg.train_dataloader.dataset.data_root == mine
    assert cfg.val_dataloader.dataset.data_root == mine
    assert f'val_dataloader.dataset.data_root unset -> {mine} (your ' \
        'folder)' in note
    assert user_folder(cfg) == mine
