"""A tiny ImageNet-protocol dataset from real Fashion-MNIST pixels.

Every benchmark config in configs/benchmarks/mmpretrain/ reads one of the
on-disk layouts written here, so each can run end to end on a CPU:

    <out>/imagenet/{train,val}/<wnid>/<wnid>_<n>.JPEG
    <out>/imagenet/meta/{train,val}.txt      mmpretrain ImageNet lists
    <out>/imagenet/1percent.txt              SimCLR-style 1 % list (1 % of
                                             each class, at least 1 image)
    <out>/imagenet-a/<wnid>/*.jpg            a subset of the classes
    <out>/imagenet-r/<wnid>/*.jpg            another subset
    <out>/imagenet-sketch/sketch/<wnid>/*.JPEG
    <out>/imagenet-c/<corruption>/<1..5>/<wnid>/*.JPEG

The 10 Fashion-MNIST classes are stored under real ImageNet-1k wnids of
clothing classes; labels are 0..9 in sorted-wnid order, as ImageNet's are.
The A/R folders hold different subsets of these classes, which exercises
the class-subset logic; they are NOT the real A/R class memberships. The
ImageNet-C images use simple stand-ins of the 15 corruptions (numpy/OpenCV,
strength growing with severity), not Hendrycks & Dietterich's code.
Rerunning with the same arguments does nothing (see smoke_manifest.json).
Command line: ``tools/dataset_converters/make_smoke_imagenet.py``.
"""
import json
import os
import os.path as osp
import shutil
import sys

import cv2
import numpy as np

from mmsiameseim.testing.fashion_mnist_arrays import load_fashion_mnist_arrays

# Fashion-MNIST label -> ImageNet-1k wnid of a clothing class.
FMNIST_TO_WNID = (
    'n03595614',  # T-shirt/top -> jersey, T-shirt
    'n03594734',  # Trouser -> jean, blue jean
    'n04370456',  # Pullover -> sweatshirt
    'n03450230',  # Dress -> gown
    'n04479046',  # Coat -> trench coat
    'n04133789',  # Sandal -> sandal
    'n03630383',  # Shirt -> lab coat
    'n04120489',  # Sneaker -> running shoe
    'n02769748',  # Bag -> backpack
    'n03124043',  # Ankle boot -> cowboy boot
)
# ImageNet labels are the indices of the sorted wnids.
LABEL = {w: i for i, w in enumerate(sorted(FMNIST_TO_WNID))}
A_CLASSES = (0, 2, 5, 7, 8, 9)
R_CLASSES = (0, 1, 3, 4, 6, 7, 9)
CORRUPTIONS = ('gaussian_noise', 'shot_noise', 'impulse_noise', 'defocus_blur',
               'glass_blur', 'motion_blur', 'zoom_blur', 'snow', 'frost',
               'fog', 'brightness', 'contrast', 'elastic_transform',
               'pixelate', 'jpeg_compression')


def load_fashion_mnist(root: str) -> dict:
    """{'train': (images, labels), 't10k': (images, labels)}."""
    return {
        split: load_fashion_mnist_arrays(root, name)
        for split, name in (('train', 'train'), ('t10k', 'test'))
    }


def to_rgb(img: np.ndarray, size: int) -> np.ndarray:
    """28x28 grey -> size x size RGB, bicubic."""
    img = cv2.resize(img, (size, size), interpolation=cv2.INTER_CUBIC)
    return np.repeat(img[..., None], 3, axis=2)


def pick(labels: np.ndarray, per_class: int, offset: int = 0) -> dict:
    """Indices of the first ``per_class`` images of each class after
    skipping ``offset`` of them."""
    return {
        c: np.flatnonzero(labels == c)[offset:offset + per_class]
        for c in range(10)
    }


def corrupt(img: np.ndarray, name: str, severity: int, rng) -> np.ndarray:
    """A simple stand-in of an ImageNet-C corruption (uint8 RGB in/out)."""
    s = severity / 5.0
    x = img.astype(np.float32) / 255.
    h, w = x.shape[:2]
    if name == 'gaussian_noise':
        x = x + rng.normal(0, 0.08 + 0.3 * s, x.shape)
    elif name == 'shot_noise':
        lam = 60. / (1 + 10 * s)
        x = rng.poisson(x * lam) / lam
    elif name == 'impulse_noise':
        m = rng.random(x.shape[:2]) < 0.03 + 0.25 * s
        x[m] = rng.integers(0, 2, (int(m.sum()), 1))
    elif name == 'defocus_blur':
        k = 2 * severity + 1
        x = cv2.blur(x, (k, k))
    elif name == 'glass_blur':
        ys, xs = np.mgrid[:h, :w]
        d = severity
        ys = np.clip(ys + rng.integers(-d, d + 1, (h, w)), 0, h - 1)
        xs = np.clip(xs + rng.integers(-d, d + 1, (h, w)), 0, w - 1)
        x = cv2.GaussianBlur(x[ys, xs], (3, 3), 0.5 + 0.3 * s)
    elif name == 'motion_blur':
        k = 2 * severity + 1
        kernel = np.zeros((k, k), np.float32)
        kernel[k // 2] = 1. / k
        x = cv2.filter2D(x, -1, kernel)
    elif name == 'zoom_blur':
        acc = x.copy()
        zooms = np.linspace(1, 1 + 0.1 * severity, 4)[1:]
        for z in zooms:
            big = cv2.resize(x, None, fx=z, fy=z)
            top, left = (big.shape[0] - h) // 2, (big.shape[1] - w) // 2
            acc += big[top:top + h, left:left + w]
        x = acc / (len(zooms) + 1)
    elif name == 'snow':
        flakes = (rng.random((h, w)) < 0.02 + 0.1 * s).astype(np.float32)
        x = np.maximum(x * (1 - 0.3 * s), cv2.blur(flakes, (2, 2))[..., None])
    elif name == 'frost':
        ice = rng.random((h, w)).astype(np.float32)
        ice = cv2.GaussianBlur(ice, (5, 5), 1)
        x = (1 - 0.4 * s) * x + 0.6 * s * ice[..., None]
    elif name == 'fog':
        fog = cv2.resize(
            rng.random((4, 4)).astype(np.float32), (w, h),
            interpolation=cv2.INTER_CUBIC)
        x = x + (0.3 + 0.8 * s) * fog[..., None]
        x = x / x.max()
    elif name == 'brightness':
        x = x + 0.1 + 0.4 * s
    elif name == 'contrast':
        m = x.mean()
        x = (x - m) * (1 - 0.8 * s) + m
    elif name == 'elastic_transform':
        dx, dy = (
            cv2.GaussianBlur(
                rng.uniform(-1, 1, (h, w)).astype(np.float32),
                (7, 7), 2) * 4 * severity for _ in range(2))
        ys, xs = np.mgrid[:h, :w].astype(np.float32)
        x = cv2.remap(
            x,
            xs + dx,
            ys + dy,
            cv2.INTER_LINEAR,
            borderMode=cv2.BORDER_REFLECT)
    elif name == 'pixelate':
        f = 1. / (1 + severity)
        small = cv2.resize(x, None, fx=f, fy=f, interpolation=cv2.INTER_AREA)
        x = cv2.resize(small, (w, h), interpolation=cv2.INTER_NEAREST)
    elif name == 'jpeg_compression':
        q = int(30 - 5 * severity)
        ok, buf = cv2.imencode('.jpg', img, [cv2.IMWRITE_JPEG_QUALITY, q])
        return cv2.imdecode(buf, cv2.IMREAD_COLOR)
    else:
        raise ValueError(f'unknown corruption {name!r}')
    return (np.clip(x, 0, 1) * 255).round().astype(np.uint8)


def write(path: str, img: np.ndarray):
    """Write an image, making its folder; an error names a failed write."""
    os.makedirs(osp.dirname(path), exist_ok=True)
    if not cv2.imwrite(path, img):
        raise OSError(f'could not write {path}')


def plan(data: dict, train_per_class: int, test_per_class: int,
         c_per_class: int) -> tuple:
    """(path, image) jobs and the annotation files, all deterministic."""
    train_x, train_y = data['train']
    test_x, test_y = data['t10k']
    jobs, ann = [], {'train': [], 'val': []}
    one_percent = []
    for c, idx in pick(train_y, train_per_class).items():
        wnid = FMNIST_TO_WNID[c]
        for n, i in enumerate(idx):
            name = f'{wnid}_{n}.JPEG'
            jobs.append((f'imagenet/train/{wnid}/{name}', train_x[i]))
            ann['train'].append(f'{wnid}/{name} {LABEL[wnid]}')
            if n < max(1, train_per_class // 100):
                one_percent.append(name)
    offset = 0
    test_sets = [('val', 'imagenet/val/{w}/{w}_val_{n}.JPEG', range(10)),
                 ('a', 'imagenet-a/{w}/{w}_a_{n}.jpg', A_CLASSES),
                 ('r', 'imagenet-r/{w}/{w}_r_{n}.jpg', R_CLASSES),
                 ('sketch', 'imagenet-sketch/sketch/{w}/{w}_s_{n}.JPEG',
                  range(10))]
    for key, pattern, classes in test_sets:
        for c, idx in pick(test_y, test_per_class, offset).items():
            if c not in classes:
                continue
            for n, i in enumerate(idx):
                path = pattern.format(w=FMNIST_TO_WNID[c], n=n)
                jobs.append((path, test_x[i]))
                if key == 'val':
                    wnid = FMNIST_TO_WNID[c]
                    ann['val'].append(
                        f'{wnid}/{osp.basename(path)} {LABEL[wnid]}')
        offset += test_per_class
    for c, idx in pick(test_y, c_per_class, offset).items():
        for n, i in enumerate(idx):
            for corruption in CORRUPTIONS:
                for sev in range(1, 6):
                    jobs.append((f'imagenet-c/{corruption}/{sev}/'
                                 f'{FMNIST_TO_WNID[c]}/c_{n}.JPEG',
                                 (test_x[i], corruption, sev)))
    return jobs, ann, one_percent


def make_smoke_imagenet(fashion_mnist: str,
                        out: str,
                        img_size: int = 32,
                        train_per_class: int = 4,
                        test_per_class: int = 2,
                        c_per_class: int = 1,
                        seed: int = 0) -> bool:
    """Write every layout under ``out`` unless the same ones are there.

    Args:
        fashion_mnist (str): Folder of the un-gzipped Fashion-MNIST files.
        out (str): Output folder (``imagenet``, ``imagenet-a`` ... in it).
        img_size (int): Image side. Defaults to 32.
        train_per_class (int): Training images per class. Defaults to 4.
        test_per_class (int): Images per class in val, A, R and Sketch.
            Defaults to 2.
        c_per_class (int): ImageNet-C images per class, corruption and
            severity. Defaults to 1.
        seed (int): Seed of the corruptions. Defaults to 0.

    Returns:
        bool: False when ``out`` already held these layouts (nothing done).

    Raises:
        FileNotFoundError: The Fashion-MNIST files are missing.
        ValueError: A count or the size below 1.
    """
    sizes = dict(
        img_size=img_size,
        train_per_class=train_per_class,
        test_per_class=test_per_class,
        c_per_class=c_per_class)
    small = [k for k, v in sizes.items() if v < 1]
    if small:
        raise ValueError(f'{small} must be >= 1, got {sizes}')
    manifest = dict(
        fashion_mnist=osp.abspath(fashion_mnist), **sizes, seed=seed)
    manifest_path = osp.join(out, 'smoke_manifest.json')
    if osp.isfile(manifest_path):
        with open(manifest_path) as f:
            if json.load(f) == manifest:
                return False
    data = load_fashion_mnist(fashion_mnist)
    jobs, ann, one_percent = plan(data, train_per_class, test_per_class,
                                  c_per_class)

    from mmengine.utils import ProgressBar
    for sub in ('imagenet', 'imagenet-a', 'imagenet-r', 'imagenet-sketch',
                'imagenet-c'):
        shutil.rmtree(osp.join(out, sub), ignore_errors=True)
    rng = np.random.default_rng(seed)
    bar = ProgressBar(len(jobs), file=sys.stderr)
    for path, src in jobs:
        if isinstance(src, tuple):
            img, corruption, sev = src
            img = corrupt(to_rgb(img, img_size), corruption, sev, rng)
        else:
            img = to_rgb(src, img_size)
        write(osp.join(out, path), img)
        bar.update()
    sys.stderr.write('\n')
    os.makedirs(osp.join(out, 'imagenet/meta'), exist_ok=True)
    for split, lines in ann.items():
        with open(osp.join(out, f'imagenet/meta/{split}.txt'), 'w') as f:
            f.write('\n'.join(lines) + '\n')
    with open(osp.join(out, 'imagenet/1percent.txt'), 'w') as f:
        f.write('\n'.join(one_percent) + '\n')
    with open(manifest_path, 'w') as f:
        json.dump(manifest, f, indent=1)
    print(f'wrote {len(jobs)} images to {out}')
    return True
