"""Naming a rank that died: when a collective fails (a peer's connection
closed, or ``env_cfg.dist_cfg.timeout`` passed), the log names the ranks on
this host whose process is gone, instead of the collective's bare error.
"""
import os
import socket
import time
from typing import List, Optional, Sequence, Tuple

import torch

RankProcess = Tuple[str, int]  # (host name, process id)


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


def is_collective_failure(error: Exception) -> bool:
    """Whether ``error`` is a collective that lost a peer or timed out."""
    if isinstance(error, getattr(torch.distributed, 'DistError', ())):
        return True
    text = str(error)
    return isinstance(error, RuntimeError) and any(
        word in text
        for word in ('gloo', 'NCCL', 'Connection', 'Timed out', 'timed out'))


def report_dead_ranks(runner, error: Exception) -> None:
    """Log why ``runner`` stops after the collective failure ``error``:

    the ranks on this host that died (from ``runner._rank_processes``,
    :func:`rank_processes` taken at set-up), or that none did.
    """
    dead = dead_ranks(runner._rank_processes, runner.rank)
    if dead:
        names = ', '.join(f'rank {r} (pid {pid})' for r, pid in dead)
        runner.logger.error(
            f'rank {runner.rank}: stopping at iteration {runner.iter + 1}: '
            f'{names} died, and the collective waiting for it failed '
            f'({str(error).splitlines()[0][:200]}). Continue with '
            '--resume once every rank can run.')
    else:
        runner.logger.error(
            f'rank {runner.rank}: stopping at iteration {runner.iter + 1}: '
            f'{type(error).__name__}: {str(error).splitlines()[0][:200]}'
            ' (no other rank on this host has died; see the other '
            "ranks' logs and the launcher's report)")
