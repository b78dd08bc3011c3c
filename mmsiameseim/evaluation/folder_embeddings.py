import hashlib
import json
import math
import os
import os.path as osp
import shutil
from typing import List, Optional, Sequence, Tuple

import numpy as np
import torch
from mmengine.utils import ProgressBar
from PIL import Image

from .feature_cache import file_identity
from .frozen_features import pool_tokens

#: What :func:`embed_folder` can store per image: a pooled vector (see
#: :func:`pool_tokens`) or every patch token.
EMBEDDING_FEATURES = ('cls_token', 'avg_featmap', 'patch_tokens')


def load_centre_crop(path: str, size: int, crop_fraction: float,
                     grey: bool) -> np.ndarray:
    """An image file through the strict loader (every image mode, EXIF
    orientation), its short side resized to ``size / crop_fraction``
    (rounded down; bicubic), centre-cropped to ``size`` x ``size``: the
    usual evaluation view (256 -> 224 at ``crop_fraction=0.875``), with
    torchvision's rounding, so that timm's ``create_transform`` of an
    export's ``pretrained_cfg`` gives the same pixels.

    Returns:
        ndarray: (size, size) uint8 when ``grey``, else (size, size, 3) RGB.

    Raises:
        DamagedImageError, ImageModeError: The file cannot be read as an
            image; the message names it.
    """
    from mmsiameseim.datasets.transforms import StrictLoadImageFromFile
    loader = StrictLoadImageFromFile(
        color_type='grayscale' if grey else 'color')
    img = loader.transform(dict(img_path=path))['img']
    img = Image.fromarray(
        img if grey else np.ascontiguousarray(img[..., ::-1]))
    # torchvision's Resize(int) and CenterCrop, as timm's evaluation
    # transform and the exported pretrained_cfg give them
    short = max(size, math.floor(size / crop_fraction))
    width, height = img.size
    if width <= height:
        shape = (short, int(short * height / width))
    else:
        shape = (int(short * width / height), short)
    img = img.resize(shape, Image.BICUBIC)
    left = int(round((img.width - size) / 2.))
    top = int(round((img.height - size) / 2.))
    return np.asarray(img.crop((left, top, left + size, top + size)))


@torch.no_grad()
def embed_images(backbone: torch.nn.Module, mean: torch.Tensor,
                 std: torch.Tensor, images: np.ndarray,
                 feature: str) -> np.ndarray:
    """Frozen features of uint8 images (N, H, W[, 3]) from a ViT giving all
    its tokens (:func:`frozen_vit`).

    Returns:
        ndarray: float32, (N, C) for a pooled ``feature``, (N, L, C) for
        ``patch_tokens``.
    """
    x = torch.from_numpy(np.array(images, dtype=np.float32))
    x = x.unsqueeze(1) if x.dim() == 3 else x.permute(0, 3, 1, 2)
    out = backbone((x - mean) / std)
    tokens = out[-1] if isinstance(out, (tuple, list)) else out
    if feature == 'patch_tokens':
        return tokens[:, 1:].float().numpy()
    return pool_tokens(tokens, feature).numpy()


def _settings(checkpoint: Optional[str], files: List[str], **options) -> dict:
    return dict(
        checkpoint=file_identity(checkpoint),
        files=len(files),
        first=files[:1],
        last=files[-1:],
        digest=hashlib.sha1('\n'.join(files).encode()).hexdigest(),
        **options)


def embed_folder(backbone: torch.nn.Module,
                 mean: torch.Tensor,
                 std: torch.Tensor,
                 root: str,
                 files: List[str],
                 out: str,
                 size: int,
                 feature: str = 'cls_token',
                 crop_fraction: float = 0.875,
                 batch_size: int = 64,
                 chunk: int = 1024,
                 float16: bool = False,
                 checkpoint: Optional[str] = None) -> dict:
    """Embed image files into ``out`` (an ``.npz``), resumably.

    The files are embedded in chunks; each finished chunk is kept in
    ``out + '.parts'`` with the settings it was made under, so a killed run
    continues where it stopped (under other settings it starts over, and
    says so). At the end the chunks become one ``.npz`` (written then
    renamed: never half a file) and the parts folder is removed.

    A file that cannot be read as an image is skipped, named on the console
    and listed in the output (``skipped``, with the reason); it is never
    dropped silently.

    Args:
        backbone, mean, std: A frozen ViT giving all its tokens and its
            input normalisation in 0-255 units (:func:`frozen_vit`); one
            input channel means grey images.
        root (str): The folder ``files`` are relative to.
        files (list[str]): Relative image paths, in output order.
        out (str): The output file (``.npz``).
        size (int): Input side in pixels (the ViT interpolates its position
            embedding to other sizes than it was trained at).
        feature (str): One of :data:`EMBEDDING_FEATURES`.
        crop_fraction (float): See :func:`load_centre_crop`.
        batch_size (int): Images per forward.
        chunk (int): Images per resumable chunk.
        float16 (bool): Store the features as float16.
        checkpoint (str, optional): The weights' file, to tell a resumed
            run's chunks from another checkpoint's.

    Returns:
        dict: ``features`` ((N, C) or (N, L, C)), ``files`` (the N embedded
        paths, relative, in order) and ``skipped`` ((path, reason) rows).
    """
    if feature not in EMBEDDING_FEATURES:
        raise ValueError(f'embed_folder: feature={feature!r}, choose one of '
                         f'{EMBEDDING_FEATURES}')
    if not 0 < crop_fraction <= 1:
        raise ValueError(f'embed_folder: crop_fraction={crop_fraction} must '
                         'be in (0, 1]')
    if not files:
        raise ValueError(f'embed_folder: no image files under {root}')
    grey = mean.shape[0] == 1
    settings = _settings(
        checkpoint,
        files,
        size=size,
        feature=feature,
        crop_fraction=crop_fraction,
        float16=bool(float16),
        chunk=chunk)
    parts = out + '.parts'
    _start_or_continue(parts, settings)
    starts = range(0, len(files), chunk)
    done = sum(osp.isfile(_part(parts, s)) for s in starts)
    if done:
        print(f'{done} of {len(starts)} chunks already embedded in {parts}: '
              'continuing')
    bar = ProgressBar(len(files))
    for start in starts:
        names = files[start:start + chunk]
        if osp.isfile(_part(parts, start)):
            bar.update(len(names))
        else:
            _embed_chunk(backbone, mean, std, root, names, _part(parts, start),
                         size, feature, crop_fraction, batch_size, grey,
                         float16, bar)
    print()
    result = _join(parts, starts)
    tmp = out + '.tmp.npz'
    np.savez(tmp, **result)
    os.replace(tmp, out)
    shutil.rmtree(parts)
    return result


def _part(parts: str, start: int) -> str:
    return osp.join(parts, f'chunk_{start:09d}.npz')


def _start_or_continue(parts: str, settings: dict) -> None:
    path = osp.join(parts, 'settings.json')
    if osp.isdir(parts):
        try:
            with open(path) as f:
                same = json.load(f) == json.loads(json.dumps(settings))
        except (OSError, ValueError):
            same = False
        if same:
            return
        print(f'{parts}: made under other settings (checkpoint, files or '
              'options); starting over')
        shutil.rmtree(parts)
    os.makedirs(parts)
    with open(path, 'w') as f:
        json.dump(settings, f)


def _embed_chunk(backbone, mean, std, root, names, path, size, feature,
                 crop_fraction, batch_size, grey, float16, bar) -> None:
    from mmsiameseim.datasets.transforms import DamagedImageError
    from mmsiameseim.datasets.transforms.strict_loading import ImageModeError
    feats, kept, skipped = [], [], []
    for i in range(0, len(names), batch_size):
        images = []
        for name in names[i:i + batch_size]:
            try:
                images.append(
                    load_centre_crop(
                        osp.join(root, name), size, crop_fraction, grey))
                kept.append(name)
            except (DamagedImageError, ImageModeError) as e:
                print(f'\nskipped {name}: {e}')
                skipped.append((name, str(e)))
        if images:
            f = embed_images(backbone, mean, std, np.stack(images), feature)
            feats.append(f.astype(np.float16 if float16 else np.float32))
        bar.update(len(names[i:i + batch_size]))
    tmp = path + '.tmp.npz'
    np.savez(
        tmp,
        features=np.concatenate(feats) if feats else np.zeros((0, )),
        files=np.array(kept, dtype=str),
        skipped=np.array(skipped, dtype=str).reshape(-1, 2))
    os.replace(tmp, path)


def _join(parts: str, starts: Sequence[int]) -> dict:
    feats, files, skipped = [], [], []
    for start in starts:
        with np.load(_part(parts, start)) as z:
            if len(z['files']):
                feats.append(z['features'])
            files += z['files'].tolist()
            skipped += z['skipped'].tolist()
    if not feats:
        raise ValueError(f'embed_folder: none of the {len(skipped)} files '
                         'could be read as an image')
    return dict(
        features=np.concatenate(feats),
        files=np.array(files, dtype=str),
        skipped=np.array(skipped, dtype=str).reshape(-1, 2))


def folder_classes(files: Sequence[str]) -> Tuple[List[str], np.ndarray]:
    """The first-level sub-folder of each relative path as its class:
    (class names, (N,) indices); files at the top level are class ''."""
    top = [
        f.replace('\\', '/').split('/')[0]
        if '/' in f.replace('\\', '/') else '' for f in files
    ]
    names = sorted(set(top))
    index = {n: i for i, n in enumerate(names)}
    return names, np.array([index[t] for t in top], dtype=np.int64)
