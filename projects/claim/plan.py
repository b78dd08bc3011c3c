"""The claim study's runs, phase by phase, and the choices made on
held-out training images between them.

1. ``search``: every method at the table's budget (seed ``search.seed``)
   with each learning rate x weight decay of ``search``, scored on held-out
   training images with the method's own feature (``features``); the best
   setting by ``search.criterion`` is then scored with every feature variant
   of ``search.pooled`` and ``search.token_map``, and the best of each is
   chosen.
2. ``table``: every method x seed at the chosen setting and features.
3. ``equal_time``: each method other than ``equal_time.reference`` with the
   epochs that take it the reference's measured table wall time.
4. ``curve``: the longest curve budget per method and seed of
   ``curve_seeds``, scored at its epoch checkpoints (every epoch of
   ``curve[method]`` for the first seed, those of ``curve_key_epochs`` for
   the others) and at its initial weights (epoch 0).

A phase is planned from the records of the earlier ones, so a study that
stops anywhere continues from its results file.
"""
import statistics
from typing import Dict, List, Optional

from mmengine.config import Config

PHASES = ('search', 'table', 'equal_time', 'curve')


def run_key(method: str, seed: int, epochs: int, lr: float,
            weight_decay: float) -> str:
    return f'{method}_lr{lr:g}_wd{weight_decay:g}_seed{seed}_{epochs}e'


def variant_name(variant: dict) -> str:
    """'avg_featmap', 'cls_token+norm', ...: a feature variant's tag."""
    return variant['feature'] + ('+norm' if variant.get('final_norm') else '')


def record_key(run: dict, epoch: int, variant: Optional[dict] = None) -> str:
    """One evaluation of a run: a table or equal-time run at its end, a
    curve run at ``epoch`` (0: its initial weights), a search run on
    held-out images (and a feature ``variant`` of the chosen one)."""
    if run['kind'] == 'search':
        return run['key'] + '@holdout' + (f':{variant_name(variant)}'
                                          if variant else '')
    if run['kind'] == 'curve':
        return f'{run["key"]}@{epoch}'
    return run['key'] if run['kind'] == 'table' else run['key'] + '@time'


def _run(study,
         method,
         seed,
         epochs,
         kind,
         setting,
         evaluate_at,
         images_share=1.0):
    lr, wd = setting
    key = run_key(method, seed, epochs, lr, wd)
    if images_share != 1.0:
        key += f'_share{images_share:g}'
    return dict(
        key=key,
        images_share=images_share,
        method=method,
        seed=seed,
        epochs=epochs,
        kind=kind,
        table=kind == 'table',
        curve=kind == 'curve',
        lr=lr,
        weight_decay=wd,
        evaluate_at=evaluate_at)


def base_setting(study: Config, method: str) -> tuple:
    """(lr, weight decay) of the method's pretraining config, read by the
    caller into ``study.base_settings``."""
    return tuple(study.base_settings[method])


def search_runs(study: Config) -> List[dict]:
    search = study.get('search')
    if not search:
        return []
    return [
        _run(study, m, search.seed, study.epochs, 'search', (lr, wd),
             [study.epochs]) for m in study.methods for lr in search.lr
        for wd in search.weight_decay
    ]


def criterion(record: dict, name: str) -> float:
    return record[name]


def choices(study: Config, records: List[dict]) -> Optional[Dict[str, dict]]:
    """Method -> ``lr``, ``weight_decay``, ``pooled`` and ``token_map``
    (feature variants) chosen on held-out images; None while a search
    record is missing.

    Without ``search``: the pretraining configs'
    setting, ``features`` and the token map without final norm.
    """
    search = study.get('search')
    if not search:
        return {
            m:
            dict(
                lr=base_setting(study, m)[0],
                weight_decay=base_setting(study, m)[1],
                pooled=dict(feature=study.features[m], final_norm=False),
                token_map=dict(feature='featmap', final_norm=False),
                searched=False)
            for m in study.methods
        }
    by_key = {r['key']: r for r in records}
    out = {}
    for method in study.methods:
        grid = [r for r in search_runs(study) if r['method'] == method]
        scored = [by_key.get(record_key(r, r['epochs'])) for r in grid]
        if any(s is None for s in scored):
            return None
        best_run, best = max(
            zip(grid, scored), key=lambda x: criterion(x[1], search.criterion))
        chosen = dict(
            lr=best_run['lr'],
            weight_decay=best_run['weight_decay'],
            criterion=search.criterion,
            searched=True)
        for part in ('pooled', 'token_map'):
            variants = [(v, by_key.get(record_key(best_run, 0, v)))
                        for v in search[part]]
            if any(r is None for _, r in variants):
                return None
            v, _ = max(
                variants, key=lambda x: criterion(x[1], search.criterion))
            chosen[part] = dict(
                feature=v['feature'], final_norm=bool(v.get('final_norm')))
        out[method] = chosen
    return out


def feature_runs(study: Config, records: List[dict]) -> List[dict]:
    """The search run of each method's best setting, to be scored with
    every feature variant, for each method whose grid is recorded (a study
    that stops mid-search keeps the finished methods' choices)."""
    search = study.get('search')
    if not search:
        return []
    by_key = {r['key']: r for r in records}
    out = []
    for method in study.methods:
        grid = [r for r in search_runs(study) if r['method'] == method]
        scored = [by_key.get(record_key(r, r['epochs'])) for r in grid]
        if any(s is None for s in scored):
            continue
        best_run, _ = max(
            zip(grid, scored), key=lambda x: criterion(x[1], search.criterion))
        out.append(
            dict(
                best_run,
                variants=list(search.pooled) + list(search.token_map)))
    return out


def table_runs(study: Config, chosen: Dict[str, dict]) -> List[dict]:
    return [
        _run(study, m, s, study.epochs, 'table',
             (chosen[m]['lr'], chosen[m]['weight_decay']), [study.epochs])
        for s in study.seeds for m in study.methods
    ]


def equal_time(study: Config, records: List[dict]) -> Optional[dict]:
    """The equal-wall-time budget of each method, from the table records:

    the reference's median pretraining wall time over its seeds, divided
    by the method's median wall time per epoch (``exact_epochs``); a method
    trains the table's epochs, each over ``images_share`` of the training
    images (``exact_epochs`` / the table's epochs, to 1 %), so that its
    schedule ends within the budget. None while a table record is missing
    or without ``equal_time``. ``equal_time.images_share`` (method ->
    share) fixes a method's share instead (the smoke study's, so that its
    runs do not depend on its timings).
    """
    cfg = study.get('equal_time')
    if not cfg:
        return None
    table = [r for r in records if r.get('kind') == 'table']
    walls = {}
    for m in study.methods:
        rows = [r for r in table if r['method'] == m]
        if len(rows) < len(study.seeds):
            return None
        walls[m] = statistics.median(r['pretrain_wall_s'] / r['epochs']
                                     for r in rows)
    target = walls[cfg.reference] * study.epochs
    fixed = cfg.get('images_share') or {}
    out = {}
    for m in study.methods:
        exact = target / walls[m]
        out[m] = dict(
            epoch_wall_s=walls[m],
            exact_epochs=exact,
            epochs=study.epochs,
            images_share=fixed.get(m, round(exact / study.epochs, 2)),
            fixed=m in fixed)
    return dict(reference=cfg.reference, wall_s=target, methods=out)


def equal_time_runs(study: Config, chosen: Dict[str, dict],
                    budget: Optional[dict]) -> List[dict]:
    """Runs of the methods whose equal-time share of the images is not
    the table's (the others' equal-time row is their table row)."""
    if not budget:
        return []
    return [
        _run(study, m, s, study.epochs, 'equal_time',
             (chosen[m]['lr'], chosen[m]['weight_decay']), [study.epochs],
             share) for s in study.seeds for m in study.methods
        for share in [budget['methods'][m]['images_share']] if share != 1.0
    ]


def curve_runs(study: Config, chosen: Dict[str, dict]) -> List[dict]:
    seeds = list(study.get('curve_seeds', [0]))
    key_epochs = set(study.get('curve_key_epochs', []))
    out = []
    curve = sorted((max(e), study.methods.index(m), m, sorted(e))
                   for m, e in study.get('curve', {}).items() if e)
    for n, seed in enumerate(seeds):
        for epochs, _, method, at in curve:
            at = at if n == 0 else [e for e in at if e in key_epochs]
            if at:
                out.append(
                    _run(
                        study, method, seed, epochs, 'curve',
                        (chosen[method]['lr'], chosen[method]['weight_decay']),
                        [0] + at))
    return out


def pending(run: dict, done: set) -> List[int]:
    """The epochs of ``run`` whose record is not in ``done`` (keys)."""
    if run.get('variants'):
        return [0] if any(
            record_key(run, 0, v) not in done
            for v in run['variants']) else []
    return [e for e in run['evaluate_at'] if record_key(run, e) not in done]


def check_study(study: Config) -> None:
    """Refuse a study whose methods, seeds, curve, search or equal-time
    reference name nothing runnable; the message names the option."""
    unknown = [m for m in study.methods if m not in study.pretrain_configs]
    if unknown:
        raise ValueError(
            f'claim study: unknown methods {unknown}; methods are keys of '
            f'pretrain_configs {sorted(study.pretrain_configs)}')
    outside = [m for m in study.get('curve', {}) if m not in study.methods]
    if outside:
        raise ValueError(f'claim study: curve names {outside}, which are '
                         f'not in methods {list(study.methods)}')
    if not study.seeds:
        raise ValueError('claim study: seeds is empty')
    bad = [
        e for es in study.get('curve', {}).values()
        for e in es if int(e) != e or e < 1
    ] + ([study.epochs] if study.epochs < 1 else [])
    if bad:
        raise ValueError(f'claim study: epochs must be whole numbers >= 1, '
                         f'got {bad}')
    search = study.get('search')
    if search:
        for key in ('lr', 'weight_decay', 'pooled', 'token_map'):
            if not search.get(key):
                raise ValueError(f'claim study: search.{key} is empty')
        if search.criterion not in ('knn', 'fewshot'):
            raise ValueError(
                f'claim study: search.criterion={search.criterion!r}; '
                "choose 'knn' or 'fewshot' (held-out top-1)")
        if any(v['feature'] == 'featmap'
               for v in search.pooled) or any(v['feature'] != 'featmap'
                                              for v in search.token_map):
            raise ValueError(
                'claim study: search.pooled takes cls_token / avg_featmap '
                "variants, search.token_map 'featmap' ones")
    ref = study.get('equal_time', {}) or {}
    if ref and ref.get('reference') not in study.methods:
        raise ValueError(
            f'claim study: equal_time.reference={ref.get("reference")!r} is '
            f'not in methods {list(study.methods)}')
    fixed = ref.get('images_share') or {}
    wrong = {
        m: v
        for m, v in fixed.items() if m not in study.methods or not v > 0
    }
    if wrong:
        raise ValueError(
            f'claim study: equal_time.images_share={dict(fixed)} has '
            f'{wrong}: methods of {list(study.methods)} and shares above 0 '
            'expected')
