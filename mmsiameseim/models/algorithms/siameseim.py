"""The SiameseIM algorithm (:class:`SiameseIM`, its DDP wrapper for exact
accumulation), its momentum target (:class:`MomentumTarget`) and the
build-time check of its parts.

**The SiameseIM encoder interface.** A backbone implements it when it
has:

``accepts_patch_mask = True``
    A class attribute declaring the ``forward`` below. (mmpretrain's
    ``MAEViT`` also has a ``forward(x, mask)``, but its ``mask`` is a flag
    that draws a random mask and it returns a tuple, so a signature alone
    cannot tell.)
``forward(x, mask=None)``
    ``x``: images (B, C, H, W). ``mask``: boolean patch mask (B, h * w) or
    (B, h, w), True = masked, the same number of masked patches in every
    sample; None encodes every patch. Returns one tensor
    (B, 1 + visible patches, embed_dims): the cls token first, then the
    visible patch tokens in row-major grid order, with their absolute
    position embedding added. The target branch calls it without a mask
    (on a smaller view, with the low-resolution target option).
``embed_dims``
    Token width (int); the neck's ``in_channels`` must equal it.
``patch_resolution``
    Patch grid (h, w) of a view at the configured image size; the neck's
    ``grid_size`` must equal it.
``patch_embed.projection``
    The patch-embedding convolution (mmpretrain's ``PatchEmbed``): its
    ``stride`` is the patch size and its ``in_channels`` the image
    channels, which the pixel target needs.

``SiameseIMViT`` implements it for mmpretrain's whole ``VisionTransformer``
family (every arch and the options that make sense for masked
pretraining).
"""
import inspect
from math import cos, pi
from typing import Dict, List, Optional, Sequence, Union

import torch
import torch.nn as nn
from mmengine.logging import MessageHub
from mmengine.optim import OptimWrapper
from mmengine.utils import to_2tuple
from mmpretrain.models.backbones import VisionTransformer
from mmpretrain.models.selfsup.base import BaseSelfSupervisor
from mmpretrain.models.utils import CosineEMA
from mmpretrain.registry import MODELS
from mmpretrain.structures import DataSample

from ..backbones.siameseim_vit import set_activation_checkpointing
from ..utils.geometry import PatchGrid, batch_geometry
from ..utils.pipeline_check import check_patch_grid
from .exact_accumulation import (SiameseIMDistributedDataParallel,
                                 accumulated_train_step, check_micro_batches)

INTERFACE = ('the SiameseIM encoder interface (accepts_patch_mask = True, '
             'forward(x, mask) returning the cls token and the visible patch '
             'tokens, embed_dims, patch_resolution, patch_embed.projection; '
             'see mmsiameseim.models.algorithms.siameseim)')


def _forward_params(module: nn.Module) -> List[str]:
    return list(inspect.signature(module.forward).parameters)


def check_masked_encoder(backbone: nn.Module) -> None:
    """Raise a TypeError naming the interface and what ``backbone`` lacks."""
    projection = getattr(backbone, 'patch_embed', None)
    has = {
        'accepts_patch_mask = True':
        getattr(backbone, 'accepts_patch_mask', False) is True,
        'forward(x, mask)':
        _forward_params(backbone)[1:2] == ['mask'],
        'embed_dims':
        isinstance(getattr(backbone, 'embed_dims', None), int),
        'patch_resolution':
        len(tuple(getattr(backbone, 'patch_resolution', ()))) == 2,
        'patch_embed.projection':
        hasattr(getattr(projection, 'projection', None), 'stride'),
    }
    missing = [need for need, ok in has.items() if not ok]
    if missing:
        hint = (" For mmpretrain's ViT family use type='SiameseIMViT', which "
                'takes the same arch and options.') if isinstance(
                    backbone, VisionTransformer) else ''
        raise TypeError(f'SiameseIM backbone {type(backbone).__name__} does '
                        f'not implement {INTERFACE}: it lacks '
                        f'{", ".join(missing)}.{hint}')


def check_siameseim_parts(backbone: nn.Module, neck: nn.Module,
                          head: nn.Module, target_type: str) -> None:
    """Check at build time that a SiameseIM model's parts fit together, so
    that a bad combination fails with the component and what it needs
    instead of a shape error at the first step.

    Args:
        backbone (nn.Module): Must implement the encoder interface.
        neck (nn.Module): Needs ``projector`` (averaged by the target
            branch), ``forward(x, mask, offsets)`` and ``in_channels``,
            ``grid_size``, ``embed_dims``, ``out_channels`` matching the
            backbone (e.g. ``RelPosDecoderNeck``).
        head (nn.Module): Needs ``loss(pred, target)``.
        target_type (str): 'feature' or 'pixel'.
    """
    check_masked_encoder(backbone)
    neck_name, name = type(neck).__name__, type(backbone).__name__
    lacks = [
        k for k in ('projector', 'in_channels', 'grid_size', 'embed_dims',
                    'out_channels') if not hasattr(neck, k)
    ] + ['forward(x, mask, offsets)'] * (
        _forward_params(neck)[:3] != ['x', 'mask', 'offsets'])
    if lacks:
        raise TypeError(
            f'SiameseIM neck {neck_name} lacks {", ".join(lacks)}: it must '
            'project encoder tokens and predict view b from view a, as '
            'RelPosDecoderNeck does')
    if not callable(getattr(head, 'loss', None)):
        raise TypeError(f'SiameseIM head {type(head).__name__} has no '
                        'loss(pred, target), e.g. use UniGradHead')
    dims, grid = backbone.embed_dims, tuple(backbone.patch_resolution)
    conv = backbone.patch_embed.projection
    patch = to_2tuple(conv.stride)
    out, what = (neck.embed_dims, 'the target features (neck.embed_dims)'
                 ) if target_type == 'feature' else (
                     patch[0] * patch[1] * conv.in_channels,
                     'a pixel patch (patch_size**2 * in_channels)')
    for wrong, message in (
        (neck.in_channels
         != dims, f'in_channels={neck.in_channels} but backbone {name} gives '
         f'embed_dims={dims} tokens; set neck.in_channels={dims}'),
        (tuple(to_2tuple(neck.grid_size))
         != grid, f'grid_size={neck.grid_size} but backbone {name} has a '
         f'{grid[0]}x{grid[1]} patch grid (img_size / patch_size); set '
         'neck.grid_size to match'),
        (neck.out_channels != out,
         f'predicts {neck.out_channels} channels ({target_type} target), '
         f'but {what} has {out}; set neck.out_channels={out}')):
        if wrong:
            raise ValueError(f'SiameseIM: neck {neck_name} {message}')


@MODELS.register_module()
class MomentumTarget(CosineEMA):
    """Momentum (EMA) copy of the online branch, with a cosine schedule.

    Same convention as mmpretrain's ``CosineEMA``: ``target = (1 - m) *
    target + m * online`` with ``m`` going from ``momentum`` to
    ``end_momentum`` on a cosine over the training iterations (0.005 -> 0 is
    the authors' 0.995 -> 1). Two differences:

    * the first update averages like every other one. mmengine's EMA copies
      the online weights on its first update, which would throw away a
      target loaded from a checkpoint; here the copy is explicit
      (:meth:`copy_from`, called after weight initialisation);
    * the update is one fused ``torch._foreach_lerp_`` over all tensors, and
      the schedule position comes from the message hub's ``iter`` (a Python
      int), so updating needs no host-device synchronisation.

    Args:
        model (nn.Module): Online module to average.
        momentum (float): Start momentum, in (0, 1). Defaults to 0.005.
        end_momentum (float): End momentum, in [0, 1). Defaults to 0.
    """

    def __init__(self,
                 model: nn.Module,
                 momentum: float = 0.005,
                 end_momentum: float = 0.) -> None:
        for name, value, low_open in (('base_momentum', momentum, True),
                                      ('end_momentum', end_momentum, False)):
            if isinstance(
                    value,
                    bool) or not isinstance(value, (int, float)) or not (
                        (0 < value if low_open else 0 <= value) and value < 1):
                raise ValueError(
                    f'SiameseIM: model.{name}={value!r} must be in '
                    f'{"(0, 1)" if low_open else "[0, 1)"} (mmpretrain\'s '
                    'convention: the weight of the online model in each '
                    'update; 0.005 is the authors\' 0.995); a value of 1 '
                    'or more would copy or extrapolate past the online '
                    'weights')
        super().__init__(model, momentum=momentum, end_momentum=end_momentum)
        self._targets = list(self.module.parameters())

    def current_momentum(self) -> float:
        """Momentum for this iteration (constant without a known schedule)."""
        hub = MessageHub.get_current_instance()
        max_iters = hub.get_info('max_iters')
        if not max_iters:
            return self.momentum
        step = hub.get_info('iter')
        step = int(self.steps) if step is None else step
        # never past the schedule's end (the cosine would rise again)
        step = min(max(step, 0), max_iters)
        annealing = (cos(pi * step / float(max_iters)) + 1) / 2
        return self.end_momentum - (self.end_momentum -
                                    self.momentum) * annealing

    @torch.no_grad()
    def update_parameters(self,
                          model: nn.Module,
                          momentum: Optional[float] = None) -> None:
        momentum = self.current_momentum() if momentum is None else momentum
        sources = [p.detach() for p in model.parameters()]
        if len(sources) != len(self._targets):
            raise ValueError('the online model does not match the target: '
                             f'{len(sources)} vs {len(self._targets)} tensors')
        torch._foreach_lerp_(self._targets, sources, momentum)
        self.steps += 1

    @torch.no_grad()
    def copy_from(self, model: nn.Module) -> None:
        """Make the target an exact copy of ``model`` (parameters and
        buffers)."""
        self.module.load_state_dict(model.state_dict())


def patchify(images: torch.Tensor, patch_size: int) -> torch.Tensor:
    """(B, C, H, W) images -> (B, H/p * W/p, p * p * C) pixel patches, in the
    backbone's row-major patch order."""
    B, C, H, W = images.shape
    h, w = H // patch_size, W // patch_size
    x = images.reshape(B, C, h, patch_size, w, patch_size)
    return x.permute(0, 2, 4, 3, 5, 1).reshape(B, h * w, -1)


@MODELS.register_module()
class SiameseIM(BaseSelfSupervisor):
    """Siamese Image Modeling (Tao et al., CVPR 2023).

    The online branch encodes the visible patches of view a, projects them
    and predicts, for every patch of view b, the target branch's features of
    view b; the predictor is told where each patch of view b lies in view a
    (relative position embedding). The target branch is a momentum copy of
    the backbone and projector and sees all of view b.

    The parts are checked when the model is built: the backbone must
    implement the SiameseIM encoder interface
    (:mod:`mmsiameseim.models.algorithms.siameseim`; ``SiameseIMViT``
    does, for every mmpretrain ``VisionTransformer`` arch), and the neck's
    widths and grid must match it. Every batch is checked against the
    model's patch grid before its forward (:func:`batch_geometry`), so a
    crop or mask off the grid fails at the first step whichever loop trains
    the model.

    Args:
        backbone (dict): Online encoder implementing the SiameseIM encoder
            interface, e.g. ``SiameseIMViT``.
        neck (dict): ``RelPosDecoderNeck`` (projector + predictor).
        head (dict): ``UniGradHead``.
        base_momentum (float): Start momentum of the target, in (0, 1)
            (mmpretrain convention: 0.005 = the authors' 0.995). Defaults
            to 0.005.
        end_momentum (float): End momentum, in [0, 1). Defaults to 0.
        target_type (str): What the predictor predicts for view b:
            'feature' (the target branch's features, the authors' default)
            or 'pixel' (view b's normalised pixel patches, no target branch;
            the neck's ``out_channels`` must be ``patch_size**2 * C``).
            Defaults to 'feature'.
        micro_batches (int): Exact gradient accumulation: each training
            batch of B images is trained as ``micro_batches`` parts as
            even as B allows (an epoch's ragged last batch too; parts
            weighted by their images), one part's activations at a time,
            with the
            gradient of the whole batch: the targets of every part are
            computed first (the target branch has no gradient), the UniGrad
            correlation is taken over all of them (and all ranks), and each
            part's loss uses it. One optimizer step and one momentum update
            per batch (with mmengine's ``accumulative_counts`` on top, per
            that many batches, each exact in itself). Not exact: the
            neck's BatchNorm normalises each part by its own statistics
            (docs/pretraining/memory.md). 1: no splitting. Defaults to 1.
        activation_checkpointing (bool): Recompute the online encoder's and
            the predictor's block activations in backward instead of
            keeping them (``torch.utils.checkpoint``): same gradients, less
            memory, more time. Defaults to False.
        pretrained (str, optional): Deprecated mmpretrain argument.
        data_preprocessor (dict, optional): Defaults to None.
        init_cfg (dict | list, optional): Defaults to None.
    """

    def __init__(self,
                 backbone: dict,
                 neck: dict,
                 head: dict,
                 base_momentum: float = 0.005,
                 end_momentum: float = 0.,
                 target_type: str = 'feature',
                 micro_batches: int = 1,
                 activation_checkpointing: bool = False,
                 pretrained: Optional[str] = None,
                 data_preprocessor: Optional[dict] = None,
                 init_cfg: Optional[Union[List[dict], dict]] = None) -> None:
        super().__init__(
            backbone=backbone,
            neck=neck,
            head=head,
            pretrained=pretrained,
            data_preprocessor=data_preprocessor,
            init_cfg=init_cfg)
        if target_type not in ('feature', 'pixel'):
            raise ValueError("target_type must be 'feature' or 'pixel', got "
                             f'{target_type!r}')
        self.target_type = target_type
        check_siameseim_parts(self.backbone, self.neck, self.head, target_type)
        self.micro_batches = check_micro_batches(micro_batches, self.head)
        self.activation_checkpointing = activation_checkpointing
        if activation_checkpointing:
            for part in (self.backbone, self.neck):
                set_activation_checkpointing(part)
        self.target = MomentumTarget(
            self.online(), momentum=base_momentum,
            end_momentum=end_momentum) if target_type == 'feature' else None

    def online(self) -> nn.Module:
        """The online modules that the target averages."""
        return nn.ModuleDict(
            dict(backbone=self.backbone, projector=self.neck.projector))

    def init_weights(self) -> None:
        super().init_weights()
        if self.target is not None:
            self.target.copy_from(self.online())

    def extract_feat(self,
                     inputs: Union[torch.Tensor, List[torch.Tensor]],
                     data_samples: Optional[List[DataSample]] = None,
                     **kwargs) -> torch.Tensor:
        """Online backbone tokens (B, 1 + L, C) of whole images."""
        if isinstance(inputs, (list, tuple)):
            inputs = inputs[0]
        return self.backbone(inputs)

    @property
    def ddp_wrapper(self) -> Optional[type]:
        """The DDP wrapper a multi-process run of this model needs where
        its config names none (``FaultTolerantRunner`` reads it): the one
        that runs the exact accumulation when ``micro_batches`` > 1."""
        return SiameseIMDistributedDataParallel \
            if self.micro_batches > 1 else None

    @property
    def patch_grid(self) -> PatchGrid:
        """The patch grid this model's batches must be on: the backbone's patch
        size and the neck's grids."""
        return PatchGrid(self.backbone.patch_embed.projection.stride,
                         self.neck.grid_size, self.neck.target_grid_size)

    def check_train_pipeline(self, transforms: Sequence) -> None:
        """Refuse a training pipeline (its built transforms) whose crop or mask
        generator is off this model's patch grid, before any data is loaded
        (see :func:`~mmsiameseim.models.utils.pipeline_check.check_patch_grid`;
        training itself checks every batch with :func:`batch_geometry`)."""
        check_patch_grid(transforms, self.patch_grid)

    @torch.compiler.disable  # per-sample Python and numpy values
    def forward(self,
                inputs: Union[torch.Tensor, List[torch.Tensor]],
                data_samples: Optional[List[DataSample]] = None,
                mode: str = 'tensor',
                **kwargs):
        """mmpretrain's forward; ``mode='loss'`` passes ``kwargs`` (a
        precomputed ``target``) on to :meth:`loss`."""
        if mode == 'loss':
            return self.loss(inputs, data_samples, **kwargs)
        return super().forward(inputs, data_samples, mode)

    def target_features(self, view_b: torch.Tensor) -> torch.Tensor:
        """What the predictions of view b are scored against: the target
        branch's projected patch tokens (no gradient), or view b's pixel
        patches."""
        if self.target is None:
            patch = self.backbone.patch_embed.projection.stride[0]
            return patchify(view_b, patch)
        with torch.no_grad():
            target = self.target.module['backbone'](view_b)
            return self.target.module['projector'](target)[:, 1:]

    def loss(self,
             inputs: List[torch.Tensor],
             data_samples: List[DataSample],
             update_target: bool = True,
             target: Optional[torch.Tensor] = None,
             corr: Optional[torch.Tensor] = None,
             **kwargs) -> Dict[str, torch.Tensor]:
        """Loss of one step.

        Args:
            inputs (list[Tensor]): ``[view_a, view_b]``, each (B, C, H, W).
            data_samples (list[DataSample]): With ``mask``, ``crop_boxes``,
                ``flips`` and ``crop_source_shape`` (see
                :func:`batch_geometry`).
            update_target (bool): Apply the momentum update (before the
                target forward, as the authors do). Defaults to True.
            target (Tensor, optional): View b's targets, computed already
                (:meth:`target_features`; exact accumulation): no momentum
                update and no target forward here. Defaults to None.
            corr (Tensor, optional): With ``target``, the UniGrad
                correlation held fixed (exact accumulation: the whole
                batch's), passed to the head. Defaults to None.

        Returns:
            dict: ``loss``; for logging, the target ``momentum`` used
            (feature targets only) and the head's loss terms
            (``alignment`` and ``correlation`` with ``UniGradHead``, which
            sum to the loss); and what :meth:`extra_losses` returns.
        """
        view_a, view_b = inputs[0], inputs[1]
        geo = batch_geometry(data_samples, self.patch_grid, view_a.device,
                             (view_a, view_b))
        latent = self.backbone(view_a, geo.mask)
        pred = self.neck(latent, geo.mask, geo.offsets)
        if target is not None or self.target is None:
            if target is None:
                target = self.target_features(view_b)
            if corr is None:  # heads other than UniGradHead take no corr
                losses = dict(loss=self.head.loss(pred, target))
            else:
                losses = dict(loss=self.head.loss(pred, target, corr=corr))
        else:
            momentum = self.target.current_momentum()
            if update_target:
                self.target.update_parameters(self.online(), momentum)
            target = self.target_features(view_b)
            loss = self.head.loss(pred, target)
            losses = dict(loss=loss, momentum=loss.new_tensor(momentum))
        losses.update(getattr(self.head, 'last_terms', None) or {})
        losses.update(
            self.extra_losses(
                inputs,
                data_samples,
                latent=latent,
                pred=pred,
                target=target,
                mask=geo.mask))
        return losses

    def extra_losses(self, inputs: List[torch.Tensor],
                     data_samples: List[DataSample], latent: torch.Tensor,
                     pred: torch.Tensor, target: torch.Tensor,
                     mask: torch.Tensor) -> Dict[str, torch.Tensor]:
        """The extension point of a subclass that adds loss terms or logged
        metrics: called by :meth:`loss` with this step's tensors, on every
        path (one process or DDP, and each part of ``micro_batches``, whose
        values are averaged over the parts by their images). A key that
        contains ``loss`` is added to the total by mmengine's
        ``parse_losses``; any other key is only logged. The default adds
        nothing.

        Args:
            inputs (list[Tensor]): ``[view_a, view_b]`` of this step (or
                part).
            data_samples (list[DataSample]): Their samples.
            latent (Tensor): The online encoder's tokens of view a
                (B, 1 + visible, C).
            pred (Tensor): The neck's predictions for view b (B, N_b, D).
            target (Tensor): What they are scored against (no gradient).
            mask (Tensor): View a's patch mask (B, h * w), True = masked.

        Returns:
            dict[str, Tensor]: Scalars (or tensors that mmengine averages).
        """
        return {}

    def train_step(self, data: Union[dict, tuple, list],
                   optim_wrapper: OptimWrapper) -> Dict[str, torch.Tensor]:
        """mmengine's train step; with ``micro_batches`` > 1, the exact
        accumulation (:mod:`.exact_accumulation`)."""
        if self.micro_batches == 1:
            return super().train_step(data, optim_wrapper)
        return accumulated_train_step(self, data, optim_wrapper)
