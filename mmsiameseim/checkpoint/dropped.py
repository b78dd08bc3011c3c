"""The checkpoint tensors a backbone has no place for: named at WARNING, and
refused when dropping them changes what the backbone computes.

Used by the ViT checkpoint adapter (:mod:`.vit_adapter`), through which
every loader of pretrained encoders goes.
"""
import logging
from typing import Dict, Optional

import torch
from mmengine.logging import print_log

from .keys import short_list

# Tensors inside the blocks whose dropping is harmless at these values.
LAYER_SCALE = ('gamma_1', 'gamma_2', 'gamma1.weight', 'gamma2.weight',
               'ls1.gamma', 'ls2.gamma')
REL_POS = ('relative_position_bias_table', 'rel_pos_h', 'rel_pos_w')
# Buffers the model computes from its own configuration.
DERIVED = ('relative_position_index', )
BLOCKS = ('layers.', 'blocks.')


def changes_function(key: str, value: torch.Tensor) -> Optional[str]:
    """Why dropping ``key`` makes the backbone compute another function than
    the checkpoint's, or None.

    Inside the blocks, a layer scale that is not all 1, a relative position
    table that is not all 0, or any other trained weight does. Outside them (a
    cls token ViTDet does not use, a final or pooled norm the model is built
    without) and derived buffers (relative position indices) do not: the blocks
    compute the same features.
    """
    if not key.startswith(BLOCKS) or key.endswith(DERIVED):
        return None
    if key.endswith(LAYER_SCALE):
        if bool(torch.all(value == 1)):
            return None
        return (f'layer scale, not all 1 ({value.min().item():.3g} to '
                f'{value.max().item():.3g})')
    if key.endswith(REL_POS):
        if not bool(torch.any(value != 0)):
            return None
        return (f'relative position table, not zero (largest '
                f'{value.abs().max().item():.3g})')
    return 'a block weight'


def check_dropped(dropped: Dict[str, torch.Tensor],
                  *,
                  model: str,
                  source: str,
                  allow_dropped: bool = False) -> None:
    """Name the dropped tensors at WARNING; refuse, before anything is
    loaded, when dropping one changes what the backbone computes.

    Args:
        dropped (dict): The checkpoint's tensors (model naming) the model
            has no place for.
        model (str): The model's name, for messages.
        source (str): The checkpoint file (and prefix), for messages.
        allow_dropped (bool): Load even then (``init_cfg`` option), saying
            so at WARNING. Defaults to False.

    Raises:
        ValueError: A dropped tensor changes the function; the message
            names each and the option.
    """
    if not dropped:
        return
    harmful = {k: changes_function(k, v) for k, v in dropped.items()}
    harmful = {k: why for k, why in harmful.items() if why}
    named = short_list([f'{k} ({why})' for k, why in harmful.items()], 12)
    if harmful and not allow_dropped:
        raise ValueError(
            f'{source}: refusing to initialise {model}: it has no place for '
            f'{len(harmful)} trained tensors that change what the backbone '
            f'computes: {named}. The checkpoint was trained with parts this '
            'backbone lacks (a detection or segmentation fine-tune, another '
            'ViT variant); start from a pretraining checkpoint, or load it '
            'anyway with --cfg-options '
            'model.backbone.init_cfg.allow_dropped=True')
    text = (f'{source}: {model} drops {len(dropped)} tensors of the '
            f'checkpoint it has no place for: {short_list(dropped, 20)}')
    if harmful:
        text += (f'; allow_dropped=True: the backbone computes another '
                 f'function than the checkpoint: {named}')
    print_log(text, logger='current', level=logging.WARNING)
