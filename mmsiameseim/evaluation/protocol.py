import os
import os.path as osp
from typing import Dict, Optional

import numpy as np
import torch
from mmengine.config import Config, ConfigDict

from .feature_cache import cached_features
from .fewshot import class_balanced_subset, logistic_regression_accuracy
from .frozen_features import build_frozen_backbone_model, extract_features
from .knn import weighted_knn_accuracy
from .linear_probe import linear_probe_accuracy, probe_config
from .precision import check_precision
from mmsiameseim.atomic_io import atomic_json, load_json


class FrozenBackboneProtocol:
    """Frozen-backbone evaluation of pretrained checkpoints: weighted kNN,
    a linear probe trained through an mmpretrain config, and few-shot
    logistic regression, all scored on the same test images.

    Every checkpoint is evaluated on the same sample subsets, drawn once
    (seed 0) and stored in ``{work_dir}/subsets.npz``; each result is
    written to ``{work_dir}/results/{name}.json`` as soon as it is known
    and reused by a later call, so an interrupted run continues.

    Args:
        probe_config (str): Frozen-backbone classifier config (e.g.
            configs/benchmarks/mmpretrain/vit-tiny-p4_linear-probe-10e_
            fashionmnist.py): its train/test datasets and test pipeline serve
            every metric.
        work_dir (str): Where subsets, results and probe runs go.
        knn (dict): ``k``, ``temperature`` and ``train_samples`` (random
            training images forming the bank).
        linear (dict): ``train_samples`` and ``epochs`` of the probe.
        fewshot (dict): ``fraction`` of the training labels (class-balanced)
            and cross-validation ``folds``.
        test_samples (int, optional): Score on this many test images (the
            first ones; a fixed random subset when ``test_seed`` is given);
            None: all of them.
        test_seed (int, optional): See ``test_samples``.
        data_prefix (str, optional): Replaces the datasets' ``data_prefix``.
        precision (str): Feature extraction and probe precision: 'float32'
            (no autocast) or 'bfloat16' / 'float16'.
        cache_dir (str, optional): Feature cache (see
            :func:`cached_features`); None extracts every time.
    """

    def __init__(self,
                 probe_config: str,
                 work_dir: str,
                 knn: dict,
                 linear: dict,
                 fewshot: dict,
                 test_samples: Optional[int] = None,
                 test_seed: Optional[int] = None,
                 data_prefix: Optional[str] = None,
                 precision: str = 'float32',
                 cache_dir: Optional[str] = None) -> None:
        self.probe_config = probe_config
        self.work_dir = osp.abspath(work_dir)
        self.knn = dict(knn)
        self.linear = dict(linear)
        self.fewshot = dict(fewshot)
        self.test_samples = test_samples
        self.test_seed = test_seed
        self.data_prefix = data_prefix
        check_precision(precision, option='FrozenBackboneProtocol precision')
        self.precision = precision
        self.cache_dir = cache_dir
        os.makedirs(osp.join(self.work_dir, 'results'), exist_ok=True)

    @classmethod
    def from_cfg(cls, cfg: ConfigDict, **kwargs) -> 'FrozenBackboneProtocol':
        """Build from a config dict with the ``__init__`` arguments (e.g.
        ``evaluation`` of configs/demo/fashionmnist_demo.py); ``kwargs``
        take precedence."""
        return cls(**{**dict(cfg), **kwargs})

    def config(self, pretrain_model: Optional[ConfigDict] = None) -> Config:
        """The probe config, its backbone matched to ``pretrain_model``."""
        return probe_config(self.probe_config, pretrain_model,
                            self.data_prefix)

    def subsets(self) -> Dict[str, np.ndarray]:
        """Training-image indices of kNN, the probe and few-shot, and the
        test images (``test``, absent when all are used)."""
        path = osp.join(self.work_dir, 'subsets.npz')
        if osp.exists(path):
            return dict(np.load(path))
        from mmpretrain.registry import DATASETS
        cfg = self.config()
        train = DATASETS.build(
            dict(cfg.train_dataloader.dataset, pipeline=[]))
        labels = train.get_gt_labels()
        rng = np.random.default_rng(0)
        out = dict(
            knn=np.sort(rng.choice(len(labels), self.knn['train_samples'],
                                   replace=False)),
            probe=np.sort(rng.choice(len(labels),
                                     self.linear['train_samples'],
                                     replace=False)),
            few=class_balanced_subset(labels, self.fewshot['fraction']))
        if self.test_samples is not None:
            if self.test_seed is None:
                out['test'] = np.arange(self.test_samples)
            else:
                test = DATASETS.build(
                    dict(cfg.test_dataloader.dataset, pipeline=[]))
                out['test'] = np.sort(np.random.default_rng(
                    self.test_seed).choice(len(test), self.test_samples,
                                           replace=False))
        np.savez(path + '.tmp.npz', **out)
        os.replace(path + '.tmp.npz', path)
        return out

    def features(self, model: torch.nn.Module, cfg: Config, name: str,
                 key: Optional[dict] = None) -> Dict[str, tuple]:
        """(features, labels) of the kNN bank, the few-shot images and the
        test images; cached under ``key`` when given."""
        subsets = self.subsets()
        pipeline = cfg.test_dataloader.dataset.pipeline
        splits = dict(knn=(cfg.train_dataloader.dataset, subsets['knn']),
                      few=(cfg.train_dataloader.dataset, subsets['few']),
                      test=(cfg.test_dataloader.dataset, subsets.get('test')))
        out = {}
        for split, (dataset, idx) in splits.items():

            def extract(dataset=dataset, idx=idx, split=split):
                return extract_features(model, dataset, pipeline, idx,
                                        desc=f'{name} {split} features',
                                        precision=self.precision)

            split_key = None if key is None else dict(
                key, split=split, indices=None if idx is None else
                idx.tolist())
            out[split] = cached_features(
                self.cache_dir if key else None, split, split_key, extract)
        return out

    def evaluate(self,
                 name: str,
                 checkpoint: Optional[str],
                 pretrain_model: Optional[ConfigDict] = None,
                 cache_key: Optional[dict] = None) -> Dict[str, float]:
        """kNN top-1, linear-probe top-1 and few-shot top-1 (%) of the
        backbone in ``checkpoint``.

        Args:
            name (str): Result name (file ``results/{name}.json``).
            checkpoint (str, optional): Weights with the backbone under
                ``backbone.``; None: the probe backbone's random init.
            pretrain_model (ConfigDict, optional): The pretraining model
                config whose backbone the checkpoint holds.
            cache_key (dict, optional): Identity of the features for the
                feature cache.

        Returns:
            dict: ``knn``, ``linear``, ``fewshot`` and the chosen
            ``fewshot_l2``.
        """
        out_path = osp.join(self.work_dir, 'results', f'{name}.json')
        result = load_json(out_path) or {}
        cfg = self.config(pretrain_model if checkpoint else None)
        if 'knn' not in result or 'fewshot' not in result:
            torch.manual_seed(0)
            model = build_frozen_backbone_model(cfg, checkpoint)
            f = self.features(model, cfg, name, cache_key)
            result['knn'] = weighted_knn_accuracy(
                *f['knn'], *f['test'], k=self.knn['k'],
                temperature=self.knn['temperature'])['top1']
            few = logistic_regression_accuracy(
                *f['few'], *f['test'], folds=self.fewshot.get('folds', 3))
            result['fewshot'] = few['top1']
            result['fewshot_l2'] = few['l2']
            atomic_json(out_path, result)
            print(f'{name}: kNN {result["knn"]:.2f} %, few-shot '
                  f'{result["fewshot"]:.2f} %', flush=True)
        if 'linear' not in result:
            subsets = self.subsets()
            print(f'{name}: linear probe ({self.linear["epochs"]} epochs on '
                  f'{len(subsets["probe"])} training images)', flush=True)
            result['linear'] = linear_probe_accuracy(
                cfg, checkpoint, osp.join(self.work_dir, name,
                                          'linear_probe'),
                subsets['probe'], subsets.get('test'),
                epochs=self.linear['epochs'], precision=self.precision)
            atomic_json(out_path, result)
            print(f'{name}: linear probe {result["linear"]:.2f} %',
                  flush=True)
        return result

    def pixel_knn(self) -> Dict[str, float]:
        """kNN top-1 (%) on mean-centred raw pixels, the same images and
        settings as :meth:`evaluate`."""
        out_path = osp.join(self.work_dir, 'results', 'raw_pixels.json')
        result = load_json(out_path)
        if result:
            return result
        from mmpretrain.registry import DATASETS
        cfg = self.config()
        subsets = self.subsets()

        def pixels(dataset_cfg, idx):
            ds = DATASETS.build(dict(dataset_cfg, pipeline=[]))
            idx = range(len(ds)) if idx is None else idx
            infos = [ds.get_data_info(int(i)) for i in idx]
            x = np.stack([i['img'] for i in infos])
            y = np.array([int(i['gt_label']) for i in infos])
            return (torch.from_numpy(x.reshape(len(x), -1)).float(),
                    torch.from_numpy(y))

        tr_x, tr_y = pixels(cfg.train_dataloader.dataset, subsets['knn'])
        te_x, te_y = pixels(cfg.test_dataloader.dataset, subsets.get('test'))
        mean = tr_x.mean(0)
        result = dict(knn=weighted_knn_accuracy(
            tr_x - mean, tr_y, te_x - mean, te_y, k=self.knn['k'],
            temperature=self.knn['temperature'])['top1'])
        atomic_json(out_path, result)
        print(f'raw pixels: kNN {result["knn"]:.2f} %', flush=True)
        return result

    def describe(self) -> list:
        """Markdown bullets of the protocol, from its settings."""
        test = ('the first' if self.test_seed is None else 'a fixed random '
                'subset of') + f' {self.test_samples} test images' \
            if self.test_samples is not None else 'all the test images'
        probe = osp.relpath(self.probe_config) \
            if not osp.isabs(self.probe_config) else self.probe_config
        return [
            f'* kNN: weighted cosine, k={self.knn["k"]}, '
            f'T={self.knn["temperature"]}, on '
            f'{self.knn["train_samples"]} random training images.',
            f'* Linear probe: `{probe}` (frozen backbone, BatchNorm without '
            f'affine, linear head), {self.linear["epochs"]} epoch(s) on '
            f'{self.linear["train_samples"]} training images.',
            f'* Few-shot: {self.fewshot["fraction"]:.1%} of the training '
            'labels (class-balanced), L2-regularised logistic regression on '
            'l2-normalised frozen features, strength chosen by '
            f'{self.fewshot.get("folds", 3)}-fold CV on the labelled images.',
            f'* Every metric is top-1 on {test}, in '
            f'{self.precision}.',
        ]
