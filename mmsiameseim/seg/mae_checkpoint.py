"""Map a SiameseIM pretraining checkpoint onto mmseg's ``MAE`` backbone."""
from typing import Dict, Sequence, Tuple

import torch

from ..checkpoint import KeyReport, adapt_vit_checkpoint

# Keys that only mmseg's MAE has; they keep the model's own initialisation
# (layer scale = ``init_values``, relative position bias = zeros, as MAE).
_MAE_ONLY = ('gamma_1', 'gamma_2', 'relative_position_bias_table',
             'relative_position_index')
# ... as patterns of their keys, with MAE's final norm (SiameseIM
# pretrains without one): every other backbone weight must be supplied.
_MAY_BE_NEW = tuple(f'*.{name}' for name in _MAE_ONLY) + ('ln1.*', )


def siameseim_to_mmseg_mae(
    state_dict: Dict[str, torch.Tensor],
    target: Dict[str, torch.Tensor],
    prefix: str = 'backbone.',
    source: str = 'the checkpoint',
    allow_partial: bool = False,
    allow_dropped: bool = False,
    keep_init: Sequence[str] = (),
) -> Tuple[Dict[str, torch.Tensor], KeyReport]:
    """Convert the ``prefix`` weights of a SiameseIM checkpoint for ``MAE``.

    Our backbone keys (mmpretrain ``VisionTransformer`` names) are mmseg
    ``MAE`` names already: ``patch_embed.projection``, ``cls_token``,
    ``pos_embed``, ``layers.N.{ln1,attn.qkv,attn.proj,ln2,ffn.layers.*}``,
    ``ln1`` (final norm). The ViT checkpoint adapter
    (:func:`~mmsiameseim.checkpoint.adapt_vit_checkpoint`) strips the
    prefix, resizes ``pos_embed`` to ``target``'s grid (e.g. 14x14 of 224 px
    pretraining to 32x32 of 512 px crops) and adapts a 1-channel patch
    embedding; only mmseg's MAE-only keys (layer scale, relative position
    bias) and its final norm may be absent.

    Args:
        state_dict: The checkpoint's state dict (all of it).
        target: The MAE backbone's ``state_dict()``, for names and shapes.
        prefix: Prefix of the backbone keys in ``state_dict``.
        source: The checkpoint file, for messages.
        allow_partial: Accept a checkpoint that lacks backbone weights
            besides the MAE-only ones (they keep the model's
            initialisation; counts logged at WARNING). Defaults to False.
        allow_dropped: Load even when a tensor the model has no place for
            changes what the backbone computes (a ViTDet fine-tune's
            relative position tables); dropped tensors are named at
            WARNING either way. Defaults to False.
        keep_init: ``fnmatch`` patterns of backbone keys (e.g.
            ``'pos_embed'``, ``'layers.*'``) that keep mmseg's own
            initialisation although the file holds them. Defaults to ().

    Returns:
        The converted state dict and its
        :class:`~mmsiameseim.checkpoint.KeyReport`.

    Raises:
        ValueError: no ``prefix`` keys; a backbone weight other than the
            MAE-only ones missing (e.g. a ResNet or a shallower ViT); or a
            tensor whose shape cannot be adapted; or a dropped tensor
            that changes the function. The message names the
            file and the keys.
    """
    return adapt_vit_checkpoint(
        state_dict,
        target,
        model='mmseg MAE',
        checkpoint=source,
        prefix=prefix,
        allow_missing=_MAY_BE_NEW,
        allow_partial=allow_partial,
        allow_dropped=allow_dropped,
        keep_init=keep_init)
