"""The own-images pretraining configs (configs/pretrain/*_folder.py): the
ImageNet configs with the dataset swapped; a clear error without a folder; two
iterations through mmengine's Runner on a folder of real photographs (a damaged
one among them), with OnlineKNNHook and the evaluation API on a labelled folder
of class sub-folders (mmpretrain's CustomDataset)."""
import json
import math
import os
import shutil
import uuid

import pytest
import torch
from mmengine.config import Config
from mmengine.runner import Runner
from PIL import Image

import mmsiameseim  # noqa: F401
from mmsiameseim.datasets import FOLDER_IMAGE_EXTENSIONS
from mmsiameseim.engine.hooks import OnlineKNNHook
from mmsiameseim.evaluation import batch_features, weighted_knn_accuracy
from tests.helpers import logged, tiny_siameseim_cfg
from tests.test_datasets.image_folder_photos import make_photo_folder

ROOT = os.path.dirname(
    os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PRETRAIN = os.path.join(ROOT, 'configs', 'pretrain')
BASE = os.path.join(
    PRETRAIN, 'siameseim_vit-base-p16_16xb256-amp-coslr-'
    '400e_folder.py')
SMALL = os.path.join(
    PRETRAIN, 'siameseim_vit-small-p16_16xb256-amp-coslr-'
    '400e_folder.py')
IMAGENET = os.path.join(
    PRETRAIN, 'siameseim_vit-base-p16_16xb256-amp-'
    'coslr-400e_in1k.py')


def test_folder_configs_are_the_imagenet_configs_with_a_folder():
    imagenet = Config.fromfile(IMAGENET).to_dict()
    in1k = imagenet['train_dataloader'].pop('dataset')
    for path in (BASE, SMALL):
        cfg = Config.fromfile(path).to_dict()
        dataset = cfg['train_dataloader'].pop('dataset')
        assert dataset == dict(
            type='UnlabeledImageFolder',
            data_root=None,  # given on the command line
            pipeline=in1k['pipeline'],
            max_damaged_fraction=0.01,
            min_damaged=10,
            verify=False)
        assert cfg['train_dataloader'] == imagenet['train_dataloader']
        for key in ('optim_wrapper', 'param_scheduler', 'train_cfg',
                    'auto_scale_lr', 'custom_hooks', 'default_hooks',
                    'runner_type', 'preemption', 'randomness'):
            assert cfg[key] == imagenet[key], key
    base, small = Config.fromfile(BASE).model, Config.fromfile(SMALL).model
    assert base == Config.fromfile(IMAGENET).model
    # ViT-S/16: 384 wide, 12 blocks, 6 heads (DeiT-S); decoder 384 wide
    assert small.backbone.arch == 'deit-s' and small.backbone.patch_size == 16
    assert (small.neck.in_channels, small.neck.embed_dims,
            small.neck.num_heads) == (384, 384, 6)
    assert (small.neck.projector_depth, small.neck.predictor_depth) == (2, 4)


def _tiny(path, work_dir, data_root=None):
    """The config on the tiny test model (32 px, 8 px patches, a 4x4 grid), 2
    images a batch, fp32, one process."""
    cfg = Config.fromfile(path)
    cfg.work_dir = str(work_dir)
    # mmengine keys its logger and visualizer by experiment name (config
    # name and second): two runners of one config in the same second would
    # share the first one's, and log into its folder
    cfg.experiment_name = f'{os.path.basename(path)}_{uuid.uuid4().hex[:8]}'
    cfg.model = tiny_siameseim_cfg()
    cfg.model.data_preprocessor.to_rgb = True  # the loader gives BGR
    loader = cfg.train_dataloader
    loader.update(
        batch_size=2,
        num_workers=0,
        persistent_workers=False,
        pin_memory=False)
    if data_root is not None:
        loader.dataset.data_root = data_root
    for t in loader.dataset.pipeline:
        if t.type == 'TwoViewRandomResizedCrop':
            t.size = 32
        if t.type == 'BlockwiseMaskGenerator':
            t.update(input_size=4, num_masking_patches=9, min_num_patches=2)
    cfg.train_cfg.max_epochs = 1
    cfg.param_scheduler = [
        dict(
            type='MinIterLinearLR',
            start_factor=0.5,
            by_epoch=True,
            begin=0,
            end=1,
            convert_to_iter_based=True)
    ]
    cfg.default_hooks.logger.interval = 1
    # fp32: mmengine's OptimWrapper with the config's optimizer (AMP's
    # AmpOptimWrapper is for CUDA)
    wrapper = cfg.optim_wrapper
    cfg.optim_wrapper = dict(
        type='OptimWrapper',
        optimizer=wrapper.optimizer,
        clip_grad=wrapper.clip_grad,
        paramwise_cfg=wrapper.paramwise_cfg)
    cfg.log_level = 'INFO'
    return cfg


@pytest.mark.fault_matrix(
    'train', 'missing', 'a folder config without data_root stops before '
    'training, naming the --cfg-options to give')
def test_unset_data_root_is_a_clear_error(tmp_path):
    # (the ViT-B/16 config's dataset is the same: the test above)
    runner = Runner.from_cfg(_tiny(SMALL, tmp_path / 'work'))
    with pytest.raises(
            ValueError,
            match=r'UnlabeledImageFolder: data_root '
            r'is not set.*--cfg-options train_dataloader\.dataset'
            r'\.data_root='):
        runner.train()
    assert not any(
        f.endswith('.pth') for _, _, fs in os.walk(tmp_path) for f in fs)


def _labelled_folder(root, files, out):
    """Class sub-folders (the photo each file came from) for the kNN bank."""
    for rel in files:
        cls = next(
            c for c in ('china', 'flower', 'grace', 'present') if c in rel)
        os.makedirs(os.path.join(out, cls), exist_ok=True)
        shutil.copy(
            os.path.join(root, rel),
            os.path.join(out, cls, rel.replace('/', '_')))


@pytest.mark.fault_matrix(
    'train', 'truncated', 'folder pretraining skips and names a damaged '
    'photo and trains on')
def test_two_iterations_on_photos_with_knn_on_a_labelled_folder(tmp_path):
    photos = tmp_path / 'photos'
    expected, damaged = make_photo_folder(str(photos), large=False)
    # a few photos in several modes, and the truncated one: 4 files,
    # 2 iterations of 2
    train = tmp_path / 'train'
    keep = [
        'a/grace.JPG', 'd/china_16bit_grey.tif', 'e/grace_exif6.jpeg',
        damaged[0]
    ]
    for rel in keep:
        os.makedirs(train / os.path.dirname(rel), exist_ok=True)
        shutil.copy(photos / rel, train / rel)
    _labelled_folder(str(photos), expected, str(tmp_path / 'labelled'))

    cfg = _tiny(SMALL, tmp_path / 'work', data_root=str(train))
    knn_pipeline = [
        dict(type='StrictLoadImageFromFile'),
        dict(type='ResizeEdge', scale=32, edge='short', backend='pillow'),
        dict(type='CenterCrop', crop_size=32),
        dict(type='PackInputs'),
    ]
    knn_loader = dict(
        batch_size=4,
        num_workers=0,
        sampler=dict(type='DefaultSampler', shuffle=False),
        collate_fn=dict(type='default_collate'),
        dataset=dict(
            type='CustomDataset',
            data_root=str(tmp_path / 'labelled'),
            with_label=True,
            extensions=FOLDER_IMAGE_EXTENSIONS,
            pipeline=knn_pipeline))
    cfg.custom_hooks.append(
        dict(
            type='OnlineKNNHook',
            interval=2,
            k=3,
            encoder='online',
            bank_dataloader=knn_loader,
            query_dataloader=knn_loader))
    runner = Runner.from_cfg(cfg)
    with logged() as log:
        runner.train()
    assert runner.iter == 2
    log = log.getvalue()
    assert 'UnlabeledImageFolder: 4 images under' in log
    assert f'skipped a damaged image: {train / damaged[0]}' in log
    with open(os.path.join(runner.log_dir, 'vis_data', 'scalars.json')) as f:
        recs = [json.loads(line) for line in f]
    losses = [r['loss'] for r in recs if 'loss' in r]
    assert len(losses) == 2 and all(math.isfinite(v) for v in losses)
    knn = [r for r in recs if 'knn/top1' in r]
    assert len(knn) == 1 and knn[0]['step'] == 2
    # the bank is the labelled folder: every photo, four classes
    assert knn[0]['knn/bank'] == len(expected)
    assert 0 <= knn[0]['knn/top1'] <= 100
    assert runner.train_dataloader.dataset.damage.num_damaged == 1
    # the evaluation API's functions on the hook's labelled-folder loader
    # give the same accuracy
    hook = next(h for h in runner.hooks if isinstance(h, OnlineKNNHook))
    runner.model.eval()
    xs, ys = zip(
        *[batch_features(runner.model, b) for b in hook.loaders['bank']])
    feats, labels = torch.cat(xs), torch.cat(ys)
    assert feats.shape == (len(expected), 32)
    assert sorted(set(labels.tolist())) == [0, 1, 2, 3]
    api = weighted_knn_accuracy(feats, labels, feats, labels, k=3)
    assert api['top1'] == pytest.approx(knn[0]['knn/top1'])


@pytest.mark.fault_matrix(
    'datasets', 'image_mode', 'every photo, 1x1 to 3000x2000 px and any mode, '
    "goes through the folder config's full-size "
    'pipeline')
def test_full_size_pipeline_reads_every_photo(tmp_path):
    from mmengine.registry import init_default_scope
    from mmpretrain.registry import DATASETS
    init_default_scope('mmpretrain')  # the transforms' own builds
    expected, damaged = make_photo_folder(str(tmp_path))
    Image.new('RGB', (1, 1), (200, 100, 50)).save(tmp_path / 'one_pixel.png')
    cfg = Config.fromfile(SMALL).train_dataloader.dataset
    cfg.data_root = str(tmp_path)
    dataset = DATASETS.build(cfg)
    assert len(dataset) == len(expected) + 2
    for i in range(len(dataset)):
        if dataset.get_data_info(i)['img_path'].endswith(damaged[0]):
            continue
        out = dataset.prepare_data(i)
        views = out['inputs']
        assert [tuple(v.shape) for v in views] == [(3, 224, 224)] * 2
        mask = out['data_samples'].mask
        assert tuple(mask.shape) == (14, 14) and int(mask.sum()) == 118
    assert dataset.damage.num_damaged == 0


def test_the_documented_knn_config_builds(tmp_path):
    """The labelled-folder example of docs/pretraining/own_images.md parses
    from a folder of the user's (its base named ``mmsiameseim::``), and its
    bank and query datasets read class folders of photos."""
    import re

    from mmengine.registry import init_default_scope
    from mmpretrain.registry import DATASETS
    init_default_scope('mmpretrain')
    with open(os.path.join(ROOT, 'docs', 'pretraining', 'own_images.md')) as f:
        blocks = re.findall(r'```python\n(.*?)```', f.read(), re.S)
    assert len(blocks) == 1
    expected, _ = make_photo_folder(str(tmp_path / 'photos'), large=False)
    for split in ('labelled', 'labelled_val'):
        _labelled_folder(
            str(tmp_path / 'photos'), expected, str(tmp_path / split))
    assert blocks[0].startswith("_base_ = 'mmsiameseim::pretrain/")
    text = blocks[0].replace('/path/to', str(tmp_path))  # as written
    (tmp_path / 'knn_cfg.py').write_text(text)
    cfg = Config.fromfile(str(tmp_path / 'knn_cfg.py'))
    assert cfg.model.backbone.arch == 'deit-s'
    hook = cfg.custom_hooks[-1]
    assert hook.type == 'OnlineKNNHook'
    assert [h.type for h in cfg.custom_hooks[:-1]
            ] == [h.type for h in Config.fromfile(SMALL).custom_hooks]
    for loader, folder in ((hook.bank_dataloader, 'labelled'),
                           (hook.query_dataloader, 'labelled_val')):
        dataset = DATASETS.build(loader.dataset)
        assert dataset.data_root == str(tmp_path / folder)
        assert len(dataset) == len(expected)  # .webp and .tiff included
        assert dataset.CLASSES == ('china', 'flower', 'grace', 'present')
        out = dataset[0]
        assert tuple(out['inputs'].shape) == (3, 224, 224)
