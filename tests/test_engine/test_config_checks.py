"""A person's config mistakes are refused before the runner builds anything,
naming the key, its place and the nearest valid names; a GPU config on a
CPU is refused with its CPU route (``precision``), which trains; a syntax
error names its file and line."""
import copy
import functools
import glob
import os.path as osp
import subprocess
import sys
import time

import pytest
import torch
from mmengine.config import Config
from mmengine.registry import RUNNERS

import mmsiameseim  # noqa: F401
from mmsiameseim.engine.runner.config_checks import (ConfigMistake,
                                                     apply_precision,
                                                     check_config_keys,
                                                     check_gpu_config)
from tests.helpers import ROOT

TINY = osp.join(ROOT, 'tests', 'data', 'configs',
                'siameseim_tiny_fashionmnist.py')
TRAIN = osp.join(
    osp.dirname(__import__('mmpretrain').__file__), '.mim', 'tools',
    'train.py')
NO_GPU = pytest.mark.skipif(
    torch.cuda.is_available(), reason='AmpOptimWrapper runs on this GPU')


def _cfg(work_dir, **options):
    cfg = Config.fromfile(TINY)
    cfg.work_dir = str(work_dir)
    cfg.merge_from_dict(options)
    return cfg


def _refusal(cfg) -> str:
    with pytest.raises(ConfigMistake) as refused:
        RUNNERS.build(cfg)
    assert not osp.exists(cfg.work_dir), 'the refused run wrote its work dir'
    return str(refused.value)


@pytest.mark.person_matrix(
    'train', 'typo_key', '--cfg-options custom_hooks.1.intervall=1 through '
    'tools/train.py: refused before anything is built, naming the key, '
    "its hook and 'interval'; no work dir")
def test_a_misspelt_hook_option_stops_train_py_at_once(tmp_path):
    work_dir = tmp_path / 'run'
    run = subprocess.run([
        sys.executable, TRAIN, TINY, '--work-dir',
        str(work_dir), '--cfg-options', 'custom_hooks.1.intervall=1'
    ],
                         capture_output=True,
                         text=True,
                         timeout=300)
    assert run.returncode != 0
    assert ("custom_hooks.1: CheckpointHook takes no 'intervall'; did you "
            "mean 'interval'?") in run.stderr, run.stderr[-3000:]
    assert 'siameseim_tiny_fashionmnist.py' in run.stderr
    assert not work_dir.exists()


@pytest.mark.person_matrix(
    'train', 'typo_key', 'misspelt keys of hooks, optimizer, schedulers and '
    'loops: every one named with its place and the nearest valid names, '
    'in one message')
def test_every_misspelt_key_is_named_with_its_place(tmp_path):
    message = _refusal(
        _cfg(
            tmp_path / 'run', **{
                'train_cfg.max_epoch': 3,
                'param_scheduler.0.begn': 0,
                'custom_hooks.0.intreval': 2,
                'default_hooks.checkpoint.max_keep_ckpt': 1,
                'optim_wrapper.optimizer.weight_decya': 0.1,
                'optim_wrapper.clip_grads': None,
            }))
    for expected in (
            "train_cfg: ExactResumeEpochBasedTrainLoop takes no 'max_epoch'; "
            "did you mean 'max_epochs'",
            "param_scheduler.0: MinIterLinearLR takes no 'begn'; did you "
            "mean 'begin'",
            "custom_hooks.0: StopOnNonFiniteLossHook takes no 'intreval'; "
            "did you mean 'interval'",
            'default_hooks.checkpoint: CheckpointHook takes no '
            "'max_keep_ckpt'; did you mean 'max_keep_ckpts'",
            "optim_wrapper.optimizer: AdamW takes no 'weight_decya'; did you "
            "mean 'weight_decay'",
            "optim_wrapper: OptimWrapper takes no 'clip_grads'; did you mean "
            "'clip_grad'",
    ):
        assert expected in message, message


@pytest.mark.person_matrix(
    'train', 'bad_value', 'optim_wrapper.optimizer.lr=abc (and text for a '
    'number or a switch anywhere checked) refused naming the option and '
    'what it takes')
def test_text_for_a_number_is_named(tmp_path):
    message = _refusal(
        _cfg(
            tmp_path / 'run', **{
                'optim_wrapper.optimizer.lr': 'abc',
                'default_hooks.logger.interval': 'ten',
                'default_hooks.checkpoint.save_last': 'yes',
            }))
    assert ("optim_wrapper.optimizer.lr='abc': AdamW takes a number here"
            in message), message
    assert "default_hooks.logger.interval='ten': LoggerHook takes a number" \
        in message
    assert ("default_hooks.checkpoint.save_last='yes': CheckpointHook takes "
            'True or False') in message


@pytest.mark.person_matrix(
    'train', 'typo_key', '--cfg-options model.neck.num_layer=2 through '
    'tools/train.py: refused before anything is built, naming the key path '
    'and what the neck takes; no work dir (was a TypeError after the log '
    'folder was made)')
def test_a_misspelt_model_key_stops_train_py_at_once(tmp_path):
    work_dir = tmp_path / 'run'
    run = subprocess.run([
        sys.executable, TRAIN, TINY, '--work-dir',
        str(work_dir), '--cfg-options', 'model.neck.num_layer=2'
    ],
                         capture_output=True,
                         text=True,
                         timeout=300)
    assert run.returncode != 0
    assert ("model.neck: RelPosDecoderNeck takes no 'num_layer' (it takes "
            'embed_dims') in run.stderr, run.stderr[-3000:]
    assert 'predictor_depth, projector_depth' in run.stderr
    # the message alone, last, without a traceback above it
    assert 'Traceback' not in run.stderr
    assert run.stderr.strip().splitlines()[-1].startswith('  model.neck: ')
    assert not work_dir.exists()


@pytest.mark.person_matrix(
    'train', 'typo_key', 'misspelt model, dataset and pipeline keys (a '
    "hook's dataset too: custom_hooks.2.bank_dataloader.dataset.test_mod): "
    'every one named with its key path and the nearest valid names; no '
    'work dir')
def test_misspelt_model_dataset_and_pipeline_keys_are_named(tmp_path):
    cfg = Config.fromfile(
        osp.join(ROOT, 'configs', 'pretrain',
                 'siameseim_vit-tiny-p4_1xb64-bf16-coslr-1e_fashionmnist.py'))
    cfg.work_dir = str(tmp_path / 'run')
    cfg.merge_from_dict({
        'custom_hooks.2.bank_dataloader.dataset.test_mod':
        True,
        'model.backbone.drop_path':
        0.1,
        'model.head.loss.lamda':
        1.,
        'model.data_preprocessor.men': [0.],
        'train_dataloader.dataset.indice':
        3,
        'train_dataloader.dataset.pipeline.3.num_mask_patch':
        3,
    })
    message = _refusal(cfg)
    for expected in (
            'custom_hooks.2.bank_dataloader.dataset: LocalFashionMNIST takes '
            "no 'test_mod'; did you mean 'test_mode'?",
            "model.backbone: SiameseIMViT takes no 'drop_path'; did you mean "
            "'drop_path_rate'",
            "model.head.loss: UniGradLoss takes no 'lamda'; did you mean "
            "'lambda_neg'?",
            'model.data_preprocessor: EagerSelfSupDataPreprocessor takes no '
            "'men'; did you mean 'mean'?",
            "train_dataloader.dataset: LocalFashionMNIST takes no 'indice'; "
            "did you mean 'indices'?",
            'train_dataloader.dataset.pipeline.3: BlockwiseMaskGenerator '
            "takes no 'num_mask_patch'",
    ):
        assert expected in message, message


def test_classes_taking_any_keyword_are_not_checked():
    """A class whose ``**kwargs`` go elsewhere than its base class takes
    keys no signature lists: never refused; one that hands them to its
    base class is checked against the base's signature."""
    from mmsiameseim.engine.runner.config_checks import _accepted

    class Base:

        def __init__(self, a=1):
            pass

        def method(self, **kwargs):
            pass

    class HandsUp(Base):

        def __init__(self, b=2, **kwargs):
            super().__init__(**kwargs)

    class KeepsThem(Base):

        def __init__(self, b=2, **kwargs):
            super().__init__()
            self.method(**kwargs)

    assert _accepted(HandsUp)[0] == {'a', 'b'}
    assert _accepted(KeepsThem)[0] is None


@pytest.mark.person_matrix(
    'train', 'typo_key', 'a model part that refuses its settings when the '
    'runner builds it (SiameseIM micro_batches=2 with a moco-like loss): '
    'the error as the class gives it, and the log folder removed; the work '
    'dir as it was')
def test_a_model_refused_at_build_leaves_no_log_folder(tmp_path):
    work_dir = tmp_path / 'run'
    cfg = _cfg(
        work_dir, **{
            'model.micro_batches': 2,
            'model.head.loss.target_norm': 'moco-like'
        })
    with pytest.raises(ValueError, match="target_norm='moco-like' cannot"):
        RUNNERS.build(cfg)
    assert not work_dir.exists()
    work_dir.mkdir()
    (work_dir / 'notes.txt').write_text('mine')
    time.sleep(1)  # another timestamp: mmengine keeps one visualizer each
    with pytest.raises(ValueError, match='moco-like'):
        RUNNERS.build(cfg)
    assert sorted(p.name for p in work_dir.iterdir()) == ['notes.txt']


@pytest.mark.person_matrix(
    'train', 'micro_batches', 'model.micro_batches larger than '
    'train_dataloader.batch_size (or not a positive integer): refused '
    'before anything is built, naming both and the range; no work dir')
def test_more_micro_batches_than_images_is_refused(tmp_path):
    message = _refusal(_cfg(tmp_path / 'run', **{'model.micro_batches': 9}))
    assert ('model.micro_batches=9 is more parts than '
            'train_dataloader.batch_size=8 has images; give micro_batches '
            'between 1 and 8') in message
    message = _refusal(_cfg(tmp_path / 'run', **{'model.micro_batches': 0}))
    assert 'model.micro_batches=0: give a positive integer' in message


def _shipped_configs():
    return sorted(
        p for p in glob.glob(
            osp.join(ROOT, 'configs', '**', '*.py'), recursive=True)
        if '_base_' not in p.split(osp.sep))


@functools.lru_cache(maxsize=None)
def _parsed(path):
    return Config.fromfile(path)


def _shipped(path):
    """A fresh copy of a shipped config, parsed once per process."""
    return copy.deepcopy(_parsed(path))


def test_every_shipped_config_passes_the_checks():
    import mmdet.registry  # noqa: F401
    import mmseg.registry  # noqa: F401
    checked = 0
    for path in _shipped_configs():
        cfg = _shipped(path)
        if 'model' not in cfg:
            continue
        check_config_keys(cfg)
        checked += 1
    assert checked >= 40


@NO_GPU
@pytest.mark.person_matrix(
    'train', 'gpu_on_cpu', '--amp / AmpOptimWrapper on a CPU: refused before '
    'anything is built, offering precision=float32 or bfloat16, which then '
    'trains')
@pytest.mark.parametrize('precision', ['float32', 'bfloat16'])
def test_a_gpu_config_on_a_cpu_gets_its_cpu_route(tmp_path, precision):
    amp = {
        'optim_wrapper.type': 'AmpOptimWrapper',
        'optim_wrapper.loss_scale': 'dynamic'
    }
    message = _refusal(_cfg(tmp_path / 'run', **amp))
    assert 'needs a CUDA GPU' in message
    assert '--cfg-options precision=float32' in message
    assert 'precision=bfloat16' in message
    runner = RUNNERS.build(_cfg(tmp_path / 'run', precision=precision, **amp))
    expected = ('OptimWrapper'
                if precision == 'float32' else 'AutocastOptimWrapper')
    runner.train()
    assert runner.iter == 5
    assert type(runner.optim_wrapper).__name__ == expected


@NO_GPU
def test_every_shipped_gpu_config_has_a_cpu_route():
    import mmdet.registry  # noqa: F401
    import mmseg.registry  # noqa: F401
    amp = 0
    for path in _shipped_configs():
        cfg = _shipped(path)
        if (cfg.get('optim_wrapper') or {}).get('type') != 'AmpOptimWrapper':
            continue
        amp += 1
        with pytest.raises(ConfigMistake, match='precision=float32'):
            check_gpu_config(cfg)
        for precision in ('float32', 'bfloat16'):
            routed = _shipped(path)
            routed.precision = precision
            apply_precision(routed)
            check_gpu_config(routed)
            check_config_keys(routed)
            assert 'loss_scale' not in routed.optim_wrapper
    assert amp >= 4


@pytest.mark.person_matrix(
    'train', 'syntax', 'a syntax error in a config or a _base_ file names '
    'that file, the line and the column (mmsiameseim imported)')
def test_a_syntax_error_names_its_file_and_line(tmp_path):
    (tmp_path / 'base.py').write_text('x = 1\ny = (2,\nz = 3\n')
    (tmp_path / 'leaf.py').write_text("_base_ = ['base.py']\na = 1\n")
    (tmp_path / 'alone.py').write_text('a = 1\nb = [1, 2\n')
    for name, broken in (('leaf.py', 'base.py'), ('alone.py', 'alone.py')):
        with pytest.raises(SyntaxError) as error:
            Config.fromfile(str(tmp_path / name))
        assert str(error.value).startswith(
            f'config {tmp_path / broken}, line 2, column 5: '), error.value


SHIPPED = osp.join(
    ROOT, 'configs', 'pretrain',
    'siameseim_vit-tiny-p4_1xb64-bf16-coslr-1e_fashionmnist.py')


@pytest.mark.person_matrix(
    'train', 'bad_value', 'a shipped config whose optim_wrapper names a '
    'constructor: optimizer.lr=abc, optimizer.weight_decya and a paramwise '
    'typo refused before anything is built (the key check skipped such '
    'wrappers)')
def test_optimizer_keys_are_checked_when_a_constructor_is_named(tmp_path):
    cfg = Config.fromfile(SHIPPED)
    assert cfg.optim_wrapper.constructor == \
        'SkipFrozenOptimWrapperConstructor'
    cfg.work_dir = str(tmp_path / 'run')
    cfg.merge_from_dict({
        'optim_wrapper.optimizer.lr': 'abc',
        'optim_wrapper.optimizer.weight_decya': 0.1,
        'optim_wrapper.paramwise_cfg.flat_decay_mul': 0.,
        'optim_wrapper.paramwise_cfg.bias_decay_mult': 'zero',
    })
    message = _refusal(cfg)
    for expected in (
            "optim_wrapper.optimizer.lr='abc': AdamW takes a number here",
            "AdamW takes no 'weight_decya'; did you mean 'weight_decay'",
            "SkipFrozenOptimWrapperConstructor reads no 'flat_decay_mul'; "
            "did you mean 'flat_decay_mult'",
            "optim_wrapper.paramwise_cfg.bias_decay_mult='zero': "
            'SkipFrozenOptimWrapperConstructor takes a number'):
        assert expected in message, message
