"""Raw pixels through the frozen-backbone protocol, as a feature would go:

the floors that a pretrained feature has to pass to be credited.
"""
import math
import os.path as osp
from typing import Dict, Optional

import numpy as np
import torch

from mmsiameseim.evaluation.fewshot import logistic_regression_accuracy
from mmsiameseim.evaluation.knn import weighted_knn_accuracy
from .protocol import FrozenBackboneProtocol, raw_images
from .stored_results import load_result, save_result


def vector_linear_probe(train_x: torch.Tensor,
                        train_y: torch.Tensor,
                        test_x: torch.Tensor,
                        test_y: torch.Tensor,
                        epochs: int,
                        batch_size: int = 256,
                        lr: float = 0.5,
                        train_x_flipped: Optional[torch.Tensor] = None,
                        seed: int = 0) -> float:
    """Top-1 (%) of the linear probe of the probe config on fixed vectors:

    BatchNorm without affine then a linear layer, SGD (momentum 0.9, no
    weight decay) with a cosine schedule over ``epochs``, batch
    ``batch_size``. ``train_x_flipped`` (the vectors of the horizontally
    flipped training images) replaces each training vector with
    probability 0.5 at each step (the probe config's RandomFlip).
    """
    gen = torch.Generator().manual_seed(seed)
    torch.manual_seed(seed)
    classes = int(max(train_y.max(), test_y.max())) + 1
    model = torch.nn.Sequential(
        torch.nn.BatchNorm1d(train_x.shape[1], affine=False),
        torch.nn.Linear(train_x.shape[1], classes))
    torch.nn.init.trunc_normal_(model[1].weight, std=0.01)
    torch.nn.init.zeros_(model[1].bias)
    opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9)
    steps = epochs * math.ceil(len(train_x) / batch_size)
    sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, steps)
    model.train()
    for _ in range(epochs):
        order = torch.randperm(len(train_x), generator=gen)
        for start in range(0, len(order), batch_size):
            idx = order[start:start + batch_size]
            x = train_x[idx]
            if train_x_flipped is not None:
                flipped = torch.rand(len(idx), generator=gen) < 0.5
                x = torch.where(flipped[:, None], train_x_flipped[idx], x)
            loss = torch.nn.functional.cross_entropy(model(x), train_y[idx])
            opt.zero_grad()
            loss.backward()
            opt.step()
            sched.step()
    model.eval()
    with torch.no_grad():
        pred = torch.cat([
            model(test_x[i:i + 1024]).argmax(1)
            for i in range(0, len(test_x), 1024)
        ])
    return float((pred == test_y).float().mean() * 100)


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
        projection_dim (int): Width of the projection.
        projection_seed (int): Seed of the projection matrix.
    """

    def __init__(self,
                 protocol: FrozenBackboneProtocol,
                 projection_dim: int,
                 projection_seed: int = 0) -> None:
        if projection_dim < 1:
            raise ValueError(f'PixelFloors: projection_dim={projection_dim},'
                             ' at least 1 was expected')
        self.protocol = protocol
        self.projection_dim = int(projection_dim)
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
        v = {s: (vectors(x), y) for s, (x, y) in images.items()}
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
            linear=vector_linear_probe(
                *v['probe'],
                *v['test'],
                epochs=p.linear['epochs'],
                train_x_flipped=flipped),
            fewshot=few['top1'],
            fewshot_l2=few['l2'],
            dim=int(v['test'][0].shape[1]))

    def evaluate(self) -> Dict[str, dict]:
        """``raw`` and ``projection``: each ``knn``, ``linear``, ``fewshot``
        (top-1 %) and ``dim``; stored in the protocol's work dir and reused
        under the same settings."""
        out_path = osp.join(self.protocol.work_dir, 'results',
                            'pixel_floors.json')
        settings = self.settings()
        result = load_result(out_path, settings)
        if 'raw' in result and 'projection' in result:
            return result
        images = self._images()
        pixels = int(np.prod(images['test'][0].shape[1:]))
        matrix = torch.randn(
            pixels,
            self.projection_dim,
            generator=torch.Generator().manual_seed(
                self.projection_seed)) / math.sqrt(pixels)
        result['raw'] = self._score(images, lambda x: x.reshape(len(x), -1))
        print(f'raw pixels: {_line(result["raw"])}', flush=True)
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
