import os.path as osp
from typing import Optional, Tuple

import torch
from mmengine.config import Config, ConfigDict

from ..checkpoint import init_weights_quietly
from .linear_probe import match_probe_backbone


def checkpoint_config(checkpoint: str, config: Optional[str] = None) -> Config:
    """The pretraining config of a checkpoint: ``config`` when given, else
    the one mmengine's Runner stored in the checkpoint (``meta.cfg``).

    Raises:
        ValueError: The checkpoint holds no config and none is given; the
            message names the file.
    """
    if config:
        return Config.fromfile(config)
    from mmsiameseim.checkpoint.reader import read_checkpoint
    ckpt = read_checkpoint(checkpoint)
    text = ckpt.get('meta', {}).get('cfg') if isinstance(ckpt, dict) else None
    if not isinstance(text, str):
        raise ValueError(
            f'{checkpoint}: holds no config (mmengine\'s Runner stores it '
            'under meta.cfg); give the pretraining config with --config')
    return Config.fromstring(text, '.py')


def checkpoint_or_config(
        path: str,
        config: Optional[str] = None) -> Tuple[Optional[str], Config]:
    """A tool's CHECKPOINT argument and its pretraining config: a config
    file (``.py``) stands for the random initial weights (no checkpoint, a
    floor); a checkpoint comes with :func:`checkpoint_config`.

    Raises:
        FileNotFoundError: No such checkpoint; the message names it.
    """
    if path.endswith('.py'):
        return None, checkpoint_config(None, path)
    if not osp.isfile(path):
        raise FileNotFoundError(f'checkpoint {path} not found')
    return path, checkpoint_config(path, config)


def frozen_vit(
    checkpoint: Optional[str],
    pretrain_model: ConfigDict,
    final_norm: bool = False
) -> Tuple[torch.nn.Module, torch.Tensor, torch.Tensor]:
    """The backbone of a pretraining model config as a frozen mmpretrain
    ViT giving all its tokens, with the checkpoint's weights, and its
    input normalisation.

    Args:
        checkpoint (str, optional): Weights under ``backbone.``, loaded by
            the strict ``Pretrained`` init of scope ``mmsiameseim``; None
            keeps the random initialisation.
        pretrain_model (ConfigDict): ``model`` of the pretraining config
            (any backbone :func:`match_probe_backbone` knows).
        final_norm (bool): Apply the final LayerNorm (see
            :func:`set_vit_feature`).

    Returns:
        tuple: the backbone (eval mode; ``out_type='raw'`` for a ViT),
        mean and std (C, 1, 1) of its inputs in 0-255 pixel units.
    """
    from mmengine.registry import init_default_scope
    from mmpretrain.registry import MODELS
    init_default_scope('mmpretrain')
    probe = ConfigDict(
        backbone=dict(init_cfg=None),
        head=dict(),
        data_preprocessor=dict(mean=[0.], std=[1.]))
    match_probe_backbone(probe, pretrain_model)
    cfg = probe.backbone
    if cfg['type'] == 'VisionTransformer':
        cfg.update(out_type='raw', final_norm=bool(final_norm))
    if checkpoint:
        cfg['init_cfg'] = dict(
            type='Pretrained',
            _scope_='mmsiameseim',
            checkpoint=checkpoint,
            prefix='backbone.')
    backbone = MODELS.build(cfg)
    init_weights_quietly(backbone)
    norm = probe.data_preprocessor
    mean = torch.tensor(norm['mean'], dtype=torch.float32).view(-1, 1, 1)
    std = torch.tensor(norm['std'], dtype=torch.float32).view(-1, 1, 1)
    backbone.eval()  # (VisionTransformer.train returns None)
    return backbone, mean, std
