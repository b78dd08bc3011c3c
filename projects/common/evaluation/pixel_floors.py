"""Raw pixels through the frozen-backbone protocol, as a feature would go:

the floors that a pretrained feature has to pass to be credited.
"""
import copy
import math
import os.path as osp
from typing import Dict, Optional

import numpy as np
import torch
from mmengine.config import Config

from mmsiameseim.evaluation import (probe_view_pipelines,
                                    train_probe_on_features)
from mmsiameseim.evaluation.fewshot import logistic_regression_accuracy
from mmsiameseim.evaluation.knn import weighted_knn_accuracy
from projects.common.evaluation.protocol import (FrozenBackboneProtocol,
                                                 raw_images)
from projects.common.evaluation.stored_results import load_result, save_result


def vector_probe_config(cfg: Config, dim: int) -> Config:
    """The probe config with its neck and head as wide as ``dim``-value
    vectors: the same BatchNorm neck, linear head, optimizer and schedule
    trained on vectors that are not a backbone's."""
    cfg = copy.deepcopy(cfg)
    if 'input_features' in cfg.model.neck:
        cfg.model.neck.input_features = dim
    cfg.model.head.in_channels = dim
    return cfg


class PixelFloors:
    """Raw pixels and a fixed random projection of them, scored by the
    protocol's kNN, linear probe and few-shot on the protocol's own images.

    Pixels are treated exactly as features are: no centring, no scaling
    (kNN compares by cosine, few-shot l2-normalises, the linear probe
    standardises with BatchNorm), so the floor and the features differ in
    the vector only. The projection (a Gaussian matrix, ``seed``, scaled
    by 1/sqrt(pixels)) maps each image to ``projection_dim`` values: a floor
    matched in dimension to a feature as wide (e.g. the token map).

    Args:
        protocol (FrozenBackboneProtocol): Whose images and settings.
        projection_dim (int, optional): Width of the projection; None
            scores the raw pixels only (no projection floor).
        projection_seed (int): Seed of the projection matrix.
    """

    def __init__(self,
                 protocol: FrozenBackboneProtocol,
                 projection_dim: Optional[int] = None,
                 projection_seed: int = 0) -> None:
        if projection_dim is not None and projection_dim < 1:
            raise ValueError(f'PixelFloors: projection_dim={projection_dim},'
                             ' at least 1 was expected (None: no projection)')
        self.protocol = protocol
        self.projection_dim = None if projection_dim is None else \
            int(projection_dim)
        self.projection_seed = int(projection_seed)

    def settings(self) -> dict:
        return dict(
            self.protocol.subset_settings(),
            knn=self.protocol.knn,
            linear=self.protocol.linear,
            fewshot=self.protocol.fewshot,
            projection_dim=self.projection_dim,
            projection_seed=self.projection_seed)

    def _images(self) -> Dict[str, tuple]:
        p = self.protocol
        cfg = p.config()
        subsets = p.subsets()
        train = cfg.train_dataloader.dataset
        out = {}
        for split, dataset, idx in (('knn', train, subsets['knn']),
                                    ('probe', train, subsets['probe']),
                                    ('few', train, subsets['few']),
                                    ('test', p.test_dataset(cfg),
                                     subsets.get('test'))):
            x, y = raw_images(dataset, idx)
            out[split] = (torch.from_numpy(x).float(), torch.from_numpy(y))
        return out

    def _score(self, images: Dict[str, tuple], vectors) -> dict:
        p = self.protocol
        cfg = p.config()
        _, flip_prob = probe_view_pipelines(cfg)
        v = {s: (vectors(x), y) for s, (x, y) in images.items()}
        dim = int(v['test'][0].shape[1])
        # (N, H, W) or (N, H, W, C): flip the width
        width = -1 if images['test'][0].ndim == 3 else -2
        flipped = vectors(images['probe'][0].flip(width))
        few = logistic_regression_accuracy(
            *v['few'], *v['test'], folds=p.fewshot.get('folds', 3))
        return dict(
            knn=weighted_knn_accuracy(
                *v['knn'],
                *v['test'],
                k=p.knn['k'],
                temperature=p.knn['temperature'])['top1'],
            linear=train_probe_on_features(
                vector_probe_config(cfg, dim), [v['probe'][0], flipped],
                v['probe'][1],
                *v['test'],
                flip_prob=flip_prob,
                epochs=p.linear['epochs'],
                precision=p.precision),
            fewshot=few['top1'],
            fewshot_l2=few['l2'],
            dim=dim)

    def evaluate(self) -> Dict[str, dict]:
        """``raw`` and ``projection`` (without ``projection_dim``: ``raw``
        only): each ``knn``, ``linear``, ``fewshot`` (top-1 %) and ``dim``;
        stored in the protocol's work dir and reused under the same
        settings."""
        out_path = osp.join(self.protocol.work_dir, 'results',
                            'pixel_floors.json')
        settings = self.settings()
        result = load_result(out_path, settings)
        if 'raw' in result and ('projection' in result
                                or self.projection_dim is None):
            return result
        images = self._images()
        result['raw'] = self._score(images, lambda x: x.reshape(len(x), -1))
        print(f'raw pixels: {_line(result["raw"])}', flush=True)
        if self.projection_dim is None:
            save_result(out_path, settings, result)
            return result
        pixels = int(np.prod(images['test'][0].shape[1:]))
        matrix = torch.randn(
            pixels,
            self.projection_dim,
            generator=torch.Generator().manual_seed(
                self.projection_seed)) / math.sqrt(pixels)
        result['projection'] = dict(
            self._score(images, lambda x: x.reshape(len(x), -1) @ matrix),
            seed=self.projection_seed)
        print(
            f'random projection of the pixels to {self.projection_dim}: '
            f'{_line(result["projection"])}',
            flush=True)
        save_result(out_path, settings, result)
        return result


def _line(r: dict) -> str:
    return (f'kNN {r["knn"]:.2f} %, linear probe {r["linear"]:.2f} %, '
            f'few-shot {r["fewshot"]:.2f} % ({r["dim"]} values)')


def pixel_floors_from_cfg(protocol: FrozenBackboneProtocol,
                          cfg: Optional[dict]) -> PixelFloors:
    """A :class:`PixelFloors` from a study's ``pixel_floors`` dict."""
    return PixelFloors(protocol, **dict(cfg or {}))
