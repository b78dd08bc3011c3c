"""Reading pretraining checkpoints and adapting them to a ViT's weights:

one reader, one coverage check, one check of the tensors a model drops, one
adapter, and the strict ``Pretrained`` initializer of scope ``mmsiameseim``
that uses them.
"""
from .coverage import check_coverage
from .dropped import changes_function, check_dropped
from .finite import check_finite, nonfinite_tensors
from .keys import describe_keys, group_keys, short_list, strip_prefix
from .reader import (STATE_DICT_KEYS, CheckpointState, read_checkpoint,
                     read_checkpoint_state, read_state_dict)
from .strict_pretrained_init import StrictPretrainedInit, init_weights_quietly
from .vit_adapter import (KeyReport, adapt_in_channels, adapt_vit_checkpoint,
                          grid_side, resize_pos_embed_to)

__all__ = [
    'check_coverage', 'changes_function', 'check_dropped', 'check_finite',
    'nonfinite_tensors', 'describe_keys', 'group_keys', 'short_list',
    'strip_prefix', 'STATE_DICT_KEYS', 'CheckpointState', 'read_checkpoint',
    'read_checkpoint_state', 'read_state_dict', 'StrictPretrainedInit',
    'init_weights_quietly', 'KeyReport', 'adapt_in_channels',
    'adapt_vit_checkpoint', 'grid_side', 'resize_pos_embed_to'
]
