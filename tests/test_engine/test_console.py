"""What a training run and the tools print: the progress and what a person
acts on; the config, environment and hook-table dumps and the line per
parameter go to the log file only (tests/test_engine/test_config_checks.py:
a refusal under tools/train.py ends with its message)."""
import os.path as osp
import subprocess
import sys

import pytest

from tests.helpers import ROOT
from tests.test_engine.test_config_checks import TINY, TRAIN

#: lines that Python prints for a missing mmcv._ext (mmcv-lite), not ours
_MMCV_LITE = ('MultiScaleDeformableAttention', )


def _ours(text):
    return [
        line for line in text.splitlines()
        if line.strip() and not any(s in line for s in _MMCV_LITE)
    ]


@pytest.mark.person_matrix(
    'train', 'console', 'tools/train.py of the tiny Fashion-MNIST config (5 '
    'iterations): the console holds the progress, a checkpoint line each, '
    'and no config dump, environment, hook table, line per parameter, '
    'repeated line or pin_memory warning (the log file keeps them)')
def test_a_short_training_prints_its_progress_only(tmp_path):
    work_dir = tmp_path / 'run'
    run = subprocess.run(
        [sys.executable, TRAIN, TINY, '--work-dir',
         str(work_dir)],
        capture_output=True,
        text=True,
        timeout=600,
        cwd=ROOT)
    assert run.returncode == 0, run.stderr[-3000:]
    lines = _ours(run.stdout + run.stderr)
    text = '\n'.join(lines)
    for noise in ('paramwise_options', 'Config:', 'System environment',
                  'Hooks will be executed', 'pin_memory', 'but test_mode=True',
                  'FileClient'):
        assert noise not in text, noise
    assert sum('Epoch(train)' in line or 'Iter(train)' in line
               for line in lines) == 5
    assert len(lines) <= 20, text
    logs = list(work_dir.glob('*/*.log'))
    assert len(logs) == 1
    log = logs[0].read_text()
    assert 'paramwise_options' in log and 'System environment' in log


@pytest.mark.person_matrix(
    'folder_tools', 'console',
    'tools/evaluation/extract_features.py on two photos: '
    "the key report, the progress and the result (was 215 lines, a 'load "
    "from' line per tensor; those at DEBUG now)")
def test_extract_features_prints_its_result_not_a_line_per_tensor(tmp_path):
    from PIL import Image

    from tests.helpers import photo_crops
    from tests.test_tools.test_visualize_features import SIAMESEIM, _checkpoint
    ckpt = _checkpoint(tmp_path / 'sim.pth', SIAMESEIM)
    (tmp_path / 'images').mkdir()
    for i, crop in enumerate(photo_crops(2)):
        Image.fromarray(crop).save(tmp_path / 'images' / f'{i}.png')
    run = subprocess.run([
        sys.executable,
        osp.join(ROOT, 'tools', 'evaluation', 'extract_features.py'), ckpt,
        '--images',
        str(tmp_path / 'images'), '--out',
        str(tmp_path / 'e.npz')
    ],
                         capture_output=True,
                         text=True,
                         timeout=300,
                         cwd=ROOT)
    assert run.returncode == 0, run.stderr[-3000:]
    lines = _ours(run.stdout + run.stderr)
    assert not any('load from' in line for line in lines)
    assert lines[-1].startswith('wrote ') and '2 images' in lines[-1]
    assert len(lines) <= 4, lines
