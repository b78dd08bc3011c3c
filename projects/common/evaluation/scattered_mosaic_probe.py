import os.path as osp
from typing import Dict, Optional, Sequence

import numpy as np
import torch
import torch.nn.functional as F
from mmengine.config import ConfigDict

from projects.common.evaluation.dense_probe import fit_linear_classifier
from projects.common.evaluation.mosaic_probe import MosaicDenseProbe
from projects.common.evaluation.pixel_scores import pixel_scores
from projects.common.evaluation.protocol import FrozenBackboneProtocol
from projects.common.evaluation.scattered_mosaics import make_scattered_mosaics
from projects.common.evaluation.stored_results import load_result, save_result


class ScatteredMosaicProbe(MosaicDenseProbe):
    """A dense probe where pretraining must show: a per-patch linear
    classifier on frozen patch tokens of scattered mosaics, scored on every
    pixel.

    Mosaics (:mod:`projects.common.evaluation.scattered_mosaics`): items
    at their native size times a random scale, at random positions on a
    ``canvas`` larger than the ViT's training input (mmpretrain's
    ``VisionTransformer`` interpolates its position embeddings to the
    larger patch grid, bicubic), overlapping; patches straddle items and
    background. Training mosaics are made of the protocol's linear-probe
    training images (seed 0), test mosaics of its test images (its held-out
    training images with ``holdout``; seed 1), never mixed.

    The classifier (:func:`fit_linear_classifier`) is fitted on the
    training patches, each labelled with the label most of its pixels have
    (ties: the item); it predicts every pixel by upsampling the patch
    logits to the canvas (bilinear) and taking their argmax. Scores on the
    test mosaics, in percent: per-pixel mIoU over the classes and
    background, boundary IoU (band of ``boundary`` pixels) and per-pixel
    accuracy; and the same with the classifier fitted on the first
    ``lowshot`` training mosaics only (``lowshot_miou``,
    ``lowshot_boundary_iou``, ``lowshot_accuracy``). Results are stored
    and reused like :class:`MosaicDenseProbe`'s, in
    ``{work_dir}/results/{name}_scattered.json`` (beside that probe's
    ``{name}_dense.json``).

    Args:
        protocol (FrozenBackboneProtocol): Gives the probe config, the
            images, the precision and the work dir.
        train_mosaics (int): Training mosaics.
        test_mosaics (int): Test mosaics.
        lowshot (int): Training mosaics of the low-shot classifier (the
            first ones; at most ``train_mosaics``).
        canvas (int): Side of a mosaic in pixels (a multiple of the patch).
        items (int): Items per mosaic.
        scale (tuple): Least and largest scale of an item.
        boundary (int): Band width of the boundary IoU, in pixels.
        l2 (float): L2 strength of the classifier (fixed: not chosen on
            the test mosaics).
        threshold (int): Least brightness of an item pixel (0-255).
        max_iter (int): L-BFGS iterations of the classifier.
    """

    def __init__(self,
                 protocol: FrozenBackboneProtocol,
                 train_mosaics: int = 500,
                 test_mosaics: int = 300,
                 lowshot: int = 50,
                 canvas: int = 64,
                 items: int = 4,
                 scale: Sequence[float] = (0.75, 1.5),
                 boundary: int = 2,
                 l2: float = 1e-4,
                 threshold: int = 32,
                 max_iter: int = 200) -> None:
        super().__init__(protocol, train_mosaics, test_mosaics, l2, threshold,
                         max_iter)
        if not 1 <= lowshot <= train_mosaics:
            raise ValueError(f'ScatteredMosaicProbe: lowshot={lowshot}, '
                             f'between 1 and train_mosaics={train_mosaics} '
                             'expected')
        for option, value in (('items', items), ('boundary', boundary)):
            if value < 1:
                raise ValueError(f'ScatteredMosaicProbe: {option}={value}, '
                                 'at least 1 was expected')
        self.lowshot = lowshot
        self.canvas = canvas
        self.items = items
        self.scale = tuple(float(s) for s in scale)
        self.boundary = boundary

    def settings(self) -> dict:
        """What every dense result depends on, besides the checkpoint."""
        return dict(
            super().settings(),
            probe='scattered',
            lowshot=self.lowshot,
            canvas=self.canvas,
            items=self.items,
            scale=list(self.scale),
            boundary=self.boundary)

    def _make(self, images, labels, count: int, seed: int,
              num_classes: int) -> tuple:
        """Scattered mosaics, their pixel labels and ``(sources,)``: per
        mosaic, the indices of its items into the split's images."""
        mosaics, pixels, sources = make_scattered_mosaics(
            images,
            labels,
            count,
            seed=seed,
            canvas=self.canvas,
            items=self.items,
            scale=self.scale,
            threshold=self.threshold,
            num_classes=num_classes)
        return mosaics, pixels, (sources, )

    def data(self) -> Dict[str, tuple]:
        """As :meth:`MosaicDenseProbe.data`, each split's tuple ending with
        its mosaics' sources (N, items); refused when ``canvas`` is not a
        multiple of the patch size."""
        if self._data is None:
            patch = self.protocol.config().model.backbone.get('patch_size', 16)
            if self.canvas % patch:
                raise ValueError(
                    f'ScatteredMosaicProbe: canvas={self.canvas} is not a '
                    f'multiple of the patch size {patch}')
        return super().data()

    def _fit(self, features, return_prediction: bool = False) -> dict:
        """Fit on all the training mosaics and on the ``lowshot`` first,
        score each on every test pixel."""
        d = self.data()
        train_f, test_f = features(d)
        for split, f in (('train', train_f), ('test', test_f)):
            if tuple(f.shape[:3]) != d[split][1].shape:
                raise ValueError(f'ScatteredMosaicProbe: {split} features '
                                 f'{tuple(f.shape)} do not match the patch '
                                 f'labels {d[split][1].shape}')
        out = {}
        for prefix, n in (('', self.train_mosaics), ('lowshot_',
                                                     self.lowshot)):
            pred = self.pixel_predictions(
                self.fit(train_f[:n], d['train'][1][:n], d['classes']), test_f)
            scores = pixel_scores(pred, d['test'][3], d['classes'],
                                  self.boundary)
            if prefix:
                scores = {
                    prefix + k: scores[k]
                    for k in ('miou', 'boundary_iou', 'accuracy')
                }
            elif return_prediction:
                scores['prediction'] = pred
            out.update(scores)
        return out

    def fit(self, features: torch.Tensor, labels: np.ndarray,
            classes: int) -> torch.nn.Module:
        """The linear classifier of (N, h, w, C) patch features and their
        (N, h, w) patch labels."""
        return fit_linear_classifier(
            features.reshape(-1, features.shape[-1]),
            torch.from_numpy(np.asarray(labels).reshape(-1)),
            classes,
            l2=self.l2,
            max_iter=self.max_iter)

    @torch.no_grad()
    def pixel_predictions(self,
                          classifier: torch.nn.Module,
                          features: torch.Tensor,
                          batch: int = 100) -> np.ndarray:
        """(N, canvas, canvas) labels: the patch logits of (N, h, w, C)
        features upsampled to the canvas (bilinear), their argmax."""
        out = []
        for start in range(0, len(features), batch):
            logits = classifier(features[start:start + batch])
            logits = F.interpolate(
                logits.permute(0, 3, 1, 2), (self.canvas, ) * 2,
                mode='bilinear',
                align_corners=False)
            out.append(logits.argmax(1).numpy())
        return np.concatenate(out)

    def _scores(self, name: str, settings: dict, features) -> dict:
        out_path = osp.join(self.protocol.work_dir, 'results',
                            f'{name}_scattered.json')
        result = load_result(out_path, settings)
        if 'miou' in result:
            return result
        result.update(self._fit(features))
        save_result(out_path, settings, result)
        print(
            f'{name}: scattered-mosaic probe mIoU {result["miou"]:.2f} %, '
            f'boundary IoU {result["boundary_iou"]:.2f} %, per-pixel '
            f'accuracy {result["accuracy"]:.2f} %; low-shot '
            f'({self.lowshot} mosaics) mIoU {result["lowshot_miou"]:.2f} %',
            flush=True)
        return result

    def evaluate(self,
                 name: str,
                 checkpoint: Optional[str],
                 pretrain_model: Optional[ConfigDict] = None,
                 cache_key: Optional[dict] = None) -> dict:
        """Per-pixel mIoU, boundary IoU and accuracy, full and low-shot,
        and per-class IoU (%) of the frozen patch tokens of ``checkpoint``
        (None: the random initialisation).

        ``cache_key`` is accepted for the protocol's signature; the mosaics'
        features are not cached.
        """
        return super().evaluate(name, checkpoint, pretrain_model)

    def mosaic_statistics(self) -> Dict[str, float]:
        """Of the test mosaics, in percent: ``background`` (pixels),
        ``straddling`` (patches whose pixels have more than one label) and
        ``two_items`` (patches on two items or more)."""
        d = self.data()
        pixels, p = d['test'][3], d['patch']
        n, H, W = pixels.shape
        patches = pixels.reshape(n, H // p, p, W // p,
                                 p).transpose(0, 1, 3, 2,
                                              4).reshape(-1, p * p)
        background = d['classes'] - 1
        items = np.where(patches == background, -1, patches)
        two = (items.max(1) >= 0) & (
            items.max(1) != np.where(items < 0, background, items).min(1))
        return dict(
            background=100 * float((pixels == background).mean()),
            straddling=100 * float((patches.min(1) != patches.max(1)).mean()),
            two_items=100 * float(two.mean()))

    def describe(self) -> list:
        """Markdown bullets of the dense probe, from its settings and its
        test mosaics."""
        low, high = self.scale
        stats = self.mosaic_statistics()
        return [
            f'* Dense probe: {self.train_mosaics} training mosaics (of the '
            f'linear probe\'s images) and {self.test_mosaics} test mosaics '
            f'of {self.items} items at their native 28 x 28 px scaled by '
            f'{low:g}-{high:g}, at random positions on a {self.canvas} x '
            f'{self.canvas} canvas, later items occluding earlier ones; a '
            'pixel is labelled with the visible item where it is at least '
            f'{self.threshold}/255 bright, background elsewhere; a linear '
            'classifier on the standardised frozen patch tokens of the last '
            f'block (L2 {self.l2}, L-BFGS, trained on each patch\'s '
            'majority label), its logits upsampled (bilinear) to every '
            'pixel; per-pixel mIoU over the 11 labels, boundary IoU '
            f'(a {self.boundary} px band) and per-pixel accuracy on the '
            f'test mosaics, and the same with the classifier fitted on '
            f'{self.lowshot} training mosaics (low-shot). Of the test '
            f'mosaics, {stats["background"]:.0f} % of the pixels are '
            f'background and {stats["straddling"]:.0f} % of the patches '
            f'straddle two labels ({stats["two_items"]:.1f} % two items).'
        ]
