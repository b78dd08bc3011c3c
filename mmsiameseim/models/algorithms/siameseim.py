from typing import Dict, List, Optional, Sequence, Tuple, Union

import numpy as np
import torch
import torch.nn as nn
from mmpretrain.models.selfsup.base import BaseSelfSupervisor
from mmpretrain.registry import MODELS
from mmpretrain.structures import DataSample

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


def _pair(size: Union[int, Sequence[int]]) -> Tuple[int, int]:
    return (size, size) if isinstance(size, int) else tuple(size)


def _source_shapes(samples: List[DataSample]) -> torch.Tensor:
    """(B, 2) height and width of the image each sample's crops were taken
    from: ``crop_source_shape``, else the ``ori_shape`` metainfo."""
    shapes = []
    for i, sample in enumerate(samples):
        shape = sample.get('crop_source_shape', sample.get('ori_shape'))
        if shape is None:
            raise KeyError(
                f'data sample {i} has neither \'crop_source_shape\' nor an '
                "'ori_shape' metainfo: SiameseIM needs the size of the image "
                'the crops were taken from. TwoViewRandomResizedCrop sets '
                "'crop_source_shape'; pack it with PackInputs(algorithm_keys="
                "['crop_boxes', 'flips', 'crop_source_shape'])")
        shapes.append([float(shape[0]), float(shape[1])])
    return torch.tensor(shapes)


def _check_boxes_inside(boxes: torch.Tensor, shapes: torch.Tensor,
                        samples: List[DataSample]) -> None:
    """Every crop box must lie in its source image; a box that does not
    means the source size is the wrong one (e.g. ``ori_shape`` of an image
    padded before the crop), which would shift the flipped views' offsets."""
    top, left, h, w = boxes.unbind(-1)  # each (B, 2)
    H, W = shapes[:, :1], shapes[:, 1:]
    bad = (top < 0) | (left < 0) | (top + h > H) | (left + w > W)
    if bool(bad.any()):
        i, k = (int(x) for x in bad.nonzero()[0])
        key = 'crop_source_shape' if 'crop_source_shape' in samples[i] \
            else 'ori_shape'
        raise ValueError(
            f'data sample {i}: the crop box (top, left, h, w) '
            f'{boxes[i, k].tolist()} of view {"ab"[k]} does not fit in the '
            f'{int(H[i])}x{int(W[i])} source image given by {key!r}; pack '
            "TwoViewRandomResizedCrop's 'crop_source_shape' (the size of "
            'the image it cropped, after any Pad or resize before it)')


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
        """Check that the training pipeline's crop and mask generator use
        this model's patch grid (the configs set all three from one
        variable, ``patch_grid``); the training loop calls it when it is
        built, so that a mismatch fails before the first step.

        Args:
            transforms (Sequence): The built transforms of the training
                pipeline (``dataset.pipeline.transforms``).

        Raises:
            ValueError: naming each transform option that disagrees with
                ``neck.grid_size`` / ``neck.target_grid_size``.
        """
        from mmpretrain.datasets.transforms import BEiTMaskGenerator

        from ...datasets.transforms import (RandomPatchMaskGenerator,
                                            TwoViewRandomResizedCrop)
        patch = _pair(self.backbone.patch_embed.projection.stride)
        grid = _pair(self.neck.grid_size)
        target = _pair(self.neck.target_grid_size or self.neck.grid_size)
        wrong = []
        for t in transforms:
            name = type(t).__name__
            if isinstance(t, TwoViewRandomResizedCrop):
                for option, size, want in (('size', t.size, grid),
                                           ('target_size', t.target_size,
                                            target)):
                    if tuple(size) != (want[0] * patch[0],
                                       want[1] * patch[1]):
                        wrong.append(
                            f'{name} {option}={tuple(size)} is not the '
                            f'{want[0]}x{want[1]} patch grid at patch size '
                            f'{patch[0]}x{patch[1]}')
            elif isinstance(t, (BEiTMaskGenerator, RandomPatchMaskGenerator)):
                if (t.height, t.width) != grid:
                    wrong.append(f'{name} input_size={(t.height, t.width)}')
        if wrong:
            raise ValueError(
                'the training pipeline does not use the model\'s patch grid '
                f'(neck grid_size={self.neck.grid_size}, target_grid_size='
                f'{self.neck.target_grid_size}, backbone patch size '
                f'{patch[0]}): ' + '; '.join(wrong) + '. Set the crop size, '
                "the mask generator's input_size and the neck's grid_size "
                "from one variable (the configs' `patch_grid`)")

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
        grid = _pair(self.neck.grid_size)
        if mask[0].numel() != grid[0] * grid[1] or (
                mask.dim() == 3 and tuple(mask.shape[1:]) != grid):
            raise ValueError(
                f'the masks are {"x".join(map(str, mask.shape[1:]))} patches '
                f'but the neck\'s grid_size is {self.neck.grid_size}: give '
                "the mask generator's input_size, the neck's grid_size and "
                "the crop's size / patch_size one patch grid (the configs' "
                '`patch_grid`)')
        mask = mask.flatten(1)
        _check_equal_mask_counts(mask)
        boxes = _stack_field(data_samples, 'crop_boxes').float()
        flips = _stack_field(data_samples, 'flips').bool()
        shapes = _source_shapes(data_samples)
        _check_boxes_inside(boxes, shapes, data_samples)
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
