import os.path as osp
from typing import Callable, Dict, Optional

import numpy as np
import torch

from .fewshot import class_balanced_subset, logistic_regression_accuracy
from .folder_embeddings import embed_folder
from .knn import weighted_knn_accuracy


def embed_split(backbone: torch.nn.Module, mean: torch.Tensor,
                std: torch.Tensor, data_root: str, split: str, out: str,
                **embed_options) -> dict:
    """Embed one split of a labelled folder (``DATA_ROOT/SPLIT/CLASS/...``,
    the classes of ``train/``: ``LabelledImageFolder``) with
    :func:`embed_folder` (resumable, damaged files skipped and listed).

    Returns:
        dict: ``features``, ``labels`` (N,), ``files`` (relative to the
        split folder), ``skipped`` and ``classes``.
    """
    from ..datasets import LabelledImageFolder
    dataset = LabelledImageFolder(
        data_root=data_root, split=split, serialize_data=False)
    root = osp.join(data_root, split)
    label_of = {
        osp.relpath(d['img_path'], root): d['gt_label']
        for d in dataset.data_list
    }
    result = embed_folder(backbone, mean, std, root, list(label_of), out,
                          **embed_options)
    return dict(
        result,
        labels=np.array([label_of[f] for f in result['files'].tolist()],
                        dtype=np.int64),
        classes=list(dataset.metainfo['classes']))


def evaluate_labelled_folder(backbone: torch.nn.Module,
                             mean: torch.Tensor,
                             std: torch.Tensor,
                             data_root: str,
                             work_dir: str,
                             train_split: str = 'train',
                             val_split: str = 'val',
                             k: int = 20,
                             temperature: float = 0.07,
                             fraction: Optional[float] = 0.01,
                             folds: int = 3,
                             seed: int = 0,
                             save: Optional[Callable[[dict], None]] = None,
                             **embed_options) -> Dict[str, dict]:
    """Frozen-backbone kNN and few-shot accuracy on your own labelled
    folder: the training split is the bank (kNN) and the pool of labelled
    samples (a class-balanced ``fraction`` of it, at least 2 per class,
    for an L2-regularised logistic regression whose strength is chosen by
    ``folds``-fold cross-validation on those samples), the validation split
    is scored. The embeddings are written to ``work_dir``
    (``{split}.npz``); a killed call continues where it stopped.

    Args:
        backbone, mean, std: :func:`~mmsiameseim.evaluation.frozen_vit`.
        data_root (str): The folder holding the splits.
        work_dir (str): Where the embeddings go.
        train_split, val_split (str): The splits' sub-folders.
        k, temperature: :func:`weighted_knn_accuracy`.
        fraction (float, optional): Labelled share of the training split
            for few-shot; None leaves few-shot out.
        folds (int): Cross-validation folds of the few-shot fit.
        seed (int): Seed of the few-shot subset.
        save (callable, optional): Called with the results once kNN is
            scored, before few-shot, so that a failure later keeps them.
        **embed_options: :func:`embed_folder` options (``size`` required,
            ``feature``, ``crop_fraction``, ``batch_size``...).

    Returns:
        dict: ``knn`` (top1, top5, k), ``fewshot`` (top1, l2, cv_top1,
        labelled, and a ``note`` when 2 images of a class were taken; or
        ``skipped`` and its ``note``) when asked, and ``data`` (classes,
        the number of images per split, the skipped files).
    """
    splits = {}
    for split in (train_split, val_split):
        splits[split] = embed_split(backbone, mean, std, data_root, split,
                                    osp.join(work_dir, f'{split}.npz'),
                                    **embed_options)
    train, val = splits[train_split], splits[val_split]

    def tensors(s):
        x = torch.from_numpy(np.asarray(s['features'], dtype=np.float32))
        return x.reshape(len(x), -1), torch.from_numpy(s['labels'])

    (xt, yt), (xv, yv) = tensors(train), tensors(val)
    results = dict(
        knn=weighted_knn_accuracy(xt, yt, xv, yv, k, temperature),
        data=dict(
            classes=train['classes'],
            images={s: len(splits[s]['files'])
                    for s in splits},
            skipped={
                s: [str(p) for p in splits[s]['skipped'][:, 0]]
                if len(splits[s]['skipped']) else []
                for s in splits
            }))
    if save is not None:
        save(results)
    if fraction is not None:
        results['fewshot'] = _fewshot(xt, yt, xv, yv, train['classes'],
                                      fraction, folds, seed)
    return results


def _fewshot(xt: torch.Tensor, yt: torch.Tensor, xv: torch.Tensor,
             yv: torch.Tensor, classes: list, fraction: float, folds: int,
             seed: int) -> dict:
    """The few-shot fit on a class-balanced ``fraction`` of the training
    split, with at least 2 images of each class (its cross-validation needs
    them); skipped, with the reason in ``note``, where the split cannot give
    them."""
    counts = np.bincount(yt.numpy(), minlength=len(classes))
    single = [classes[c] for c in np.flatnonzero(counts == 1)]
    if single or np.count_nonzero(counts) < 2:
        return dict(
            skipped=True,
            note='few-shot skipped: it fits and cross-validates on at least '
            '2 labelled images of each of at least 2 classes, and the '
            'training split has ' +
            (f'a single image of {single}' if single else 'one class') +
            '; add images, or leave few-shot out with --no-fewshot')
    subset = class_balanced_subset(yt.numpy(), fraction, seed, minimum=2)
    raised = int(
        np.count_nonzero((counts > 0) & (np.round(counts * fraction) < 2)))
    fit = logistic_regression_accuracy(
        xt[subset], yt[subset], xv, yv, folds=folds, seed=seed)
    fit['labelled'] = len(subset)
    if raised:
        fit['note'] = (f'--fraction {fraction:g} gives fewer than 2 images '
                       f'of {raised} of the {np.count_nonzero(counts)} '
                       'classes; took 2 of each of those (the fit '
                       'cross-validates)')
    return fit
