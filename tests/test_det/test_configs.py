"""The full-size mmdet benchmark configs carry the paper's hyper-parameters
(appendix tables "Hyper-parameters for COCO / LVIS detection")."""
import os

import pytest
from mmengine.config import Config

from tests.test_det.helpers import ROOT

CFG_DIR = os.path.join(ROOT, 'configs', 'benchmarks', 'mmdet')
COCO = 'mask-rcnn_vitdet-b-siameseim-pre_16xb4-lsj-100e_coco.py'
LVIS = 'mask-rcnn_vitdet-b-siameseim-pre_16xb4-lsj-100e_lvis-v1.py'


def load(name):
    return Config.fromfile(os.path.join(CFG_DIR, name))


def pipeline_step(pipeline, type_):
    steps = [t for t in pipeline if t['type'] == type_]
    assert len(steps) == 1, f'{type_} in {pipeline}'
    return steps[0]


def train_dataset(cfg):
    ds = cfg.train_dataloader.dataset
    return ds.dataset if ds.type == 'ClassBalancedDataset' else ds


@pytest.mark.parametrize('name,lr', [(COCO, 1e-4), (LVIS, 2e-4)])
def test_shared_vitdet_recipe(name, lr):
    cfg = load(name)
    assert cfg.custom_imports.imports == ['mmsiameseim.det']
    assert cfg.model.type == 'MaskRCNN'
    bb = cfg.model.backbone
    assert bb.type == 'ViTDetViT'
    # ViT-B/16: 12 layers, 768 hidden, 3072 FFN, 12 heads
    assert bb.arch == dict(
        embed_dims=768, num_layers=12, num_heads=12, feedforward_channels=3072)
    assert bb.patch_size == 16 and bb.img_size == 1024
    assert bb.window_size == 14 and tuple(
        bb.global_attn_indexes) == (2, 5, 8, 11)
    assert bb.pretrain_img_size == 224
    assert bb.drop_path_rate == 0.1  # stochastic depth
    assert bb.init_cfg.type == 'Pretrained'
    assert bb.init_cfg.prefix == 'backbone.'
    neck = cfg.model.neck
    assert neck.type == 'SimpleFPN' and neck.norm_cfg.type == 'LN2d'
    assert neck.in_channels == [192, 384, 768, 768]
    assert cfg.model.roi_head.bbox_head.type == 'Shared4Conv1FCBBoxHead'
    assert cfg.model.roi_head.bbox_head.norm_cfg.type == 'LN2d'
    assert cfg.model.roi_head.mask_head.norm_cfg.type == 'LN2d'

    # large-scale jitter at 1024 x 1024
    pipe = train_dataset(cfg).pipeline
    resize = pipeline_step(pipe, 'RandomResize')
    assert tuple(resize.scale) == (1024, 1024)
    assert tuple(resize.ratio_range) == (0.1, 2.0)
    crop = pipeline_step(pipe, 'RandomCrop')
    assert tuple(crop.crop_size) == (1024, 1024)
    assert tuple(cfg.model.data_preprocessor.batch_augments[0].size) == (1024,
                                                                         1024)
    # the test pads to the same canvas, not counted as the image
    pad = pipeline_step(cfg.test_dataloader.dataset.pipeline,
                        'PadKeepImgShape')
    assert tuple(pad.size) == (1024, 1024)
    # both heads' class counts checked before the first step
    assert cfg.custom_hooks == [dict(type='mmpretrain.ClassCountCheckHook')]
    assert cfg.runner_type == 'FaultTolerantRunner'

    # 100 epochs, batch 64 = 16 GPUs x 4
    assert cfg.train_cfg.type == 'EpochBasedTrainLoop'
    assert cfg.train_cfg.max_epochs == 100
    assert cfg.train_dataloader.batch_size * 16 == 64
    assert cfg.auto_scale_lr.base_batch_size == 64

    # AdamW (0.9, 0.999), peak lr, weight decay 0.1, layer decay 0.7 / 12
    ow = cfg.optim_wrapper
    assert ow.optimizer.type == 'AdamW'
    assert tuple(ow.optimizer.betas) == (0.9, 0.999)
    assert ow.optimizer.lr == lr
    assert ow.optimizer.weight_decay == 0.1
    assert ow.constructor == 'ViTLayerDecayOptimWrapperConstructor'
    assert ow.paramwise_cfg.decay_rate == 0.7
    assert ow.paramwise_cfg.num_layers == 12

    # 250 warm-up iterations, then a step schedule
    warmup, step = cfg.param_scheduler
    assert warmup.type == 'LinearLR' and not warmup.by_epoch
    assert (warmup.begin, warmup.end) == (0, 250)
    assert step.type == 'MultiStepLR' and step.by_epoch
    assert step.milestones == [89, 96] and step.gamma == 0.1


def test_coco_data_and_metric():
    cfg = load(COCO)
    assert cfg.train_dataloader.dataset.type == 'CheckedCocoDataset'
    assert cfg.test_dataloader.dataset.type == 'CheckedCocoDataset'
    assert cfg.train_dataloader.dataset.data_root == 'data/coco/'
    assert cfg.val_evaluator.type == 'CocoMetric'
    assert cfg.val_evaluator.metric == ['bbox', 'segm']
    assert cfg.model.roi_head.bbox_head.num_classes == 80


def test_lvis_data_sampling_and_metric():
    cfg = load(LVIS)
    ds = cfg.train_dataloader.dataset
    assert ds.type == 'ClassBalancedDataset'  # repeat-factor sampling
    assert ds.oversample_thr == 1e-3
    assert ds.dataset.type == 'CheckedLVISV1Dataset'
    assert ds.dataset.data_root == 'data/lvis_v1/'
    assert cfg.val_dataloader.dataset.type == 'CheckedLVISV1Dataset'
    assert cfg.val_evaluator.type == 'NumpyAliasLVISMetric'
    assert cfg.val_evaluator.metric == ['bbox', 'segm']
    assert cfg.model.roi_head.bbox_head.num_classes == 1203
    assert cfg.model.roi_head.mask_head.num_classes == 1203
    assert cfg.model.test_cfg.rcnn.max_per_img == 300


def test_full_size_model_builds_with_vit_b():
    from mmdet.registry import MODELS
    from mmengine.registry import init_default_scope

    import mmsiameseim.det  # noqa: F401
    init_default_scope('mmdet')
    model = MODELS.build(load(COCO).model)
    n_backbone = sum(p.numel() for p in model.backbone.parameters())
    # ViT-B/16 (85.8M without cls token) + the rel-pos tables
    assert 85e6 < n_backbone < 87e6
    assert len(model.backbone.layers) == 12
    assert [b.window_size for b in model.backbone.layers
            ] == [14, 14, 0, 14, 14, 0, 14, 14, 0, 14, 14, 0]
