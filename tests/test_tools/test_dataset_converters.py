"""The dataset and model converter command lines: thin, runnable as
scripts, and what they print points at files that exist."""
import glob
import os
import subprocess
import sys

ROOT = os.path.dirname(
    os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
FMNIST = os.path.join(ROOT, 'data', 'fashion_mnist')
# the script's own folder comes first on its sys.path: import this checkout
ENV = dict(os.environ, PYTHONPATH=ROOT)
TOOLS = sorted(
    glob.glob(os.path.join(ROOT, 'tools', 'dataset_converters', '*.py')) +
    glob.glob(os.path.join(ROOT, 'tools', 'model_converters', '*.py')))


def run(tool, *args):
    return subprocess.run(
        [sys.executable,
         os.path.join(ROOT, 'tools', tool), *args],
        capture_output=True,
        text=True,
        timeout=300,
        env=ENV)


def test_tools_are_short_command_lines_without_path_tricks():
    # the three stand-in datasets and the four model converters (the
    # studies' converters are their projects' tools)
    assert len(TOOLS) == 7
    for path in TOOLS:
        text = open(path).read()
        assert len(text.splitlines()) <= 200, path
        for trick in ('sys.path', 'importlib', 'spec_from_file'):
            assert trick not in text, (path, trick)


def test_coco_lvis_tool_prints_smoke_configs_that_exist(tmp_path):
    out = run('dataset_converters/make_smoke_coco_lvis.py', '--fashion-mnist',
              FMNIST, '--out', str(tmp_path), '--num-train', '2', '--num-val',
              '2', '--img-size', '64', '--checkpoint', 'c.pth')
    assert out.returncode == 0, out.stderr[-2000:]
    assert (tmp_path / 'coco' / 'annotations' /
            'instances_val2017.json').is_file()
    assert 'the smoke configs read data/smoke_det at 128 x 128' in out.stdout
    commands = [
        line for line in out.stdout.splitlines()
        if line.startswith('mim train mmdet ')
    ]
    assert len(commands) == 2
    for command in commands:
        assert os.path.isfile(os.path.join(ROOT, command.split()[3]))
        assert command.endswith(
            '--cfg-options model.backbone.init_cfg.checkpoint=c.pth')
    too_small = run('dataset_converters/make_smoke_coco_lvis.py',
                    '--fashion-mnist', FMNIST, '--out', str(tmp_path / 'x'),
                    '--img-size', '32')
    assert too_small.returncode == 1
    assert '--img-size must be >= 64' in too_small.stderr


def test_ade20k_tool_writes_the_layout(tmp_path):
    out = run('dataset_converters/make_smoke_ade20k.py', '--fashion-mnist',
              FMNIST, '--out', str(tmp_path), '--num-train', '1', '--num-val',
              '1')
    assert out.returncode == 0, out.stderr[-2000:]
    assert 'wrote 1 training and 1 validation images' in out.stdout
    root = tmp_path / 'ade' / 'ADEChallengeData2016'
    assert len(os.listdir(root / 'annotations' / 'validation')) == 1
    missing = run('dataset_converters/make_smoke_ade20k.py', '--fashion-mnist',
                  str(tmp_path / 'none'), '--out', str(tmp_path))
    assert missing.returncode == 1
    assert 'train-images-idx3-ubyte' in missing.stderr
