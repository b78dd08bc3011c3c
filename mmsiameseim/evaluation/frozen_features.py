import copy
from typing import Optional, Sequence, Tuple

import torch
from mmengine.config import Config
from mmengine.dataset import pseudo_collate
from mmengine.registry import init_default_scope
from mmengine.utils import ProgressBar
from mmpretrain.registry import DATASETS, MODELS


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
            model_cfg.backbone.init_cfg = {'_scope_': 'mmsiameseim',
                                           **init, 'checkpoint': checkpoint}
        else:
            model_cfg.backbone.init_cfg = dict(
                type='Pretrained', _scope_='mmsiameseim',
                checkpoint=checkpoint, prefix='backbone.')
    elif isinstance(init, dict) and init.get('type') == 'Pretrained':
        model_cfg.backbone.init_cfg = None
    model = MODELS.build(model_cfg)
    model.init_weights()
    return model.eval()


@torch.no_grad()
def extract_features(model: torch.nn.Module,
                     dataset_cfg: dict,
                     pipeline: Sequence[dict],
                     indices: Optional[Sequence[int]] = None,
                     batch_size: int = 500,
                     desc: str = 'features',
                     autocast_dtype: Optional[torch.dtype] = None
                     ) -> Tuple[torch.Tensor, torch.Tensor]:
    """Backbone features and labels of a dataset, with a progress bar.

    Args:
        model: An mmpretrain classifier (``extract_feat`` at the backbone).
        dataset_cfg (dict): Dataset config; its pipeline is replaced by
            ``pipeline`` (use the test pipeline: no augmentation).
        indices (sequence, optional): Subset of samples.
        batch_size (int): Images per forward.
        autocast_dtype (torch.dtype, optional): Run the forward under
            autocast with this dtype (e.g. ``torch.bfloat16`` on CPUs with
            bf16 instructions).

    Returns:
        tuple: features (N, D) float32 and labels (N,). A backbone that
        gives a feature map (N, C, H, W), e.g. a Swin, is averaged over
        space (N, C); other outputs are flattened.
    """
    cfg = copy.deepcopy(dataset_cfg)
    cfg['pipeline'] = list(pipeline)
    dataset = DATASETS.build(cfg)
    indices = list(range(len(dataset))) if indices is None else list(indices)
    feats, labels = [], []
    bar = ProgressBar(len(indices))
    print(f'extracting {desc} of {len(indices)} images')
    for start in range(0, len(indices), batch_size):
        batch = pseudo_collate(
            [dataset[i] for i in indices[start:start + batch_size]])
        data = model.data_preprocessor(batch, False)
        device = data['inputs'].device.type
        with torch.autocast(device, dtype=autocast_dtype or torch.float32,
                            enabled=autocast_dtype is not None):
            out = model.extract_feat(data['inputs'], stage='backbone')
        out = out[-1] if isinstance(out, (tuple, list)) else out
        if out.dim() == 4:
            out = out.mean(dim=(2, 3))
        feats.append(out.float().reshape(out.shape[0], -1))
        labels.append(torch.stack(
            [s.gt_label for s in data['data_samples']]).reshape(-1))
        bar.update(len(batch['inputs']))
    print()
    return torch.cat(feats), torch.cat(labels)
