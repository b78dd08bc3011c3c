"""Worker processes that take benchmark steps in turns.

Every (model, precision) pair gets its own worker process; the workers
take their timed steps in turns (one at a time, so all see the same machine
noise). Only as many workers are alive at once as the memory holds: the
first one's peak resident set is measured after its warm-up, and another
starts only while MemAvailable (and on CUDA the device's free memory)
exceeds :data:`~.memory.HEADROOM` times the largest peak so far plus
:data:`~.memory.RESERVE_BYTES`; the rest run in later groups
(``max_workers`` caps a group). A worker that dies is named with its exit
code or signal (SIGKILL: most likely the out-of-memory killer).
"""
import argparse
import multiprocessing
import signal
import statistics
from typing import Callable, Dict, List, Optional, Tuple

import torch

from projects.speed.memory import (mem_available_bytes, peak_rss_bytes,
                                   room_for_another)
from projects.speed.models import build_benchmark_model
from projects.speed.step import GemmStep, TrainStep

#: the pseudo-model whose 'step' is one 4096^3 matrix product
GEMM = 'gemm'


def build_step(name: str,
               precision: str,
               args: argparse.Namespace,
               builders: Optional[Dict[str, Callable]] = None):
    """The ``TrainStep`` (or ``GemmStep``) called ``name``.

    ``args`` has ``arch``, ``batch``, ``img_size``, ``device`` and
    optionally ``target_size``, ``compile``, ``adamw`` ('fused', the
    pretraining configs' setting and the default, or 'foreach') and
    ``gemm_size``. ``builders`` adds models: name -> ``f(args)`` returning
    (model, batch); they run eager with torch's default AdamW (code as its
    authors ship it).
    """
    if name == GEMM:
        return GemmStep(precision, args.device,
                        getattr(args, 'gemm_size', 4096))
    if builders and name in builders:
        model, data = builders[name](args)
        return TrainStep(model, data, precision, args.device)
    fused = getattr(args, 'adamw', 'fused') == 'fused'
    model, data = build_benchmark_model(name, args.arch, args.img_size,
                                        args.batch, args.device,
                                        getattr(args, 'target_size', None))
    return TrainStep(
        model,
        data,
        precision,
        args.device,
        compile=getattr(args, 'compile', False),
        fused_adamw=fused)


def worker(conn, name, precision, args, builders=None):
    """Runs in its own process: builds one step, then answers 'step',
    'flops', 'memory' (the row's peak), 'rss' (peak resident set) and
    'device_free' until 'stop'."""
    try:
        bench = build_step(name, precision, args, builders)
        conn.send('ready')
        while True:
            command = conn.recv()
            if command == 'stop':
                return
            if command == 'step':
                if args.device == 'cuda':
                    torch.cuda.reset_peak_memory_stats()
                conn.send(bench.step())
            elif command == 'flops':
                conn.send(bench.flops())
            elif command == 'memory':
                conn.send(torch.cuda.max_memory_allocated() if args.device ==
                          'cuda' else peak_rss_bytes())
            elif command == 'rss':
                conn.send(peak_rss_bytes())
            elif command == 'device_free':
                conn.send(torch.cuda.mem_get_info()[0] if args.device ==
                          'cuda' else None)
    except (EOFError, BrokenPipeError):  # the parent has gone
        return
    except Exception as e:  # report, the parent raises
        conn.send(
            RuntimeError(f'{name} ({precision}): '
                         f'{type(e).__name__}: {e}'))


_DOING = {
    None: 'starting (importing, building the model)',
    'step': 'taking a training step',
    'flops': 'counting FLOPs',
    'memory': 'reporting its memory',
    'rss': 'reporting its memory',
    'device_free': 'reporting free device memory'
}


class Worker:
    """Parent-side handle of a worker process."""

    def __init__(self, ctx, name, precision, args, builders=None):
        self.name, self.precision = name, precision
        self.conn, child = ctx.Pipe()
        self.process = ctx.Process(
            target=worker,
            args=(child, name, precision, args, builders),
            daemon=True)
        self.process.start()
        # Only the worker may hold its end: if it dies, recv() then ends
        # with EOFError instead of waiting forever.
        child.close()
        self.times = []
        self.first_step_s = None  # the first warm-up step (compile time)
        self.peak = None  # peak resident set after warm-up
        self.ask(None)  # 'ready'

    def ask(self, command):
        try:
            if command is not None:
                self.conn.send(command)
            answer = self.conn.recv()
        except (EOFError, BrokenPipeError, ConnectionResetError):
            raise SystemExit(self.death(command)) from None
        if isinstance(answer, Exception):
            raise SystemExit(str(answer))
        return answer

    def death(self, command):
        """Why the worker went away, for the message."""
        self.process.join(timeout=30)
        code = self.process.exitcode
        hint = ''
        if code is None:
            why = 'closed its pipe but is still running'
        elif code < 0:
            try:
                sig = signal.Signals(-code).name
            except ValueError:
                sig = f'signal {-code}'
            why = f'was killed by {sig} (exit code {code})'
            if -code == signal.SIGKILL:
                hint = (': most likely out of memory (the kernel\'s OOM '
                        'killer sends SIGKILL; see dmesg). Run fewer workers'
                        ' at once with --max-workers 1, a smaller --batch, '
                        'or fewer --models/--precision')
        else:
            why = f'exited with code {code}'
        available = mem_available_bytes()
        memory = (f'; MemAvailable now {available / 2**30:.1f} GiB'
                  if available is not None else '')
        return (f'benchmark: worker {self.name} ({self.precision}) '
                f'{why} while {_DOING.get(command, command)}{hint}{memory}')

    def stop(self):
        try:
            self.conn.send('stop')
        except OSError:  # already gone
            pass
        self.process.join(timeout=60)
        if self.process.is_alive():
            self.process.terminate()
            self.process.join()
        self.conn.close()


def start_group(ctx,
                todo: List[Tuple[str, str]],
                args,
                group: list,
                builders=None,
                worker_cls=Worker) -> None:
    """Start and warm up workers from ``todo`` ((precision, name), popped)
    into ``group`` while they fit: one at least; another only while
    ``room_for_another`` says the free memory (host, and on CUDA the
    device) holds one more worker of the largest peak measured so far;
    never more than ``args.max_workers``."""
    host_peaks, device_peaks = [], []
    while todo:
        if group:
            if len(group) >= args.max_workers:
                break
            if not room_for_another(host_peaks, mem_available_bytes()):
                break
            if args.device == 'cuda' and not room_for_another(
                    device_peaks, group[0].ask('device_free')):
                break
        precision, name = todo.pop(0)
        w = worker_cls(ctx, name, precision, args, builders)
        group.append(w)
        for i in range(args.warmup):
            t = w.ask('step')
            if i == 0:
                w.first_step_s = t
        w.peak = w.ask('rss')
        host_peaks.append(w.peak)
        if args.device == 'cuda':
            device_peaks.append(w.ask('memory'))


def run(args, pairs: List[Tuple[str, str]], builders=None) -> List[dict]:
    """Rows (one per (precision, model) of ``pairs``) from worker
    processes, in groups of as many workers as the memory holds.

    ``args``: ``build_step``'s, plus ``steps``, ``warmup`` (at least 1)
    and ``max_workers``.
    """
    ctx = multiprocessing.get_context('spawn')
    todo, rows, group = list(pairs), [], []
    try:
        while todo:
            start_group(ctx, todo, args, group, builders)
            for _ in range(args.steps):  # in turns: all see the same noise
                for w in group:
                    w.times.append(w.ask('step'))
            for w in group:
                rows.append(_row(w, args, len(group), builders))
            for w in group:
                w.stop()
            group = []
    finally:
        for w in group:
            if w.process.is_alive():
                w.stop()
    return rows


def _row(w: Worker, args, alive: int, builders) -> dict:
    med = statistics.median(w.times)
    flops = w.ask('flops')
    # the package's models follow --compile; GEMM and added builders not
    compiled = bool(getattr(args, 'compile', False)) and w.name != GEMM \
        and w.name not in (builders or {})
    return dict(
        model=w.name,
        arch=f'vit-{args.arch}/16',
        batch=args.batch,
        img_size=args.img_size,
        precision=w.precision,
        device=args.device,
        compiled=compiled,
        first_step_s=w.first_step_s,
        step_s_median=med,
        step_s_min=min(w.times),
        step_s_max=max(w.times),
        images_per_s=args.batch / med,
        gflop_per_step=flops / 1e9,
        gflop_per_s=flops / 1e9 / med,
        peak_mem_mb=w.ask('memory') / 2**20,
        peak_mem_kind='max_memory_allocated'
        if args.device == 'cuda' else 'peak RSS of the worker',
        workers_alive=alive)
