"""The claim study's loop (``projects/claim/tools/claim_study.py``): phase by
phase,
plan the runs from the records so far, run the first one not recorded under
the current settings, write the results file, plan again."""
import json
import os.path as osp
import time
from typing import Callable, List, Optional

from mmengine.config import Config

from mmsiameseim.evaluation.feature_cache import cache_digest
from projects.claim.plan import (PHASES, check_study, choices, curve_runs,
                                 equal_time, equal_time_runs, feature_runs,
                                 pending, record_key, search_runs, table_runs)
from projects.claim.runner import (Scorer, pretrain_settings, run_config,
                                   run_once, token_map_dim)


def phase_runs(phase: str, study: Config,
               records: List[dict]) -> Optional[List[dict]]:
    """The runs of ``phase`` given the records so far; None while an
    earlier phase it depends on is unfinished."""
    if phase == 'search':
        return search_runs(study) + feature_runs(study, records)
    chosen = choices(study, records)
    if chosen is None:
        return None
    if phase == 'table':
        return [
            dict(r, chosen=chosen[r['method']])
            for r in table_runs(study, chosen)
        ]
    if phase == 'curve':
        return [
            dict(r, chosen=chosen[r['method']])
            for r in curve_runs(study, chosen)
        ]
    if not study.get('equal_time'):
        return []
    budget = equal_time(study, records)
    if budget is None:
        return None
    return [
        dict(r, chosen=chosen[r['method']])
        for r in equal_time_runs(study, chosen, budget)
    ]


def run_variant(study: Config, run: dict) -> dict:
    """The feature a search run is scored with: the method's own
    (``features``), without final norm."""
    return dict(feature=study.features[run['method']], final_norm=False)


def expected_digests(study: Config, run: dict, scorer: Scorer,
                     root: str) -> dict:
    """Record key -> the settings digest its record must carry to be
    reused."""
    pre = pretrain_settings(study, run, root)
    if run['kind'] == 'search':
        held = scorer.search_holdout
        variants = run.get('variants') or [None]
        return {
            record_key(run, 0, v):
            cache_digest(
                [pre, scorer.settings(v or run_variant(study, run), held)])
            for v in variants
        }
    sha = cache_digest([pre, scorer.settings(run['chosen'])])
    return {record_key(run, e): sha for e in run['evaluate_at']}


def fresh_keys(runs: List[dict], records: List[dict], study: Config,
               scorer: Scorer, root: str) -> set:
    """The keys of the records taken under the current settings."""
    by_key = {r['key']: r.get('settings_sha1') for r in records}
    done = set()
    for run in runs:
        for key, sha in expected_digests(study, run, scorer, root).items():
            if by_key.get(key) == sha:
                done.add(key)
    return done


def base_settings(study: Config, root: str) -> dict:
    """Method -> (lr, weight decay) of its pretraining config."""
    out = {}
    for m in study.methods:
        opt = Config.fromfile(osp.join(
            root, study.pretrain_configs[m])).optim_wrapper.optimizer
        out[m] = [opt.lr, opt.weight_decay]
    return out


def study_scorer(study: Config,
                 root: str,
                 eval_dir: str,
                 data_root: str,
                 holdout: Optional[int] = None) -> Scorer:
    """The study's :class:`Scorer`, after checking the settings and
    reading each method's config settings into ``study.base_settings``: what
    the records' settings digests are computed with."""
    check_study(study)
    study.base_settings = base_settings(study, root)
    search = study.get('search') or {}
    return Scorer(study.evaluation, eval_dir, data_root, study.get('dense'),
                  holdout, search.get('holdout'))


def projection_dim(study: Config, root: str) -> int:
    """The token map's width, the same for every method (else refused)."""
    dims = {
        m: token_map_dim(Config.fromfile(osp.join(root, p)))
        for m, p in study.pretrain_configs.items() if m in study.methods
    }
    if len(set(dims.values())) != 1:
        raise ValueError('claim study: the methods\' token maps differ in '
                         f'width ({dims}); pixel_floors.projection_dim must '
                         'be given')
    return next(iter(dims.values()))


def run_phases(study: Config, records: List[dict], scorer: Scorer, args,
               root: str, work_dir: str, data_prefix: str,
               precision: Optional[str], write: Callable[[List[dict]], str],
               say: Callable[[str], None]) -> int:
    """Run what is not recorded, phase by phase (``args.only``: that phase
    alone, ``args.methods``: those methods, ``args.max_runs``: at most that
    many runs); ``write(records)`` after each run.

    Returns the number of runs made.
    """
    new = 0
    t0 = time.time()
    for phase in PHASES:
        if args.only and phase != args.only:
            continue
        while True:
            runs = phase_runs(phase, study, records)
            if runs is None:
                if args.only:
                    raise ValueError(
                        f'claim study: --only {phase} needs the earlier '
                        'phases recorded (the choices on held-out images '
                        'and the table\'s wall times): run them first')
                say(f'{phase}: waits for the earlier phases')
                return new
            if args.methods:
                runs = [r for r in runs if r['method'] in args.methods]
            done = fresh_keys(runs, records, study, scorer, root)
            todo = [r for r in runs if pending(r, done)]
            if not todo:
                break
            if args.max_runs is not None and new >= args.max_runs:
                say(f'--max-runs {args.max_runs} reached: rerun to continue')
                return new
            r = todo[0]
            epochs = pending(r, done)
            say(f'{phase}: {r["key"]} ({r["epochs"]} epoch(s), scored at '
                f'{epochs}; {len(todo)} run(s) of this phase to go)')
            cfg = run_config(study, r, work_dir, data_prefix, precision, root)
            made = run_once(r, cfg, scorer,
                            r.get('chosen') or run_variant(study, r), epochs,
                            pretrain_settings(study, r, root))
            keys = {x['key'] for x in made}
            records[:] = [x for x in records if x['key'] not in keys] + made
            new += 1
            path = write(records)
            say(f'{r["key"]} recorded in {path} '
                f'({(time.time() - t0) / 60:.1f} min so far)')
    return new


def current_records(study: Config, records: List[dict], scorer: Scorer,
                    root: str) -> List[dict]:
    """The records of a results file that the current settings still
    plan, phase by phase (a later phase is planned from the earlier ones'
    kept records): records of other settings are dropped, never mixed in."""
    kept: List[dict] = []
    for phase in PHASES:
        while True:
            runs = phase_runs(phase, study, kept)
            if runs is None:
                return kept
            keys = fresh_keys(runs, records, study, scorer, root)
            have = {r['key'] for r in kept}
            add = [r for r in records if r['key'] in keys - have]
            if not add:
                break
            kept += add
    return kept


class StudyInputs:
    """What every results file of a study is written from: the scorer, the
    pixel floors and each method's settings, built once per invocation.

    Args:
        study (Config): The study settings (checked here).
        root (str): The checkout.
        eval_dir (str): Where evaluations go.
        data_root (str): The dataset folder.
        work_dir (str): Where pretrainings go.
        data_prefix (str): The dataset folder, absolute with a slash.
        precision (str, optional): Pretraining precision override.
        holdout (int, optional): Score on held-out training images.
        stored (dict, optional): The ``data`` of the study's results file so
            far: its pixel floors are kept where they were taken under the
            same settings and precision (:func:`kept_floors`), so that the
            rows a study adds later, perhaps on another machine, are judged
            against the floors its earlier rows were. Defaults to None.
    """

    def __init__(self,
                 study: Config,
                 root: str,
                 eval_dir: str,
                 data_root: str,
                 work_dir: str,
                 data_prefix: str,
                 precision: Optional[str],
                 holdout: Optional[int],
                 stored: Optional[dict] = None) -> None:
        from projects.claim.data import method_settings
        from projects.common.evaluation import PixelFloors
        from projects.demo import describe_pretraining
        self.scorer = study_scorer(study, root, eval_dir, data_root, holdout)
        self.study = study
        floors = dict(study.get('pixel_floors') or {})
        floors.setdefault('projection_dim', None)
        if floors['projection_dim'] is None:
            floors['projection_dim'] = projection_dim(study, root)
        self.floors = PixelFloors(self.scorer.protocol(None), **floors)
        from projects.common.evaluation.protocol import stored_knn
        self.settings = dict(
            evaluation=dict(
                study.evaluation, knn=stored_knn(study.evaluation.knn)),
            dense=study.get('dense'),
            search=study.get('search'),
            pixel_floors=self.floors.settings(),
            pretrain_overrides=study.pretrain_overrides,
            hook_overrides=study.hook_overrides)
        kept = kept_floors(stored, self.settings)
        self.floors_kept = kept is not None
        self.floor_scores = kept or dict(
            self.floors.evaluate(), dense=self.scorer.dense.raw_pixels())
        self.methods = {}
        self.pretraining = {}
        for m in study.methods:
            run = dict(
                key=f'{m}_described',
                method=m,
                seed=study.seeds[0],
                epochs=study.epochs,
                kind='table',
                lr=study.base_settings[m][0],
                weight_decay=study.base_settings[m][1])
            cfg = run_config(study, run, work_dir, data_prefix, precision,
                             root)
            self.methods[m] = method_settings(cfg)
            self.pretraining[m] = describe_pretraining(cfg)

    def data(self, records: List[dict], protocol: List[str], smoke: bool,
             holdout: Optional[int]) -> dict:
        from projects.claim.data import claim_data
        return claim_data(self.study, records, self.floor_scores, self.methods,
                          self.settings, protocol, self.pretraining, smoke,
                          holdout)


def kept_floors(stored: Optional[dict], settings: dict) -> Optional[dict]:
    """The pixel floors of a results file's ``stored`` data, where its
    floors and dense probe were taken under ``settings`` (as the file
    writes them) and in the precision this CPU evaluates in (native bf16 or
    not); None otherwise."""
    from mmsiameseim.evaluation import native_bf16
    if not stored or not stored.get('pixel_floors'):
        return None
    now = json.loads(json.dumps(settings, default=str))
    then = stored.get('settings') or {}
    same = all(
        then.get(k) == now[k] for k in ('evaluation', 'dense', 'pixel_floors'))
    if not same or stored.get('native_bf16') != native_bf16():
        return None
    return stored['pixel_floors']


def study_inputs(*args, **kwargs) -> StudyInputs:
    return StudyInputs(*args, **kwargs)


def describe_study(inputs: StudyInputs) -> List[str]:
    """Markdown bullets of the evaluation: the protocol (its feature lines
    left out: the features are chosen per method, in the results file),
    the pixel floors and the dense probe."""
    p = inputs.scorer.protocol(None)
    floors = inputs.floor_scores
    lines = [x for x in p.describe() if not x.startswith('* Feature:')]
    lines.append(
        f'* Pixel floors: the {floors["raw"]["dim"]} raw pixel values of '
        'each image, and a fixed random projection of them (Gaussian, seed '
        f'{floors["projection"]["seed"]}) to {floors["projection"]["dim"]} '
        'values (the token map\'s width), through the same kNN, linear '
        'probe and few-shot as the features, neither centred nor scaled '
        'beforehand (as the features are not).')
    return lines + inputs.scorer.dense.describe()
