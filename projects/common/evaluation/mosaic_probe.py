import copy
import os.path as osp
from typing import Dict, Optional

import torch
from mmengine.config import ConfigDict

from mmsiameseim.evaluation.feature_cache import cache_digest, file_identity
from mmsiameseim.evaluation.frozen_features import build_frozen_backbone_model
from projects.common.evaluation.dense_probe import (dense_probe_scores,
                                                    patch_tokens,
                                                    raw_patch_pixels)
from projects.common.evaluation.mosaics import make_mosaics, patch_labels
from projects.common.evaluation.protocol import (FrozenBackboneProtocol,
                                                 raw_images)
from projects.common.evaluation.stored_results import load_result, save_result


class MosaicDenseProbe:
    """The dense probe of a :class:`FrozenBackboneProtocol`: a per-patch
    linear classifier on frozen patch tokens of mosaics of its images.

    Training mosaics are made of the protocol's linear-probe training
    images, test mosaics of its test images (its held-out training images
    with ``holdout``): see :mod:`projects.common.evaluation.mosaics` for the
    mosaics and their labels (every patch: the class of the item under it,
    or background), :mod:`projects.common.evaluation.dense_probe` for the
    classifier. Scores are mIoU over the classes and background, and
    per-patch accuracy, on the test mosaics. Results are stored in
    ``{work_dir}/results/{name}_dense.json`` with their settings, reused by
    a later call with the same settings and refused with others, like the
    protocol's.

    Args:
        protocol (FrozenBackboneProtocol): Gives the probe config (backbone,
            normalisation, datasets, the ViT's final-norm choice), the
            images, the precision and the work dir.
        train_mosaics (int): Training mosaics (4 images each).
        test_mosaics (int): Test mosaics.
        l2 (float): L2 strength of the classifier (fixed: not chosen on
            the test mosaics).
        threshold (int): Least brightness of an item pixel (0-255).
        max_iter (int): L-BFGS iterations of the classifier.
    """

    def __init__(self,
                 protocol: FrozenBackboneProtocol,
                 train_mosaics: int = 4000,
                 test_mosaics: int = 2000,
                 l2: float = 1e-4,
                 threshold: int = 32,
                 max_iter: int = 200) -> None:
        for option, value in (('train_mosaics', train_mosaics),
                              ('test_mosaics', test_mosaics), ('max_iter',
                                                               max_iter)):
            if value < 1:
                raise ValueError(f'MosaicDenseProbe: {option}={value}, at '
                                 'least 1 was expected')
        self.protocol = protocol
        self.train_mosaics = train_mosaics
        self.test_mosaics = test_mosaics
        self.l2 = l2
        self.threshold = threshold
        self.max_iter = max_iter
        self._data = None

    @classmethod
    def from_cfg(cls, protocol: FrozenBackboneProtocol,
                 cfg: Optional[dict]) -> 'MosaicDenseProbe':
        """Build from a config dict of the ``__init__`` arguments (e.g.
        ``dense`` of projects/claim/configs/claim_study.py)."""
        return cls(protocol, **dict(cfg or {}))

    def settings(self) -> dict:
        """What every dense result depends on, besides the checkpoint."""
        return dict(
            self.protocol.subset_settings(),
            train_mosaics=self.train_mosaics,
            test_mosaics=self.test_mosaics,
            l2=self.l2,
            threshold=self.threshold,
            max_iter=self.max_iter)

    def _make(self, images, labels, count: int, seed: int,
              num_classes: int) -> tuple:
        """One split's mosaics (N, H, W) uint8, their pixel labels (N, H, W)
        and what else goes after them in the split's tuple (here nothing)."""
        mosaics, pixels = make_mosaics(
            images,
            labels,
            count,
            seed=seed,
            threshold=self.threshold,
            num_classes=num_classes)
        return mosaics, pixels, ()

    def data(self) -> Dict[str, tuple]:
        """``train`` and ``test``: (normalised mosaics (N, 1, H, W) float,
        patch labels (N, h, w), mosaics (N, H, W) uint8, pixel labels
        (N, H, W), then what :meth:`_make` adds); ``sources``: per split,
        the dataset config and the sample indices the items come from;
        ``classes`` (labels with the background) and ``patch`` (the
        backbone's patch size).

        Made once per instance.
        """
        if self._data is not None:
            return self._data
        name = type(self).__name__
        p = self.protocol
        cfg = p.config()
        subsets = p.subsets()
        patch = cfg.model.backbone.get('patch_size', 16)
        num_classes = cfg.model.head.num_classes
        norm = cfg.model.data_preprocessor
        mean = torch.tensor(norm.get('mean', [0.])).view(1, -1, 1, 1)
        std = torch.tensor(norm.get('std', [1.])).view(1, -1, 1, 1)
        out = dict(classes=num_classes + 1, patch=patch, sources={})
        for split, dataset, idx, count, seed in (('train',
                                                  cfg.train_dataloader.dataset,
                                                  subsets['probe'],
                                                  self.train_mosaics, 0),
                                                 ('test', p.test_dataset(cfg),
                                                  subsets.get('test'),
                                                  self.test_mosaics, 1)):
            images, labels = raw_images(dataset, idx)
            if images.ndim != 3:
                raise ValueError(
                    f'{name}: grey images (N, H, W) expected, '
                    f'{dataset.get("type")} gives {images.shape[1:]}')
            try:
                mosaics, pixels, extra = self._make(images, labels, count,
                                                    seed, num_classes)
            except ValueError as e:
                raise ValueError(f'{name} {split}_mosaics={count}: {e}')
            side = mosaics.shape[-1]
            grid = (side // patch, side // patch)
            x = (torch.from_numpy(mosaics).float()[:, None] - mean) / std
            out[split] = (x, patch_labels(pixels, grid, num_classes + 1),
                          mosaics, pixels, *extra)
            out['sources'][split] = (dataset, idx)
        self._data = out
        return out

    def _fit(self, features, return_prediction: bool = False) -> dict:
        """The classifier fitted on ``features(data)``'s training patches,
        scored on its test patches (:func:`dense_probe_scores`)."""
        d = self.data()
        train_f, test_f = features(d)
        return dense_probe_scores(
            train_f,
            d['train'][1],
            test_f,
            d['test'][1],
            d['classes'],
            l2=self.l2,
            max_iter=self.max_iter,
            return_prediction=return_prediction)

    def _scores(self, name: str, settings: dict, features) -> dict:
        out_path = osp.join(self.protocol.work_dir, 'results',
                            f'{name}_dense.json')
        result = load_result(out_path, settings)
        if 'miou' in result:
            return result
        result.update(self._fit(features))
        save_result(out_path, settings, result)
        print(
            f'{name}: dense probe mIoU {result["miou"]:.2f} %, per-patch '
            f'accuracy {result["accuracy"]:.2f} %',
            flush=True)
        return result

    def backbone(
            self,
            checkpoint: Optional[str],
            pretrain_model: Optional[ConfigDict] = None) -> torch.nn.Module:
        """The frozen backbone of ``checkpoint`` giving all its tokens
        (the protocol's final-norm choice kept)."""
        cfg = self.protocol.config(pretrain_model if checkpoint else None)
        cfg = copy.deepcopy(cfg)
        if cfg.model.backbone.get('type') == 'VisionTransformer':
            cfg.model.backbone.out_type = 'raw'
        torch.manual_seed(0)
        return build_frozen_backbone_model(cfg, checkpoint).backbone

    def _features(self, name: str, checkpoint: Optional[str],
                  pretrain_model: Optional[ConfigDict]):

        def features(d):
            net = self.backbone(checkpoint, pretrain_model)
            return tuple(
                patch_tokens(
                    net,
                    d[split][0],
                    precision=self.protocol.precision,
                    desc=f'{name} {split} mosaic patch')
                for split in ('train', 'test'))

        return features

    def predict(self,
                checkpoint: Optional[str],
                pretrain_model: Optional[ConfigDict] = None,
                name: str = 'checkpoint') -> dict:
        """Fit the classifier again and return its scores with
        ``prediction``, the (M, h, w) labels of every test mosaic (for
        pictures; nothing is stored)."""
        return self._fit(
            self._features(name, checkpoint, pretrain_model),
            return_prediction=True)

    def evaluate(self,
                 name: str,
                 checkpoint: Optional[str],
                 pretrain_model: Optional[ConfigDict] = None) -> dict:
        """MIoU, per-patch accuracy and per-class IoU (%) of the frozen
        patch tokens of ``checkpoint`` (None: the random initialisation)."""
        settings = dict(
            self.settings(),
            final_norm=self.protocol.final_norm,
            precision=self.protocol.precision,
            checkpoint=file_identity(checkpoint),
            pretrain_model=None if pretrain_model is None else cache_digest(
                dict(pretrain_model)))
        return self._scores(name, settings,
                            self._features(name, checkpoint, pretrain_model))

    def raw_pixels(self) -> dict:
        """The floor: each patch's own normalised pixels as its feature."""
        return self._scores(
            'raw_pixels', self.settings(), lambda d: tuple(
                raw_patch_pixels(d[s][0], d['patch'])
                for s in ('train', 'test')))

    def describe(self) -> list:
        """Markdown bullets of the dense probe, from its settings."""
        return [
            f'* Dense probe: {self.train_mosaics} training mosaics (of the '
            f'linear probe\'s images) and {self.test_mosaics} test mosaics '
            'of 2 x 2 items at 16 x 16 px in a 32 x 32 canvas; every patch '
            'labelled with the class of the item under it, or background '
            'when most of its pixels are darker than '
            f'{self.threshold}/255; a linear classifier on the '
            'standardised frozen patch tokens of the last block '
            f'(L2 {self.l2}, L-BFGS); mIoU over the 11 labels and '
            'per-patch accuracy on the test mosaics.'
        ]
