from typing import Dict, List, Optional, Sequence, Union

import numpy as np
import torch
import torch.nn as nn
from mmpretrain.models.selfsup.base import BaseSelfSupervisor
from mmpretrain.registry import MODELS
from mmpretrain.structures import DataSample

from ..utils.crop_geometry import (check_boxes_inside, check_mask_grid,
                                   check_patch_grid, crop_source_shapes)
from ..utils.encoder_interface import check_siameseim_parts
from ..utils.momentum_target import MomentumTarget
from ..utils.relative_position import CropPairOffsets, crop_pair_offsets


def patchify(images: torch.Tensor, patch_size: int) -> torch.Tensor:
    """(B, C, H, W) images -> (B, H/p * W/p, p * p * C) pixel patches, in
    the backbone's row-major patch order."""
    B, C, H, W = images.shape
    h, w = H // patch_size, W // patch_size
    x = images.reshape(B, C, h, patch_size, w, patch_size)
    return x.permute(0, 2, 4, 3, 5, 1).reshape(B, h * w, -1)


def _stack_field(samples: List[DataSample], key: str) -> torch.Tensor:
    values = []
    for i, sample in enumerate(samples):
        if key not in sample:
            raise KeyError(
                f'data sample {i} has no {key!r}: pack it with '
                "PackInputs(algorithm_keys=['crop_boxes', 'flips', "
                "'crop_source_shape']) after "
                'TwoViewRandomResizedCrop and BlockwiseMaskGenerator')
        value = sample.get(key)
        values.append(torch.as_tensor(np.asarray(value) if not isinstance(
            value, torch.Tensor) else value))
    return torch.stack(values)


def _check_equal_mask_counts(mask: torch.Tensor) -> None:
    """The encoder packs the visible tokens of a batch into one (B, L, C)
    tensor, which needs the same number of masked patches in every sample;
    otherwise a reshape fails or, when the total happens to divide, mixes
    tokens across samples."""
    counts = mask.sum(1)
    if bool((counts != counts[0]).any()):
        raise ValueError(
            'the masks of this batch hide different numbers of patches per '
            f'sample ({counts.tolist()}); SiameseIM needs the same count in '
            'every sample: generate them with '
            'BlockwiseMaskGenerator(..., fixed_count=True) or '
            'RandomPatchMaskGenerator')


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
    widths and grid must match it.

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
        check_siameseim_parts(self.backbone, self.neck, self.head,
                              target_type)
        self.target = MomentumTarget(
            self._online(), momentum=base_momentum, end_momentum=end_momentum
        ) if target_type == 'feature' else None

    def _online(self) -> nn.Module:
        """The online modules that the target averages."""
        return nn.ModuleDict(
            dict(backbone=self.backbone, projector=self.neck.projector))

    def init_weights(self) -> None:
        super().init_weights()
        if self.target is not None:
            self.target.copy_from(self._online())

    def extract_feat(self, inputs: Union[torch.Tensor, List[torch.Tensor]],
                     data_samples: Optional[List[DataSample]] = None,
                     **kwargs) -> torch.Tensor:
        """Online backbone tokens (B, 1 + L, C) of whole images."""
        if isinstance(inputs, (list, tuple)):
            inputs = inputs[0]
        return self.backbone(inputs)

    def check_train_pipeline(self, transforms: Sequence) -> None:
        """Refuse a training pipeline (its built transforms) whose crop or
        mask generator is off this model's patch grid; the training loop
        calls it when it is built, before the first step (see
        :func:`~mmsiameseim.models.utils.crop_geometry.check_patch_grid`).
        """
        check_patch_grid(transforms,
                         self.backbone.patch_embed.projection.stride,
                         self.neck.grid_size, self.neck.target_grid_size)

    @torch.compiler.disable  # per-sample Python and numpy values
    def geometry(self, data_samples: List[DataSample],
                 device: torch.device
                 ) -> Dict[str, Union[torch.Tensor, CropPairOffsets]]:
        """Mask and crop-pair offsets of a batch, on ``device``.

        Each sample needs ``mask`` (on the neck's ``grid_size``),
        ``crop_boxes`` and ``flips`` (set by ``TwoViewRandomResizedCrop``),
        and the size of the image the crops were taken from:
        ``crop_source_shape`` (set by the crop too; pack it with the
        algorithm keys) or, when a sample has none, its ``ori_shape``
        metainfo as a fallback (the same size only when nothing padded or
        resized the image before the crop: samples built by hand, e.g. the
        parity fixture's). A sample with neither is refused.

        Returns:
            dict: ``mask`` (B, L) bool, True = masked, and ``offsets``
            (:class:`CropPairOffsets`).
        """
        mask = _stack_field(data_samples, 'mask').to(device).bool()
        check_mask_grid(mask, self.neck.grid_size)
        mask = mask.flatten(1)
        _check_equal_mask_counts(mask)
        boxes = _stack_field(data_samples, 'crop_boxes').float()
        flips = _stack_field(data_samples, 'flips').bool()
        shapes = crop_source_shapes(data_samples)
        check_boxes_inside(boxes, shapes, data_samples)
        offsets = crop_pair_offsets(boxes, flips, shapes[:, 1])
        return dict(mask=mask, offsets=offsets.to(device))

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
        geo = self.geometry(data_samples, view_a.device)
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
