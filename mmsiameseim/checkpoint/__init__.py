"""Reading pretraining checkpoints and adapting them to a ViT's weights:
one reader, one coverage check, one adapter, and the strict ``Pretrained``
initializer of scope ``mmsiameseim`` that uses them."""
from .coverage import check_coverage, describe_keys, read_state_dict
from .finite import check_finite, nonfinite_tensors
from .strict_pretrained_init import StrictPretrainedInit
from .vit_adapter import (KeyReport, adapt_in_channels, adapt_vit_checkpoint,
                          grid_side, resize_pos_embed_to, strip_prefix)

__all__ = [
    'check_coverage', 'check_finite', 'describe_keys', 'nonfinite_tensors',
    'read_state_dict',
    'StrictPretrainedInit', 'KeyReport', 'adapt_in_channels',
    'adapt_vit_checkpoint', 'grid_side', 'resize_pos_embed_to',
    'strip_prefix'
]
