"""Multi-process training on machines without a GPU, and naming a rank
that died.

mmengine's ``init_dist`` calls ``torch.cuda.set_device(local_rank)`` for
every launcher before creating the process group, and its ``wrap_model``
passes ``device_ids=[local_rank]`` to ``DistributedDataParallel``: both fail
on a CPU-only machine ("Found no NVIDIA driver").
:func:`init_cpu_process_group` creates the gloo process group from the
launcher's environment instead;
``FaultTolerantRunner`` calls it from ``setup_env`` and wraps the model
without device ids.
"""
import datetime
import os
import socket
import time
from typing import List, Optional, Sequence, Tuple

import torch.distributed as torch_dist
from mmengine.logging import print_log

RankProcess = Tuple[str, int]  # (host name, process id)


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
            'torchrun and --launcher pytorch (docs/pretraining/multi_gpu.md)')
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


def rank_processes() -> List[RankProcess]:
    """(host, pid) of every rank, gathered from all of them (a
    collective: every rank must call it)."""
    from mmengine.dist import all_gather_object
    return all_gather_object((socket.gethostname(), os.getpid()))


def _alive(pid: int) -> bool:
    """Whether ``pid`` runs (a killed process the launcher has not reaped
    yet, a zombie, does not)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:
        with open(f'/proc/{pid}/stat') as f:
            return f.read().rsplit(')', 1)[1].split()[0] not in ('Z', 'X')
    except (OSError, IndexError):
        return True


def dead_ranks(processes: Optional[Sequence[RankProcess]],
               rank: int,
               wait_s: float = 2.) -> List[Tuple[int, int]]:
    """(rank, pid) of the other ranks on this host whose process is gone.

    A collective fails as soon as a peer's connection closes, which can be
    a moment before its process is gone: look again for up to ``wait_s``
    seconds before answering that none died.

    Args:
        processes (Sequence[tuple], optional): :func:`rank_processes`.
        rank (int): This process's rank.
        wait_s (float): How long to look. Defaults to 2.
    """
    if not processes:
        return []
    host = socket.gethostname()
    deadline = time.monotonic() + wait_s
    while True:
        dead = [(r, pid) for r, (h, pid) in enumerate(processes)
                if r != rank and h == host and not _alive(pid)]
        if dead or time.monotonic() >= deadline:
            return dead
        time.sleep(0.1)
