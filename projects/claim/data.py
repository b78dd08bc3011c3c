"""The claim study's results file (format 2): the records and what is
computed from them (the choices on held-out images, the equal-time budget,
the summary over seeds and the tested comparisons), with the settings the
prose is written from (features, augmentations, dimensions)."""
import json
from typing import Dict, List, Optional

from mmengine.config import Config

from projects.claim.plan import choices, equal_time
from projects.claim.statistics import ALPHA
from projects.claim.verdicts import (curve_comparisons, summary,
                                     table_comparisons)

FORMAT = 2


def _params(t: dict) -> str:
    keys = dict(
        crop_ratio_range='crops {:.0%}-{:.0%}',
        scale='crops {:.0%}-{:.0%}',
        prob='p {:g}',
        flip_prob='flip p {:g}',
        mask_ratio='{:.0%} masked')
    out = []
    for k, fmt in keys.items():
        v = t.get(k)
        if isinstance(v, (list, tuple)) and len(v) == 2 and '-' in fmt:
            out.append(fmt.format(*v))
        elif isinstance(v, (int, float)) and '-' not in fmt:
            out.append(fmt.format(v))
    return t['type'] + (f' ({", ".join(out)})' if out else '')


def describe_pipeline(pipeline: List[dict]) -> str:
    """A training pipeline in words, view by view: each transform with its
    probability and crop range (loading, padding and packing left out)."""
    parts = []
    for t in pipeline:
        if t['type'] in ('Pad', 'PackInputs', 'LoadImageFromFile'):
            continue
        views = t.get('transforms') if t['type'] == 'MultiView' else \
            t.get('pipelines') if t['type'] == 'PerViewTransforms' else None
        if views is not None:
            if len(views) == 1:
                n = t.get('num_views', 2)
                n = sum(n) if isinstance(n, (list, tuple)) else n
                parts.append(f'{n} views, each: ' +
                             ', '.join(_params(x) for x in views[0]))
            else:
                parts.append('; '.join(f'view {i + 1}: ' +
                                       ', '.join(_params(x) for x in v)
                                       for i, v in enumerate(views)))
        else:
            parts.append(_params(t))
    return '; '.join(parts)


def method_settings(cfg: Config) -> dict:
    """What the prose says of one method's pretraining, read off its
    config."""
    bb = cfg.model.backbone
    opt = cfg.optim_wrapper.optimizer
    out = dict(
        model=cfg.model.type,
        augmentation=describe_pipeline(cfg.train_dataloader.dataset.pipeline),
        optimizer=opt.type,
        lr=opt.lr,
        weight_decay=opt.weight_decay,
        width=bb.arch['embed_dims'],
        blocks=bb.arch['num_layers'],
        patches=(bb.img_size // bb.patch_size)**2)
    if bb.get('mask_ratio') is not None:
        out['mask_ratio'] = bb.mask_ratio
    head = cfg.model.get('head', {})
    if head.get('norm_pix') is not None:
        out['norm_pix'] = head.norm_pix
    return out


def claim_data(study: Config,
               records: List[dict],
               floors: dict,
               methods: Dict[str, dict],
               settings: dict,
               protocol: List[str],
               pretraining: Dict[str, str],
               smoke: bool = False,
               holdout: Optional[int] = None) -> dict:
    """The results file's data.

    Args:
        study (Config): The study settings.
        records (list[dict]): Every record so far.
        floors (dict): ``raw`` and ``projection`` (:class:`PixelFloors`)
            and ``dense`` (the dense probe on raw pixels).
        methods (dict): Method -> :func:`method_settings`.
        settings (dict): The study's settings (for the file's reader).
        protocol (list[str]): Markdown bullets of the evaluation.
        pretraining (dict): Method -> one sentence on its table run.
        smoke (bool): Tiny subsets (numbers mean nothing).
        holdout (int, optional): Scored on held-out training images.
    """
    from mmsiameseim.evaluation import native_bf16
    names = list(study.methods)
    search = study.get('search')
    tm_dim = {m: s['patches'] * s['width'] for m, s in methods.items()}
    return dict(
        format=FORMAT,
        methods=names,
        seeds=list(study.seeds),
        epochs=study.epochs,
        curve={
            k: list(v)
            for k, v in study.get('curve', {}).items()
        },
        curve_seeds=list(study.get('curve_seeds', [0])),
        curve_key_epochs=list(study.get('curve_key_epochs', [])),
        records=records,
        search=None if not search else dict(
            json.loads(json.dumps(search.to_dict())),
            chosen=choices(study, records)),
        own_features=dict(study.features),
        equal_time=equal_time(study, records),
        summary=summary(records, names),
        pixel_floors=floors,
        raw_pixels=dict(
            knn=floors['raw']['knn'],
            dense_miou=floors['dense']['miou'],
            dense_accuracy=floors['dense']['accuracy']),
        statistics=dict(
            alpha=ALPHA,
            table=table_comparisons(records, names, floors),
            curve=curve_comparisons(records, names, floors,
                                    list(study.get('curve_key_epochs', [])))),
        method_settings=methods,
        dims=dict(
            pooled={
                m: s['width']
                for m, s in methods.items()
            },
            token_map=tm_dim,
            pixels=floors['raw']['dim'],
            projection=floors['projection']['dim']),
        protocol=protocol,
        pretraining=pretraining,
        native_bf16=native_bf16(),
        settings=json.loads(json.dumps(settings, default=str)),
        smoke=smoke,
        holdout=holdout)
