from contextlib import nullcontext
from typing import Dict, List, Optional, Sequence, Union

import torch
import torch.nn as nn
from mmengine.model import MMDistributedDataParallel
from mmengine.optim import OptimWrapper
from mmengine.registry import MODEL_WRAPPERS
from mmpretrain.models.selfsup.base import BaseSelfSupervisor
from mmpretrain.registry import MODELS
from mmpretrain.structures import DataSample

from ..losses.unigrad_loss import all_reduce_mean
from ..utils.activation_checkpointing import set_activation_checkpointing
from ..utils.batch_geometry import (CropPairOffsets, PatchGrid, batch_geometry,
                                    check_patch_grid)
from ..utils.encoder_interface import (check_micro_batches,
                                       check_siameseim_parts)
from ..utils.momentum_target import MomentumTarget


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
    (:mod:`mmsiameseim.models.utils.encoder_interface`; ``SiameseIMViT``
    does, for every mmpretrain ``VisionTransformer`` arch), and the neck's
    widths and grid must match it. Every batch is checked against the
    model's patch grid before its forward (:meth:`geometry`), so a crop or
    mask off the grid fails at the first step whichever loop trains the
    model.

    Args:
        backbone (dict): Online encoder implementing the SiameseIM encoder
            interface, e.g. ``SiameseIMViT``.
        neck (dict): ``RelPosDecoderNeck`` (projector + predictor).
        head (dict): ``UniGradHead``.
        base_momentum (float): Start momentum of the target (mmpretrain
            convention: 0.005 = the authors' 0.995). Defaults to 0.005.
        end_momentum (float): End momentum. Defaults to 0.
        target_type (str): What the predictor predicts for view b:
            'feature' (the target branch's features, the authors' default)
            or 'pixel' (view b's normalised pixel patches, no target branch;
            the neck's ``out_channels`` must be ``patch_size**2 * C``).
            Defaults to 'feature'.
        micro_batches (int): Exact gradient accumulation: each training
            batch of B images is trained as ``micro_batches`` parts of
            B / micro_batches, one part's activations at a time, with the
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
            self._online(), momentum=base_momentum,
            end_momentum=end_momentum) if target_type == 'feature' else None

    def _online(self) -> nn.Module:
        """The online modules that the target averages."""
        return nn.ModuleDict(
            dict(backbone=self.backbone, projector=self.neck.projector))

    def init_weights(self) -> None:
        super().init_weights()
        if self.target is not None:
            self.target.copy_from(self._online())

    def extract_feat(self,
                     inputs: Union[torch.Tensor, List[torch.Tensor]],
                     data_samples: Optional[List[DataSample]] = None,
                     **kwargs) -> torch.Tensor:
        """Online backbone tokens (B, 1 + L, C) of whole images."""
        if isinstance(inputs, (list, tuple)):
            inputs = inputs[0]
        return self.backbone(inputs)

    @property
    def patch_grid(self) -> PatchGrid:
        """The patch grid this model's batches must be on: the backbone's patch
        size and the neck's grids."""
        return PatchGrid(self.backbone.patch_embed.projection.stride,
                         self.neck.grid_size, self.neck.target_grid_size)

    def check_train_pipeline(self, transforms: Sequence) -> None:
        """Refuse a training pipeline (its built transforms) whose crop or mask
        generator is off this model's patch grid, before any data is loaded
        (see :func:`~mmsiameseim.models.utils.batch_geometry.check_patch_grid`;
        training itself checks every batch in :meth:`geometry`)."""
        check_patch_grid(transforms, self.patch_grid)

    @torch.compiler.disable  # per-sample Python and numpy values
    def geometry(
        self,
        data_samples: List[DataSample],
        device: torch.device,
        views: Optional[Sequence[torch.Tensor]] = None
    ) -> Dict[str, Union[torch.Tensor, CropPairOffsets]]:
        """Mask and crop-pair offsets of a batch, on ``device``, checked
        against the model's patch grid
        (:func:`~mmsiameseim.models.utils.batch_geometry.batch_geometry`).

        Each sample needs ``mask`` (on the neck's ``grid_size``),
        ``crop_boxes`` and ``flips`` (set by ``TwoViewRandomResizedCrop``),
        and the size of the image the crops were taken from:
        ``crop_source_shape`` (set by the crop too; pack it with the
        algorithm keys) or, when a sample has none, its ``ori_shape``
        metainfo (samples built by hand, see
        :func:`~mmsiameseim.models.utils.batch_geometry.crop_source_shapes`).
        A sample with neither is refused.

        Args:
            data_samples (list[DataSample]): The batch's samples.
            device (torch.device): Where the outputs go.
            views (Sequence[Tensor], optional): ``[view_a, view_b]``, whose
                sizes are checked too (the crop's ``size`` and
                ``target_size``).

        Returns:
            dict: ``mask`` (B, L) bool, True = masked, and ``offsets``
            (:class:`CropPairOffsets`).
        """
        return batch_geometry(data_samples, self.patch_grid, device,
                              views)._asdict()

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
             **kwargs) -> Dict[str, torch.Tensor]:
        """Loss of one step.

        Args:
            inputs (list[Tensor]): ``[view_a, view_b]``, each (B, C, H, W).
            data_samples (list[DataSample]): With ``mask``, ``crop_boxes``,
                ``flips`` and ``crop_source_shape`` (see :meth:`geometry`).
            update_target (bool): Apply the momentum update (before the
                target forward, as the authors do). Defaults to True.
            target (Tensor, optional): View b's targets, computed already
                (:meth:`target_features`; exact accumulation): no momentum
                update and no target forward here. Defaults to None.

        Returns:
            dict: ``loss`` and, for logging, the target ``momentum`` used
            (feature targets only).
        """
        view_a, view_b = inputs[0], inputs[1]
        geo = self.geometry(data_samples, view_a.device, (view_a, view_b))
        latent = self.backbone(view_a, geo['mask'])
        pred = self.neck(latent, geo['mask'], geo['offsets'])
        if target is not None or self.target is None:
            if target is None:
                target = self.target_features(view_b)
            return dict(loss=self.head.loss(pred, target))
        momentum = self.target.current_momentum()
        if update_target:
            self.target.update_parameters(self._online(), momentum)
        loss = self.head.loss(pred, self.target_features(view_b))
        return dict(loss=loss, momentum=loss.new_tensor(momentum))

    def train_step(self, data: Union[dict, tuple, list],
                   optim_wrapper: OptimWrapper) -> Dict[str, torch.Tensor]:
        """mmengine's train step; with ``micro_batches`` > 1, the exact
        accumulation of :meth:`accumulated_train_step`."""
        if self.micro_batches == 1:
            return super().train_step(data, optim_wrapper)
        return self.accumulated_train_step(data, optim_wrapper)

    def accumulated_train_step(
            self,
            data: Union[dict, tuple, list],
            optim_wrapper: OptimWrapper,
            wrapper: Optional[nn.Module] = None) -> Dict[str, torch.Tensor]:
        """One optimizer step on a batch trained in ``micro_batches`` parts
        with the whole batch's gradient (see the class's Args).

        Args:
            data: The data loader's batch.
            optim_wrapper (OptimWrapper): Steps once, after the last part.
            wrapper (nn.Module, optional): The DDP wrapper the parts'
                forwards go through (its gradient all-reduce runs with the
                last part only). Defaults to None (this model).
        """
        k = self.micro_batches
        with optim_wrapper.optim_context(self):
            data = self.data_preprocessor(data, True)
        inputs, samples = data['inputs'], data['data_samples']
        if len(samples) % k:
            raise ValueError(
                f'SiameseIM micro_batches={k}: the batch of {len(samples)} '
                'images does not split into equal parts; set the data '
                "loader's batch_size to a multiple of micro_batches")
        size = len(samples) // k
        parts = [([view[i * size:(i + 1) * size]
                   for view in inputs], samples[i * size:(i + 1) * size])
                 for i in range(k)]
        logs = {}
        with optim_wrapper.optim_context(self):
            if self.target is not None:
                momentum = self.target.current_momentum()
                self.target.update_parameters(self._online(), momentum)
                logs['momentum'] = torch.tensor(momentum, dtype=torch.float32)
            targets = [self.target_features(views[1]) for views, _ in parts]
        corr = all_reduce_mean(
            sum(self.head.correlation(t) for t in targets) / k)
        # mmengine's accumulative_counts on top (batches of one step each
        # exact, accumulated over iterations as mmengine does): its loss
        # scale and gradient sync are decided once per iteration
        scale = optim_wrapper.scale_loss(torch.ones(())) / k
        sync_last = optim_wrapper.should_sync()
        model = wrapper or self
        no_sync = getattr(model, 'no_sync', None)
        losses = []
        for i, ((views, part), target) in enumerate(zip(parts, targets)):
            sync = i == k - 1 and sync_last
            with nullcontext() if sync or no_sync is None else no_sync():
                with optim_wrapper.optim_context(self), \
                        self.head.fixed_correlation(corr):
                    loss = model(views, part, mode='loss', target=target)
                loss, _ = self.parse_losses(loss)
                optim_wrapper.backward(loss * scale)
            losses.append(loss.detach())
        # one iteration, whatever the number of parts
        optim_wrapper._inner_count -= k - 1
        if optim_wrapper.should_update():
            optim_wrapper.step()
            optim_wrapper.zero_grad()
        logs['loss'] = torch.stack(losses).mean()
        return logs


@MODEL_WRAPPERS.register_module()
class SiameseIMDistributedDataParallel(MMDistributedDataParallel):
    """mmengine's DDP wrapper that trains a ``SiameseIM`` with
    ``micro_batches`` > 1 through its exact accumulation (the parts'
    forwards go through DDP; gradients are all-reduced once, with the last
    part).

    ``FaultTolerantRunner`` picks it for such a model; other models
    train as with ``MMDistributedDataParallel``.
    """

    def train_step(self, data: Union[dict, tuple, list],
                   optim_wrapper: OptimWrapper) -> Dict[str, torch.Tensor]:
        if getattr(self.module, 'micro_batches', 1) == 1:
            return super().train_step(data, optim_wrapper)
        return self.module.accumulated_train_step(
            data, optim_wrapper, wrapper=self)
