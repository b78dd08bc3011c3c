"""How a multi-process run is set up where mmengine's defaults do not
fit: the process group on a machine without a GPU, and the model wrapper a
config that names none gets.

mmengine's ``init_dist`` calls ``torch.cuda.set_device(local_rank)`` for
every launcher before creating the process group, and its ``wrap_model``
passes ``device_ids=[local_rank]`` to ``DistributedDataParallel``: both fail
on a CPU-only machine ("Found no NVIDIA driver").
:func:`setup_cpu_process_group` creates the gloo process group from the
launcher's environment instead (``env_cfg.dist_cfg``: its ``timeout``
bounds how long a rank waits for one that stopped answering), and
:func:`default_wrapper_cfg` wraps the model without device ids. A model
that needs its own wrapper names it (``ddp_wrapper``: a SiameseIM trained
in micro-batches, the wrapper that runs its exact accumulation).
"""
import datetime
import os
from typing import Optional

import torch
import torch.distributed as torch_dist
from mmengine.dist import is_distributed
from mmengine.logging import print_log

from ...docs_page import docs_page


def setup_cpu_process_group(runner, env_cfg: dict) -> None:
    """Create the gloo process group of a multi-process ``runner`` on a
    machine without a GPU, before mmengine's ``setup_env`` would try CUDA
    (nothing to do with a GPU or an existing process group)."""
    if (runner.distributed and not is_distributed()
            and not torch.cuda.is_available()):
        init_cpu_process_group(runner.launcher,
                               dict(env_cfg.get('dist_cfg', {})))


def init_cpu_process_group(launcher: str, dist_cfg: dict) -> None:
    """Create the default process group of a CPU-only ``--launcher
    pytorch`` run (``torchrun``) with the gloo backend.

    Args:
        launcher (str): The runner's launcher; only 'pytorch' sets the
            environment (``RANK``, ``WORLD_SIZE``, ``MASTER_ADDR``,
            ``MASTER_PORT``) this reads.
        dist_cfg (dict): ``env_cfg.dist_cfg``: ``backend`` (gloo; nccl,
            which needs GPUs, is replaced by gloo with a log line) and
            ``timeout`` in seconds (how long a collective waits for a rank
            that stopped answering).
    """
    if launcher != 'pytorch':
        raise RuntimeError(
            f'no CUDA device: multi-process training with --launcher '
            f'{launcher} needs GPUs here; on a CPU-only machine launch with '
            'torchrun and --launcher pytorch '
            f'({docs_page("pretraining/multi_gpu.md")})')
    missing = [
        key for key in ('RANK', 'WORLD_SIZE', 'MASTER_ADDR', 'MASTER_PORT')
        if key not in os.environ
    ]
    if missing:
        raise RuntimeError(
            f'--launcher pytorch: the environment lacks {", ".join(missing)}'
            ', which torchrun sets; launch with `torchrun --nproc_per_node N '
            'tools/train.py CONFIG --launcher pytorch`')
    kwargs = {k: v for k, v in dist_cfg.items() if k != 'backend'}
    backend = dist_cfg.get('backend', 'gloo')
    if backend != 'gloo':
        print_log(
            f'no CUDA device: using the gloo backend instead of '
            f'{backend}',
            logger='current')
    if kwargs.get('timeout') is not None:
        kwargs['timeout'] = datetime.timedelta(seconds=kwargs['timeout'])
    torch_dist.init_process_group(
        backend='gloo',
        rank=int(os.environ['RANK']),
        world_size=int(os.environ['WORLD_SIZE']),
        **kwargs)


def default_wrapper_cfg(model_wrapper: Optional[type], cfg) -> Optional[dict]:
    """The model wrapper of a multi-process run whose config names none:
    the one the model names (``model_wrapper``: its ``ddp_wrapper``, such
    as SiameseIM's exact-accumulation DDP when it trains in micro-batches),
    else mmengine's DDP without device ids without a GPU; None (mmengine's
    default) otherwise.

    Args:
        model_wrapper (type, optional): The DDP wrapper class the model
            needs, or None.
        cfg (Config): The runner's config (``find_unused_parameters``).
    """
    if model_wrapper is None and torch.cuda.is_available():
        return None
    wrapper = dict(
        type=model_wrapper or 'MMDistributedDataParallel',
        broadcast_buffers=False,
        find_unused_parameters=cfg.get('find_unused_parameters', False))
    if not torch.cuda.is_available():
        wrapper['device_ids'] = None
    return wrapper
