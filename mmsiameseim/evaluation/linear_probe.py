import copy
import os.path as osp
from typing import Optional, Sequence

import torch
from mmengine.config import Config, ConfigDict

from ..precision import set_training_precision

_VITS = ('SiameseIMViT', 'MAEViT', 'MoCoV3ViT', 'VisionTransformer')
_SWINS = ('SimMIMSwinTransformer', 'SwinTransformer')
#: the frozen ViT feature: mmpretrain ``VisionTransformer`` out types
VIT_FEATURES = ('cls_token', 'avg_featmap', 'featmap')


def match_probe_backbone(probe_model: ConfigDict,
                         pretrain_model: ConfigDict) -> None:
    """Make a frozen-feature classifier config take the backbone of a
    pretraining model config, in place.

    The probe's backbone becomes the plain mmpretrain counterpart of the
    pretraining backbone (same arch and weight layout, all blocks frozen),
    with the pretraining normalisation. ViTs give the last block's cls
    token (no final norm), followed by ``ClsBatchNormNeck``; Swins the
    global average of the last stage. The probe's ``init_cfg`` is kept.

    Args:
        probe_model (ConfigDict): ``model`` of the probe config.
        pretrain_model (ConfigDict): ``model`` of the pretraining config.
    """
    from mmpretrain.registry import MODELS
    src = copy.deepcopy(pretrain_model.backbone)
    kind = src.pop('type')
    arch = src.get('arch')
    if isinstance(arch, str):
        arch = MODELS.get(kind).arch_zoo[arch.lower()]
    init = probe_model.backbone.get('init_cfg')
    if kind in _VITS:
        keep = ('img_size', 'patch_size', 'qkv_bias', 'pre_norm',
                'layer_scale_init_value', 'layer_cfgs')
        backbone = dict(
            type='VisionTransformer',
            arch=dict(arch),
            in_channels=src.get('in_channels',
                                src.get('patch_cfg', {}).get('in_channels',
                                                             3)),
            final_norm=False,
            out_type='cls_token',
            frozen_stages=arch['num_layers'],
            **{k: src[k]
               for k in keep if k in src})
        dims = arch['embed_dims']
        probe_model.neck = dict(type='ClsBatchNormNeck', input_features=dims)
    elif kind in _SWINS:
        keep = ('img_size', 'in_channels', 'out_indices', 'stage_cfgs',
                'patch_cfg', 'window_size', 'norm_cfg')
        stages = len(arch['depths'])
        backbone = dict(
            type='SwinTransformer',
            arch=dict(arch),
            frozen_stages=stages - 1,  # index of the last one
            **{k: src[k]
               for k in keep if k in src})
        dims = arch['embed_dims'] * 2**(stages - 1)
        probe_model.neck = dict(type='GlobalAveragePooling')
    else:
        raise ValueError(f'no frozen-feature evaluation for a {kind} '
                         f'backbone (supported: {", ".join(_VITS + _SWINS)})')
    probe_model.backbone = dict(backbone, init_cfg=init)
    probe_model.head.in_channels = dims
    norm = pretrain_model.get('data_preprocessor') or {}
    for key in ('mean', 'std'):
        if key in norm:
            probe_model.data_preprocessor[key] = norm[key]


def never_download(cfg: Config) -> None:
    """Make the dataloaders' datasets read local files only, in place.

    mmpretrain's ``FashionMNIST`` becomes :class:`LocalFashionMNIST` (a
    missing file is named with the set-up step); any other dataset class
    with a ``download`` argument (``MNIST``, ``CIFAR10`` ...) gets
    ``download=False``. Evaluating never fetches data or leaves a
    half-filled folder behind.
    """
    import inspect

    from mmpretrain.registry import DATASETS
    for name in ('train_dataloader', 'val_dataloader', 'test_dataloader'):
        dataset = (cfg.get(name) or {}).get('dataset')
        if not dataset or not isinstance(dataset.get('type'), str):
            continue
        if dataset.type.split('.')[-1] == 'FashionMNIST':
            dataset.type = 'LocalFashionMNIST'
            dataset.pop('download', None)
            continue
        cls = DATASETS.get(dataset.type)
        if cls is not None and 'download' in inspect.signature(
                cls.__init__).parameters:
            dataset.download = False


def set_vit_feature(probe_model: ConfigDict,
                    out_type: str = 'cls_token',
                    final_norm: bool = False) -> None:
    """Choose the feature a frozen ViT classifier reads, in place.

    Args:
        probe_model (ConfigDict): ``model`` of a probe config whose backbone
            is an mmpretrain ``VisionTransformer``.
        out_type (str): 'cls_token' (the last block's cls token) or
            'avg_featmap' (the mean of the patch tokens through a
            LayerNorm that starts as identity and stays frozen: the
            authors' ``global_pool`` linear probe before training) or
            'featmap' (the patch tokens as a (C, H, W) map, which the
            feature extraction flattens: kNN and few-shot only, no linear
            probe neck reads it).
        final_norm (bool): Apply the backbone's final LayerNorm first: the
            pretrained one where the checkpoint has it (MAE), else a
            LayerNorm without learned scale (identity affine).

    Raises:
        ValueError: An unknown ``out_type``, or a backbone that is not a
            ``VisionTransformer`` asked for other than the default.
    """
    if out_type not in VIT_FEATURES:
        raise ValueError(f'feature out_type={out_type!r}: choose one of '
                         f'{VIT_FEATURES}')
    kind = probe_model.backbone.get('type')
    if kind != 'VisionTransformer':
        if (out_type, final_norm) != ('cls_token', False):
            raise ValueError(
                f'feature out_type={out_type!r}, final_norm={final_norm}: '
                f'only a VisionTransformer probe backbone has them, this '
                f'one is a {kind}')
        return
    probe_model.backbone.out_type = out_type
    probe_model.backbone.final_norm = bool(final_norm)


def probe_config(path: str,
                 pretrain_model: Optional[ConfigDict] = None,
                 data_prefix: Optional[str] = None,
                 out_type: Optional[str] = None,
                 final_norm: Optional[bool] = None) -> Config:
    """A frozen-backbone classifier config (e.g. the linear probe of
    configs/benchmarks/mmpretrain), matched to a pretraining model, whose
    datasets never download (:func:`never_download`).

    Args:
        path (str): The probe config file.
        pretrain_model (ConfigDict, optional): ``model`` of the pretraining
            config whose backbone is evaluated (see
            :func:`match_probe_backbone`); None keeps the probe's.
        data_prefix (str, optional): Replaces the ``data_prefix`` of the
            three dataloaders' datasets; a relative path is taken from the
            current directory.
        out_type (str, optional): The ViT feature (see
            :func:`set_vit_feature`); None keeps the config's.
        final_norm (bool, optional): See :func:`set_vit_feature`; None
            keeps the config's.
    """
    cfg = Config.fromfile(path)
    if pretrain_model is not None:
        match_probe_backbone(cfg.model, pretrain_model)
    if out_type is not None or final_norm is not None:
        backbone = cfg.model.backbone
        set_vit_feature(
            cfg.model, out_type or backbone.get('out_type', 'cls_token'),
            backbone.get('final_norm', False)
            if final_norm is None else final_norm)
    if data_prefix is not None:
        for loader in (cfg.train_dataloader, cfg.val_dataloader,
                       cfg.test_dataloader):
            loader.dataset.data_prefix = osp.abspath(data_prefix) + '/'
    never_download(cfg)
    return cfg


def set_probe_epochs(cfg: Config, epochs: int) -> None:
    """Train ``epochs`` epochs, with the cosine schedule ending there."""
    cfg.train_cfg.max_epochs = epochs
    for sched in cfg.param_scheduler:
        if sched.get('type', '').endswith('CosineAnnealingLR'):
            sched.T_max = epochs - sched.get('begin', 0)
            sched.end = epochs


def linear_probe_accuracy(cfg: Config,
                          checkpoint: Optional[str],
                          work_dir: str,
                          train_indices: Optional[Sequence[int]] = None,
                          test_indices: Optional[Sequence[int]] = None,
                          epochs: Optional[int] = None,
                          seed: int = 0,
                          precision: str = 'float32') -> float:
    """Train the classifier of a frozen-backbone config with mmengine's
    Runner and return its test top-1 (%).

    The test set is scored once, after training (no validation loop).

    Args:
        cfg (Config): The probe config (see :func:`probe_config`).
        checkpoint (str, optional): Backbone weights (under ``backbone.``),
            loaded through the backbone's ``Pretrained`` init_cfg, of scope
            ``mmsiameseim`` unless it names another (a wrong or non-finite
            checkpoint is refused); None keeps the random initialisation.
        work_dir (str): The runner's work dir.
        train_indices (sequence of int, optional): Training subset.
        test_indices (sequence of int, optional): Test subset.
        epochs (int, optional): Overrides the config's epochs.
        seed (int): Training seed. Defaults to 0.
        precision (str): 'float32' (plain ``OptimWrapper``) or 'bfloat16'
            / 'float16' autocast of the (frozen-dominated) forward.
    """
    from mmengine.runner import Runner
    cfg = copy.deepcopy(cfg)
    cfg.work_dir = osp.abspath(work_dir)
    if checkpoint:
        # the strict loader of scope mmsiameseim unless the entry names one
        cfg.model.backbone.init_cfg = {
            '_scope_': 'mmsiameseim',
            **cfg.model.backbone.init_cfg, 'checkpoint': checkpoint
        }
    else:
        cfg.model.backbone.init_cfg = None
    if train_indices is not None:
        cfg.train_dataloader.dataset.indices = [int(i) for i in train_indices]
    if test_indices is not None:
        cfg.test_dataloader.dataset.indices = [int(i) for i in test_indices]
    if epochs is not None:
        set_probe_epochs(cfg, epochs)
    cfg.randomness = dict(seed=seed)
    # scored once, by runner.test() (a val loop would score the same
    # images again at the end of training)
    cfg.val_dataloader = cfg.val_cfg = cfg.val_evaluator = None
    cfg.train_cfg.pop('val_interval', None)
    set_training_precision(cfg, precision)
    torch.manual_seed(seed)
    runner = Runner.from_cfg(cfg)
    runner.train()
    metrics = runner.test()
    return float(metrics['accuracy/top1'])
