import copy
import inspect
from typing import Iterable, Iterator, Optional, Sequence, Tuple

import torch
from mmengine.config import Config
from mmengine.dataset import BaseDataset, pseudo_collate
from mmengine.registry import init_default_scope
from mmengine.utils import ProgressBar
from mmpretrain.registry import DATASETS, MODELS

from ..checkpoint import init_weights_quietly
from ..precision import autocast
from .feature_cache import cache_digest


def build_frozen_backbone_model(cfg: Config,
                                checkpoint: Optional[str] = None
                                ) -> torch.nn.Module:
    """The classifier of an mmpretrain config, in eval mode, with its
    backbone loaded from ``checkpoint`` (keys under ``backbone.``).

    The checkpoint is loaded by the config's ``Pretrained`` entry (its
    prefix and options kept) with ``checkpoint`` set, or by a new one, of
    scope ``mmsiameseim`` unless the entry names another: a file without
    the backbone's weights is refused. Without a checkpoint the
    backbone keeps its random initialisation (``init_weights`` without the
    Pretrained entry), the floor of the demo.
    """
    init_default_scope(cfg.get('default_scope', 'mmpretrain'))
    model_cfg = copy.deepcopy(cfg.model)
    init = model_cfg.backbone.get('init_cfg')
    if checkpoint:
        if isinstance(init, dict) and init.get('type') == 'Pretrained':
            model_cfg.backbone.init_cfg = {
                '_scope_': 'mmsiameseim',
                **init, 'checkpoint': checkpoint
            }
        else:
            model_cfg.backbone.init_cfg = dict(
                type='Pretrained',
                _scope_='mmsiameseim',
                checkpoint=checkpoint,
                prefix='backbone.')
    elif isinstance(init, dict) and init.get('type') == 'Pretrained':
        model_cfg.backbone.init_cfg = None
    model = MODELS.build(model_cfg)
    init_weights_quietly(model)
    return model.eval()


def pool_backbone_output(out, flatten_maps: bool = False) -> torch.Tensor:
    """One feature vector per image from a backbone's output.

    A tuple or list (mmpretrain backbones return one entry per out index)
    gives its last entry; a feature map (N, C, H, W), e.g. a Swin stage, is
    averaged over space, or flattened to (N, C * H * W) with
    ``flatten_maps`` (a ViT's ``out_type='featmap'``: the token map); a
    token sequence (N, 1 + L, C), e.g. a ViT with
    ``out_type='raw'`` or ``SiameseIMViT``, gives its first (cls) token;
    (N, C), e.g. a ViT with ``out_type='cls_token'``, is kept.

    Returns:
        Tensor: (N, D) float32 features.
    """
    out = out[-1] if isinstance(out, (tuple, list)) else out
    if out.dim() == 4 and not flatten_maps:
        out = out.mean(dim=(2, 3))
    elif out.dim() == 3:
        out = out[:, 0]
    return out.float().reshape(out.shape[0], -1)


def pool_tokens(tokens: torch.Tensor,
                feature: str = 'cls_token') -> torch.Tensor:
    """The frozen feature of ViT tokens (N, 1 + L, C) (a ``raw`` output),
    as the probe backbone with ``out_type=feature`` gives it: the cls
    token, the layer-normalised mean of the patch tokens (the
    ``avg_featmap`` LayerNorm at its identity initialisation), or every
    patch token flattened (``featmap``, as the feature extraction flattens
    the map).

    Returns:
        Tensor: (N, C) float32; (N, L * C) for ``featmap``.
    """
    if feature == 'cls_token':
        return tokens[:, 0].float()
    if feature == 'avg_featmap':
        mean = tokens[:, 1:].float().mean(1)
        return torch.nn.functional.layer_norm(mean, mean.shape[-1:], eps=1e-6)
    if feature == 'featmap':
        # token-major here, channel-major from the (C, H, W) map: the same
        # values in another order, which no cosine or linear model sees
        return tokens[:, 1:].float().flatten(1)
    raise ValueError(f"pool_tokens: feature={feature!r}, choose 'cls_token', "
                     "'avg_featmap' or 'featmap'")


#: Keyword arguments of mmpretrain's masked-image backbones that, set to
#: None, make them encode the whole image: ``mask`` (MAEViT and its kin,
#: which mask at random unless told ``mask=None``; SimMIM's, BEiT's, CAE's,
#: MaskFeat's and SiameseIM's backbones, which take the mask to apply) and
#: ``importance`` (MILAN).
WHOLE_IMAGE_ARGS = ('mask', 'importance')


def whole_image_kwargs(backbone: torch.nn.Module) -> dict:
    """The keyword arguments with which ``backbone`` encodes whole, unmasked
    images: ``None`` for each argument of :data:`WHOLE_IMAGE_ARGS` its
    ``forward`` takes (``MAEViT(x)`` alone masks 75 % of the patches at
    random; ``MAEViT(x, mask=None)`` encodes every patch), nothing for a
    plain backbone.

    Raises:
        TypeError: when ``forward`` needs another argument besides the
            images (the caller names what to set).
    """
    params = list(inspect.signature(backbone.forward).parameters.values())
    kwargs, unknown = {}, []
    for p in params[1:]:
        if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
            continue
        if p.name in WHOLE_IMAGE_ARGS:
            kwargs[p.name] = None
        elif p.default is p.empty:
            unknown.append(p.name)
    if unknown:
        raise TypeError(
            f'{type(backbone).__name__}.forward needs '
            f'{", ".join(unknown)} besides the images, and no known value '
            'of it encodes a whole image')
    return kwargs


def describe_call(backbone: torch.nn.Module, kwargs: dict) -> str:
    """``Name.forward(x, mask=None)``: how a backbone is called."""
    args = ''.join(f', {k}={v!r}' for k, v in kwargs.items())
    return f'{type(backbone).__name__}.forward(x{args})'


@torch.no_grad()
def batch_features(
    model: torch.nn.Module,
    data_batch: dict,
    backbone: Optional[torch.nn.Module] = None,
    precision: str = 'float32',
    flatten_maps: bool = False,
    forward_kwargs: Optional[dict] = None,
    data_preprocessor: Optional[torch.nn.Module] = None
) -> Tuple[torch.Tensor, torch.Tensor]:
    """Frozen features and labels of one collated batch, from the whole,
    unmasked images.

    Args:
        model: An mmpretrain model; its ``data_preprocessor`` prepares the
            batch (``training=False``).
        data_batch (dict): A collated batch (``inputs``, ``data_samples``
            with ``gt_label``).
        backbone (nn.Module, optional): The module that encodes the images;
            defaults to ``model.backbone`` (e.g. a momentum encoder's copy
            instead).
        precision (str): 'float32' (no autocast), 'bfloat16' or
            'float16'.
        flatten_maps (bool): See :func:`pool_backbone_output`.
        forward_kwargs (dict, optional): Keyword arguments of the
            backbone's ``forward``; defaults to :func:`whole_image_kwargs`
            (``mask=None`` for mmpretrain's masked-image backbones).
        data_preprocessor (nn.Module, optional): Prepares the batch instead
            of ``model.data_preprocessor``.

    Returns:
        tuple: features (N, D) float32 (see :func:`pool_backbone_output`)
        and labels (N,).
    """
    prepare = model.data_preprocessor if data_preprocessor is None \
        else data_preprocessor
    data = prepare(data_batch, False)
    inputs = data['inputs']
    backbone = model.backbone if backbone is None else backbone
    if forward_kwargs is None:
        forward_kwargs = whole_image_kwargs(backbone)
    with autocast(inputs.device.type, precision):
        out = backbone(inputs, **forward_kwargs)
    labels = torch.stack([s.gt_label for s in data['data_samples']])
    return pool_backbone_output(out,
                                flatten_maps).cpu(), labels.reshape(-1).cpu()


def collate_samples(samples: list) -> dict:
    """``pseudo_collate`` of pipeline outputs, with the images stacked into
    one tensor when they all have the same shape and dtype: the data
    preprocessors of mmpretrain normalise a stacked batch with the same
    per-element arithmetic as a list, in one call instead of one per
    image."""
    batch = pseudo_collate(samples)
    inputs = batch['inputs']
    if isinstance(inputs, list) and inputs and all(
            isinstance(x, torch.Tensor) and x.shape == inputs[0].shape
            and x.dtype == inputs[0].dtype for x in inputs):
        batch['inputs'] = torch.stack(inputs)
    return batch


def pipeline_batches(
        dataset_cfg: dict,
        pipeline: Sequence[dict],
        indices: Optional[Sequence[int]],
        batch_size: int,
        kept: Optional[dict] = None) -> Tuple[int, Iterable[dict]]:
    """The number of samples, and the collated batches
    (:func:`collate_samples`) of ``indices`` (None: every sample) of a
    dataset run through ``pipeline``.

    With ``kept`` (a dict), the batches are kept there, once all have been
    made, under the dataset config, pipeline, indices and batch size, and a
    later call with the same four reads them back instead of running the
    pipeline again (e.g. a second model encoding the same images). Like
    the feature cache, this takes the pipeline to be deterministic (no
    random transform).
    """
    indices = None if indices is None else [int(i) for i in indices]
    key = cache_digest([dataset_cfg, list(pipeline), indices, batch_size])
    if kept is not None and key in kept:
        return sum(len(b['inputs']) for b in kept[key]), kept[key]
    cfg = copy.deepcopy(dataset_cfg)
    cfg['pipeline'] = list(pipeline)
    kind = cfg.get('type')
    kind = DATASETS.get(kind) if isinstance(kind, str) else kind
    if inspect.isclass(kind) and issubclass(kind, BaseDataset):
        # no worker processes to share the list with: pickling 60k
        # samples would cost more than encoding a few thousand of them
        cfg.setdefault('serialize_data', False)
    dataset = DATASETS.build(cfg)
    chosen = list(range(len(dataset))) if indices is None else indices

    def make() -> Iterator[dict]:
        made = []
        for start in range(0, len(chosen), batch_size):
            made.append(
                collate_samples(
                    [dataset[i] for i in chosen[start:start + batch_size]]))
            yield made[-1]
        if kept is not None:
            kept[key] = made

    return len(chosen), make()


@torch.no_grad()
def extract_features(
        model: torch.nn.Module,
        dataset_cfg: dict,
        pipeline: Sequence[dict],
        indices: Optional[Sequence[int]] = None,
        batch_size: int = 500,
        desc: str = 'features',
        precision: str = 'float32',
        flatten_maps: bool = False,
        kept_batches: Optional[dict] = None
) -> Tuple[torch.Tensor, torch.Tensor]:
    """Backbone features and labels of a dataset, with a progress bar.

    Args:
        model: An mmpretrain classifier, in eval mode (see
            :func:`build_frozen_backbone_model`).
        dataset_cfg (dict): Dataset config; its pipeline is replaced by
            ``pipeline`` (use the test pipeline: no augmentation).
        pipeline (sequence of dict): The pipeline of every sample.
        indices (sequence, optional): Subset of samples.
        batch_size (int): Images per forward.
        desc (str): What the progress message calls these features.
        precision (str): 'float32' (no autocast), or 'bfloat16' /
            'float16' autocast (e.g. 'bfloat16' on CPUs with bf16
            instructions).
        flatten_maps (bool): Flatten feature maps instead of averaging
            them (see :func:`pool_backbone_output`).
        kept_batches (dict, optional): Where the pipeline's batches are
            kept for later calls on the same images (see
            :func:`pipeline_batches`); None: none kept.

    Returns:
        tuple: features (N, D) float32 (see :func:`pool_backbone_output`)
        and labels (N,).
    """
    count, batches = pipeline_batches(dataset_cfg, pipeline, indices,
                                      batch_size, kept_batches)
    feats, labels = [], []
    bar = ProgressBar(count)
    print(f'extracting {desc} of {count} images')
    for batch in batches:
        x, y = batch_features(
            model, batch, precision=precision, flatten_maps=flatten_maps)
        feats.append(x)
        labels.append(y)
        bar.update(len(x))
    print()
    return torch.cat(feats), torch.cat(labels)
