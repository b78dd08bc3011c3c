"""Activation checkpointing's memory saving and time cost, and the memory
model checked against a measured step, at ViT-B and ViT-L on this CPU.

One fresh process per (arch, checkpointing), steps in mmengine's order
(forward, backward, AdamW, gradients set to None): after a first step (it
allocates the AdamW state), the second is measured as the growth of the
resident set over the process's size before it (its activations and
gradients; what the first step freed is handed back first with glibc's
``malloc_trim``), and timed with the steps after it; then the memory
model (:mod:`projects.preflight.memory_model`) is fitted from the
saved-tensor bytes at batches 1 and 2 and compared with the measured step.
"""
import ctypes
import gc
import multiprocessing as mp
import statistics
import time

import torch


def measure(arch: str,
            batch: int,
            checkpointing: bool,
            steps: int,
            img_size: int = 224) -> dict:
    """One process's measurements (run it in a fresh process)."""
    from projects.preflight.memory_model import (activation_lines,
                                                 peak_per_image, static_bytes)
    from projects.speed.batches import siameseim_batch
    from projects.speed.memory import peak_rss_bytes, reset_peak_rss, rss_bytes
    from projects.speed.models import build_model, siameseim_model_cfg
    model = build_model(
        dict(
            siameseim_model_cfg(arch, img_size),
            activation_checkpointing=checkpointing))
    data = siameseim_batch(batch, img_size)
    optimizer = torch.optim.AdamW(
        [p for p in model.parameters() if p.requires_grad],
        lr=1e-4,
        fused=True)  # as the configs: no parameter-sized temporaries

    def train_step():  # in mmengine's order: grads freed after the step
        t0 = time.perf_counter()
        losses = model(**data, mode='loss')
        sum(v for k, v in losses.items() if 'loss' in k).backward()
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
        return time.perf_counter() - t0

    first = train_step()  # allocates the AdamW state
    # what the first step freed goes back to the system, so that the next
    # step's growth is what it allocates, not what it reuses
    gc.collect()
    ctypes.CDLL('libc.so.6').malloc_trim(0)
    before = rss_bytes()
    reset_peak_rss()
    times = [train_step()]
    grown = peak_rss_bytes() - before
    times += [train_step() for _ in range(steps - 1)]
    static = static_bytes(model, optimizer)
    lines = activation_lines(model,
                             {n: siameseim_batch(n, img_size)
                              for n in (1, 2)}, 'float32')
    line = lines['_checkpointed' if checkpointing else ''][0]
    # a step after the first allocates its activations and, as they are
    # freed in backward, the gradients: at most both (the AdamW state
    # exists already)
    predicted = line['fixed'] + peak_per_image(line) * batch + \
        static['gradients']
    return dict(
        arch=arch,
        batch=batch,
        checkpointing=checkpointing,
        step_s=statistics.median(times),
        first_step_s=first,
        step_grown_bytes=grown,
        predicted_bytes=predicted,
        model_error=(predicted - grown) / grown,
        activations_per_image=peak_per_image(line),
        activations_fixed=line['fixed'],
        static=static,
        torch_threads=torch.get_num_threads())


def _worker(args, queue):
    queue.put(measure(*args))


def run(cases) -> list:
    """``measure`` of each (arch, batch, checkpointing, steps), each in a
    fresh process, one at a time."""
    ctx = mp.get_context('spawn')
    rows = []
    for case in cases:
        queue = ctx.Queue()
        proc = ctx.Process(target=_worker, args=(case, queue))
        proc.start()
        rows.append(queue.get())
        proc.join()
    return rows


def table(rows: list) -> str:
    """Markdown: per arch, memory and time with and without checkpointing,
    and the memory model against the measured step."""
    lines = [
        '| arch | batch | checkpointing | step (s) | activations / image '
        '(MiB) | a step allocates (MiB, measured) | memory model '
        '(MiB) | model error |', '|---|---|---|---|---|---|---|---|'
    ]
    for r in rows:
        lines.append(
            f'| ViT-{r["arch"].upper()} | {r["batch"]} | '
            f'{"on" if r["checkpointing"] else "off"} | {r["step_s"]:.2f} | '
            f'{r["activations_per_image"] / 2**20:.0f} | '
            f'{r["step_grown_bytes"] / 2**20:.0f} | '
            f'{r["predicted_bytes"] / 2**20:.0f} | '
            f'{100 * r["model_error"]:+.0f} % |')
    return '\n'.join(lines)


def savings(rows: list) -> dict:
    """Per arch: activation memory and step time with checkpointing over
    without."""
    out = {}
    for r in rows:
        if not r['checkpointing']:
            continue
        base = next(b for b in rows
                    if b['arch'] == r['arch'] and not b['checkpointing'])
        out[r['arch']] = dict(
            activations_ratio=r['activations_per_image'] /
            base['activations_per_image'],
            time_ratio=r['step_s'] / base['step_s'])
    return out
