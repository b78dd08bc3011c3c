import os
import os.path as osp
import time
from typing import Dict, Optional

import numpy as np
from mmengine.config import Config

from mmsiameseim.atomic_io import atomic_write
from mmsiameseim.precision import training_precision
from projects.common.evaluation import FrozenBackboneProtocol
from projects.common.visualization.knn_curve import (plot_knn_curve,
                                                     read_knn_scalars)
from projects.demo.tables import pixel_row_name


def draw_pipeline_sample(pretrain_cfg: Config,
                         path: str,
                         data_prefix: Optional[str] = None,
                         index: int = 0,
                         seed: int = 7) -> None:
    """One training sample of a two-view pretraining config (PNG, see
    :func:`projects.common.visualization.draw_two_view_sample`): test image
    ``index`` through the config's ``Pad``, ``TwoViewRandomResizedCrop``
    and ``BlockwiseMaskGenerator``."""
    from mmpretrain.registry import DATASETS, TRANSFORMS

    from projects.common.visualization import draw_two_view_sample
    pipe = {
        t['type']: t
        for t in pretrain_cfg.train_dataloader.dataset.pipeline
    }
    dataset = dict(
        pretrain_cfg.train_dataloader.dataset,
        pipeline=[],
        test_mode=True,
        indices=None)
    if data_prefix is not None:
        dataset['data_prefix'] = data_prefix
    np.random.seed(seed)
    img = DATASETS.build(dataset).get_data_info(index)['img']
    results = TRANSFORMS.build(pipe['Pad'])(dict(img=img))
    padded = results['img']
    results = TRANSFORMS.build(pipe['TwoViewRandomResizedCrop'])(results)
    results = TRANSFORMS.build(pipe['BlockwiseMaskGenerator'])(results)
    draw_two_view_sample(padded, results,
                         pipe['BlockwiseMaskGenerator']['input_size'], path)


def describe_pretraining(cfg: Config) -> str:
    """One sentence on a pretraining run, read off its config."""
    bb = cfg.model.backbone
    arch = bb.get('arch')
    width = f'{arch["embed_dims"]}-wide, {arch["num_layers"]}-block ' \
        if isinstance(arch, dict) else f'arch {arch!r} '
    indices = cfg.train_dataloader.dataset.get('indices')
    images = 'all' if indices is None else \
        (indices if isinstance(indices, int) else len(indices))
    precision = training_precision(cfg.optim_wrapper)
    return (f'{width}{bb.type} (patch {bb.get("patch_size")}, '
            f'{bb.get("img_size")} px), {cfg.train_cfg.max_epochs} epoch(s) '
            f'on {images} training images at batch '
            f'{cfg.train_dataloader.batch_size}, {precision}')


def write_demo_report(work_dir: str,
                      run_cfgs: Dict[str, Config],
                      pretrain: Dict[str, dict],
                      results: Dict[str, dict],
                      pixel: Dict[str, float],
                      protocol: FrozenBackboneProtocol,
                      floor: str,
                      other_init: str,
                      note: str = '',
                      data_prefix: Optional[str] = None) -> str:
    """``{work_dir}/report.md`` and its figures (``figures/``): the results
    table, the comparison with the floor and raw pixels, the protocol and
    the pretraining settings (read off the configs that ran), the training
    and online-kNN curves, the accuracy chart and one training sample.

    Args:
        work_dir (str): The demo's work dir (one sub-folder per run).
        run_cfgs (dict): Method -> the pretraining config it ran.
        pretrain (dict): Method -> :func:`pretrain_once` result.
        results (dict): Row name -> :meth:`FrozenBackboneProtocol.evaluate`
            result (``knn``, ``linear``, ``fewshot``).
        pixel (dict): Raw pixels' ``knn``, ``linear``, ``fewshot`` and
            ``dim`` (:class:`projects.common.evaluation.PixelFloors`).
        protocol (FrozenBackboneProtocol): The evaluation that ran.
        floor (str): Row name of SiameseIM's own initial weights.
        other_init (str): Row name of the separately initialised ViT
            (when ``results`` has it).
        note (str): Appended to the "Produced by" line.
        data_prefix (str, optional): Fashion-MNIST folder of the sample.

    Returns:
        str: The report's path.
    """
    from projects.common.visualization import (plot_accuracy_chart,
                                               plot_training_curves,
                                               read_scalars)
    fig_dir = osp.join(work_dir, 'figures')
    os.makedirs(fig_dir, exist_ok=True)
    runs = {m: read_scalars(osp.join(work_dir, m)) for m in pretrain}
    plot_training_curves(runs, osp.join(fig_dir, 'training_curves.png'))
    knn_runs = {m: read_knn_scalars(osp.join(work_dir, m)) for m in pretrain}
    knn_runs = {m: r for m, r in knn_runs.items() if r}
    if knn_runs:
        plot_knn_curve(knn_runs, osp.join(fig_dir, 'knn_curve.png'))
    plot_accuracy_chart(results, pixel, osp.join(fig_dir, 'accuracy.png'))
    draw_pipeline_sample(run_cfgs['siameseim'],
                         osp.join(fig_dir, 'two_view_sample.png'), data_prefix)
    lines = [
        '# SiameseIM on Fashion-MNIST (CPU demo)', '',
        f'Produced by `python projects/demo/tools/demo.py` on '
        f'{time.strftime("%Y-%m-%d %H:%M")}{note}.', '',
        '| method | kNN top-1 | linear probe top-1 | 1 % few-shot top-1 | '
        'pretraining wall time | images/s |', '|---|---|---|---|---|---|'
    ]
    for name, res in results.items():
        pre = pretrain.get(name)
        wall = f'{pre["wall_s"] / 60:.1f} min' if pre else '-'
        runs = pre.get('invocations', 1) if pre else 1
        if pre and (pre.get('resumed') or runs > 1):
            wall += f' (resumed; the sum of {runs} invocations)' \
                if runs > 1 else ' (resumed)'
        ips = f'{pre["images_per_s"]:.0f}' if pre and \
            pre.get('images_per_s') else '-'
        lines.append(f'| {name} | {res["knn"]:.2f} | {res["linear"]:.2f} | '
                     f'{res["fewshot"]:.2f} | {wall} | {ips} |')
    lines += [
        f'| {pixel_row_name(pixel)} | {pixel["knn"]:.2f} | '
        f'{pixel["linear"]:.2f} | {pixel["fewshot"]:.2f} | - | - |', ''
    ]
    sim, rnd = results.get('siameseim'), results.get(floor)
    if sim and rnd:
        lines.append(
            'SiameseIM vs. its own initial weights (the floor: the same run '
            f'before step 1): {_gaps(sim, rnd)}. Versus raw pixels (as '
            f'features, no centring): {_gaps(sim, pixel)}.' +
            (f' The "{other_init}" row is a ViT of the same architecture '
             'with mmpretrain\'s own initialisation, not the weights the '
             'pretraining started from.' if other_init in results else ''))
    lines += ['', '## Pretraining', '']
    lines += [
        f'* {m}: {describe_pretraining(c)}.' for m, c in run_cfgs.items()
    ]
    lines += ['', '## Protocol', ''] + protocol.describe() + [
        '* Backbone feature: the cls token of the last block (no final '
        'norm), the same for every method.', '', '## Figures', '',
        '![training curves](figures/training_curves.png)', ''
    ]
    if knn_runs:
        hook = [
            h for h in run_cfgs['siameseim'].get('custom_hooks', [])
            if h.get('type') == 'OnlineKNNHook'
        ]
        every = f'every {hook[0]["interval"]} iterations, ' if hook else ''
        lines += [
            'Online kNN during pretraining (`OnlineKNNHook`, '
            f'{every}logged to vis_data/scalars.json):', '',
            '![online kNN](figures/knn_curve.png)', ''
        ]
    lines += [
        '![accuracy](figures/accuracy.png)', '',
        'One training sample: the source image with both crops, view a with '
        'its blockwise mask, view b, and where each patch of view b lies in '
        'view a (the relative positions the predictor is given):', '',
        '![sample](figures/two_view_sample.png)', ''
    ]
    path = osp.join(work_dir, 'report.md')
    atomic_write(path, '\n'.join(lines))
    return path


def _gaps(a: dict, b: dict) -> str:
    return (f'kNN {a["knn"] - b["knn"]:+.1f} points, linear probe '
            f'{a["linear"] - b["linear"]:+.1f}, few-shot '
            f'{a["fewshot"] - b["fewshot"]:+.1f}')


def demo_results_data(results: Dict[str, dict],
                      pretrain: Dict[str, dict],
                      pixel: Dict[str, float],
                      wall_s: float,
                      config: str,
                      smoke: bool = False,
                      invocations: int = 1) -> dict:
    """The ``data`` of the demo's results file (``WORK_DIR/demo.json``; with
    ``--publish`` ``projects/demo/results/demo.json``, rendered by
    ``projects.demo.tables.demo_table``).

    Wall times are summed over the invocations of the work dir (a killed
    demo rerun resumes): ``wall_s`` over ``invocations``, each row's
    ``pretrain_wall_s`` over its ``pretrain_invocations``; ``wall_time``
    says so in words.

    Args:
        results (dict): Row name -> ``knn``, ``linear``, ``fewshot``.
        pretrain (dict): Method -> :func:`pretrain_once` result (rows
            without one were not pretrained by the demo).
        pixel (dict): Raw pixels' ``knn``, ``linear``, ``fewshot`` and
            ``dim`` (:class:`projects.common.evaluation.PixelFloors`).
        wall_s (float): The whole demo's wall time, every invocation's.
        config (str): The demo config that ran.
        smoke (bool): Tiny subsets (``--smoke``).
        invocations (int): How many invocations ``wall_s`` sums.
    """
    rows = []
    for name, res in results.items():
        pre = pretrain.get(name) or {}
        rows.append(
            dict(
                method=name,
                knn=res['knn'],
                linear=res['linear'],
                fewshot=res['fewshot'],
                pretrain_wall_s=pre.get('wall_s'),
                pretrain_invocations=pre.get('invocations', 1 if pre else 0),
                images_per_s=pre.get('images_per_s'),
                resumed=pre.get('resumed', False)))
    return dict(
        rows=rows,
        pixels={k: pixel[k]
                for k in ('knn', 'linear', 'fewshot', 'dim')},
        wall_s=wall_s,
        invocations=invocations,
        wall_time=('summed over the invocations of the work dir (a killed '
                   'demo rerun resumes): ' +
                   ('1 invocation'
                    if invocations == 1 else f'{invocations} invocations')),
        config=config,
        smoke=smoke)
