"""The linear probe of a frozen-backbone config, trained on features
extracted once per view instead of by mmengine's Runner.

A frozen backbone gives every image the same feature in every epoch, so
the probe's only randomness besides its own (initialisation, order) is the
training pipeline's flip: both flips of each training image are encoded
once, and each epoch draws one of the two per image with the flip's
probability, which keeps the distribution of training inputs the Runner
sees. The neck, head, optimizer wrapper and parameter schedulers are built
from the config by mmengine's and mmpretrain's registries and stepped as
mmengine's ``EpochBasedTrainLoop`` and ``ParamSchedulerHook`` step them.
A setting this cannot reproduce is refused, naming its key.
"""
import copy
import math
from typing import List, Optional, Sequence, Tuple

import torch
from mmengine.config import Config
from mmengine.registry import init_default_scope

from ..precision import autocast, set_training_precision
from .feature_cache import cached_features, file_identity
from .frozen_features import build_frozen_backbone_model, extract_features
from .linear_probe import set_probe_epochs

#: training-pipeline transforms that give an image the same result on
#: every pass (a RandomFlip is the one random transform handled)
DETERMINISTIC_TRANSFORMS = ('LoadImageFromFile', 'Pad', 'Resize', 'ResizeEdge',
                            'CenterCrop', 'PackInputs')
#: necks that read the cached (N, D) feature as the Runner's backbone
#: output; GlobalAveragePooling is the feature extraction's own average
NECKS = ('ClsBatchNormNeck', 'GlobalAveragePooling')

Views = List[Tuple[torch.Tensor, torch.Tensor]]


def _type_name(transform: dict) -> str:
    kind = transform.get('type')
    return kind if isinstance(kind, str) else getattr(kind, '__name__',
                                                      str(kind))


def probe_view_pipelines(cfg: Config) -> Tuple[List[list], float]:
    """The training pipeline's fixed views and the flip probability.

    Returns:
        tuple: ``[pipeline]`` without a ``RandomFlip`` (probability 0), or
        ``[unflipped, flipped]`` (the flip removed / with ``prob=1.0``) and
        the flip's ``prob``.

    Raises:
        ValueError: A transform other than one ``RandomFlip`` (one
            direction, a float probability) and
            :data:`DETERMINISTIC_TRANSFORMS`, named by its key.
    """
    plain, flipped, prob = [], [], None
    for i, transform in enumerate(cfg.train_dataloader.dataset.pipeline):
        key = f'train_dataloader.dataset.pipeline[{i}]'
        name = _type_name(transform)
        if name == 'RandomFlip':
            p, direction = transform.get('prob'), transform.get(
                'direction', 'horizontal')
            if prob is not None or not isinstance(p, (int, float)) \
                    or not isinstance(direction, str):
                raise ValueError(
                    f'{key}: RandomFlip(prob={p!r}, direction='
                    f'{direction!r}): the cached linear probe caches the '
                    'two views of one flip with one float probability; '
                    "train through the Runner (linear engine='runner')")
            prob = float(p)
            flipped.append(dict(transform, prob=1.0))
            continue
        if name not in DETERMINISTIC_TRANSFORMS:
            raise ValueError(
                f'{key}.type={name!r}: a random or unknown training '
                'transform gives other features in every epoch, which a '
                'feature cache cannot hold (cached: '
                f'{", ".join(DETERMINISTIC_TRANSFORMS)} and one '
                'RandomFlip); train through the Runner (linear '
                "engine='runner')")
        plain.append(transform)
        flipped.append(transform)
    if not prob:
        return [plain], 0.0
    return [plain, flipped], prob


def check_cached_probe_config(cfg: Config) -> None:
    """Refuse probe settings the cached probe does not reproduce.

    Raises:
        ValueError: Naming the key: a model other than ``ImageClassifier``,
            a neck outside :data:`NECKS`, batch augmentations, an
            iteration-based loop, a sampler other than ``DefaultSampler``,
            enabled ``auto_scale_lr``, ``custom_hooks``, per-optimizer
            schedulers, or a training pipeline with random transforms (see
            :func:`probe_view_pipelines`).
    """
    model = cfg.model
    neck = model.get('neck')
    loop = cfg.get('train_cfg') or {}
    sampler = cfg.train_dataloader.get('sampler') or {}
    scheds = cfg.get('param_scheduler') or []
    found = dict()  # key -> the value refused
    if model.get('type') != 'ImageClassifier':
        found['model.type'] = model.get('type')
    if neck is not None and _type_name(neck) not in NECKS:
        found['model.neck.type'] = _type_name(neck)
    for key in ('train_cfg.augments', 'data_preprocessor.batch_augments'):
        part, name = key.split('.')
        if (model.get(part) or {}).get(name):
            found[f'model.{key}'] = model[part][name]
    if loop.get('type', 'EpochBasedTrainLoop') != 'EpochBasedTrainLoop' \
            or not loop.get('by_epoch', True):
        found['train_cfg'] = dict(loop)
    if sampler.get('type', 'DefaultSampler') != 'DefaultSampler':
        found['train_dataloader.sampler.type'] = sampler.get('type')
    if (cfg.get('auto_scale_lr') or {}).get('enable'):
        found['auto_scale_lr.enable'] = True
    if cfg.get('custom_hooks'):
        found['custom_hooks'] = cfg.custom_hooks
    if isinstance(scheds, dict) and 'type' not in scheds:
        found['param_scheduler'] = 'one list per optimizer'
    if found:
        raise ValueError(
            '; '.join(f'{k}={v!r}' for k, v in found.items()) +
            ': the cached linear probe does not reproduce this; train '
            "through the Runner (linear engine='runner')")
    probe_view_pipelines(cfg)


def _check_frozen(model: torch.nn.Module) -> None:
    """Refuse a backbone that learns or is random in training mode."""
    learns = [
        n for n, p in model.backbone.named_parameters() if p.requires_grad
    ]
    if learns:
        raise ValueError(
            f'model.backbone.frozen_stages: {learns[0]} (and '
            f'{len(learns) - 1} more) would train: the cached probe needs '
            'a wholly frozen backbone')
    model.train()
    for name, m in model.backbone.named_modules():
        batch_stats = isinstance(m, torch.nn.modules.batchnorm._BatchNorm)
        dropout = getattr(m, 'p', 0) if isinstance(
            m, torch.nn.Dropout) else getattr(m, 'drop_prob', 0)
        random = m.training and (batch_stats or bool(dropout))
        if random:
            raise ValueError(
                f'model.backbone: {name} ({type(m).__name__}) changes the '
                'features in training mode (batch statistics or dropout): '
                'the cached probe needs fixed features')


def train_probe_on_features(cfg: Config,
                            views: Sequence[torch.Tensor],
                            labels: torch.Tensor,
                            test_features: torch.Tensor,
                            test_labels: torch.Tensor,
                            flip_prob: float = 0.0,
                            epochs: Optional[int] = None,
                            seed: int = 0,
                            precision: str = 'float32') -> float:
    """Train the neck and head of a frozen-backbone config on cached
    features and return the test top-1 (%).

    Each epoch shuffles the images as the config's ``DefaultSampler`` does
    (``shuffle``, ``batch_size``, ``drop_last`` of ``train_dataloader``),
    takes ``views[1]`` (the flipped view) of each image with probability
    ``flip_prob`` and ``views[0]`` otherwise, and updates through the
    config's optimizer wrapper; iteration-based schedulers step after each
    iteration, epoch-based ones after each epoch. The test set is scored
    once, after training, in eval mode (the BatchNorm neck's running
    statistics).

    Args:
        cfg (Config): The probe config (see :func:`probe_config`).
        views (sequence of Tensor): (N, D) features of each view.
        labels (Tensor): (N,) labels.
        test_features (Tensor): (M, D) test features.
        test_labels (Tensor): (M,) test labels.
        flip_prob (float): Probability of the second view.
        epochs (int, optional): Overrides the config's epochs.
        seed (int): Initialisation, order and flip seed.
        precision (str): 'float32' or a ``bfloat16`` / ``float16``
            autocast of the neck and head (as the Runner's).
    """
    # (256, 128)-sized steps: one thread is fastest, and many threads
    # spin against each other on a shared CPU (20x slower under load)
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        return _train_probe(cfg, views, labels, test_features, test_labels,
                            flip_prob, epochs, seed, precision)
    finally:
        torch.set_num_threads(threads)


def _train_probe(cfg, views, labels, test_features, test_labels, flip_prob,
                 epochs, seed, precision) -> float:
    from mmengine.optim import build_optim_wrapper
    from mmpretrain.registry import MODELS, PARAM_SCHEDULERS
    from mmpretrain.structures import DataSample

    from ..checkpoint import init_weights_quietly
    check_cached_probe_config(cfg)
    cfg = copy.deepcopy(cfg)
    if epochs is not None:
        set_probe_epochs(cfg, epochs)
    set_training_precision(cfg, precision)
    init_default_scope(cfg.get('default_scope', 'mmpretrain'))
    cfg.model.backbone.init_cfg = None  # the features are given
    torch.manual_seed(seed)
    model = MODELS.build(cfg.model)
    init_weights_quietly(model)
    _check_frozen(model)
    loader = cfg.train_dataloader
    batch = int(loader.batch_size)
    shuffle = (loader.get('sampler') or {}).get('shuffle', True)
    n = len(labels)
    drop_last = loader.get('drop_last', False)
    steps = n // batch if drop_last else math.ceil(n / batch)
    max_epochs = int(cfg.train_cfg.max_epochs)
    optim_wrapper = build_optim_wrapper(model, cfg.optim_wrapper)
    scheds = cfg.get('param_scheduler') or []
    scheds = [scheds] if isinstance(scheds, dict) else scheds
    schedulers = [
        PARAM_SCHEDULERS.build(
            s, default_args=dict(optimizer=optim_wrapper, epoch_length=steps))
        for s in scheds
    ]
    optim_wrapper.initialize_count_status(model, 0, max_epochs * steps)
    neck = model.neck if model.with_neck and _type_name(
        cfg.model.neck) != 'GlobalAveragePooling' else (lambda x: x)
    generator = torch.Generator().manual_seed(seed)
    for epoch in range(max_epochs):
        order = torch.randperm(n, generator=generator) if shuffle \
            else torch.arange(n)
        flips = torch.rand(n, generator=generator) < flip_prob
        model.train()
        for step in range(steps):
            idx = order[step * batch:(step + 1) * batch]
            x = views[0][idx]
            if len(views) > 1:
                x = torch.where(flips[idx, None], views[1][idx], x)
            samples = [DataSample().set_gt_label(y) for y in labels[idx]]
            with optim_wrapper.optim_context(model):
                losses = model.head.loss(neck((x, )), samples)
            loss, _ = model.parse_losses(losses)
            optim_wrapper.update_params(loss)
            for s in schedulers:
                if not s.by_epoch:
                    s.step()
        for s in schedulers:
            if s.by_epoch:
                s.step()
        print(
            f'cached linear probe: epoch {epoch + 1}/{max_epochs}, loss '
            f'{loss.item():.4f}, lr {optim_wrapper.get_lr()["lr"][0]:.4g}',
            flush=True)
    model.eval()
    correct = 0
    with torch.no_grad(), autocast('cpu', precision):
        for x, y in zip(test_features.split(1000), test_labels.split(1000)):
            scores = model.head(neck((x, )))
            correct += (scores.argmax(1) == y).sum().item()
    return 100.0 * correct / max(len(test_labels), 1)


def extract_probe_views(
        model: torch.nn.Module,
        cfg: Config,
        indices: Optional[Sequence[int]],
        precision: str = 'float32',
        cache_dir: Optional[str] = None,
        key: Optional[dict] = None,
        desc: str = 'probe',
        kept_batches: Optional[dict] = None) -> Tuple[Views, float]:
    """Frozen features of each view of the probe's training images (see
    :func:`probe_view_pipelines`), cached under ``key`` when given; the
    views' pipeline batches kept in ``kept_batches`` (see
    :func:`extract_features`).

    Returns:
        tuple: one (features, labels) per view, and the flip probability.
    """
    pipelines, prob = probe_view_pipelines(cfg)
    views = []
    for view, pipeline in enumerate(pipelines):
        split = ('probe', 'probe_flipped')[view]

        def extract(pipeline=pipeline, split=split):
            return extract_features(
                model,
                cfg.train_dataloader.dataset,
                pipeline,
                indices,
                desc=f'{desc} {split} features',
                precision=precision,
                kept_batches=kept_batches)

        split_key = None if key is None else dict(
            key,
            split=split,
            pipeline=pipeline,
            indices=None if indices is None else [int(i) for i in indices])
        views.append(
            cached_features(cache_dir if key else None, split, split_key,
                            extract))
    return views, prob


def cached_linear_probe_accuracy(cfg: Config,
                                 checkpoint: Optional[str],
                                 train_indices: Optional[Sequence[int]] = None,
                                 test_indices: Optional[Sequence[int]] = None,
                                 epochs: Optional[int] = None,
                                 seed: int = 0,
                                 precision: str = 'float32',
                                 cache_dir: Optional[str] = None) -> float:
    """:func:`linear_probe_accuracy` on features extracted once: both
    views of the training images (see :func:`extract_probe_views`) and
    the test images (test pipeline), then
    :func:`train_probe_on_features`. Returns the test top-1 (%).

    Args:
        cfg (Config): The probe config (see :func:`probe_config`).
        checkpoint (str, optional): Backbone weights (under ``backbone.``);
            None: the random initialisation of seed 0.
        train_indices (sequence of int, optional): Training subset.
        test_indices (sequence of int, optional): Test subset.
        epochs (int, optional): Overrides the config's epochs.
        seed (int): Training seed.
        precision (str): Feature extraction and probe precision.
        cache_dir (str, optional): Feature cache, keyed by the checkpoint's
            path, size and modification time, the model config, the
            pipeline and the images (see :func:`cached_features`).
    """
    check_cached_probe_config(cfg)
    torch.manual_seed(0)
    model = build_frozen_backbone_model(cfg, checkpoint)
    key = dict(
        checkpoint=file_identity(checkpoint),
        model=cfg.model.to_dict()
        if hasattr(cfg.model, 'to_dict') else dict(cfg.model),
        precision=precision)
    views, prob = extract_probe_views(model, cfg, train_indices, precision,
                                      cache_dir, key)
    test_pipeline = cfg.test_dataloader.dataset.pipeline
    test = cached_features(
        cache_dir, 'test',
        dict(
            key,
            split='test',
            pipeline=test_pipeline,
            dataset=cfg.test_dataloader.dataset,
            indices=None if test_indices is None else
            [int(i) for i in test_indices]), lambda: extract_features(
                model,
                cfg.test_dataloader.dataset,
                test_pipeline,
                test_indices,
                desc='probe test features',
                precision=precision))
    return train_probe_on_features(cfg, [v[0] for v in views], views[0][1],
                                   *test, prob, epochs, seed, precision)
