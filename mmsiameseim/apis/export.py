"""Export the pretrained ViT of a checkpoint as a folder that timm or Hugging
Face ``transformers`` loads by itself (``pip install -e .[export]``).

The weights go through :func:`~mmsiameseim.apis.to_timm_vit` (which
validates them and refuses what it does not recognise, by name); the
architecture (heads, sizes) is read off the backbone that the checkpoint's
pretraining config builds, with the checkpoint's weights loaded strictly.
"""
import json
import os
import os.path as osp
from collections import OrderedDict
from typing import Dict, Optional, Tuple

import torch
from mmengine.config import Config

from .convert import to_timm_vit

#: The timm model whose builder every export goes through; its defaults
#: are overridden by the exported ``model_args``.
TIMM_BASE_MODEL = 'vit_base_patch16_224'
#: The evaluation view's centre crop (the default ``--crop-fraction`` of
#: ``tools/evaluation/extract_features.py``), written into both
#: preprocessing configs.
CROP_FRACTION = 0.875


class OutputExists(FileExistsError):
    """An export into a folder that already holds files."""


def vit_architecture(backbone: torch.nn.Module) -> dict:
    """The architecture of an mmpretrain ``VisionTransformer`` in words
    both timm and transformers take."""
    layer = backbone.layers[0]
    proj = backbone.patch_embed.projection
    grid = backbone.patch_resolution
    return dict(
        embed_dims=backbone.embed_dims,
        num_layers=len(backbone.layers),
        num_heads=layer.attn.num_heads,
        feedforward_channels=layer.ffn.layers[0][0].out_features,
        patch_size=tuple(proj.kernel_size),
        img_size=(grid[0] * proj.stride[0], grid[1] * proj.stride[1]),
        in_channels=proj.in_channels,
        qkv_bias=layer.attn.qkv.bias is not None,
        final_norm=bool(backbone.final_norm))


def load_backbone(
    checkpoint: str,
    config: Optional[str] = None
) -> Tuple[torch.nn.Module, Config, torch.Tensor, torch.Tensor]:
    """The frozen mmpretrain ViT of ``checkpoint`` (its final norm as the
    checkpoint has it), its pretraining config and input mean / std
    (0-255 units)."""
    from mmsiameseim.checkpoint.reader import (read_checkpoint,
                                               read_checkpoint_state)
    from mmsiameseim.evaluation import checkpoint_config
    cfg = checkpoint_config(checkpoint, config)
    state = read_checkpoint_state(read_checkpoint(checkpoint)).state_dict
    backbone, mean, std = _frozen_vit(checkpoint, cfg, 'backbone.ln1.weight'
                                      in state)
    return backbone, cfg, mean, std


def _frozen_vit(checkpoint: str, cfg: Config, final_norm: bool) -> tuple:
    """(backbone, mean, std) of :func:`frozen_vit`, refusing a non-ViT."""
    from mmsiameseim.evaluation import frozen_vit
    backbone, mean, std = frozen_vit(checkpoint, cfg.model, final_norm)
    if type(backbone).__name__ != 'VisionTransformer':
        raise ValueError(f'{checkpoint}: exports are for ViT backbones, its '
                         f'config builds a {type(backbone).__name__}')
    return backbone, mean, std


def _export_source(checkpoint: str, config: Optional[str]) -> dict:
    """What both exports start from: the config (a checkpoint without one
    is refused first), the timm-key weights (validated by
    :func:`to_timm_vit`, whose report says whether there is a final norm),
    the architecture of the backbone the config builds with them, and the
    input mean / std in 0-1 units."""
    from mmsiameseim.evaluation import checkpoint_config
    cfg = checkpoint_config(checkpoint, config)
    state, report = to_timm_vit(checkpoint)
    backbone, mean, std = _frozen_vit(checkpoint, cfg,
                                      report['arch']['final_norm'])
    return dict(
        state=state,
        arch=vit_architecture(backbone),
        cfg=cfg,
        mean=[m / 255. for m in mean.flatten().tolist()],
        std=[s / 255. for s in std.flatten().tolist()])


def timm_files(checkpoint: str,
               config: Optional[str] = None) -> Dict[str, object]:
    """The contents of a timm folder: ``state_dict`` (timm keys),
    ``config`` (``config.json``: architecture, ``model_args`` and the
    ``pretrained_cfg``) and ``arch``."""
    source = _export_source(checkpoint, config)
    arch = source['arch']
    model_args = dict(
        img_size=list(arch['img_size']),
        patch_size=list(arch['patch_size']),
        in_chans=arch['in_channels'],
        embed_dim=arch['embed_dims'],
        depth=arch['num_layers'],
        num_heads=arch['num_heads'],
        mlp_ratio=arch['feedforward_channels'] / arch['embed_dims'],
        qkv_bias=arch['qkv_bias'],
        class_token=True,
        global_pool='token',
        final_norm=arch['final_norm'],
        num_classes=0)
    pretrained_cfg = dict(
        tag='siameseim',
        input_size=[arch['in_channels'], *arch['img_size']],
        mean=source['mean'],
        std=source['std'],
        interpolation='bicubic',
        crop_pct=CROP_FRACTION,
        num_classes=0,
        license='apache-2.0')
    return dict(
        state_dict=source['state'],
        config=dict(
            architecture=TIMM_BASE_MODEL,
            num_classes=0,
            num_features=arch['embed_dims'],
            global_pool='token',
            model_args=model_args,
            pretrained_cfg=pretrained_cfg),
        arch=arch,
        pretrain_cfg=source['cfg'])


def transformers_files(checkpoint: str,
                       config: Optional[str] = None) -> Dict[str, object]:
    """The contents of a Hugging Face ``ViTModel`` folder: ``state_dict``
    (``transformers`` keys, qkv split into query, key and value) and
    ``config`` (``config.json``)."""
    source = _export_source(checkpoint, config)
    timm_state, arch = source['state'], source['arch']
    if arch['patch_size'][0] != arch['patch_size'][1]:
        raise ValueError(f'{checkpoint}: transformers\' ViT takes square '
                         f'patches, this one is {arch["patch_size"]}')
    dims = arch['embed_dims']
    out = OrderedDict()
    out['embeddings.cls_token'] = timm_state['cls_token']
    out['embeddings.position_embeddings'] = timm_state['pos_embed']
    out['embeddings.patch_embeddings.projection.weight'] = \
        timm_state['patch_embed.proj.weight']
    out['embeddings.patch_embeddings.projection.bias'] = \
        timm_state['patch_embed.proj.bias']
    for n in range(arch['num_layers']):
        src, dst = f'blocks.{n}.', f'encoder.layer.{n}.'
        qkv_w = timm_state[src + 'attn.qkv.weight']
        qkv_b = timm_state.get(src + 'attn.qkv.bias')
        for i, part in enumerate(('query', 'key', 'value')):
            out[f'{dst}attention.attention.{part}.weight'] = \
                qkv_w[i * dims:(i + 1) * dims].clone()
            out[f'{dst}attention.attention.{part}.bias'] = (
                qkv_b[i * dims:(i + 1) * dims].clone()
                if qkv_b is not None else torch.zeros(dims))
        for a, b in (('attn.proj', 'attention.output.dense'),
                     ('mlp.fc1', 'intermediate.dense'), ('mlp.fc2',
                                                         'output.dense'),
                     ('norm1', 'layernorm_before'), ('norm2',
                                                     'layernorm_after')):
            for p in ('weight', 'bias'):
                out[f'{dst}{b}.{p}'] = timm_state[f'{src}{a}.{p}']
    # transformers' ViTModel always ends in a LayerNorm: the checkpoint's
    # final norm, else one without learned scale (hidden_states[-1] is the
    # last block's output either way)
    out['layernorm.weight'] = timm_state.get('norm.weight', torch.ones(dims))
    out['layernorm.bias'] = timm_state.get('norm.bias', torch.zeros(dims))
    hf_config = dict(
        architectures=['ViTModel'],
        model_type='vit',
        hidden_size=dims,
        num_hidden_layers=arch['num_layers'],
        num_attention_heads=arch['num_heads'],
        intermediate_size=arch['feedforward_channels'],
        hidden_act='gelu',
        hidden_dropout_prob=0.0,
        attention_probs_dropout_prob=0.0,
        layer_norm_eps=1e-6,
        image_size=list(arch['img_size']),
        patch_size=arch['patch_size'][0],
        num_channels=arch['in_channels'],
        qkv_bias=arch['qkv_bias'],
        initializer_range=0.02,
        encoder_stride=arch['patch_size'][0],
        torch_dtype='float32')
    # our evaluation view (tools/evaluation/extract_features.py): the short
    # side resized to size / crop fraction, bicubic, then the centre crop
    height, width = arch['img_size']
    preprocessor = dict(
        image_processor_type='BitImageProcessor',
        do_resize=True,
        size=dict(shortest_edge=int(min(height, width) / CROP_FRACTION)),
        resample=3,  # bicubic
        do_center_crop=True,
        crop_size=dict(height=height, width=width),
        do_rescale=True,
        rescale_factor=1 / 255.,
        do_normalize=True,
        image_mean=source['mean'],
        image_std=source['std'],
        do_convert_rgb=arch['in_channels'] == 3)
    return dict(
        state_dict=out,
        config=hf_config,
        extra_json={'preprocessor_config.json': preprocessor},
        arch=arch,
        pretrain_cfg=source['cfg'])


def _user_mode(path: str) -> None:
    """The mode a new file of the user gets (0666 less the umask): the
    temporary files are written 0600."""
    umask = os.umask(0)
    os.umask(umask)
    os.chmod(path, 0o666 & ~umask)


def write_export(files: Dict[str, object],
                 out_dir: str,
                 card: Optional[str] = None,
                 overwrite: bool = False) -> None:
    """``model.safetensors``, ``config.json``, any ``extra_json`` files and
    ``README.md`` (the model card, when given) into ``out_dir``; each
    written whole, then renamed, with the user's usual file mode.

    Raises:
        OutputExists: ``out_dir`` holds files and ``overwrite`` is False.
    """
    from safetensors.torch import save_file
    held = sorted(os.listdir(out_dir)) if osp.isdir(out_dir) else []
    if held and not overwrite:
        raise OutputExists(
            f'{out_dir} already holds {len(held)} file(s) '
            f'({", ".join(held[:5])}); export into a new folder, or replace '
            'them with --overwrite')
    os.makedirs(out_dir, exist_ok=True)
    tensors = {
        k: v.detach().contiguous().float()
        for k, v in files['state_dict'].items()
    }
    tmp = osp.join(out_dir, '.model.safetensors.tmp')
    save_file(tensors, tmp, metadata=dict(format='pt'))
    _user_mode(tmp)
    os.replace(tmp, osp.join(out_dir, 'model.safetensors'))
    texts = {
        name: json.dumps(obj, indent=2) + '\n'
        for name, obj in dict(
            files.get('extra_json', {}), **{
                'config.json': files['config']
            }).items()
    }
    if card is not None:
        texts['README.md'] = card
    for name, text in texts.items():
        tmp = osp.join(out_dir, f'.{name}.tmp')
        with open(tmp, 'w') as f:
            f.write(text)
        _user_mode(tmp)
        os.replace(tmp, osp.join(out_dir, name))


def model_card(fmt: str,
               files: Dict[str, object],
               checkpoint: str,
               results: Optional[str] = None,
               config: Optional[str] = None) -> str:
    """A ``README.md`` for the exported folder: what was pretrained, on
    what, for how long, and how to load it with its own preprocessing.

    Args:
        fmt (str): 'timm' or 'transformers'.
        files (dict): :func:`timm_files` or :func:`transformers_files`.
        checkpoint (str): The checkpoint as the user named it.
        results (str, optional): A results file to name.
        config (str, optional): The config the user gave; None: the one
            stored in the checkpoint.
    """
    cfg, arch = files['pretrain_cfg'], files['arch']
    data = cfg.get('train_dataloader', {}).get('dataset', {})
    where = data.get('data_root') or data.get('data_prefix') or ''
    title = (f'{cfg.model.get("type")} ViT ({arch["embed_dims"]} wide, '
             f'{arch["num_layers"]} blocks, patch {arch["patch_size"][0]}, '
             f'{arch["img_size"][0]}x{arch["img_size"][1]} px)')
    grey = arch['in_channels'] == 1
    mode = 'L' if grey else 'RGB'
    # a one-channel image reaches the processor as (H, W, 1)
    image = ('np.asarray(Image.open(PATH).convert(\'L\'))[..., None]'
             if grey else 'Image.open(PATH).convert(\'RGB\')')
    source = config or 'stored in the checkpoint (meta.cfg)'
    norm = 'pretrained' if arch['final_norm'] else \
        'none (the pretraining has none)'
    if fmt == 'timm':
        load = [
            'import timm', 'from PIL import Image', '',
            'model = timm.create_model(\'local-dir:DIR\', '
            'pretrained=True).eval()',
            '# the export\'s own input size, channels, mean and std',
            'data_cfg = timm.data.resolve_model_data_config(model)',
            'transform = timm.data.create_transform(**data_cfg)',
            f'x = transform(Image.open(PATH).convert(\'{mode}\'))[None]',
            'tokens = model.forward_features(x)  # (N, 1 + L, C)'
        ]
    else:
        load = [
            *(['import numpy as np'] if grey else []), 'from PIL import Image',
            'from transformers import AutoImageProcessor, ViTModel', '',
            'processor = AutoImageProcessor.from_pretrained(\'DIR\')',
            'model = ViTModel.from_pretrained(\'DIR\', '
            'add_pooling_layer=False).eval()',
            f'x = processor({image}, return_tensors=\'pt\')'
            '[\'pixel_values\']', 'out = model(x, output_hidden_states=True)',
            'tokens = out.hidden_states[-1]  # (N, 1 + L, C), no final norm'
        ]
    lines = [
        '---', 'license: apache-2.0', f'library_name: {fmt}',
        'tags: [image-feature-extraction, siameseim, mmpretrain]', '---', '',
        f'# {title}', '',
        'Exported by mmsiameseim\'s `tools/model_converters/export.py` '
        f'from `{checkpoint}`.', '',
        f'* Pretraining: {cfg.model.get("type")}, '
        f'{cfg.get("train_cfg", {}).get("max_epochs")} epoch(s) on '
        f'{data.get("type", "unknown data")} (`{where}`).',
        f'* Config: `{source}`.',
        f'* Results: {f"`{results}`" if results else "none given"}.',
        f'* Final LayerNorm: {norm}; no classifier.', '', '```python', *load,
        '```', ''
    ]
    return '\n'.join(lines)
