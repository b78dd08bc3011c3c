"""How large a per-device batch fits: a memory model measured on this CPU
and projected to 24, 40 and 80 GB accelerators.

Training memory is taken as

    static + fixed + per_image * batch

* **static**: what does not depend on the batch, counted tensor by tensor
  after the preflight's steps: parameters and buffers (the momentum target
  included), gradients of the trainable parameters, optimizer state.
* **per_image**, **fixed**: the tensors the forward saves for backward
  (``torch.autograd.graph.saved_tensors_hooks``; parameters left out, each
  storage once), measured at batch sizes 2 and 3 in the config's precision (its
  autocast dtype: bfloat16 stands in for float16 on a CPU, same size) and
  fitted by a line. The model is checked at a third batch size it did not
  use. With activation checkpointing the same is measured with it on, plus
  the activations of one block, which are rebuilt during backward.

The projection keeps 10 % of the device and 1 GiB (CUDA context, allocator
caching, temporaries) free. It is a projection from CPU measurements:
attention kernels, allocator and workspace differ on a GPU
(``projects/gpu_check/tools/gpu_check.py`` measures there).
"""
from contextlib import contextmanager
from typing import Dict, Iterator, List, Optional

import torch

from mmsiameseim.precision import autocast

DEVICES_GB = (24, 40, 80)
KEEP_FREE = 0.10  # of the device
KEEP_FREE_BYTES = 2**30
SIZES = (2, 3)  # the fit (2 at least: BatchNorm over images needs two)
CHECK_SIZE = 4  # the check


def _tensor_bytes(tensors) -> int:
    seen, total = set(), 0
    for t in tensors:
        if t is None or not torch.is_tensor(t):
            continue
        key = t.untyped_storage().data_ptr()
        if key in seen:
            continue
        seen.add(key)
        total += t.untyped_storage().nbytes()
    return total


def static_bytes(model: torch.nn.Module,
                 optimizer: torch.optim.Optimizer) -> Dict[str, int]:
    """Parameters and buffers, gradients, optimizer state, in bytes."""
    params = list(model.parameters()) + list(model.buffers())
    trainable = [p for p in model.parameters() if p.requires_grad]
    state = [
        v for s in optimizer.state.values() for v in s.values()
        if torch.is_tensor(v)
    ]
    return dict(
        weights=_tensor_bytes(params),
        gradients=sum(p.numel() * p.element_size() for p in trainable),
        optimizer_state=_tensor_bytes(state))


@contextmanager
def _counting_saved(model: torch.nn.Module,
                    checkpointed: List[torch.nn.Module]) -> Iterator[list]:
    """The tensors saved for backward inside the block (parameters left
    out); with checkpointed blocks, their inputs (what checkpointing keeps
    of a block, outside these hooks)."""
    weights = {p.untyped_storage().data_ptr() for p in model.parameters()}
    saved: list = []

    def pack(t):
        if t.untyped_storage().data_ptr() not in weights:
            saved.append(t)
        return t

    def keep_input(block, args):
        if torch.is_grad_enabled() and args[0].requires_grad:
            saved.append(args[0])

    handles = [
        block.register_forward_pre_hook(keep_input) for part in checkpointed
        for block in _block_list(part)
    ]
    try:
        with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
            yield saved
    finally:
        for handle in handles:
            handle.remove()


def activation_bytes(
    model,
    data: dict,
    precision: str,
    checkpointed: List[torch.nn.Module] = ()) -> int:
    """Bytes the forward of ``data`` (the model's inputs: a preprocessed
    batch) saves for backward, under the autocast of ``precision`` (no
    backward is run; a SiameseIM's momentum update is skipped)."""
    device = next(model.parameters()).device.type
    kwargs = dict(update_target=False) if hasattr(model, 'target') else {}
    with autocast(device, precision), \
            _counting_saved(model, checkpointed) as saved:
        losses = model(
            data['inputs'], data['data_samples'], mode='loss', **kwargs)
        total = _tensor_bytes(saved)
    del losses, saved
    return total


def held_bytes(model, data: dict, precision: str) -> int:
    """What ``SiameseIM(micro_batches=k)`` holds for the whole batch while
    its parts train: the preprocessed views of ``data`` and the targets."""
    views = data['inputs']
    held = _tensor_bytes(views if isinstance(views, list) else [views])
    if hasattr(model, 'target_features'):
        device = next(model.parameters()).device.type
        with autocast(device, precision):
            held += _tensor_bytes([model.target_features(views[1])])
    return held


def activation_lines(model, data: Dict[int, dict], precision: str) -> dict:
    """The saved activations of the preprocessed batches ``data`` (batch
    size -> batch), a line fitted on the two smallest: ``{suffix:

    (line, measured)}``, suffix '' with activation checkpointing off and,
    where the model supports it, '_checkpointed' with it on (its line also
    has ``recomputed_block_per_image``: the activations of the one block
    rebuilt at a time during backward, see :func:`peak_per_image`).
    """
    parts = checkpointed_parts(model)
    variants = [('', False)] + ([('_checkpointed', True)] if parts else [])
    out = {}
    for suffix, on in variants:
        checkpointed = parts if on else []
        with _with_cp(parts, on):
            measured = {
                n: activation_bytes(model, batch, precision, checkpointed)
                for n, batch in data.items()
            }
        out[suffix] = (fit(measured), measured)
    if parts:
        plain, (cp, _) = out[''][0], out['_checkpointed']
        cp['recomputed_block_per_image'] = (
            plain['per_image'] - cp['per_image']) / max(1, block_count(parts))
    return out


def peak_per_image(line: Dict[str, float]) -> float:
    """A training step's activations per image at their peak: the saved
    ones and, with checkpointing, the block being rebuilt."""
    return line['per_image'] + line.get('recomputed_block_per_image', 0.)


def recipe(model: dict,
           gpus: int,
           gb: int,
           total_batch: int = 4096,
           checkpointed: bool = False) -> Optional[dict]:
    """The settings that train ``total_batch`` images a step on ``gpus``
    devices of ``gb`` GB, from a :func:`memory_model` record: per-device
    ``batch_size`` (a data batch, held whole), ``micro_batches`` (parts
    trained one at a time, exact) and mmengine's ``accumulative_counts``
    (batches per step, each exact in itself), the fewest parts and batches
    that fit, and the projected peak; None when nothing fits."""
    line = model[f'activations{"_checkpointed" if checkpointed else ""}']
    static = sum(model['static_bytes'].values())
    room = gb * 2**30 * (1 - KEEP_FREE) - KEEP_FREE_BYTES - static \
        - line['fixed']
    per_device = total_batch // gpus
    accumulate = 1
    while per_device // accumulate >= 1:
        batch = per_device // accumulate
        parts = 1
        while batch // parts >= 1:
            # split batches hold their views and targets whole
            held = model['held_per_image'] * batch if parts > 1 else 0
            need = held + peak_per_image(line) * (batch // parts)
            if need <= room:
                return dict(
                    gpus=gpus,
                    gb=gb,
                    batch_size=batch,
                    micro_batches=parts,
                    accumulative_counts=accumulate,
                    peak_gb=(static + line['fixed'] + need) / 2**30)
            parts *= 2
        accumulate *= 2
    return None


def _block_list(part) -> list:
    return list(getattr(part, 'layers', getattr(part, 'predictor_blocks', [])))


def checkpointed_parts(model) -> List[torch.nn.Module]:
    return [
        m for m in (getattr(model, 'backbone', None),
                    getattr(model, 'neck', None)) if hasattr(m, 'with_cp')
    ]


@contextmanager
def _with_cp(parts: List[torch.nn.Module], on: bool) -> Iterator[None]:
    """Activation checkpointing of ``parts`` on or off inside the block."""
    before = [p.with_cp for p in parts]
    for p in parts:
        p.with_cp = on
    try:
        yield
    finally:
        for p, value in zip(parts, before):
            p.with_cp = value


def block_count(parts) -> int:
    return sum(len(_block_list(p)) for p in parts)


def fit(measured: Dict[int, int]) -> Dict[str, float]:
    (b1, a1), (b2, a2) = sorted(measured.items())[:2]
    per_image = (a2 - a1) / (b2 - b1)
    return dict(per_image=per_image, fixed=a1 - per_image * b1)


def _max_batch(static: int, line: Dict[str, float]) -> Dict[str, int]:
    out = {}
    for gb in DEVICES_GB:
        room = gb * 2**30 * (1 - KEEP_FREE) - KEEP_FREE_BYTES - static \
            - line['fixed']
        out[f'{gb}GB'] = max(0, int(room // max(peak_per_image(line), 1.)))
    return out


def memory_model(model, optimizer, batch_of, precision: str) -> dict:
    """Measure and project (see the module's docstring).

    Args:
        model: The training model (not wrapped).
        optimizer: Its optimizer, after at least one step (its state).
        batch_of (Callable[[int], dict]): A data loader batch of n images.
        precision (str): The config's autocast precision ('float32',
            'bfloat16' or 'float16').

    Returns:
        dict: ``static_bytes``, the fitted lines (``activations``, and
        ``activations_checkpointed`` where the model supports it), the
        check at a third batch size and ``max_batch_per_device``
        (``{"24GB": n, ...}``; ``..._checkpointed`` likewise).
    """
    static = static_bytes(model, optimizer)
    data = {
        n: model.data_preprocessor(batch_of(n), True)
        for n in SIZES + (CHECK_SIZE, )
    }
    out = dict(
        static_bytes=static,
        precision=precision,
        held_per_image=held_bytes(model, data[SIZES[0]], precision) / SIZES[0])
    for suffix, (line, measured) in activation_lines(model, data,
                                                     precision).items():
        predicted = line['fixed'] + line['per_image'] * CHECK_SIZE
        out[f'activations{suffix}'] = dict(
            line, measured={
                str(n): v
                for n, v in measured.items()
            })
        out[f'check{suffix}'] = dict(
            batch=CHECK_SIZE,
            predicted=predicted,
            measured=measured[CHECK_SIZE],
            error=abs(predicted - measured[CHECK_SIZE]) / measured[CHECK_SIZE])
        out[f'max_batch_per_device{suffix}'] = _max_batch(
            sum(static.values()), line)
    out['projection'] = (
        f'from CPU measurements: static + fixed + per_image * batch, '
        f'keeping {KEEP_FREE:.0%} of the device and 1 GiB free')
    return out
