from typing import Optional, Sequence

import torch
from mmengine.logging import MMLogger, print_log
from mmengine.model.weight_init import PretrainedInit, update_init_info

from ..registry import WEIGHT_INITIALIZERS
from .finite import check_finite
from .reader import read_state_dict
from .vit_adapter import adapt_vit_checkpoint


@WEIGHT_INITIALIZERS.register_module(name='Pretrained')
class StrictPretrainedInit(PretrainedInit):
    """Mmengine's ``Pretrained`` initialisation that refuses a checkpoint which
    does not supply the module's weights.

    mmengine's ``PretrainedInit`` loads non-strictly and only logs what did
    not match, so a wrong file (a ResNet, a detector, another ViT width)
    leaves the backbone at random initialisation and training goes on. This
    one loads the same way (``prefix`` stripped; the module's own
    load hooks run, e.g. ``VisionTransformer`` resizing ``pos_embed``) but
    first checks the keys (:func:`adapt_vit_checkpoint`, shapes left to
    the module's hooks): every weight of the
    module must come from the checkpoint except those matching
    ``allow_missing``; a tensor of the wrong shape, and weights holding NaN
    or inf, are refused too. The errors name the file, the missing,
    misshapen or non-finite keys and what the file holds.

    Select it in a config with the scope ``mmsiameseim`` (the type stays
    ``'Pretrained'``, which mmengine's ``BaseModule`` and mmpretrain's
    ``VisionTransformer`` recognise: it runs after every other
    initialisation and the loaded position embedding is kept)::

        init_cfg=dict(type='Pretrained', _scope_='mmsiameseim',
                      checkpoint=PATH, prefix='backbone.')

    Args:
        checkpoint (str): The checkpoint file (or URL).
        prefix (str, optional): Prefix of the module's keys in the
            checkpoint, e.g. ``'backbone.'``. None: the whole checkpoint.
        map_location (str): Where to load the tensors. Defaults to 'cpu'.
        allow_missing (Sequence[str]): ``fnmatch`` patterns of module keys
            that may be absent from the checkpoint and keep their
            initialisation. Defaults to ``('ln1.*', 'ln2.*')``: the final
            norm and the pooled-feature norm of mmpretrain's
            ``VisionTransformer``, which a SiameseIM encoder (pretrained
            without a final norm) does not have; they start as identity.
        allow_partial (bool): Accept a checkpoint that lacks other weights
            too (they keep their initialisation; the counts and names are
            logged at WARNING). A checkpoint that supplies none is refused
            even then. Defaults to False.
        allow_dropped (bool): Load even when a checkpoint tensor the module
            has no place for changes what it computes (a layer scale that is
            not 1, a non-zero relative position table, another block
            weight); dropped tensors are named at WARNING either way.
            Defaults to False.
    """

    def __init__(self,
                 checkpoint: str,
                 prefix: Optional[str] = None,
                 map_location: str = 'cpu',
                 allow_missing: Sequence[str] = ('ln1.*', 'ln2.*'),
                 allow_partial: bool = False,
                 allow_dropped: bool = False):
        super().__init__(checkpoint, prefix=prefix, map_location=map_location)
        self.allow_missing = tuple(allow_missing)
        self.allow_partial = allow_partial
        self.allow_dropped = allow_dropped

    def __call__(self, module):
        name = type(module).__name__
        if not self.checkpoint:
            raise ValueError(
                f'{name}: init_cfg Pretrained has no checkpoint; pass '
                '--cfg-options model.backbone.init_cfg.checkpoint=PATH')
        file_state = read_state_dict(self.checkpoint, self.map_location)
        prefix = self.prefix or ''
        check_finite(
            {
                k: v
                for k, v in file_state.items() if k.startswith(prefix)
            }, f'{self.checkpoint} (prefix {prefix!r})')
        state, report = adapt_vit_checkpoint(
            file_state,
            module.state_dict(),
            model=name,
            checkpoint=self.checkpoint,
            prefix=prefix,
            allow_missing=self.allow_missing,
            allow_partial=self.allow_partial,
            allow_dropped=self.allow_dropped,
            adapt_shapes=False)
        try:  # the module's own load hooks adapt what they know
            module.load_state_dict(state, strict=False)
        except RuntimeError as e:  # tensors of the wrong shape
            raise ValueError(f'{self.checkpoint} (prefix {report.prefix!r})'
                             f': its tensors do not fit {name}: {e}') from e
        print_log(
            report.format(f'{name} <- {self.checkpoint}'), logger='current')
        if hasattr(module, '_params_init_info'):
            update_init_info(module, init_info=self._get_init_info())


def init_weights_quietly(module: torch.nn.Module) -> None:
    """``module.init_weights()`` with mmengine's line per tensor (its name,
    shape and where its value came from, e.g. 'load from FILE') at DEBUG
    level: without a log file, mmengine prints those lines on the console
    at INFO, hundreds for a ViT, around a tool's one-line result. The
    initializers' own summaries keep their level."""
    logger = MMLogger.get_current_instance()

    def dump() -> None:
        info = getattr(module, '_params_init_info', {})
        for name, param in module.named_parameters():
            logger.debug(f'{name} - {tuple(param.shape)}: '
                         f"{info.get(param, {}).get('init_info')}")

    module._dump_init_info = dump
    try:
        module.init_weights()
    finally:
        del module._dump_init_info
