from mmengine.logging import print_log
from mmseg.models.backbones import MAE
from mmseg.registry import MODELS

from ..checkpoint import read_state_dict
from .mae_checkpoint import siameseim_to_mmseg_mae


@MODELS.register_module()
class SiameseIMMAE(MAE):
    """mmseg's ``MAE`` backbone that loads SiameseIM pretraining checkpoints.

    The network is mmseg's ``MAE`` unchanged (BEiT-style blocks with layer
    scale and a zero-initialised relative position bias per block, plus the
    absolute position embedding); the class name keeps "MAE" so that mmseg's
    ``LayerDecayOptimizerConstructor`` recognises it. With
    ``init_cfg=dict(type='Pretrained', checkpoint=..., prefix='backbone.')``
    the checkpoint is converted by :func:`siameseim_to_mmseg_mae` (position
    embedding resized, 1-channel patch embedding adapted) and every key is
    accounted for in the log: loaded, adapted, new (model's own init),
    dropped. Unlike ``MAE``, which loads with ``strict=False`` silently, a
    missing backbone weight (any but layer scale, relative position bias and
    final norm: a ResNet, a shallower ViT) or a shape that cannot be adapted
    is an error naming the file, the missing keys and what the file holds;
    ``allow_partial=True`` in ``init_cfg`` accepts a partial checkpoint,
    logging the counts at WARNING. Checkpoint tensors the backbone has no
    place for are named at WARNING, and refused when dropping them changes
    what it computes (``allow_dropped=True`` in ``init_cfg`` loads anyway).
    ``keep_init`` in ``init_cfg`` (``fnmatch`` patterns of backbone keys,
    e.g. ``['pos_embed']``) keeps mmseg's own initialisation of those
    weights although the checkpoint holds them; the log names them.

    Args:
        frozen (bool): Keep every weight as loaded (no gradient) and the
            backbone in eval mode (no drop path), for a head trained on
            frozen features (the linear head of the own-folder config).
            Defaults to False.
        **kwargs: ``MAE``'s arguments. ``init_cfg`` may also give ``prefix``
            (default ``'backbone.'``), the prefix of the backbone keys in
            the checkpoint, ``allow_partial`` and ``allow_dropped``
            (default False) and ``keep_init`` (default ()).
    """

    def __init__(self, *args, frozen: bool = False, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.frozen = frozen
        if frozen:
            self.requires_grad_(False)

    def train(self, mode: bool = True) -> 'SiameseIMMAE':
        super().train(mode and not self.frozen)  # BEiT's returns None
        return self

    def init_weights(self) -> None:
        init_cfg = self.init_cfg
        if not (isinstance(init_cfg, dict)
                and init_cfg.get('type') == 'Pretrained'):
            super().init_weights()
            return
        checkpoint = init_cfg.get('checkpoint')
        if not checkpoint:
            raise ValueError(
                f'{type(self).__name__}: init_cfg.checkpoint is empty; pass '
                'the SiameseIM checkpoint, e.g. --cfg-options '
                'model.backbone.init_cfg.checkpoint=PATH')
        # mmseg's own initialisation of every weight first, so that the keys
        # the checkpoint does not have (layer scale, relative position bias)
        # start exactly as in mmseg's MAE.
        self.init_cfg = None
        try:
            super().init_weights()
        finally:
            self.init_cfg = init_cfg
        state_dict = read_state_dict(checkpoint)
        converted, report = siameseim_to_mmseg_mae(
            state_dict,
            self.state_dict(),
            prefix=init_cfg.get('prefix', 'backbone.'),
            source=checkpoint,
            allow_partial=init_cfg.get('allow_partial', False),
            allow_dropped=init_cfg.get('allow_dropped', False),
            keep_init=init_cfg.get('keep_init', ()))
        self.load_state_dict(converted, strict=False)
        print_log(
            report.format(f'SiameseIM -> mmseg MAE {checkpoint}'),
            logger='current')
