from typing import Dict, List, Optional, Sequence, Union

import torch
import torch.nn as nn
from mmpretrain.models.selfsup.base import BaseSelfSupervisor
from mmpretrain.registry import MODELS
from mmpretrain.structures import DataSample

from ..utils.batch_geometry import (CropPairOffsets, PatchGrid, batch_geometry,
                                    check_patch_grid)
from ..utils.encoder_interface import check_siameseim_parts
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

    def loss(self,
             inputs: List[torch.Tensor],
             data_samples: List[DataSample],
             update_target: bool = True,
             **kwargs) -> Dict[str, torch.Tensor]:
        """Loss of one step.

        Args:
            inputs (list[Tensor]): ``[view_a, view_b]``, each (B, C, H, W).
            data_samples (list[DataSample]): With ``mask``, ``crop_boxes``,
                ``flips`` and ``crop_source_shape`` (see :meth:`geometry`).
            update_target (bool): Apply the momentum update (before the
                target forward, as the authors do). Defaults to True.

        Returns:
            dict: ``loss`` and, for logging, the target ``momentum`` used
            (feature targets only).
        """
        view_a, view_b = inputs[0], inputs[1]
        geo = self.geometry(data_samples, view_a.device, (view_a, view_b))
        latent = self.backbone(view_a, geo['mask'])
        pred = self.neck(latent, geo['mask'], geo['offsets'])
        if self.target is None:
            patch = self.backbone.patch_embed.projection.stride[0]
            return dict(loss=self.head.loss(pred, patchify(view_b, patch)))
        momentum = self.target.current_momentum()
        if update_target:
            self.target.update_parameters(self._online(), momentum)
        with torch.no_grad():
            target = self.target.module['backbone'](view_b)
            target = self.target.module['projector'](target)[:, 1:]
        loss = self.head.loss(pred, target)
        return dict(loss=loss, momentum=loss.new_tensor(momentum))
