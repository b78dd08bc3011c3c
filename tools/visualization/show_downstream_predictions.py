"""A fine-tuned detection or segmentation model's predictions beside the
ground truth, on the first images of its config's test set.

    python tools/visualization/show_downstream_predictions.py CONFIG \
        CHECKPOINT [--out FILE.png] [--count 6] [--score-thr 0.3] \
        [--upscale 3] [--cfg-options K=V ...]

CONFIG is an mmdet config (boxes and instance masks, mmdet's
``DetLocalVisualizer``) or an mmseg one (class maps, mmseg's
``SegLocalVisualizer``), told apart by its ``default_scope``; its test
dataloader names the images (``--cfg-options`` points it elsewhere, e.g. at
held-out images). Each row is one image: the ground truth on the left, the
prediction on the right (boxes from ``--score-thr``). Small images are
enlarged ``--upscale`` times (nearest neighbour, boxes and masks alike)
before drawing, so that the labels stay legible. A segmentation model
predicts a class on every pixel, the background included (ignored, as
ADE20k's unlabelled pixels, in its training and scoring under
``reduce_zero_label``). Writes one PNG (default: ``predictions.png`` beside
the checkpoint).
"""
import argparse
import os.path as osp
import sys

import numpy as np
from mmengine.config import Config, DictAction
from mmengine.dataset import pseudo_collate
from mmengine.utils import ProgressBar


def enlarge(array: np.ndarray, times: int) -> np.ndarray:
    """Nearest-neighbour enlargement of the last two axes (H, W) of an
    array, or of the first two of an (H, W, C) image."""
    if array.ndim == 3 and array.shape[-1] == 3:
        return array.repeat(times, 0).repeat(times, 1)
    return array.repeat(times, -2).repeat(times, -1)


def enlarge_detections(sample, times: int):
    """Boxes and masks of a DetDataSample's ground truth and prediction,
    enlarged like the image."""
    import torch
    from mmdet.structures.mask import BitmapMasks
    for field in ('gt_instances', 'pred_instances'):
        if field not in sample:
            continue
        instances = getattr(sample, field)
        instances.bboxes = instances.bboxes * times
        if 'masks' in instances:
            masks = instances.masks
            if isinstance(masks, BitmapMasks):
                masks = masks.to_ndarray()
            masks = enlarge(np.asarray(masks), times)
            instances.masks = torch.from_numpy(masks.astype(bool))
    return sample


def enlarge_segmentation(sample, times: int):
    """The class maps of a SegDataSample (ground truth and prediction)
    enlarged like the image."""
    from mmengine.structures import PixelData
    for field in ('gt_sem_seg', 'pred_sem_seg'):
        if field in sample:
            data = getattr(sample, field).data
            setattr(
                sample, field,
                PixelData(
                    data=data.repeat_interleave(times, -2).repeat_interleave(
                        times, -1)))
    return sample


def build(cfg: Config, checkpoint: str):
    """(model, dataset, visualizer) of an mmdet or mmseg config."""
    from mmengine.registry import init_default_scope
    from mmengine.runner import load_checkpoint
    scope = cfg.get('default_scope')
    if scope not in ('mmdet', 'mmseg'):
        raise ValueError(f'default_scope {scope!r}: an mmdet or mmseg config '
                         'is needed')
    init_default_scope(scope)
    if scope == 'mmdet':
        from mmdet.registry import DATASETS, MODELS, VISUALIZERS
        visualizer = dict(type='DetLocalVisualizer', name='predictions')
    else:
        from mmseg.registry import DATASETS, MODELS, VISUALIZERS

        # mmseg blends the class colours into the image, black where none
        visualizer = dict(
            type='SegLocalVisualizer', name='predictions', alpha=0.6)
    cfg.model.backbone.init_cfg = None  # the checkpoint holds every weight
    model = MODELS.build(cfg.model)
    load_checkpoint(model, checkpoint, map_location='cpu', strict=True)
    model.eval()
    dataset = DATASETS.build(cfg.test_dataloader.dataset)
    visualizer = VISUALIZERS.build(visualizer)
    visualizer.dataset_meta = dataset.metainfo
    return model, dataset, visualizer


def draw(model, dataset, visualizer, index: int, score_thr: float,
         times: int) -> np.ndarray:
    """The ground truth (left) and prediction (right) of one test image,
    RGB."""
    import tempfile

    import mmcv
    import torch
    with torch.no_grad():
        (sample, ) = model.test_step(pseudo_collate([dataset[index]]))
    image = mmcv.imread(sample.img_path, channel_order='rgb')
    if 'pred_instances' in sample:
        sample = enlarge_detections(sample, times)
        options = dict(pred_score_thr=score_thr)
    else:
        sample = enlarge_segmentation(sample, times)
        options = {}
    # both visualizers write the pair to out_file (mmseg's keeps no copy)
    with tempfile.TemporaryDirectory() as folder:
        out = osp.join(folder, 'pair.png')
        visualizer.add_datasample(
            osp.basename(sample.img_path),
            enlarge(image, times),
            data_sample=sample,
            draw_gt=True,
            draw_pred=True,
            show=False,
            out_file=out,
            **options)
        return mmcv.imread(out, channel_order='rgb')


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('config')
    parser.add_argument('checkpoint')
    parser.add_argument('--out')
    parser.add_argument('--count', type=int, default=6)
    parser.add_argument('--score-thr', type=float, default=0.3)
    parser.add_argument('--upscale', type=int, default=3)
    parser.add_argument('--cfg-options', nargs='+', action=DictAction)
    args = parser.parse_args(argv)
    for path in (args.config, args.checkpoint):
        if not osp.isfile(path):
            sys.exit(f'error: {path}: no such file')
    cfg = Config.fromfile(args.config)
    if args.cfg_options:
        cfg.merge_from_dict(args.cfg_options)
    try:
        model, dataset, visualizer = build(cfg, args.checkpoint)
    except ValueError as e:
        sys.exit(f'error: {args.config}: {e}')
    count = min(args.count, len(dataset))
    rows = []
    progress = ProgressBar(count)
    for index in range(count):
        rows.append(
            draw(model, dataset, visualizer, index, args.score_thr,
                 args.upscale))
        progress.update()
    out = args.out or osp.join(
        osp.dirname(osp.abspath(args.checkpoint)), 'predictions.png')
    import mmcv
    width = max(row.shape[1] for row in rows)  # rows of other widths: padded
    sheet = np.concatenate([
        np.pad(
            row, ((0, 0), (0, width - row.shape[1]), (0, 0)),
            constant_values=255) for row in rows
    ])
    mmcv.imwrite(sheet[..., ::-1], out, auto_mkdir=True)  # RGB -> BGR
    print(f'\n{count} images: ground truth (left), prediction (right) in '
          f'{out}')


if __name__ == '__main__':
    main()
