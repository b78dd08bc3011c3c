"""The two-view data pipeline: ours (from a config, and as it was before
the Pillow rewrite), the authors' (given as a callable by the tool), and
the same augmentations in torchvision, over JPEGs cut from real
photographs; per-transform timers; DataLoader worker scaling; and the
renderer of ``projects/speed/results/pipeline.json``."""
import json
import math
import os
import statistics
import sys
import tempfile
import time
from collections import defaultdict
from typing import Callable, Dict, List, Optional, Sequence

import numpy as np

from projects.common.results import results_table
from projects.speed import \
    pil_color_jitter  # noqa: F401  (registers PILColorJitter)
from projects.speed.models import REPO

#: the two-view masked ImageNet pipeline config
DEFAULT_CONFIG = os.path.join(REPO, 'configs', 'pretrain', '_base_',
                              'imagenet_two_view_masked.py')
#: the configuration whose CPU part is timed for the accelerator option
DEVICE_CONFIG = os.path.join(
    REPO, 'configs', 'pretrain',
    'siameseim-deviceaug_vit-base-p16_16xb256-amp-coslr-1600e_in1k.py')

_JITTER = dict(
    type='RandomApply',
    transforms=[
        dict(
            type='PILColorJitter',
            brightness=0.4,
            contrast=0.4,
            saturation=0.2,
            hue=0.1)
    ],
    prob=0.8)
_GRAY = dict(
    type='RandomGrayscale',
    prob=0.2,
    keep_channels=True,
    channel_weights=(0.114, 0.587, 0.2989))
#: the ImageNet ``train_pipeline`` before the Pillow rewrite (main at
#: 1c6f4a5): BGR arrays from the loader, a numpy -> PIL -> numpy round trip
#: in the resize and in each colour step
BEFORE_PIPELINE = [
    dict(type='StrictLoadImageFromFile'),
    dict(
        type='TwoViewRandomResizedCrop',
        size=224,
        scale=(0.08, 1.0),
        ratio=(3. / 4., 4. / 3.),
        flip_prob=0.5,
        interpolation='bicubic',
        backend='pillow'),
    dict(
        type='PerViewTransforms',
        pipelines=[
            [
                _JITTER, _GRAY,
                dict(
                    type='GaussianBlur',
                    magnitude_range=(0.1, 2.0),
                    magnitude_std='inf',
                    prob=1.0)
            ],
            [
                _JITTER, _GRAY,
                dict(
                    type='GaussianBlur',
                    magnitude_range=(0.1, 2.0),
                    magnitude_std='inf',
                    prob=0.1),
                dict(type='Solarize', thr=128, prob=0.2)
            ],
        ]),
    dict(
        type='BlockwiseMaskGenerator',
        input_size=14,
        num_masking_patches=118,
        min_num_patches=16,
        fixed_count=True),
    dict(
        type='PackInputs',
        algorithm_keys=['crop_boxes', 'flips', 'crop_source_shape'],
        meta_keys=['img_path', 'ori_shape', 'img_shape']),
]


def write_jpegs(folder: str,
                count: int,
                size: Sequence[int],
                seed: int = 0,
                large: int = 0,
                large_size: Sequence[int] = (1600, 1200),
                quality: int = 90) -> List[str]:
    """``count`` JPEGs of ``size`` (w, h) and ``large`` more of ``large_size``,
    cut from real photographs (scikit-learn's two sample photos, 640 x 427, and
    matplotlib's sample photo when installed):

    random windows of 50-100 % of a photo, flipped at random, resized;
    quality ``quality``.
    """
    from PIL import Image
    photos = _photos()
    rng = np.random.default_rng(seed)
    paths = []
    sizes = [tuple(size)] * count + [tuple(large_size)] * large
    for i, (width, height) in enumerate(sizes):
        photo = photos[i % len(photos)]
        scale = rng.uniform(0.5, 1.0)
        ch, cw = int(photo.shape[0] * scale), int(photo.shape[1] * scale)
        top = rng.integers(0, photo.shape[0] - ch + 1)
        left = rng.integers(0, photo.shape[1] - cw + 1)
        img = Image.fromarray(photo[top:top + ch, left:left + cw])
        if rng.random() < 0.5:
            img = img.transpose(Image.FLIP_LEFT_RIGHT)
        path = os.path.join(folder, f'{i:04d}.jpg')
        img.resize((width, height), Image.BICUBIC).save(path, quality=quality)
        paths.append(path)
    return paths


def _photos() -> List[np.ndarray]:
    from sklearn.datasets import load_sample_images
    photos = list(load_sample_images().images)
    try:  # a third real photograph (512 x 512), where matplotlib has it
        import matplotlib.cbook
        with matplotlib.cbook.get_sample_data('grace_hopper.jpg') as f:
            from PIL import Image
            photos.append(np.asarray(Image.open(f).convert('RGB')))
    except (ImportError, OSError, ValueError):
        pass
    return photos


def build_pipeline(steps: Sequence[dict]) -> list:
    """Transforms built from config dicts through mmpretrain's TRANSFORMS."""
    from mmengine.registry import init_default_scope
    from mmpretrain.registry import TRANSFORMS

    import mmsiameseim  # noqa: F401
    init_default_scope('mmpretrain')
    return [TRANSFORMS.build(t) for t in steps]


def config_pipeline(config: str) -> List[dict]:
    """The pipeline ``config`` trains with: its
    ``train_dataloader.dataset.pipeline``, else its ``train_pipeline``."""
    from mmengine.config import Config
    cfg = Config.fromfile(config)
    try:
        return list(cfg.train_dataloader.dataset.pipeline)
    except AttributeError:
        pass
    if 'train_pipeline' in cfg:
        return list(cfg.train_pipeline)
    raise KeyError(f'{config} has no train_dataloader.dataset.pipeline and '
                   'no train_pipeline')


def build_siameseim_pipeline(config: str) -> list:
    return build_pipeline(config_pipeline(config))


class PILGaussianBlur:
    """Blur with a random radius, as MoCo v3 (and the authors) do on PIL."""

    def __init__(self, sigma=(0.1, 2.0)):
        self.sigma = sigma

    def __call__(self, img):
        import random

        from PIL import ImageFilter
        return img.filter(
            ImageFilter.GaussianBlur(radius=random.uniform(*self.sigma)))


def build_torchvision_pipeline() -> Callable[[str], tuple]:
    from mmpretrain.registry import TRANSFORMS
    from PIL import Image
    from torchvision import transforms as T

    import mmsiameseim  # noqa: F401

    def view(blur_p, solarize_p):
        steps = [
            T.RandomResizedCrop(
                224,
                scale=(0.08, 1.0),
                interpolation=T.InterpolationMode.BICUBIC),
            T.RandomHorizontalFlip(),
            T.RandomApply([T.ColorJitter(0.4, 0.4, 0.2, 0.1)], p=0.8),
            T.RandomGrayscale(p=0.2),
            T.RandomApply([PILGaussianBlur((0.1, 2.0))], p=blur_p),
        ]
        if solarize_p:
            steps.append(T.RandomSolarize(128, p=solarize_p))
        steps += [
            T.ToTensor(),
            T.Normalize([0.485, 0.456, 0.406], [0.229, 0.224, 0.225])
        ]
        return T.Compose(steps)

    view_a, view_b = view(1.0, 0.0), view(0.1, 0.2)
    mask = TRANSFORMS.build(
        dict(
            type='BlockwiseMaskGenerator',
            input_size=14,
            num_masking_patches=118,
            min_num_patches=16,
            fixed_count=True))

    def pipeline(path):
        with Image.open(path) as f:
            img = f.convert('RGB')
        return view_a(img), view_b(img), mask({})['mask']

    return pipeline


class Timed:
    """Wraps a transform and adds up its time under ``name``."""

    def __init__(self, transform, name, totals):
        self.transform, self.name, self.totals = transform, name, totals

    def __call__(self, results):
        t0 = time.perf_counter()
        out = self.transform(results)
        self.totals[self.name] += time.perf_counter() - t0
        return out


def add_timers(pipeline, totals):
    """Time each step, and each colour step of PerViewTransforms per view."""
    timed = []
    for t in pipeline:
        name = type(t).__name__
        for v, compose in enumerate(getattr(t, 'pipelines', [])):
            compose.transforms = [
                Timed(s, f'  view {"ab"[v]}: {_name(s)}', totals)
                for s in compose.transforms
            ]
        timed.append(Timed(t, name, totals))
    return timed


def _name(transform):
    if type(transform).__name__ == 'RandomApply':
        inner = transform.transforms.transforms
        return f'RandomApply({", ".join(type(t).__name__ for t in inner)})'
    return type(transform).__name__


def run_mm(pipeline, paths):
    """Our pipeline (a list of transforms) over ``paths``."""
    for path in paths:
        results = dict(img_path=path)
        for t in pipeline:
            results = t(results)


def run_callable(pipeline, paths):
    """A ``path -> sample`` callable over ``paths``."""
    for path in paths:
        pipeline(path)


# kept for callers of the earlier names
run_siameseim, run_torchvision = run_mm, run_callable


def time_interleaved(entries: Dict[str, tuple],
                     paths: Sequence[str],
                     repeats: int,
                     progress=None) -> Dict[str, List[float]]:
    """Seconds per pass over ``paths`` of each entry (name -> (run, pipeline));
    the entries take their passes in turns, so that all see the same machine
    load.

    One warm-up pass each first (imports, caches).
    """
    times = defaultdict(list)
    warm = paths[:max(1, min(len(paths), 4))]
    for run, pipeline in entries.values():
        run(pipeline, warm)
    for _ in range(repeats):
        for name, (run, pipeline) in entries.items():
            t0 = time.perf_counter()
            run(pipeline, paths)
            times[name].append(time.perf_counter() - t0)
            if progress is not None:
                progress()
    return dict(times)


def rate_rows(times: Dict[str, List[float]], images: int,
              step_rate: Optional[float]) -> List[dict]:
    """One row per pipeline: median images/s per worker, its spread, ms per
    image and the workers per GPU a step rate needs."""
    rows = []
    for name, ts in times.items():
        rate = images / statistics.median(ts)
        rows.append(
            dict(
                pipeline=name,
                images=images,
                repeats=len(ts),
                images_per_s=rate,
                ms_per_image=1e3 / rate,
                images_per_s_min=images / max(ts),
                images_per_s_max=images / min(ts),
                workers_per_gpu=math.ceil(step_rate /
                                          rate) if step_rate else None))
    return rows


class _Dataset:
    """A map-style dataset of ``paths`` through a pipeline of transforms (built
    in each worker from config dicts)."""

    def __init__(self, steps, paths):
        self.steps, self.paths, self.pipeline = steps, paths, None

    def __len__(self):
        return len(self.paths)

    def __getitem__(self, i):
        if self.pipeline is None:
            self.pipeline = build_pipeline(self.steps)
        results = dict(img_path=self.paths[i])
        for t in self.pipeline:
            results = t(results)
        return results['inputs'][0].shape[0]  # the work is done; send little


def _init_worker(_):
    import cv2
    import torch
    torch.set_num_threads(1)
    cv2.setNumThreads(0)


def worker_scaling(steps: Sequence[dict],
                   paths: Sequence[str],
                   workers: Sequence[int],
                   passes: int = 2,
                   prefetch_factor: int = 2) -> List[dict]:
    """Images/s of a ``torch.utils.data.DataLoader`` (batch 1, persistent
    workers, one thread each) over ``paths`` for each worker count; the median
    of ``passes`` timed epochs after one warm-up epoch."""
    import torch
    rows = []
    for n in workers:
        loader = torch.utils.data.DataLoader(
            _Dataset(list(steps), list(paths)),
            batch_size=1,
            num_workers=n,
            persistent_workers=True,
            prefetch_factor=prefetch_factor,
            worker_init_fn=_init_worker,
            multiprocessing_context='spawn')
        for _ in loader:  # warm-up: starts the workers, builds pipelines
            pass
        ts = []
        for _ in range(passes):
            t0 = time.perf_counter()
            for _ in loader:
                pass
            ts.append(time.perf_counter() - t0)
        del loader
        rate = len(paths) / statistics.median(ts)
        rows.append(
            dict(
                num_workers=n,
                images_per_s=rate,
                images_per_s_per_worker=rate / n,
                passes=passes,
                images=len(paths)))
    return rows


#: the speed-ups the issue asks about: (numerator, denominator) rows
RATIOS = (('after', 'before'), ('after', 'authors'), ('after', 'torchvision'),
          ('deviceaug-cpu', 'after'))


def paired_ratios(times: Dict[str, List[float]]) -> Dict[str, dict]:
    """For each pair of :data:`RATIOS` present, the speed-up of the first over
    the second pass by pass (the passes of one round ran back to back, under
    the same load): median, min and max over the rounds."""
    out = {}
    for num, den in RATIOS:
        if num in times and den in times:
            r = [d / n for n, d in zip(times[num], times[den])]
            out[f'{num} / {den}'] = dict(
                median=statistics.median(r), min=min(r), max=max(r))
    return out


def workers_per_gpu(step_rate: float, per_worker: float) -> int:
    return math.ceil(step_rate / per_worker)


def _indent(name: str) -> str:
    """A profile key, its leading spaces (a view's step) kept in markdown."""
    stripped = name.strip()
    return '&nbsp;&nbsp;' + stripped if name.startswith('  ') else stripped


@results_table('pipeline')
def render(results: dict) -> str:
    """Markdown of the results file ``pipeline.json``: images/s per worker
    of each pipeline (with the ratios the issue asks for), the per-transform
    profile of ours, the worker scaling, and the run's conditions."""
    data = results['data']
    rows = {r['pipeline']: r for r in data['rows']}
    step = data.get('step_images_per_s')
    lines = [
        '| pipeline | images/s per worker (median) | min-max | '
        'ms/image | workers per GPU |', '|---|---|---|---|---|'
    ]
    for r in data['rows']:
        workers = r['workers_per_gpu'] if r.get('workers_per_gpu') else '-'
        lines.append(
            f'| {r["pipeline"]} | {r["images_per_s"]:.1f} | '
            f'{r["images_per_s_min"]:.1f}-{r["images_per_s_max"]:.1f} | '
            f'{r["ms_per_image"]:.1f} | {workers} |')
    out = '\n'.join(lines)
    paired = data.get('paired_ratios') or {}
    if paired:
        out += '\n\nSpeed-up, pass by pass (median over the rounds, ' \
               'min-max): ' + '; '.join(
                   f'{k}: {v["median"]:.2f}x ({v["min"]:.2f}-{v["max"]:.2f})'
                   for k, v in paired.items()) + '.'
    else:
        ratios = [
            f'{num} / {den}: '
            f'{rows[num]["images_per_s"] / rows[den]["images_per_s"]:.2f}x'
            for num, den in RATIOS if num in rows and den in rows
        ]
        if ratios:
            out += '\n\n' + '; '.join(ratios) + '.'
    if step:
        out += f' Workers per GPU for {step:.0f} images/s per GPU ' \
               f'({data.get("step_rate_source", "given")}).'
    profile = data.get('profile_ms_per_image') or {}
    for name, steps in profile.items():
        out += f'\n\nms per image per transform, {name}:\n\n' \
               '| transform | ms/image |\n|---|---|\n'
        out += '\n'.join(f'| {_indent(k)} | {v:.2f} |'
                         for k, v in steps.items())
    scaling = data.get('workers') or []
    if scaling:
        out += '\n\nDataLoader workers (after):\n\n| num_workers | images/s ' \
               '| per worker |\n|---|---|---|\n'
        out += '\n'.join(f'| {w["num_workers"]} | {w["images_per_s"]:.1f} | '
                         f'{w["images_per_s_per_worker"]:.1f} |'
                         for w in scaling)
    if data.get('conditions'):
        out += f'\n\nConditions: {data["conditions"]}'
    return out


CONDITIONS = (
    'one process, 1 torch thread, OpenCV threads off (one DataLoader '
    'worker); the pipelines take their timed passes in turns over the same '
    'files, so all see the same load; the machine was shared with other '
    'jobs while measuring, so absolute rates are low and noisy and the '
    'ratios within one run are the comparable figures')


def measure(args, step_rate: Optional[float], source: str, authors) -> dict:
    """The benchmark of ``projects/speed/tools/pipeline.py`` (its options in
    ``args``): every pipeline timed in turns on painted JPEGs, the worker
    scaling, the per-transform profile.

    ``authors``: the authors' pipeline
    (a callable on a path) or why it is left out (str). Returns the
    results file's data.
    """
    import cv2
    import torch
    from mmengine.utils import ProgressBar

    torch.set_num_threads(1)
    cv2.setNumThreads(0)
    notes = []
    steps = dict(before=BEFORE_PIPELINE, after=config_pipeline(args.config))
    if args.device_config:
        steps['deviceaug-cpu'] = config_pipeline(args.device_config)
    totals = {name: defaultdict(float) for name in steps}
    entries = {}
    for name, cfg in steps.items():
        built = build_pipeline(cfg)
        if args.profile:
            built = add_timers(built, totals[name])
        entries[name] = (run_mm, built)
    if isinstance(authors, str):
        notes.append(f'authors: left out: {authors}')
        print(
            f"benchmark_pipeline: the authors' pipeline is left out: "
            f'{authors}',
            file=sys.stderr)
    else:
        entries['authors'] = (run_callable, authors)
    entries['torchvision'] = (run_callable, build_torchvision_pipeline())

    with tempfile.TemporaryDirectory() as folder:
        paths = write_jpegs(
            folder,
            args.images,
            args.image_size,
            large=args.large,
            large_size=args.large_size)
        np.random.seed(0)
        bar = ProgressBar(args.repeats * len(entries), file=sys.stderr)
        times = time_interleaved(
            entries, paths, args.repeats, progress=bar.update)
        sys.stderr.write('\n')
        scaling = worker_scaling(steps['after'], paths, args.workers) \
            if args.workers else []

    rows = rate_rows(times, len(paths), step_rate)
    # the timed passes and the warm-up's (its first 4 images)
    calls = len(paths) * args.repeats + min(len(paths), 4)
    profile = {
        name: {
            k: 1e3 * v / calls
            for k, v in t.items()
        }
        for name, t in totals.items() if t
    }
    data = dict(
        rows=rows,
        paired_ratios=paired_ratios(times),
        images=args.images,
        image_size=list(args.image_size),
        large=args.large,
        large_size=list(args.large_size),
        jpeg_quality=90,
        repeats=args.repeats,
        step_images_per_s=step_rate,
        step_rate_source=source if step_rate else None,
        profile_ms_per_image=profile or None,
        workers=scaling,
        cpu_count=os.cpu_count(),
        conditions=CONDITIONS,
        notes=notes)
    return data


def step_rate_from_json(path: str) -> float:
    """The siameseim images/s of a ``projects/speed/tools/pretrain.py
    --json`` output file; a file without one is an error that names it."""
    try:
        with open(path) as f:
            rows = json.loads(f.read().strip().splitlines()[-1])['rows']
        return next(r['images_per_s'] for r in rows
                    if r['model'] == 'siameseim')
    except (OSError, ValueError, KeyError, IndexError, TypeError,
            StopIteration) as e:
        raise SystemExit(
            f'--pretrain-json {path}: no siameseim images_per_s '
            f'in a projects/speed/tools/pretrain.py --json output '
            f'({type(e).__name__}: {e})')
