"""The labelled-folder benchmark configs (configs/benchmarks/mmpretrain/
*_folder.py): the ImageNet fine-tune and linear-probe recipes on your own
class folders, run end to end on a folder of real photographs through
mmengine's Runner with a pretrained checkpoint, and the class-count check
that names the options to set."""
import pytest
from mmengine.runner import Runner

import mmsiameseim  # noqa: F401
from tests.test_configs.test_mmpretrain_benchmarks import (
    FT, LIN, assert_finetuned_from, assert_linear_probe_of, load,
    save_tiny_pretraining, shrink)
from tests.test_datasets.image_folder_photos import make_labelled_photo_folder

FT_FOLDER = 'vit-base-p16_siameseim-pre_8xb128-coslr-100e_folder.py'
LIN_FOLDER = 'vit-base-p16_siameseim-pre_8xb128-linear-coslr-90e_folder.py'


@pytest.fixture(scope='module')
def pretrained(tmp_path_factory):
    return save_tiny_pretraining(
        tmp_path_factory.mktemp('pretrain') / 'epoch_1.pth')


@pytest.fixture(scope='module')
def photos(tmp_path_factory):
    root = tmp_path_factory.mktemp('labelled') / 'photos'
    make_labelled_photo_folder(str(root))
    return root


def _drop(cfg: dict, *keys) -> dict:
    return {k: v for k, v in cfg.items() if k not in keys}


@pytest.mark.parametrize('folder,imagenet', [(FT_FOLDER, FT),
                                             (LIN_FOLDER, LIN)])
def test_folder_configs_are_the_imagenet_recipes_on_class_folders(
        folder, imagenet):
    ours, theirs = load(folder).to_dict(), load(imagenet).to_dict()
    for key in ('model', 'param_scheduler', 'randomness', 'runner_type'):
        assert ours[key] == theirs[key], key
    # the same schedule, in the plugin's epoch loop (which refuses a folder
    # too small for one batch)
    train_cfg = dict(
        theirs['train_cfg'], type='ExactResumeEpochBasedTrainLoop')
    train_cfg.pop('by_epoch')
    assert ours['train_cfg'] == train_cfg
    for key in ('train_dataloader', 'val_dataloader'):
        ds = ours[key]['dataset']
        assert ds == dict(
            theirs[key]['dataset'], type='LabelledImageFolder',
            data_root=None), key
        assert _drop(ours[key], 'dataset', 'batch_size') == \
            _drop(theirs[key], 'dataset', 'batch_size')
        assert ours[key]['batch_size'] == 128
    assert ours['val_evaluator'] == dict(type='Accuracy', topk=(1, ))
    assert ours['test_dataloader'] is None and ours['test_cfg'] is None
    assert ours['custom_hooks'] == [dict(type='ClassCountCheckHook')]
    assert ours['auto_scale_lr'] == dict(base_batch_size=1024)
    lr = ours['optim_wrapper']['optimizer']['lr']
    if folder == LIN_FOLDER:  # LARS 3.2 at 16384, scaled to 1024
        assert lr == pytest.approx(3.2 * 1024 / 16384)
        assert _drop(ours['optim_wrapper']['optimizer'], 'lr') == \
            _drop(theirs['optim_wrapper']['optimizer'], 'lr')
    else:  # the fine-tune was already at 1024
        assert ours['optim_wrapper'] == theirs['optim_wrapper']


def _on_photos(name, photos, work_dir, checkpoint, num_classes):
    """What a user gives on the command line, on the tiny test ViT."""
    cfg = load(name)
    for key in ('train_dataloader', 'val_dataloader'):
        cfg[key].dataset.data_root = str(photos)
    shrink(cfg, None, work_dir)
    cfg.model.head.num_classes = num_classes
    cfg.model.data_preprocessor.num_classes = num_classes
    cfg.model.backbone.init_cfg.checkpoint = str(checkpoint)
    cfg.train_cfg.update(max_epochs=1, val_interval=1)
    cfg.log_level = 'WARNING'
    return Runner.from_cfg(cfg)


def test_a_wrong_class_count_is_refused_naming_the_options(
        photos, pretrained, tmp_path):
    runner = _on_photos(FT_FOLDER, photos, tmp_path, pretrained, 10)
    with pytest.raises(ValueError) as e:
        runner.train()
    msg = str(e.value)
    assert 'ClassCountCheckHook: model.head.num_classes=10, ' \
        'model.data_preprocessor.num_classes=10' in msg
    assert 'has 4 classes (china, flower, grace, present)' in msg
    assert '--cfg-options model.head.num_classes=4 ' \
        'model.data_preprocessor.num_classes=4' in msg
    assert runner.iter == 0


def test_finetune_on_a_labelled_photo_folder(photos, pretrained, tmp_path):
    runner = _on_photos(FT_FOLDER, photos, tmp_path, pretrained, 4)
    runner.train()
    assert runner.iter == 3  # 12 photos, batches of 4
    top1 = runner.message_hub.get_scalar('val/accuracy/top1').current()
    assert 0 <= top1 <= 100
    # the pretrained weights were loaded: 3 warm-up steps (lr up to 1.3e-4)
    # move them by about 1e-4, random weights differ by about 1e-2
    assert_finetuned_from(runner, pretrained, atol=1e-3)
    assert (tmp_path / 'epoch_1.pth').is_file()


def test_linear_probe_on_a_labelled_photo_folder(photos, pretrained, tmp_path):
    runner = _on_photos(LIN_FOLDER, photos, tmp_path, pretrained, 4)
    runner.train()
    assert runner.iter == 3
    top1 = runner.message_hub.get_scalar('val/accuracy/top1').current()
    assert 0 <= top1 <= 100
    assert_linear_probe_of(runner, pretrained)
