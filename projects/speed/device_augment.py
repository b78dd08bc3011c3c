"""Time the accelerator option's augmentation on a device.

    python -m projects.speed.device_augment [--device cuda]
        [--batch 256] [--size 224] [--steps 20] [--warmup 3] [--json]

Builds the preprocessor (``DeviceAugmentDataPreprocessor``) of
configs/pretrain/siameseim-deviceaug_vit-base-p16_16xb256-amp-coslr-1600e_in1k.py
and times its training forward (both views: flips, the authors' colour set,
normalisation, flips recorded in the geometry) on a batch of uint8 views
already on the device, as the DataLoader delivers them. Prints a line and,
with ``--json``, one JSON object on the last line (run by
``projects/gpu_check/tools/gpu_check.py``). On a CPU it measures the CPU, and
says so.
"""
import argparse
import json
import os.path as osp
import time

import numpy as np
import torch

REPO = osp.dirname(osp.dirname(osp.dirname(osp.abspath(__file__))))
CONFIG = osp.join(
    REPO, 'configs', 'pretrain',
    'siameseim-deviceaug_vit-base-p16_16xb256-amp-coslr-1600e_in1k.py')


def build_preprocessor(device: str):
    from mmengine.config import Config
    from mmengine.registry import init_default_scope
    from mmpretrain.registry import MODELS

    import mmsiameseim  # noqa: F401
    init_default_scope('mmpretrain')
    cfg = Config.fromfile(CONFIG)
    return MODELS.build(cfg.model.data_preprocessor).to(device)


def time_device_augment(device: str = 'cpu',
                        batch: int = 256,
                        size: int = 224,
                        steps: int = 20,
                        warmup: int = 3) -> dict:
    """Median seconds per batch of the preprocessor's training forward."""
    from mmpretrain.structures import DataSample
    pre = build_preprocessor(device)
    gen = torch.Generator().manual_seed(0)
    views = [
        torch.randint(
            0, 256, (batch, 3, size, size), dtype=torch.uint8,
            generator=gen).to(device) for _ in range(2)
    ]

    def samples():
        out = []
        for _ in range(batch):
            s = DataSample()
            s.set_field(np.zeros(2, bool), 'flips')
            out.append(s)
        return out

    def sync():
        if device.startswith('cuda'):
            torch.cuda.synchronize()

    times = []
    for i in range(warmup + steps):
        data = dict(inputs=list(views), data_samples=samples())
        sync()
        start = time.perf_counter()
        pre(data, training=True)
        sync()
        if i >= warmup:
            times.append(time.perf_counter() - start)
    median = float(np.median(times))
    return dict(
        device=device,
        batch=batch,
        size=size,
        steps=steps,
        s_per_batch=median,
        images_per_s=batch / median)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('--device', default='cpu')
    parser.add_argument('--batch', type=int, default=256)
    parser.add_argument('--size', type=int, default=224)
    parser.add_argument('--steps', type=int, default=20)
    parser.add_argument('--warmup', type=int, default=3)
    parser.add_argument('--json', action='store_true')
    args = parser.parse_args(argv)
    for option in ('batch', 'size', 'steps'):
        if getattr(args, option) < 1:
            parser.error(f'--{option} must be >= 1, got '
                         f'{getattr(args, option)}')
    if args.device.startswith('cuda') and not torch.cuda.is_available():
        parser.error(f'--device {args.device}: CUDA is not available here')
    record = time_device_augment(args.device, args.batch, args.size,
                                 args.steps, args.warmup)
    print(f"DeviceAugmentDataPreprocessor on {record['device']}: "
          f"{record['s_per_batch'] * 1e3:.1f} ms per batch of "
          f"{record['batch']} pairs of {record['size']} px views, "
          f"{record['images_per_s']:.0f} images/s")
    if args.json:
        print(json.dumps(record))


if __name__ == '__main__':
    main()
