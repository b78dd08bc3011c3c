"""Preflight: a shipped config at its real size, a few iterations on CPU
or GPU, before a month of cluster time is spent on it."""
import copy
import os
import os.path as osp
import tempfile
import time
from typing import List, Optional

import torch
from mmengine.config import Config
from mmengine.utils import to_2tuple

from mmsiameseim.precision import training_precision
from projects.preflight import checks
from projects.preflight.data import (FASHION_MNIST, check_user_folder,
                                     data_folders, fill_image_folder,
                                     make_miniature, own_folder_datasets,
                                     point_data_root, user_folder)
from projects.preflight.hook import PreflightHook
from projects.preflight.schedule import (DATASET_SIZES, inner_dataset, project,
                                         shipped_schedule)
from projects.speed.memory import peak_rss_bytes, reset_peak_rss

LOADERS = ('train_dataloader', 'val_dataloader', 'test_dataloader')


class PreflightError(RuntimeError):
    """A config failed its preflight; ``record`` holds what was measured
    (``record['failures']`` names the failed checks)."""

    def __init__(self, message: str, record: Optional[dict] = None):
        super().__init__(message)
        self.record = record or {}


def default_batch(cfg: Config) -> int:
    """1 for detection (1024 px), else 2: BatchNorm layers (the necks, and
    UperNet's pooling module at 1 x 1) need two samples, and 2 is the
    segmentation configs' own per-GPU batch.

    A SiameseIM trained in ``micro_batches`` parts gets two images a part.
    """
    if cfg.get('default_scope') == 'mmdet':
        return 1
    return 2 * int(cfg.get('model', {}).get('micro_batches', 1))


def input_size(cfg: Config) -> Optional[List[int]]:
    """The training input size (H, W) a config declares: ``image_size``,
    ``crop_size`` or ``img_size`` (an int or a pair), else the backbone's
    ``img_size``."""
    for key in ('image_size', 'crop_size', 'img_size'):
        if cfg.get(key):
            return list(to_2tuple(cfg[key]))
    size = cfg.get('model', {}).get('backbone', {}).get('img_size')
    return list(to_2tuple(size)) if size else None


def drop_empty_pretrained(obj, path: str = 'model') -> List[str]:
    """Set every ``Pretrained`` init_cfg with an empty checkpoint to None
    (a preflight starts from random weights); returns where."""
    found = []
    if isinstance(obj, dict):
        init = obj.get('init_cfg')
        if (isinstance(init, dict) and init.get('type') == 'Pretrained'
                and not init.get('checkpoint')):
            obj['init_cfg'] = None
            found.append(f'{path}.init_cfg')
        for k, v in obj.items():
            found += drop_empty_pretrained(v, f'{path}.{k}')
    return found


def shrink_loader(loader: dict,
                  batch: int,
                  samples: int,
                  device: str,
                  num_workers: int = 0) -> None:
    """``batch`` per step, ``num_workers`` worker processes, the first
    ``samples`` samples of the (innermost) dataset."""
    loader.update(
        batch_size=batch, num_workers=num_workers, persistent_workers=False)
    if device == 'cpu':
        loader['pin_memory'] = False
    inner_dataset(loader['dataset'])['indices'] = samples


def covering_indices(dataset: dict) -> Optional[List[int]]:
    """For an ``ImageNetC`` dataset, the first sample of every (corruption,
    severity): its metric wants them all (mCE averages over each)."""
    if dataset.get('type') != 'ImageNetC':
        return None
    from mmengine.registry import init_default_scope
    from mmpretrain.registry import DATASETS
    init_default_scope('mmpretrain')
    built = DATASETS.build(dict(dataset, indices=None, pipeline=[]))
    first = {}
    for i in range(len(built)):
        info = built.get_data_info(i)
        first.setdefault((info['corruption'], info['severity']), i)
    return sorted(first.values())


def apply_overrides(cfg: Config,
                    iters: int,
                    batch: int,
                    data_root: str,
                    work_dir: str,
                    device: str,
                    fashion_mnist: Optional[str],
                    num_workers: int = 0,
                    data_shown: Optional[str] = None) -> List[str]:
    """Everything a preflight changes in a config (the batch, the workers,
    the data, the run length, the work dir; on CPU the CUDA-only AMP
    wrapper), in place; returns a line per change (``data_shown``: the
    data named there, default ``data_root``)."""
    notes = []
    for key in cfg.keys():
        cfg[key] = point_data_root(cfg[key], data_root)
    for key in LOADERS:
        loader = cfg.get(key)
        if loader is None:
            continue
        samples = batch * iters if key == 'train_dataloader' else batch
        shrink_loader(loader, batch, samples, device, num_workers)
        dataset = inner_dataset(loader['dataset'])
        covering = covering_indices(dataset)
        if covering:
            dataset['indices'] = covering
            notes.append(f'{key}: one sample of each of the '
                         f'{len(covering)} (corruption, severity) pairs '
                         '(the metric needs every pair)')
        if dataset.get('type') == 'LocalFashionMNIST' and fashion_mnist:
            dataset['data_prefix'] = fashion_mnist
    notes.append(f'batch {batch} per step, num_workers {num_workers}, '
                 'data under '
                 f'{data_shown or data_root}, {iters} training iterations')
    if cfg.get('train_cfg'):
        # the preflight validates once itself, after training
        cfg.train_cfg['val_begin'] = 10**9
    wrapper = cfg.get('optim_wrapper')
    if (device == 'cpu' and wrapper
            and wrapper.get('type') == 'AmpOptimWrapper'):
        for key in ('loss_scale', 'dtype', 'use_fsdp'):
            wrapper.pop(key, None)
        wrapper['type'] = 'OptimWrapper'
        notes.append('optim_wrapper AmpOptimWrapper -> OptimWrapper (fp32): '
                     "mmengine's AMP wrapper needs CUDA")
    for where in drop_empty_pretrained(cfg.get('model', {})):
        notes.append(f'{where}: Pretrained with an empty checkpoint -> '
                     'random initialisation')
    cfg.work_dir = work_dir
    return notes


def _params(model: torch.nn.Module) -> dict:
    per_module = {
        name: sum(p.numel() for p in m.parameters())
        for name, m in model.named_children()
    }
    per_module = {k: v for k, v in per_module.items() if v}
    return dict(
        params=per_module,
        params_total=sum(p.numel() for p in model.parameters()),
        params_trainable=sum(p.numel() for p in model.parameters()
                             if p.requires_grad))


CUDA_PEAK = 'torch.cuda.max_memory_allocated, read every iteration'


def _reset_peak(device: str) -> None:
    if device == 'cuda':
        torch.cuda.reset_peak_memory_stats()
    else:
        reset_peak_rss()


def _peak(device: str, training_cuda_bytes: int = 0) -> dict:
    """The peak memory: on CUDA the larger of the counter now and
    ``training_cuda_bytes`` (the training iterations' peak, which
    :class:`PreflightHook` reads before mmengine's log processor resets the
    counter)."""
    if device == 'cuda':
        return dict(
            peak_memory_mb=max(torch.cuda.max_memory_allocated(),
                               training_cuda_bytes) / 2**20,
            memory_kind=CUDA_PEAK)
    return dict(
        peak_memory_mb=peak_rss_bytes() / 2**20,
        memory_kind='peak resident set of the process (VmHWM)')


def build_runner(cfg: Config):
    """The config's runner, as mmpretrain's / mmdet's / mmseg's
    tools/train.py build it (``runner_type`` honoured)."""
    from mmengine.registry import RUNNERS
    from mmengine.runner import Runner
    if 'runner_type' in cfg:
        return RUNNERS.build(cfg)
    return Runner.from_cfg(cfg)


def _checkpoint_round_trip(runner, work_dir: str) -> dict:
    """Save a checkpoint, disturb the weights, load it back, and check that
    every weight came back.

    The load is a resume (weights, optimizer,
    schedulers, and the runner's resume checks) unless the preflight ran
    the config's whole schedule (a one-epoch config), where a resume is
    rightly refused: then the weights and the optimizer state.
    """
    runner.save_checkpoint(work_dir, 'preflight.pth')
    path = osp.join(work_dir, 'preflight.pth')
    params = dict(runner.model.named_parameters())
    before = {n: p.detach().double().sum().item() for n, p in params.items()}
    with torch.no_grad():
        for p in params.values():
            p.add_(1.)
    if runner.iter < runner.max_iters:
        runner.resume(path)
        how = 'resume'
    else:
        checkpoint = runner.load_checkpoint(path)
        runner.optim_wrapper.load_state_dict(checkpoint['optimizer'])
        how = 'weights and optimizer (the whole schedule ran: no resume)'
    changed = [
        n for n, p in params.items()
        if p.detach().double().sum().item() != before[n]
    ]
    return dict(
        checkpoint_mb=os.path.getsize(path) / 2**20,
        checkpoint_reload=how,
        checkpoint_reloaded=not changed,
        checkpoint_not_restored=changed[:10])


def _eval_loops(runner, cfg: Config) -> dict:
    """One validation batch when the config validates, one test batch when
    its test data differ from its validation data; seconds each."""
    out = {}
    if cfg.get('val_dataloader') and cfg.get('val_cfg') is not None \
            and cfg.get('val_evaluator'):
        t0 = time.perf_counter()
        runner.val_loop.run()
        out['val_s'] = time.perf_counter() - t0
    if (cfg.get('test_dataloader') and cfg.get('test_cfg') is not None
            and cfg.get('test_evaluator')
            and cfg.test_dataloader != cfg.get('val_dataloader')):
        runner._test_loop = runner.build_test_loop(runner._test_loop)
        t0 = time.perf_counter()
        runner.test_loop.run()
        out['test_s'] = time.perf_counter() - t0
    return out


def _train(cfg: Config, iters: int, device: str, record: dict) -> list:
    """Build the runner, train, evaluate, round-trip a checkpoint; fills
    ``record``, returns the failed checks."""
    runner = build_runner(cfg)
    model = runner.model
    record.update(_params(model))
    hook = PreflightHook(iters)
    runner.register_hook(hook)
    failures = []
    try:
        runner.train()
    finally:
        if hook._counter is not None:
            hook._counter.__exit__(None, None, None)
    # the training's peak, before the evaluation and the memory model's
    # own measurements reset the device's peak counter
    record.update(_peak(device, hook.peak_cuda_bytes))
    step = hook.step_time()
    batch = cfg.train_dataloader.batch_size
    record.update(
        iters=len(hook.step_times),
        step_s=step,
        step_times_s=hook.step_times,
        images_per_s=batch / step,
        flops_per_image=hook.flops / batch if hook.flops else None,
        flops_counted=('whole model, one training step (forward + '
                       'backward; torch.utils.flop_counter: matrix '
                       'products, convolutions, attention), per image'),
        losses=hook.losses[-1] if hook.losses else {})
    if len(hook.step_times) != iters:
        failures.append(f'trained {len(hook.step_times)} iterations, '
                        f'expected {iters}')
    nonfinite = sorted(
        {k
         for loss in hook.losses
         for k in checks.finite(loss)})
    if not hook.losses or not any(hook.losses):
        failures.append('no loss was logged')
    if nonfinite:
        failures.append(f'non-finite losses: {nonfinite}')
    grads, problems = checks.gradient_problems(hook)
    record.update(grads)
    failures += problems
    problems, summary = checks.check_param_groups(
        model, runner.optim_wrapper.optimizer, cfg.optim_wrapper)
    record['param_groups'] = summary
    record['param_group_problems'] = problems
    if problems:
        failures.append(f'{len(problems)} optimizer group problems: '
                        f'{problems[:5]}')
    record.update(_eval_loops(runner, cfg))
    record.update(_checkpoint_round_trip(runner, cfg.work_dir))
    if not record['checkpoint_reloaded']:
        failures.append('resuming the checkpoint did not restore '
                        f'{record["checkpoint_not_restored"]}')
    record['memory_model'] = _memory_model(runner, record)
    for key in ('max_batch_per_device', 'max_batch_per_device_checkpointed'):
        if key in record['memory_model']:
            record[key] = record['memory_model'][key]
    return failures


def _memory_model(runner, record: dict) -> dict:
    """The per-device batch projection (``memory_model.py``), in the
    config's own precision (bfloat16 standing in for float16 on a CPU)."""
    from mmengine.model import is_model_wrapper

    from projects.preflight.memory_model import memory_model
    model = runner.model.module if is_model_wrapper(
        runner.model) else runner.model
    loader = runner.train_dataloader
    dataset, collate = loader.dataset, loader.collate_fn

    def batch_of(n):
        return collate([dataset[i % len(dataset)] for i in range(n)])

    precision = record['config_precision']
    if precision == 'float16' and record['device'] == 'cpu':
        precision = 'bfloat16'  # same size; CPU float16 kernels are few
    try:
        return memory_model(model, runner.optim_wrapper.optimizer, batch_of,
                            precision)
    except Exception as error:  # reported, not a failed check
        return dict(error=f'{type(error).__name__}: {error}')


def _features(cfg: Config, batch: int, record: dict) -> list:
    """A feature-extraction config (no training: the 1 % logistic
    regression): its frozen backbone on one batch of each split."""
    from torch.utils.flop_counter import FlopCounterMode

    from mmsiameseim.evaluation.frozen_features import (
        build_frozen_backbone_model, extract_features)
    model = build_frozen_backbone_model(cfg)
    record.update(_params(model))
    failures = []
    for key in ('train_dataloader', 'test_dataloader'):
        dataset = cfg[key]['dataset']
        counter = FlopCounterMode(display=False)
        t0 = time.perf_counter()
        with counter:
            feats, _ = extract_features(
                model,
                dataset,
                dataset['pipeline'],
                indices=range(batch),
                batch_size=batch,
                desc=key)
        record[f'{key}_s'] = time.perf_counter() - t0
        record['flops_per_image'] = counter.get_total_flops() / batch
        if not torch.isfinite(feats).all():
            failures.append(f'{key}: non-finite features')
    record['step_s'] = record['test_dataloader_s']
    record['images_per_s'] = batch / record['step_s']
    record['flops_counted'] = ('frozen backbone forward per image, '
                               'torch.utils.flop_counter')
    record['note'] = ('feature extraction only; the logistic regression '
                      'is not fitted (tools/evaluation/fewshot_eval.py)')
    return failures


def preflight(config: str,
              iters: int = 2,
              batch_size: Optional[int] = None,
              data_root: Optional[str] = None,
              work_dir: Optional[str] = None,
              images_per_s: Optional[float] = None,
              cfg_options: Optional[dict] = None,
              fashion_mnist: Optional[str] = None,
              cache_dir: Optional[str] = None,
              num_workers: int = 0) -> dict:
    """Run a config as shipped, at its real size, for a few iterations.

    Builds the config's runner (``runner_type`` honoured) with its full
    model, input size, optimizer wrapper and constructor (layer decay,
    paramwise settings) and parameter schedulers, changing only the batch
    (1-2), the workers (0), the data (a miniature in the config's format,
    or ``data_root``), the length (``iters`` iterations) and the work dir
    (and on CPU the CUDA-only ``AmpOptimWrapper``, which becomes fp32
    ``OptimWrapper``). Then: ``iters`` training steps, one validation (and
    test) batch where the config has them, a checkpoint saved and resumed.

    Args:
        config (str): Config file.
        iters (int): Training iterations. Defaults to 2.
        batch_size (int, optional): Per step; default 1 for the mmdet
            configs (1024 px), else 2.
        data_root (str, optional): A folder laid out as the config's
            ``data/`` (``imagenet/``, ``coco/``, ``lvis_v1/``, ``ade/``...)
            with the real data; by default a miniature is written.
        work_dir (str, optional): Default: a temporary folder, removed.
        images_per_s (float, optional): Training images per second per
            device for the projection; default: the rate measured here.
        cfg_options (dict, optional): Config overrides, applied first.
        fashion_mnist (str, optional): Folder of the un-gzipped
            Fashion-MNIST files (painters' source and the Fashion-MNIST
            configs' data); default ``data/fashion_mnist`` of the repo.
        cache_dir (str, optional): Where the miniature data are written
            (reused across calls); default: inside the work dir.
        num_workers (int): DataLoader workers. Defaults to 0.

    Returns:
        dict: The record (see docs/preflight.md); ``record['failures']`` is
        empty.

    Raises:
        PreflightError: A check failed or the run raised; its ``record``
        holds what was measured.
    """
    if iters < 1:
        raise ValueError(f'iters must be >= 1, got {iters}')
    cfg = Config.fromfile(config)
    if cfg_options:
        cfg.merge_from_dict(cfg_options)
    device = 'cuda' if torch.cuda.is_available() else 'cpu'
    batch = batch_size or default_batch(cfg)
    schedule = shipped_schedule(cfg)
    record = dict(
        config=config,
        device=device,
        batch=batch,
        input_size=input_size(cfg),
        schedule=schedule)
    own_dir = work_dir is None
    work_dir = work_dir or tempfile.mkdtemp(prefix='preflight_')
    try:
        failures = _run(cfg, iters, batch, data_root, work_dir, device,
                        fashion_mnist, cache_dir, num_workers, record)
    except PreflightError:
        raise
    except Exception as error:
        record['failures'] = [f'{type(error).__name__}: {error}']
        raise PreflightError(f'{config}: {type(error).__name__}: {error}',
                             record) from error
    finally:
        if own_dir:
            import shutil
            shutil.rmtree(work_dir, ignore_errors=True)
    for key, value in _peak(device).items():  # a run without training
        record.setdefault(key, value)
    size = dataset_size(cfg)
    record['projection'] = project(schedule, images_per_s
                                   or record.get('images_per_s'), size)
    record['projection_rate'] = ('given (--images-per-s)' if images_per_s else
                                 f'measured here ({device}, batch '
                                 f'{batch})')
    record['failures'] = failures
    if failures:
        raise PreflightError(f'{config}: ' + '; '.join(failures), record)
    return record


def dataset_size(cfg: Config) -> Optional[int]:
    """Training images per epoch of the config's dataset as released
    (``DATASET_SIZES``; None for another dataset type)."""
    return DATASET_SIZES.get(shipped_schedule(cfg)['dataset_type'])


def _run(cfg, iters, batch, data_root, work_dir, device, fashion_mnist,
         cache_dir, num_workers, record) -> list:
    fashion_mnist = fashion_mnist or FASHION_MNIST
    own_folder = bool(own_folder_datasets(cfg))
    if own_folder and data_root is not None:
        # an own-images config: --data-root is the user's folder itself
        data_root = osp.abspath(data_root)
        folder_note = fill_image_folder(cfg, data_root)
    else:
        folder_note = fill_image_folder(cfg)
    folder = user_folder(cfg) if own_folder else None
    if data_root is None:
        source = cfg.to_dict() if hasattr(cfg, 'to_dict') else dict(cfg)
        if folder:  # a _base_'s variable (data_root = 'data/...') reads none
            source = {
                k: v
                for k, v in source.items() if not isinstance(v, str)
            }
        folders = data_folders(source)
        data_root = make_miniature(folders, cache_dir or work_dir,
                                   batch * iters, fashion_mnist)
        record['data'] = f'miniature ({", ".join(sorted(folders))})' \
            if folders else 'Fashion-MNIST'
        if own_folder and not folder:
            record['data'] += (': no folder given (--data-root DIR, or '
                               'data_root with --cfg-options)')
    else:
        fashion_mnist = osp.join(data_root, 'fashion_mnist')
        record['data'] = f'real data under {data_root}'
    if folder:
        record['data'] = f'your folder {folder}'
    record['config_precision'] = training_precision(
        cfg.get('optim_wrapper') or {})
    record['overrides'] = ([folder_note] if folder_note else []) + \
        apply_overrides(cfg, iters, batch, data_root, work_dir, device,
                        fashion_mnist, num_workers, folder)
    if folder:
        record['data'] = check_user_folder(cfg, iters, batch)
    _reset_peak(device)
    if cfg.get('optim_wrapper') is None or cfg.get('train_cfg') is None:
        return _features(copy.deepcopy(cfg), batch, record)
    return _train(cfg, iters, device, record)
