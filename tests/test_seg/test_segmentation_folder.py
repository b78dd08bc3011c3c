"""Your own images and masks: SegmentationFolder (pairs, class list, masks
checked) and the two own-folder mmseg configs (UperNet; a linear head on the
frozen backbone) end to end on real photographs with masks made from them,
from a SiameseIM checkpoint, through mmengine's Runner."""
import glob
import json
import math
import os

import numpy as np
import pytest
import torch
from mmengine import Config
from mmengine.hooks import Hook
from PIL import Image

import mmsiameseim.seg  # noqa: F401
from mmsiameseim.seg import SegmentationFolder
from tests.test_datasets.image_folder_photos import sample_photos
from tests.test_seg.test_upernet_ade20k_config import ROOT
from tests.test_seg.test_upernet_ade20k_e2e import \
    _fashion_mnist_pretrain_checkpoint

MMSEG = os.path.join(ROOT, 'configs', 'benchmarks', 'mmseg')
UPERNET = os.path.join(
    MMSEG,
    'upernet_vit-base-p16-siameseim-pre_8xb2-amp-160k_folder-512x512.py')
LINEAR = os.path.join(
    MMSEG, 'linear_vit-base-p16-siameseim-pre-frozen_8xb2-40k_folder-'
    '512x512.py')
CLASSES = ('dark', 'middle', 'bright')


def make_photo_masks(root, per_split=(3, 2)):
    """Crops of the sample photos as JPEG / PNG images, each with a mask of
    its grey level in three bands (dark, middle, bright) and a 2-pixel
    ignored border (255)."""
    (root / 'classes.txt').parent.mkdir(parents=True, exist_ok=True)
    (root / 'classes.txt').write_text('\n'.join(CLASSES) + '\n')
    photos = [p.convert('RGB') for p in sample_photos(width=160).values()]
    for split, count in zip(('train', 'val'), per_split):
        for i in range(count):
            img = photos[i % len(photos)]
            x = (i * 19) % (img.width - 80)
            crop = img.crop((x, 0, x + 80, 72))
            grey = np.asarray(crop.convert('L'))
            mask = np.digitize(grey, (85, 170)).astype(np.uint8)
            mask[:2], mask[-2:], mask[:, :2], mask[:, -2:] = 255, 255, 255, 255
            sub = 'deep/' if i % 2 else ''
            ext = '.jpg' if i % 2 else '.png'
            for kind, picture, name in (('images', crop, f'{i}{ext}'),
                                        ('masks', Image.fromarray(mask),
                                         f'{i}.png')):
                path = root / kind / split / sub / name
                path.parent.mkdir(parents=True, exist_ok=True)
                picture.save(path)
    return root


def test_images_pair_with_masks_and_the_class_list(tmp_path):
    root = make_photo_masks(tmp_path / 'seg')
    ds = SegmentationFolder(str(root), split='train', serialize_data=False)
    assert ds.metainfo['classes'] == CLASSES
    assert len(ds) == 3
    infos = [ds.get_data_info(i) for i in range(len(ds))]
    assert [os.path.relpath(d['img_path'], root) for d in infos] == [
        'images/train/0.png', 'images/train/2.png', 'images/train/deep/1.jpg'
    ]
    assert [os.path.relpath(d['seg_map_path'], root) for d in infos] == [
        'masks/train/0.png', 'masks/train/2.png', 'masks/train/deep/1.png'
    ]
    assert not any(d['reduce_zero_label'] for d in infos)


def test_what_it_refuses_is_named(tmp_path):
    with pytest.raises(ValueError, match='data_root is not set'):
        SegmentationFolder(None)
    root = make_photo_masks(tmp_path / 'seg')
    with pytest.raises(FileNotFoundError, match='no class list'):
        SegmentationFolder(str(root), classes_file='names.txt')
    os.remove(root / 'masks' / 'val' / 'deep' / '1.png')
    with pytest.raises(FileNotFoundError) as e:
        SegmentationFolder(str(root), split='val')
    assert '1 of the 2 images' in str(e.value)
    assert 'deep/1.jpg: no' in str(e.value)
    bad = root / 'masks' / 'train' / '0.png'
    mask = np.asarray(Image.open(bad)).copy()
    mask[10, 10] = 7
    Image.fromarray(mask).save(bad)
    with pytest.raises(ValueError) as e:
        SegmentationFolder(str(root))
    assert f'mask {bad} holds value 7' in str(e.value)
    assert 'names 3 classes (values 0-2) and 255 is ignored' in str(e.value)
    # verify_masks=False leaves the check to the user
    SegmentationFolder(str(root), verify_masks=False)
    Image.fromarray(np.stack([mask] * 3, -1)).save(bad)
    with pytest.raises(ValueError, match='is a RGB image; masks are single'):
        SegmentationFolder(str(root))


def _tiny(config, root, work_dir, checkpoint, num_classes):
    """The config on the CPU demo's ViT (the smoke config's overrides) with
    the options a user gives."""
    cfg = Config.fromfile(config)
    cfg.work_dir = str(work_dir)
    crop, scale = (64, 64), (256, 64)
    m = cfg.model
    m.data_preprocessor.update(size=crop, mean=[72.94] * 3, std=[90.02] * 3)
    m.backbone.update(
        img_size=crop,
        patch_size=4,
        embed_dims=128,
        num_layers=4,
        num_heads=4,
        out_indices=[0, 1, 2, 3] if m.get('neck') else [3])
    m.backbone.init_cfg.checkpoint = str(checkpoint)
    if m.get('neck'):
        m.neck.embed_dim = 128
        m.decode_head.update(in_channels=[128] * 4, channels=128)
    else:
        m.decode_head.update(in_channels=128, channels=128)
    m.decode_head.num_classes = num_classes
    if m.get('auxiliary_head'):
        m.auxiliary_head.update(in_channels=128, num_classes=num_classes)
    m.test_cfg.update(crop_size=crop, stride=(42, 42))
    cfg.optim_wrapper.type = 'OptimWrapper'  # AMP needs a GPU
    if cfg.optim_wrapper.get('paramwise_cfg'):
        cfg.optim_wrapper.paramwise_cfg.num_layers = 4
    cfg.train_cfg.update(max_iters=2, val_interval=2)
    cfg.default_hooks.logger.interval = 1
    # a visualizer of its own: mmengine keeps one instance per name
    cfg.visualizer.name = f'visualizer_{work_dir}'
    for key in ('train_dataloader', 'val_dataloader'):
        loader = cfg[key]
        loader.update(num_workers=0, persistent_workers=False)
        loader.dataset.data_root = str(root)
        for t in loader.dataset.pipeline:
            if t.type in ('RandomResize', 'Resize'):
                t.scale = scale
            if t.type == 'RandomCrop':
                t.crop_size = crop
    return cfg


class _Snapshot(Hook):
    """The backbone's weights as training starts (after loading)."""

    def before_train(self, runner):
        self.state = {
            k: v.clone()
            for k, v in runner.model.backbone.state_dict().items()
        }


@pytest.fixture
def fast_config_dump(monkeypatch):
    # the Runner formats mmseg's config through yapf several times (~8 s)
    monkeypatch.setattr('mmengine.config.config.FormatCode',
                        lambda text, **kwargs: (text, False))


def _miou(work_dir):
    path = glob.glob(str(work_dir / '*' / 'vis_data' / 'scalars.json'))[0]
    val = [json.loads(line) for line in open(path)]
    val = [s for s in val if 'mIoU' in s]
    assert len(val) == 1 and val[0]['step'] == 2
    return val[0]['mIoU']


@pytest.mark.person_matrix(
    'segmentation', 'num_classes', 'a num_classes that is not the class '
    "list's is refused before the first step, naming the heads' options")
@pytest.mark.parametrize(
    'config', [UPERNET, LINEAR], ids=['upernet', 'linear'])
def test_own_masks_end_to_end(config, tmp_path, fast_config_dump):
    from mmengine.runner import Runner
    root = make_photo_masks(tmp_path / 'seg')
    ckpt = tmp_path / 'epoch_1.pth'
    _fashion_mnist_pretrain_checkpoint(ckpt)
    # a class count that is not the class list's: stopped before a step
    runner = Runner.from_cfg(
        _tiny(config, root, tmp_path / 'wrong', ckpt, num_classes=150))
    with pytest.raises(ValueError) as e:
        runner.train()
    assert 'model.decode_head.num_classes=150' in str(e.value)
    assert 'has 3 classes (dark, middle, bright)' in str(e.value)
    assert runner.iter == 0

    runner = Runner.from_cfg(
        _tiny(config, root, tmp_path / 'work', ckpt, num_classes=3))
    loaded = _Snapshot()
    runner.register_hook(loaded, 'VERY_HIGH')
    runner.train()
    assert runner.iter == 2
    miou = _miou(tmp_path / 'work')
    assert math.isfinite(miou) and 0 <= miou <= 100
    after = runner.model.backbone.state_dict()
    if config == LINEAR:  # frozen: the loaded weights, untouched
        assert all(torch.equal(v, after[k]) for k, v in loaded.state.items())
        assert not any(p.requires_grad
                       for p in runner.model.backbone.parameters())
        trainable = {
            n
            for n, p in runner.model.named_parameters() if p.requires_grad
        }
        assert trainable == {
            'decode_head.conv_seg.weight', 'decode_head.conv_seg.bias'
        }
    else:  # fine-tuned
        assert all(p.requires_grad for p in runner.model.backbone.parameters())


@pytest.mark.person_matrix(
    'segmentation', 'mask_mismatch', 'a mask of another size than its '
    'image, in the val or the train split, is refused when the dataset is '
    'built, naming both files and both sizes')
@pytest.mark.parametrize('split', ['train', 'val'])
def test_a_mask_of_another_size_is_refused_naming_both_files(tmp_path, split):
    root = make_photo_masks(tmp_path / 'seg')
    bad = root / 'masks' / split / '0.png'
    mask = Image.open(bad)
    mask.resize((mask.width // 2, mask.height // 2), Image.NEAREST).save(bad)
    with pytest.raises(ValueError) as e:
        SegmentationFolder(str(root), split=split)
    assert (f'mask {bad} is 40 x 36 (width x height), but its image '
            f'{root / "images" / split / "0.png"} loads as 80 x 72') in str(
                e.value)


def test_a_photo_turned_by_its_exif_orientation_needs_a_turned_mask(tmp_path):
    import mmcv
    root = make_photo_masks(tmp_path / 'seg')
    image = root / 'images' / 'val' / 'deep' / '1.jpg'
    exif = Image.Exif()
    exif[0x0112] = 6  # rotate 90 degrees when shown
    Image.open(image).save(image, exif=exif)
    assert mmcv.imread(str(image)).shape[:2] == (80, 72)  # loads turned
    with pytest.raises(ValueError) as e:
        SegmentationFolder(str(root), split='val')
    assert 'loads as 72 x 80 (its EXIF orientation 6 turns it' in str(e.value)
    mask = root / 'masks' / 'val' / 'deep' / '1.png'
    Image.open(mask).transpose(Image.TRANSPOSE).save(mask)
    assert len(SegmentationFolder(str(root), split='val')) == 2
