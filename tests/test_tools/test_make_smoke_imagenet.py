"""tools/dataset_converters/make_smoke_imagenet.py: layouts, reruns, errors."""
import os
import subprocess
import sys

import cv2

ROOT = os.path.dirname(
    os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TOOL = os.path.join(ROOT, 'tools', 'dataset_converters',
                    'make_smoke_imagenet.py')
# the tool's own folder comes first on its sys.path: import this checkout
ENV = dict(os.environ, PYTHONPATH=ROOT)


def test_every_layout_is_written(smoke_imagenet):
    root = smoke_imagenet
    train = (root / 'imagenet' / 'meta' / 'train.txt').read_text().split('\n')
    path, label = train[0].split()
    assert (root / 'imagenet' / 'train' / path).is_file()
    assert len([line for line in train if line]) == 40
    one_percent = (root / 'imagenet' / '1percent.txt').read_text().split()
    assert len(one_percent) == 10
    for name in one_percent:  # SimCLR format: <wnid>_<n>.JPEG
        wnid = name.split('_')[0]
        assert (root / 'imagenet' / 'train' / wnid / name).is_file()
    assert len(os.listdir(root / 'imagenet-a')) == 6
    assert len(os.listdir(root / 'imagenet-r')) == 7
    assert len(os.listdir(root / 'imagenet-sketch' / 'sketch')) == 10
    assert len(os.listdir(root / 'imagenet-c')) == 15
    img = cv2.imread(str(root / 'imagenet' / 'train' / path))
    assert img.shape == (32, 32, 3) and img.std() > 0  # real pixels
    # a corruption changes the pixels of the same source image
    c1 = root / 'imagenet-c' / 'gaussian_noise' / '1'
    c5 = root / 'imagenet-c' / 'gaussian_noise' / '5'
    wnid = sorted(os.listdir(c1))[0]
    a = cv2.imread(str(c1 / wnid / 'c_0.JPEG')).astype(float)
    b = cv2.imread(str(c5 / wnid / 'c_0.JPEG')).astype(float)
    assert abs(a - b).mean() > 5


def test_rerun_is_a_no_op_and_missing_input_is_named(smoke_imagenet, tmp_path):
    fmnist = os.path.join(ROOT, 'data', 'fashion_mnist')
    again = subprocess.run([
        sys.executable, TOOL, '--fashion-mnist', fmnist, '--out',
        str(smoke_imagenet)
    ],
                           capture_output=True,
                           text=True,
                           timeout=120,
                           env=ENV)
    assert again.returncode == 0, again.stderr[-2000:]
    assert 'up to date' in again.stdout
    missing = subprocess.run([
        sys.executable, TOOL, '--fashion-mnist',
        str(tmp_path), '--out',
        str(tmp_path / 'out')
    ],
                             capture_output=True,
                             text=True,
                             timeout=120,
                             env=ENV)
    assert missing.returncode != 0
    assert 'train-images-idx3-ubyte' in missing.stderr
    assert '--fashion-mnist' in missing.stderr
