from typing import List, Optional

from mmdet.registry import OPTIM_WRAPPER_CONSTRUCTORS
from mmengine.logging import MMLogger
from mmengine.optim import DefaultOptimWrapperConstructor
from mmengine.utils.dl_utils.parrots_wrapper import _BatchNorm, _InstanceNorm
from torch import nn


def vit_layer_id(param_name: str, num_layers: int) -> int:
    """Depth of a detector parameter for layer-wise lr decay (ViTDet rule):

    patch embedding and position table 0, ``backbone.layers.i`` i + 1,
    everything else (neck, heads) ``num_layers + 1``.
    """
    if param_name.startswith(
        ('backbone.patch_embed', 'backbone.pos_embed', 'backbone.cls_token')):
        return 0
    if param_name.startswith('backbone.layers.'):
        block = int(param_name.split('.')[2])
        if block >= num_layers:
            raise ValueError(f'layer decay: {param_name} is block {block} but '
                             f'paramwise_cfg num_layers={num_layers}')
        return block + 1
    return num_layers + 1


@OPTIM_WRAPPER_CONSTRUCTORS.register_module()
class ViTLayerDecayOptimWrapperConstructor(DefaultOptimWrapperConstructor):
    """Layer-wise learning-rate decay for a detector with a plain ViT backbone.

    A parameter at depth ``l`` (:func:`vit_layer_id`) gets
    ``lr * decay_rate ** (num_layers + 1 - l)``: the heads and neck train at
    the base lr, the last block at ``lr * decay_rate``, the patch embedding at
    ``lr * decay_rate ** (num_layers + 1)``.

    ``paramwise_cfg`` keys:

    - ``decay_rate`` (float): Per-block lr decay. Required.
    - ``num_layers`` (int): Number of ViT blocks. Required.
    - ``norm_decay_mult`` (float): Weight-decay factor of normalisation
      layers' weights and biases. Defaults to 0 (ViTDet).
    - ``no_decay_names`` (Sequence[str]): Parameters whose name contains one
      of these get no weight decay. Defaults to ``('pos_embed', )`` (ViTDet).
    """

    def __init__(self,
                 optim_wrapper_cfg: dict,
                 paramwise_cfg: Optional[dict] = None):
        super().__init__(optim_wrapper_cfg, paramwise_cfg)
        for key in ('decay_rate', 'num_layers'):
            if key not in self.paramwise_cfg:
                raise KeyError(f'{type(self).__name__}: paramwise_cfg needs '
                               f'{key!r}, got {sorted(self.paramwise_cfg)}')

    def add_params(self, params: List[dict], module: nn.Module,
                   **kwargs) -> None:
        cfg = self.paramwise_cfg
        decay_rate, num_layers = cfg['decay_rate'], cfg['num_layers']
        norm_decay_mult = cfg.get('norm_decay_mult', 0.)
        no_decay_names = tuple(cfg.get('no_decay_names', ('pos_embed', )))
        norm_types = (_BatchNorm, _InstanceNorm, nn.GroupNorm, nn.LayerNorm)
        norm_params = {
            id(p)
            for m in module.modules() if isinstance(m, norm_types)
            for p in m.parameters(recurse=False)
        }

        groups = {}
        for name, param in module.named_parameters():
            if not param.requires_grad:
                continue
            layer_id = vit_layer_id(name, num_layers)
            weight_decay = self.base_wd or 0.
            if any(n in name for n in no_decay_names):
                weight_decay = 0.
            elif id(param) in norm_params:
                weight_decay *= norm_decay_mult
            key = (layer_id, weight_decay)
            if key not in groups:
                scale = decay_rate**(num_layers + 1 - layer_id)
                groups[key] = dict(
                    params=[],
                    names=[],
                    lr=self.base_lr * scale,
                    lr_scale=scale,
                    layer_id=layer_id,
                    weight_decay=weight_decay)
            groups[key]['params'].append(param)
            groups[key]['names'].append(name)

        logger = MMLogger.get_current_instance()
        for (layer_id, wd), group in sorted(groups.items()):
            logger.debug(f'layer {layer_id}: lr_scale {group["lr_scale"]:.4g}'
                         f', weight_decay {wd:g}: {group["names"]}')
        logger.info(f'layer decay {decay_rate} over {num_layers} blocks: '
                    f'{len(groups)} param groups, lr scales '
                    f'{decay_rate**(num_layers + 1):.3g} (patch embedding) '
                    f'... 1 (neck and heads)')
        params.extend(groups.values())
