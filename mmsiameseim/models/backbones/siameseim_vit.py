"""SiameseIM's ViT encoder and the block helpers it shares with the neck.

- :class:`SiameseIMViT`: mmpretrain's ``MAEViT`` with the SiameseIM patch
  mask, the rows-first sin-cos position embedding and optional activation
  checkpointing.
- :func:`run_blocks` / :func:`set_activation_checkpointing`: activation
  checkpointing of Transformer blocks. A part that supports it
  (``SiameseIMViT``, ``RelPosDecoderNeck``) runs its blocks through
  :func:`run_blocks`: with its ``with_cp`` set, in training and when the
  tokens need a gradient, each block's activations are recomputed in
  backward instead of kept (``torch.utils.checkpoint``, non-reentrant,
  random state preserved so drop path draws the same). The gradients are
  those of the plain run; the target branch (no gradient) is never
  checkpointed. A BatchNorm inside a checkpointed block updates its running
  statistics twice per step (they are not used in training).
- :func:`use_fp32_attention_under_cpu_autocast`: the attention core in fp32
  under CPU autocast.
- :func:`drop_zero_drop_paths`: ``DropPath`` of rate 0 removed (for
  ``torch.compile``).
"""
from typing import Iterable, Optional, Sequence, Union

import torch
import torch.nn as nn
import torch.nn.functional as F
from mmcv.cnn.bricks.drop import DropPath
from mmpretrain.models.selfsup.mae import MAEViT
from mmpretrain.models.utils import build_norm_layer, resize_pos_embed
from mmpretrain.models.utils.attention import MultiheadAttention
from mmpretrain.registry import MODELS
from torch.utils.checkpoint import checkpoint

from ..utils.geometry import build_rows_first_sincos_embed


@MODELS.register_module()
class SiameseIMViT(MAEViT):
    """ViT encoder of SiameseIM: encodes the visible patches of a view.

    The weights keep mmpretrain ``VisionTransformer`` key names, so a
    pretrained checkpoint loads into a plain ``VisionTransformer`` with
    ``init_cfg=dict(type='Pretrained', prefix='backbone.')``.

    Implements the SiameseIM encoder interface
    (:mod:`mmsiameseim.models.algorithms.siameseim`): ``forward(x, mask)``
    returns the cls token and the visible patch tokens.

    Differences from ``MAEViT``: the mask is given (a boolean patch mask per
    sample, True = masked, e.g. from ``BlockwiseMaskGenerator``) instead of
    drawn at random; the fixed position embedding uses the SiameseIM
    rows-first layout; the patch embedding can be frozen; no final norm by
    default (the projector follows directly). Every ``VisionTransformer``
    arch ('s', 'b', 'l', 'h', 'eva-g', 'deit-t/s/b', 'dinov2-s/g' or a dict)
    and the options that make sense for masked pretraining (qkv bias, layer
    scale, pre-norm, dropout, drop path, per-layer configs) are accepted and
    give the same weights and, without a mask, the same output as a
    ``VisionTransformer`` built with them (``out_type='raw'``).

    Args:
        arch (str | dict): ViT architecture, see ``VisionTransformer``.
            Defaults to 'b'.
        img_size (int): Input image size. Defaults to 224.
        patch_size (int): Patch size. Defaults to 16.
        in_channels (int): Image channels. Defaults to 3.
        train_patch_embed (bool): Whether the patch embedding is trained.
            The authors freeze it. Defaults to False.
        final_norm (bool): Whether to apply a final LayerNorm.
            Defaults to False.
        norm_cfg (dict): Norm config of the blocks.
            Defaults to ``dict(type='LN', eps=1e-6)``.
        drop_path_rate (float): Stochastic depth rate. Defaults to 0.
        drop_rate (float): Dropout after the position embedding and in the
            blocks. Defaults to 0.
        qkv_bias (bool): Bias of the qkv projection. Defaults to True.
        layer_scale_init_value (float): Initial layer scale of each block;
            0 for none (e.g. 1e-5 for DINOv2-style blocks). Defaults to 0.
        pre_norm (bool): A LayerNorm on the tokens before the blocks, and no
            bias in the patch embedding (CLIP style), as in
            ``VisionTransformer``. Defaults to False.
        interpolate_mode (str): How the position embedding is resized for a
            view at another resolution. Defaults to 'bicubic'.
        layer_cfgs (dict | Sequence[dict]): Extra ``TransformerEncoderLayer``
            options for every (dict) or each (list) block, e.g.
            ``dict(ffn_type='swiglu_fused')``. Defaults to an empty dict.
        init_cfg (dict, optional): Initialization config. Defaults to None.
    """

    #: declares the SiameseIM encoder interface (see the module docstring of
    #: mmsiameseim.models.algorithms.siameseim)
    accepts_patch_mask = True

    def __init__(self,
                 arch: Union[str, dict] = 'b',
                 img_size: int = 224,
                 patch_size: int = 16,
                 in_channels: int = 3,
                 train_patch_embed: bool = False,
                 final_norm: bool = False,
                 norm_cfg: dict = dict(type='LN', eps=1e-6),
                 drop_path_rate: float = 0.,
                 drop_rate: float = 0.,
                 qkv_bias: bool = True,
                 layer_scale_init_value: float = 0.,
                 pre_norm: bool = False,
                 interpolate_mode: str = 'bicubic',
                 layer_cfgs: Union[dict, Sequence[dict]] = dict(),
                 init_cfg: Optional[dict] = None) -> None:
        # the options MAEViT does not forward reach VisionTransformer through
        # its patch and layer configs, exactly where VisionTransformer puts
        # them
        block = dict(
            qkv_bias=qkv_bias, layer_scale_init_value=layer_scale_init_value)
        if isinstance(layer_cfgs, dict):
            layer_cfgs = {**block, **layer_cfgs}
        else:
            layer_cfgs = [{**block, **cfg} for cfg in layer_cfgs]
        super().__init__(
            arch=arch,
            img_size=img_size,
            patch_size=patch_size,
            drop_rate=drop_rate,
            final_norm=final_norm,
            norm_cfg=norm_cfg,
            drop_path_rate=drop_path_rate,
            out_type='raw',
            interpolate_mode=interpolate_mode,
            patch_cfg=dict(in_channels=in_channels, bias=not pre_norm),
            layer_cfgs=layer_cfgs,
            init_cfg=init_cfg)
        heads = self.arch_settings['num_heads']
        if self.embed_dims % heads:
            raise ValueError(
                f'SiameseIMViT: arch embed_dims={self.embed_dims} is not '
                f'divisible by num_heads={heads} (model.backbone.arch); '
                'choose a head count that divides the width')
        if pre_norm:
            self.pre_norm = build_norm_layer(norm_cfg, self.embed_dims)
        self.train_patch_embed = train_patch_embed
        # the fixed sin-cos table (init_weights) is never trained
        self.pos_embed.requires_grad = False
        if not train_patch_embed:
            for p in self.patch_embed.parameters():
                p.requires_grad = False
        use_fp32_attention_under_cpu_autocast(self.layers)
        drop_zero_drop_paths(self.layers)  # no graph break per block
        #: recompute block activations in backward (activation_checkpointing)
        self.with_cp = False

    def init_weights(self) -> None:
        super().init_weights()
        if not (isinstance(self.init_cfg, dict)
                and self.init_cfg.get('type') == 'Pretrained'):
            self.pos_embed.data.copy_(
                build_rows_first_sincos_embed(self.patch_resolution,
                                              self.embed_dims))

    def forward(self,
                x: torch.Tensor,
                mask: Optional[torch.Tensor] = None) -> torch.Tensor:
        """Encode a batch of images.

        Args:
            x (Tensor): Images (B, C, H, W).
            mask (Tensor, optional): Boolean (B, L) or (B, h, w) patch mask,
                True = masked; every sample must mask the same number of
                patches. None encodes all patches.

        Returns:
            Tensor: Tokens (B, 1 + visible patches, C), cls token first.
        """
        B = x.shape[0]
        x, grid = self.patch_embed(x)
        pos_embed = self.pos_embed
        if tuple(grid) != tuple(self.patch_resolution):
            # a view at another resolution (the low-resolution target
            # option): the table is resized as mmpretrain's ViT does
            pos_embed = resize_pos_embed(
                pos_embed,
                self.patch_resolution,
                grid,
                mode=self.interpolate_mode,
                num_extra_tokens=1)
        x = x + pos_embed[:, 1:]
        if mask is not None:
            keep = ~mask.reshape(B, -1)
            x = x[keep].reshape(B, -1, x.shape[-1])
        cls = self.cls_token.expand(B, -1, -1) + pos_embed[:, :1]
        x = torch.cat([cls, x], dim=1)
        x = self.pre_norm(self.drop_after_pos(x))
        x = run_blocks(self.layers, x, self.with_cp and self.training)
        if self.final_norm:
            x = self.ln1(x)
        return x


def run_blocks(blocks: Iterable[nn.Module], x: torch.Tensor,
               with_cp: bool) -> torch.Tensor:
    """``x`` through ``blocks`` in turn, checkpointed when ``with_cp`` and
    a gradient is being built."""
    for block in blocks:
        if with_cp and torch.is_grad_enabled() and x.requires_grad:
            x = checkpoint(block, x, use_reentrant=False)
        else:
            x = block(x)
    return x


def set_activation_checkpointing(part: nn.Module) -> None:
    """Turn activation checkpointing on in ``part``; refuses a part that
    does not support it, naming it."""
    if not hasattr(part, 'with_cp'):
        raise TypeError(
            f'activation_checkpointing: {type(part).__name__} does not '
            'support it (no with_cp attribute); SiameseIMViT and '
            'RelPosDecoderNeck do')
    part.with_cp = True


def fp32_attention_under_cpu_autocast(query: torch.Tensor, key: torch.Tensor,
                                      value: torch.Tensor, *args,
                                      **kwargs) -> torch.Tensor:
    """``F.scaled_dot_product_attention`` that runs in fp32 under CPU
    autocast and returns the autocast dtype; unchanged elsewhere.

    On CPUs torch's bf16 attention kernels are slower than its fp32 fused
    kernel over a SiameseIM step's attention calls: the fused bf16 kernel is
    slow on short sequences, the matmul-softmax path on long ones
    (``projects/speed/tools/attention.py`` prints the table). Only the
    attention core runs in fp32; the projections around it stay in bf16.
    """
    if query.device.type != 'cpu' or not torch.is_autocast_enabled('cpu'):
        return F.scaled_dot_product_attention(query, key, value, *args,
                                              **kwargs)
    with torch.autocast('cpu', enabled=False):
        out = F.scaled_dot_product_attention(query.float(), key.float(),
                                             value.float(), *args, **kwargs)
    return out.to(torch.get_autocast_dtype('cpu'))


def use_fp32_attention_under_cpu_autocast(module: nn.Module) -> nn.Module:
    """Route every mmpretrain ``MultiheadAttention`` in ``module`` through
    :func:`fp32_attention_under_cpu_autocast`.

    Returns ``module``.
    """
    for m in module.modules():
        if isinstance(m, MultiheadAttention):
            m.scaled_dot_product_attention = fp32_attention_under_cpu_autocast
    return module


def drop_zero_drop_paths(module: nn.Module) -> nn.Module:
    """Replace every ``DropPath`` of rate 0 in ``module`` by ``nn.Identity``
    (the same function, no parameters). Returns ``module``.

    Dynamo sees mmcv's ``if drop_prob == 0.`` on a float attribute (a numpy
    float in mmpretrain's ViT) as data-dependent control flow and breaks
    the graph at every block; without the module there is nothing to
    trace. Non-zero rates keep their ``DropPath``.
    """
    for name, child in list(module.named_children()):
        if isinstance(child, DropPath) and float(child.drop_prob) == 0.:
            setattr(module, name, nn.Identity())
        else:
            drop_zero_drop_paths(child)
    return module
