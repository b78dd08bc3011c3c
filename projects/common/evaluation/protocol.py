import copy
import difflib
import json
import os
import os.path as osp
from typing import Dict, Optional, Sequence

import numpy as np
import torch
from mmengine.config import Config, ConfigDict

from mmsiameseim.evaluation.cached_linear_probe import (
    check_cached_probe_config, extract_probe_views, probe_view_pipelines,
    train_probe_on_features)
from mmsiameseim.evaluation.feature_cache import (cache_digest,
                                                  cached_features,
                                                  file_identity)
from mmsiameseim.evaluation.fewshot import (class_balanced_subset,
                                            logistic_regression_accuracy)
from mmsiameseim.evaluation.frozen_features import (
    build_frozen_backbone_model, extract_features)
from mmsiameseim.evaluation.knn import weighted_knn_accuracy
from mmsiameseim.evaluation.linear_probe import (VIT_FEATURES,
                                                 linear_probe_accuracy,
                                                 probe_config)
from mmsiameseim.precision import check_precision
from projects.common.config_values import config_key
from projects.common.evaluation.stored_results import (load_result,
                                                       refuse_other_settings,
                                                       save_result)


def raw_images(dataset_cfg: dict,
               indices: Optional[Sequence[int]] = None) -> tuple:
    """The stored images (N, H, W[, C]) and labels (N,) of a dataset
    config, without its pipeline; ``indices`` selects some."""
    from mmpretrain.registry import DATASETS
    ds = DATASETS.build(dict(dataset_cfg, pipeline=[]))
    indices = range(len(ds)) if indices is None else indices
    infos = [ds.get_data_info(int(i)) for i in indices]
    return (np.stack([i['img'] for i in infos]),
            np.array([int(i['gt_label']) for i in infos]))


#: how the linear probe trains: on features cached once per view, or
#: through mmengine's Runner (the frozen backbone again in every epoch)
LINEAR_ENGINES = ('cached', 'runner')
#: where the kNN bank comes from: ``knn.train_samples`` random training
#: images of its own, or the linear probe's training images (their unflipped
#: view: with the cached probe, encoded once for both)
KNN_BANKS = ('own', 'probe')


def stored_knn(knn: dict) -> dict:
    """The kNN settings as results store them: the default bank ('own')
    left out, as results stored before the bank existed have it; the
    shared bank ('probe') without ``train_samples``, which can only repeat
    the probe's count (the protocol refuses another), so that both
    spellings store one protocol."""
    knn = dict(knn)
    if knn.get('bank') == 'probe':
        knn.pop('train_samples', None)
    return {k: v for k, v in knn.items() if (k, v) != ('bank', 'own')}


class FrozenBackboneProtocol:
    """Frozen-backbone evaluation of pretrained checkpoints: weighted kNN,
    a linear probe of an mmpretrain config (trained on frozen features
    extracted once per view, both flips of its training images, or through
    mmengine's Runner: ``linear['engine']``), and few-shot logistic
    regression, all scored on the same test images.

    Every checkpoint is evaluated on the same sample subsets, drawn once
    (seed 0) and stored in ``{work_dir}/subsets.npz``; each result is
    written to ``{work_dir}/results/{name}.json`` as soon as it is known
    and reused by a later call, so an interrupted run continues. Both
    files keep the settings they were made with (the protocol's, and the
    checkpoint's path, size and modification time): a later call with
    other settings is refused, naming the file and each difference,
    instead of reusing them.

    Datasets are read from local files only (:func:`never_download`);
    options that ask for more samples than a dataset has are refused
    before any feature is extracted.

    Args:
        probe_config (str): Frozen-backbone classifier config (e.g.
            ``configs/benchmarks/mmpretrain/``
            ``vit-tiny-p4_linear-probe-10e_fashionmnist.py``): its train/test
            datasets and test pipeline serve every metric.
        work_dir (str): Where subsets, results and probe runs go.
        knn (dict): ``k``, ``temperature``, and the ``bank``: 'own'
            (default; ``train_samples`` random training images of its own)
            or 'probe' (the linear probe's training images, the view
            without the flip: with the cached probe and a test pipeline
            equal to that view's, their features are extracted once for
            both; ``train_samples``, when given, must be the probe's). The
            bank is one of the stored settings.
        linear (dict): ``train_samples`` and ``epochs`` of the probe, and
            its ``engine``: 'cached' (default; the probe config's neck,
            head, optimizer and schedule trained on frozen features
            extracted once per view, both flips of each training image:
            see :mod:`mmsiameseim.evaluation.cached_linear_probe`, which
            refuses, by key, probe settings it cannot reproduce) or
            'runner' (mmengine's Runner, the frozen backbone again in
            every epoch). The engine is one of the stored settings.
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
        feature (str): The frozen ViT feature every metric reads:
            'cls_token' (the last block's cls token), 'avg_featmap' (the
            mean of the patch tokens, layer-normalised: the authors'
            global-pool probe) or 'featmap' (every patch token, flattened:
            the token map, as raw pixels are the flattened image; kNN and
            few-shot only, :meth:`evaluate` with ``linear=False``). See
            :func:`set_vit_feature`.
        final_norm (bool): Pass the tokens through the backbone's final
            LayerNorm first (the pretrained one where the checkpoint has
            it, e.g. MAE's; else without learned scale).
        holdout (int, optional): Score on this many *training* images (a
            fixed random subset, seed 1) instead of the test set, drawing
            the kNN bank, probe and few-shot images from the other training
            images: for choosing settings without looking at the test
            images. Cannot be combined with ``test_samples``.

    Relative paths (``probe_config``, ``work_dir``, ``data_prefix``,
    ``cache_dir``) are taken from the current directory when the protocol
    is built.
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
                 cache_dir: Optional[str] = None,
                 feature: str = 'cls_token',
                 final_norm: bool = False,
                 holdout: Optional[int] = None) -> None:
        check_precision(precision, option='FrozenBackboneProtocol precision')
        if feature not in VIT_FEATURES:
            raise ValueError(f'FrozenBackboneProtocol: feature={feature!r}, '
                             f'choose one of {VIT_FEATURES}')
        if holdout is not None and test_samples is not None:
            raise ValueError(
                'FrozenBackboneProtocol: holdout scores on held-out '
                'training images, test_samples on test images: give one')
        if not osp.isfile(probe_config):
            raise FileNotFoundError(
                f'FrozenBackboneProtocol: probe_config {probe_config!r} not '
                f'found (relative paths are taken from {os.getcwd()})')
        self.probe_config = probe_config
        self.probe_path = osp.abspath(probe_config)
        self.work_dir = osp.abspath(work_dir)
        self.knn = dict(knn)
        self.knn_bank = self.knn.get('bank', 'own')
        self.linear = dict(linear)
        self.linear.setdefault('engine', 'cached')
        self.fewshot = dict(fewshot)
        self.test_samples = test_samples
        self.test_seed = test_seed
        self.data_prefix = None if data_prefix is None else \
            osp.abspath(data_prefix) + '/'
        self.precision = precision
        self.cache_dir = None if cache_dir is None else \
            osp.abspath(cache_dir)
        self.feature = feature
        self.final_norm = bool(final_norm)
        self.holdout = holdout
        # the pipeline's batches of each split, made by the first row and
        # read by every later row (the pipeline is not the model's)
        self._kept_batches: dict = {}
        self._check_counts()
        # checked as given, stored as results store it (see stored_knn)
        self.knn = stored_knn(self.knn)
        if self.linear['engine'] == 'cached':
            check_cached_probe_config(self.config())
        os.makedirs(osp.join(self.work_dir, 'results'), exist_ok=True)

    # the keys each metric's settings take (required, optional)
    SETTING_KEYS = dict(
        knn=(('k', 'temperature'), ('train_samples', 'bank')),
        linear=(('train_samples', 'epochs'), ('engine', )),
        fewshot=(('fraction', ), ('folds', )))

    def _check_keys(self) -> None:
        """Refuse misspelt, missing and non-numeric metric settings, naming
        the nearest valid keys."""
        problems = []
        for name, (required, optional) in self.SETTING_KEYS.items():
            given = getattr(self, name)
            valid = required + optional
            for key, value in given.items():
                if (name, key) == ('linear', 'engine'):
                    if value not in LINEAR_ENGINES:
                        problems.append(f'linear.engine={value!r}: choose '
                                        f'one of {LINEAR_ENGINES}')
                elif (name, key) == ('knn', 'bank'):
                    if value not in KNN_BANKS:
                        problems.append(f'knn.bank={value!r}: choose one '
                                        f'of {KNN_BANKS}')
                elif key not in valid:
                    near = difflib.get_close_matches(key, valid, 2, 0.6)
                    hint = (f"did you mean {' or '.join(map(repr, near))}? "
                            if near else '')
                    problems.append(f'{name}.{key}: no such setting; {hint}'
                                    f'({name} takes {", ".join(valid)})')
                elif not isinstance(value, (int, float)) or \
                        isinstance(value, bool):
                    problems.append(f'{name}.{key}={value!r}: a number was '
                                    'expected')
            problems += [
                f'{name}.{key}: missing' for key in required
                if key not in given
            ]
        bank_size = self.knn.get('train_samples')
        if self.knn_bank == 'own' and bank_size is None:
            problems.append("knn.train_samples: missing (the bank's size; "
                            "or knn.bank='probe', the probe's images)")
        elif self.knn_bank == 'probe' and bank_size is not None \
                and bank_size != self.linear.get('train_samples'):
            problems.append(
                f"knn.bank='probe' is the linear probe's "
                f'{self.linear.get("train_samples")} training images, but '
                f'knn.train_samples={bank_size}: drop knn.train_samples, '
                "or give knn.bank='own'")
        if problems:
            raise ValueError('FrozenBackboneProtocol: ' + '; '.join(problems))

    def _check_counts(self) -> None:
        """Refuse sample counts and options no evaluation can use."""
        self._check_keys()
        for option, value, least in (('knn.k', self.knn['k'],
                                      1), ('knn.train_samples',
                                           self.knn.get('train_samples'), 1),
                                     ('linear.train_samples',
                                      self.linear['train_samples'], 1),
                                     ('linear.epochs', self.linear['epochs'],
                                      1), ('fewshot.folds',
                                           self.fewshot.get('folds', 3), 2),
                                     ('test_samples', self.test_samples,
                                      1), ('holdout', self.holdout, 1)):
            if value is not None and value < least:
                raise ValueError(f'FrozenBackboneProtocol: {option}={value}'
                                 f', at least {least} was expected')
        if not 0 < self.fewshot['fraction'] <= 1:
            raise ValueError(
                'FrozenBackboneProtocol: fewshot.fraction='
                f'{self.fewshot["fraction"]}, a fraction in (0, 1] of the '
                'training labels was expected')

    @classmethod
    def from_cfg(cls, cfg: ConfigDict, **kwargs) -> 'FrozenBackboneProtocol':
        """Build from a config dict with the ``__init__`` arguments (e.g.
        ``evaluation`` of configs/demo/fashionmnist_demo.py); ``kwargs``
        take precedence."""
        return cls(**{**dict(cfg), **kwargs})

    def config(self, pretrain_model: Optional[ConfigDict] = None) -> Config:
        """The probe config, its backbone matched to ``pretrain_model``."""
        return probe_config(self.probe_path, pretrain_model, self.data_prefix,
                            self.feature, self.final_norm)

    def test_dataset(self, cfg: Config) -> dict:
        """The dataset config the scores are taken on: the probe config's
        test set, or with ``holdout`` its training set (test pipeline)."""
        if self.holdout is None:
            return cfg.test_dataloader.dataset
        return dict(
            cfg.train_dataloader.dataset,
            pipeline=cfg.test_dataloader.dataset.pipeline)

    def _new_settings(self) -> dict:
        """The settings added after the first results were stored, only
        where they differ from their defaults (earlier results stay
        valid)."""
        new = dict(
            feature=(self.feature, 'cls_token'),
            final_norm=(self.final_norm, False),
            holdout=(self.holdout, None),
            knn_bank=(self.knn_bank, 'own'))
        return {k: v for k, (v, default) in new.items() if v != default}

    def subset_settings(self) -> dict:
        """What the sample subsets depend on."""
        return dict(
            probe_config=self.probe_config,
            # its values, bases followed (projects.common.config_values)
            probe_config_key=config_key(self.probe_path),
            data_prefix=self.data_prefix,
            knn_train_samples=self.knn.get('train_samples'),
            linear_train_samples=self.linear['train_samples'],
            fewshot_fraction=self.fewshot['fraction'],
            test_samples=self.test_samples,
            test_seed=self.test_seed,
            **{
                k: v
                for k, v in self._new_settings().items()
                if k in ('holdout', 'knn_bank')
            })

    def settings(self) -> dict:
        """What every result depends on, besides the checkpoint."""
        return dict(
            self.subset_settings(),
            knn=self.knn,
            # results stored before the engine existed are the Runner's
            linear={
                k: v
                for k, v in self.linear.items()
                if (k, v) != ('engine', 'runner')
            },
            fewshot=self.fewshot,
            precision=self.precision,
            **self._new_settings())

    def subsets(self) -> Dict[str, np.ndarray]:
        """Training-image indices of kNN, the probe and few-shot, and the
        test images (``test``, absent when all are used).

        Raises:
            ValueError: A subset needs more images than its dataset has,
                or the stored subsets were drawn for other settings; the
                message names the option or the file.
        """
        path = osp.join(self.work_dir, 'subsets.npz')
        settings = self.subset_settings()
        if osp.exists(path):
            try:
                with np.load(path) as f:
                    stored = dict(f)
            except Exception as e:  # noqa: BLE001  (cut, or another file)
                raise ValueError(
                    f'{path}: not the subsets file of this protocol ({e}); '
                    'delete it to draw the subsets again') from e
            saved = stored.pop('settings', None)
            refuse_other_settings(
                path, None if saved is None else json.loads(str(saved)),
                settings)
            return stored
        from mmpretrain.registry import DATASETS
        cfg = self.config()
        train = DATASETS.build(dict(cfg.train_dataloader.dataset, pipeline=[]))
        labels = np.asarray(train.get_gt_labels())
        test_size = len(
            DATASETS.build(dict(cfg.test_dataloader.dataset, pipeline=[])))
        where = f'{cfg.train_dataloader.dataset.type} in ' \
            f'{cfg.train_dataloader.dataset.get("data_prefix")}'
        # the images the bank, probe and few-shot sets are drawn from
        pool = np.arange(len(labels))
        if self.holdout is not None:
            if self.holdout >= len(labels):
                raise ValueError(
                    f'FrozenBackboneProtocol: holdout={self.holdout}, but '
                    f'the training set ({where}) has {len(labels)} images')
            held = np.sort(
                np.random.default_rng(1).choice(
                    len(labels), self.holdout, replace=False))
            pool = np.setdiff1d(pool, held)
        for option, count, size in (('knn.train_samples',
                                     self.knn.get('train_samples') or 0,
                                     len(pool)), ('linear.train_samples',
                                                  self.linear['train_samples'],
                                                  len(pool)),
                                    ('test_samples', self.test_samples
                                     or 0, test_size)):
            if count > size:
                held = ' not held out' * (
                    self.holdout is not None and option != 'test_samples')
                raise ValueError(
                    f'FrozenBackboneProtocol: {option}={count}, but the '
                    f'{"test" if option == "test_samples" else "training"} '
                    f'set ({where}) has {size} images{held}')
        rng = np.random.default_rng(0)
        out = {}
        if self.knn_bank == 'own':
            out['knn'] = np.sort(pool[rng.choice(
                len(pool), self.knn['train_samples'], replace=False)])
        out['probe'] = np.sort(pool[rng.choice(
            len(pool), self.linear['train_samples'], replace=False)])
        if self.knn_bank == 'probe':
            out['knn'] = out['probe']
        out['few'] = pool[class_balanced_subset(labels[pool],
                                                self.fewshot['fraction'])]
        per_class = np.bincount(labels[out['few']])
        fewest = int(per_class[per_class > 0].min())
        if fewest < 2:
            raise ValueError(
                f'FrozenBackboneProtocol: fewshot.fraction='
                f'{self.fewshot["fraction"]} gives {fewest} labelled '
                'image of some class; cross-validating the L2 strength '
                'needs at least 2 of each: raise the fraction')
        if self.holdout is not None:
            out['test'] = held
        elif self.test_samples is not None:
            if self.test_seed is None:
                out['test'] = np.arange(self.test_samples)
            else:
                out['test'] = np.sort(
                    np.random.default_rng(self.test_seed).choice(
                        test_size, self.test_samples, replace=False))
        np.savez(path + '.tmp.npz', settings=json.dumps(settings), **out)
        os.replace(path + '.tmp.npz', path)
        return out

    def features(
        self,
        model: torch.nn.Module,
        cfg: Config,
        name: str,
        key: Optional[dict] = None,
        only: Sequence[str] = ('knn', 'few', 'test')
    ) -> Dict[str, tuple]:
        """(features, labels) of the kNN bank, the few-shot images and the
        test images (or the splits named in ``only``); cached under ``key``
        when given."""
        subsets = self.subsets()
        pipeline = cfg.test_dataloader.dataset.pipeline
        splits = dict(
            knn=(cfg.train_dataloader.dataset, subsets['knn']),
            few=(cfg.train_dataloader.dataset, subsets['few']),
            test=(self.test_dataset(cfg), subsets.get('test')))
        out = {}
        for split, (dataset, idx) in splits.items():
            if split not in only:
                continue

            def extract(dataset=dataset, idx=idx, split=split):
                return extract_features(
                    model,
                    dataset,
                    pipeline,
                    idx,
                    desc=f'{name} {split} features',
                    precision=self.precision,
                    flatten_maps=self.feature == 'featmap',
                    kept_batches=self._kept_batches)

            split_key = None if key is None else dict(
                key,
                split=split,
                indices=None if idx is None else idx.tolist())
            out[split] = cached_features(self.cache_dir if key else None,
                                         split, split_key, extract)
        return out

    def shares_bank(self, cfg: Config) -> bool:
        """Whether the kNN bank is read off the cached probe's unflipped
        view: the bank is the probe's images (``knn.bank='probe'``), the
        probe trains on cached features, and the view's pipeline is the
        test pipeline the bank is otherwise encoded with."""
        if self.knn_bank != 'probe' or self.linear['engine'] != 'cached':
            return False
        unflipped = probe_view_pipelines(cfg)[0][0]
        return [dict(t) for t in unflipped
                ] == [dict(t) for t in cfg.test_dataloader.dataset.pipeline]

    def _probe_views(self, model, cfg, cache_key, name):
        """Both flips' features of the probe's training images (see
        :func:`extract_probe_views`) and the flip probability."""
        return extract_probe_views(model, cfg,
                                   self.subsets()['probe'], self.precision,
                                   self.cache_dir, cache_key, name,
                                   self._kept_batches)

    def evaluate(self,
                 name: str,
                 checkpoint: Optional[str],
                 pretrain_model: Optional[ConfigDict] = None,
                 cache_key: Optional[dict] = None,
                 linear: bool = True) -> Dict[str, float]:
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
            linear (bool): Also train the linear probe;
                False gives kNN and few-shot only.

        Returns:
            dict: ``knn``, ``linear`` (when asked), ``fewshot`` and the
            chosen ``fewshot_l2``.

        Raises:
            ValueError: ``linear`` with the ``featmap`` feature (the probe
                configs' necks read one pooled vector).
        """
        if linear and self.feature == 'featmap':
            raise ValueError(
                f'{name}: the linear probe reads a pooled feature (cls_token '
                'or avg_featmap), not feature=\'featmap\': evaluate with '
                'linear=False')
        out_path = osp.join(self.work_dir, 'results', f'{name}.json')
        settings = dict(
            self.settings(),
            checkpoint=file_identity(checkpoint),
            pretrain_model=None if pretrain_model is None else cache_digest(
                dict(pretrain_model)))
        result = load_result(out_path, settings)
        cfg = self.config(pretrain_model if checkpoint else None)
        model, f, views = None, {}, None
        if 'knn' not in result or 'fewshot' not in result:
            torch.manual_seed(0)
            model = build_frozen_backbone_model(cfg, checkpoint)
            if linear and 'linear' not in result and self.shares_bank(cfg):
                # the probe's views first: the unflipped one is the bank
                views, flip = self._probe_views(model, cfg, cache_key, name)
                f = dict(
                    self.features(model, cfg, name, cache_key,
                                  ('few', 'test')),
                    knn=views[0])
            else:
                f = self.features(model, cfg, name, cache_key)
            result['knn'] = weighted_knn_accuracy(
                *f['knn'],
                *f['test'],
                k=self.knn['k'],
                temperature=self.knn['temperature'])['top1']
            few = logistic_regression_accuracy(
                *f['few'], *f['test'], folds=self.fewshot.get('folds', 3))
            result['fewshot'] = few['top1']
            result['fewshot_l2'] = few['l2']
            save_result(out_path, settings, result)
            print(
                f'{name}: kNN {result["knn"]:.2f} %, few-shot '
                f'{result["fewshot"]:.2f} %',
                flush=True)
        if linear and 'linear' not in result:
            subsets = self.subsets()
            print(
                f'{name}: linear probe ({self.linear["epochs"]} epochs on '
                f'{len(subsets["probe"])} training images)',
                flush=True)
            if self.linear['engine'] == 'cached':
                if model is None:
                    torch.manual_seed(0)
                    model = build_frozen_backbone_model(cfg, checkpoint)
                if 'test' not in f:
                    f = self.features(model, cfg, name, cache_key, ['test'])
                if views is None:
                    views, flip = self._probe_views(model, cfg, cache_key,
                                                    name)
                result['linear'] = train_probe_on_features(
                    cfg, [v[0] for v in views],
                    views[0][1],
                    *f['test'],
                    flip,
                    epochs=self.linear['epochs'],
                    precision=self.precision)
            else:
                probe_cfg = copy.deepcopy(cfg)
                probe_cfg.test_dataloader.dataset = self.test_dataset(cfg)
                result['linear'] = linear_probe_accuracy(
                    probe_cfg,
                    checkpoint,
                    osp.join(self.work_dir, name, 'linear_probe'),
                    subsets['probe'],
                    subsets.get('test'),
                    epochs=self.linear['epochs'],
                    precision=self.precision)
            save_result(out_path, settings, result)
            print(f'{name}: linear probe {result["linear"]:.2f} %', flush=True)
        return result

    def feature_text(self) -> str:
        """The frozen feature, in words."""
        text = dict(
            cls_token='the cls token of the last block',
            avg_featmap='the mean of the last block\'s patch tokens, '
            'layer-normalised',
            featmap='the last block\'s patch tokens, flattened (the token '
            'map)')[self.feature]
        return text + (', after the final LayerNorm'
                       if self.final_norm else ' (no final norm)')

    def describe(self) -> list:
        """Markdown bullets of the protocol, from its settings."""
        test = ('the first' if self.test_seed is None else 'a fixed random '
                'subset of') + f' {self.test_samples} test images' \
            if self.test_samples is not None else 'all the test images'
        if self.holdout is not None:
            test = (f'{self.holdout} held-out training images (a fixed '
                    'random subset; the other metrics\' images are drawn '
                    'from the rest)')
        probe = osp.relpath(self.probe_config) \
            if not osp.isabs(self.probe_config) else self.probe_config
        bank = (f'{self.knn["train_samples"]} random training images'
                if self.knn_bank == 'own' else
                f'the linear probe\'s {self.linear["train_samples"]} '
                'training images (unflipped)')
        return [
            f'* kNN: weighted cosine, k={self.knn["k"]}, '
            f'T={self.knn["temperature"]}, on {bank}.',
            f'* Linear probe: `{probe}` (frozen backbone, BatchNorm without '
            f'affine, linear head), {self.linear["epochs"]} epoch(s) on '
            f'{self.linear["train_samples"]} training images, ' +
            ('trained on their frozen features, both flips cached once'
             if self.linear['engine'] == 'cached' else
             'trained through mmengine\'s Runner') + '.',
            f'* Few-shot: {self.fewshot["fraction"]:.1%} of the training '
            'labels (class-balanced), L2-regularised logistic regression on '
            'l2-normalised frozen features, strength chosen by '
            f'{self.fewshot.get("folds", 3)}-fold CV on the labelled images.',
            f'* Every metric is top-1 on {test}, in '
            f'{self.precision}.',
            f'* Feature: {self.feature_text()}.',
        ]
