"""Benchmark models built from the config files, at any ViT size of
mmpretrain's arch zoo."""
import os
from typing import Optional

import torch

REPO = os.path.dirname(
    os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
#: the SiameseIM ViT-B/16 pretraining config the benchmark models follow
SIAMESEIM_CONFIG = os.path.join(
    REPO, 'configs', 'pretrain',
    'siameseim_vit-base-p16_16xb256-amp-coslr-1600e_in1k.py')
#: mmpretrain's MAE ViT-B/16 config (in its package's .mim/configs)
MAE_CONFIG = 'mae/mae_vit-base-p16_8xb512-amp-coslr-300e_in1k.py'


def arch_settings(arch: str) -> dict:
    """``embed_dims``, ``num_layers``, ``num_heads`` and
    ``feedforward_channels`` of a ``VisionTransformer`` arch name ('b',
    'l', 'deit-t', ...), from mmpretrain's ``arch_zoo``."""
    from mmpretrain.models import VisionTransformer
    zoo = VisionTransformer.arch_zoo
    if arch not in zoo:
        raise KeyError(f'unknown ViT arch {arch!r}: one of {sorted(zoo)} '
                       '(mmpretrain VisionTransformer.arch_zoo)')
    return dict(zoo[arch])


def decoder_heads(arch: str) -> int:
    """SiameseIM's decoder heads: the released weights' 16 where the width
    allows, else the backbone's."""
    s = arch_settings(arch)
    return 16 if s['embed_dims'] % 16 == 0 else s['num_heads']


def _load(path: str):
    from mmengine.config import Config
    if not os.path.isfile(path):
        raise FileNotFoundError(f'benchmark config {path} not found')
    return Config.fromfile(path)


def siameseim_model_cfg(arch: str = 'b',
                        img_size: int = 224,
                        patch_size: int = 16,
                        target_size: Optional[int] = None,
                        config: str = SIAMESEIM_CONFIG) -> dict:
    """The ``model`` of the SiameseIM config file at ``arch`` and
    ``img_size`` (view b encoded at ``target_size`` when given)."""
    model = _load(config).model.to_dict()
    s = arch_settings(arch)
    model['backbone'].update(
        arch=arch, img_size=img_size, patch_size=patch_size)
    model['neck'].update(
        in_channels=s['embed_dims'],
        embed_dims=s['embed_dims'],
        grid_size=img_size // patch_size,
        num_heads=decoder_heads(arch),
        target_grid_size=target_size // patch_size if target_size else None)
    return model


def mae_model_cfg(arch: str = 'b',
                  img_size: int = 224,
                  patch_size: int = 16) -> dict:
    """The ``model`` of mmpretrain's MAE ViT-B/16 config at ``arch`` and
    ``img_size`` (its 512-wide, 8-block decoder kept)."""
    from mmengine.utils import get_installed_path
    path = os.path.join(
        get_installed_path('mmpretrain'), '.mim', 'configs', MAE_CONFIG)
    model = _load(path).model.to_dict()
    s = arch_settings(arch)
    model['backbone'].update(
        arch=arch, img_size=img_size, patch_size=patch_size)
    model['neck'].update(
        num_patches=(img_size // patch_size)**2,
        patch_size=patch_size,
        embed_dim=s['embed_dims'])
    model['head'].update(patch_size=patch_size)
    return model


def build_model(cfg: dict) -> torch.nn.Module:
    """Build and initialise a model config (seed 0), quietly."""
    from mmengine.logging import MMLogger
    from mmengine.registry import init_default_scope
    from mmpretrain.registry import MODELS

    import mmsiameseim  # noqa: F401
    init_default_scope('mmpretrain')
    torch.manual_seed(0)
    model = MODELS.build(cfg)
    logger = MMLogger.get_current_instance()
    level = logger.level
    logger.setLevel('WARNING')  # init_weights logs every parameter
    try:
        model.init_weights()
    finally:
        logger.setLevel(level)
    return model


def build_benchmark_model(name: str,
                          arch: str,
                          img_size: int,
                          batch: int,
                          device: str = 'cpu',
                          target_size: Optional[int] = None):
    """(model, synthetic batch) of one of the package's benchmark models:

    * 'siameseim': the SiameseIM config's model;
    * 'siameseim-lowres': the same with view b encoded at ``target_size``
      (default half of ``img_size``), the efficient target option;
    * 'mae': mmpretrain's MAE config's model.
    """
    from projects.speed.batches import mae_batch, siameseim_batch
    if name == 'siameseim':
        return (build_model(siameseim_model_cfg(arch, img_size)),
                siameseim_batch(batch, img_size, 16, device))
    if name == 'siameseim-lowres':
        target = target_size or img_size // 2
        return (build_model(
            siameseim_model_cfg(arch, img_size, target_size=target)),
                siameseim_batch(
                    batch, img_size, 16, device, target_size=target))
    if name == 'mae':
        return (build_model(mae_model_cfg(arch, img_size)),
                mae_batch(batch, img_size, device))
    raise ValueError(f'unknown benchmark model {name!r} (siameseim, '
                     'siameseim-lowres, mae)')
