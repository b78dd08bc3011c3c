from typing import Dict, List, Optional, Sequence, Tuple

import numpy as np
import torch
from mmpretrain.models.utils import SelfSupDataPreprocessor
from mmpretrain.registry import MODELS
from torch import Tensor

from . import device_colour as dc

#: the authors' colour set per view (their DataAugmentationForSIM)
VIEW_A = dict(
    jitter_prob=0.8,
    brightness=0.4,
    contrast=0.4,
    saturation=0.2,
    hue=0.1,
    grayscale_prob=0.2,
    blur_prob=1.0,
    blur_sigma=(0.1, 2.0),
    solarize_prob=0.0)
VIEW_B = dict(VIEW_A, blur_prob=0.1, solarize_prob=0.2)
_JITTER = ('brightness', 'contrast', 'saturation', 'hue')


def _check_view(cfg: dict, name: str) -> dict:
    unknown = sorted(set(cfg) - set(VIEW_A))
    if unknown:
        raise ValueError(f'DeviceAugmentDataPreprocessor {name}: unknown '
                         f'keys {unknown}; known: {sorted(VIEW_A)}')
    cfg = dict(VIEW_A, **cfg)
    for key in ('jitter_prob', 'grayscale_prob', 'blur_prob', 'solarize_prob'):
        if not 0 <= cfg[key] <= 1:
            raise ValueError(f'DeviceAugmentDataPreprocessor {name}.{key} '
                             f'must be in [0, 1], got {cfg[key]}')
    lo, hi = cfg['blur_sigma']
    if not 0 < lo <= hi:
        raise ValueError(f'DeviceAugmentDataPreprocessor {name}.blur_sigma '
                         f'must be (min, max), 0 < min <= max, got '
                         f'{cfg["blur_sigma"]}')
    return cfg


@MODELS.register_module()
class DeviceAugmentDataPreprocessor(SelfSupDataPreprocessor):
    """The two views' flips and colour augmentation, batched on the device,
    then normalisation (``SelfSupDataPreprocessor``).

    The accelerator option of the ImageNet pipeline: the CPU workers only
    decode, crop and resize (to 224 uint8, antialiased bicubic: a batched
    resize cannot take a crop of each image's own size at source
    resolution) and draw the mask; here, in training, each view of each
    image gets the authors' augmentation with the CPU pipeline's
    distributions and Pillow formulas (:mod:`.device_colour`): a
    horizontal flip with ``flip_prob``, ColorJitter with ``jitter_prob`` (a
    random order of brightness, contrast, saturation and hue, factors
    uniform as torchvision's), grayscale, Gaussian blur (radius uniform in
    ``blur_sigma``) and solarize. A flip here updates the sample's recorded
    geometry: ``flips[v]`` becomes ``flips[v] xor flip`` (the crop box stays
    in the unflipped frame), so the relative positions follow the pixels.
    Outside training it only normalises.

    Args:
        mean, std, to_rgb: as ``SelfSupDataPreprocessor`` (the inputs are
            mmcv's BGR uint8; with ``to_rgb=True`` the colour steps see
            RGB, as Pillow does).
        flip_prob (float): Flip probability per view. Defaults to 0.5.
        view_a (dict, optional): Colour settings of view a, keys of
            :data:`VIEW_A` (jitter_prob, brightness, contrast, saturation,
            hue, grayscale_prob, blur_prob, blur_sigma, solarize_prob);
            defaults to the authors' view a.
        view_b (dict, optional): The same for view b; defaults to the
            authors' view b (blur 0.1, solarize 0.2).
        **kwargs: other ``SelfSupDataPreprocessor`` arguments.
    """

    def __init__(self,
                 mean: Sequence[float] = (123.675, 116.28, 103.53),
                 std: Sequence[float] = (58.395, 57.12, 57.375),
                 to_rgb: bool = True,
                 flip_prob: float = 0.5,
                 view_a: Optional[dict] = None,
                 view_b: Optional[dict] = None,
                 **kwargs) -> None:
        super().__init__(mean=mean, std=std, to_rgb=to_rgb, **kwargs)
        if not to_rgb:
            raise ValueError('DeviceAugmentDataPreprocessor needs '
                             'to_rgb=True: its colour steps work on RGB, and '
                             'the pipeline gives mmcv\'s BGR')
        if not 0 <= flip_prob <= 1:
            raise ValueError(f'flip_prob must be in [0, 1], got {flip_prob}')
        self.flip_prob = flip_prob
        self.views = [
            _check_view(view_a or {}, 'view_a'),
            _check_view(view_b or VIEW_B, 'view_b')
        ]

    def draw(self, view: int, batch: int,
             device: torch.device) -> Dict[str, Tensor]:
        """The random parameters of one view for a batch (all on ``device``):

        ``flip``, ``jitter`` (bool), ``order`` (B, 4),
        ``brightness``/``contrast``/``saturation``/``hue`` factors,
        ``grayscale``, ``blur``, ``sigma``, ``solarize``.
        """
        cfg = self.views[view]

        def coin(p):
            return torch.rand(batch, device=device) < p

        def uniform(lo, hi):
            return torch.empty(batch, device=device).uniform_(lo, hi)

        out = dict(
            flip=coin(self.flip_prob),
            jitter=coin(cfg['jitter_prob']),
            order=torch.argsort(torch.rand(batch, 4, device=device), dim=1))
        for name in _JITTER:
            strength = cfg[name]
            lo, hi = ((-strength, strength) if name == 'hue' else
                      (max(0., 1 - strength), 1 + strength))
            out[name] = uniform(lo, hi)
        out.update(
            grayscale=coin(cfg['grayscale_prob']),
            blur=coin(cfg['blur_prob']),
            sigma=uniform(*cfg['blur_sigma']),
            solarize=coin(cfg['solarize_prob']))
        return out

    @staticmethod
    def augment(img: Tensor, p: Dict[str, Tensor]) -> Tensor:
        """One view's flip and colour steps for drawn parameters ``p``, on RGB
        values in [0, 255] (float32, B x 3 x H x W)."""
        img = torch.where(p['flip'].view(-1, 1, 1, 1), img.flip(-1), img)
        adjust = (dc.brightness, dc.contrast, dc.saturation, dc.hue)
        for step in range(4):
            for index, fn in enumerate(adjust):
                chosen = p['jitter'] & (p['order'][:, step] == index)
                if chosen.any():
                    factor = p[_JITTER[index]]
                    img = torch.where(
                        chosen.view(-1, 1, 1, 1), fn(img, factor), img)
        if p['grayscale'].any():
            img = torch.where(p['grayscale'].view(-1, 1, 1, 1),
                              dc.grayscale(img), img)
        if p['blur'].any():
            img = torch.where(p['blur'].view(-1, 1, 1, 1),
                              dc.gaussian_blur(img, p['sigma']), img)
        if p['solarize'].any():
            img = torch.where(p['solarize'].view(-1, 1, 1, 1),
                              dc.solarize(img), img)
        return img

    @torch.compiler.disable
    def forward(self, data: dict, training: bool = False) -> dict:
        if not training:
            return super().forward(data, training)
        inputs, samples = self.cast_data(
            [data['inputs'], data.get('data_samples')])
        if not isinstance(inputs, list) or len(inputs) != 2:
            raise ValueError(
                'DeviceAugmentDataPreprocessor needs two views '
                '(TwoViewRandomResizedCrop), got '
                f'{type(inputs).__name__} of '
                f'{len(inputs) if isinstance(inputs, list) else 1}')
        views, flips = [], []
        for v, img in enumerate(inputs):
            img = img[:, [2, 1, 0]].float()  # BGR uint8 -> RGB float
            p = self.draw(v, img.shape[0], img.device)
            views.append((self.augment(img, p) - self.mean) / self.std)
            flips.append(p['flip'])
        if samples is not None:
            self._record_flips(samples, torch.stack(flips, 1).cpu().numpy())
        return {'inputs': views, 'data_samples': samples}

    @staticmethod
    def _record_flips(samples: List, drawn: np.ndarray) -> None:
        for sample, flip in zip(samples, drawn):
            if 'flips' not in sample:
                raise KeyError('DeviceAugmentDataPreprocessor flips views, '
                               'so each sample needs its recorded flips '
                               "(PackInputs algorithm_keys 'flips')")
            sample.flips = np.logical_xor(np.asarray(sample.flips, bool), flip)

    def extra_repr(self) -> str:
        return f'flip_prob={self.flip_prob}, views={self.views}'


def view_settings() -> Tuple[dict, dict]:
    """The authors' settings of view a and view b (copies)."""
    return dict(VIEW_A), dict(VIEW_B)
