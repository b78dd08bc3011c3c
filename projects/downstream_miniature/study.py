"""Table 2 in miniature: every backbone of the study's settings
(``projects/downstream_miniature/configs/downstream_miniature.py``) fine-tuned
by every miniature
config with every seed, each run through the codebase's own training script
(what ``mim train`` runs), recorded in the results file as soon as it ends,
so that an interrupted study resumes with the runs it lacks.

Each pretrained backbone is judged against its own initial weights, per
task and metric: the difference of the means over the seeds, a Welch t-test,
and Holm's correction over all comparisons of the table (one family), with
the claim study's verdicts (``projects.claim.statistics``).
"""
import functools
import glob
import hashlib
import json
import os
import os.path as osp
import shutil
import statistics
import subprocess
import sys
import time
from typing import Dict, List, Optional, Tuple

from mmengine.config import Config

from projects.claim.statistics import judge as holm_verdicts
from projects.claim.statistics import welch_p
from projects.common.config_values import values_key
from projects.common.fingerprints import uncommitted_code
from projects.common.results import REPO, run_meta


def run_key(task: str, backbone: str, seed: int) -> str:
    return f'{task}/{backbone}/seed{seed}'


def search_key(task: str, schedule: str, backbone: str, seed: int) -> str:
    return f'{task}/{schedule}/{backbone}/seed{seed}'


def planned_runs(study: Config,
                 tasks: Optional[List[str]] = None,
                 backbones: Optional[List[str]] = None,
                 holdout: bool = False) -> List[dict]:
    """Every (task, backbone, seed) of the study, or of the named subsets,
    each with the schedule that the held-out search chose for its task
    (``study.chosen_schedules``, see :func:`resolve_schedules`); with
    ``holdout``, every (task, candidate schedule) on ``search.backbones``
    (or the named ones) with seed ``search.seed``.

    An unknown name is an error that lists the known ones.
    """
    for chosen, known, what in ((tasks, study.tasks, 'task'),
                                (backbones, study.backbones, 'backbone')):
        unknown = sorted(set(chosen or ()) - set(known))
        if unknown:
            raise ValueError(f'unknown {what} {unknown}; the study has '
                             f'{sorted(known)}')
    for name, backbone in study.backbones.items():
        baseline = backbone.get('baseline')
        if baseline and baseline not in study.backbones:
            raise ValueError(f'backbones.{name}.baseline: {baseline!r} is '
                             'not a backbone of the study')
    for task in tasks or study.tasks:
        if not study.schedules.get(task):
            raise ValueError(f'schedules.{task}: the task has no candidate '
                             'schedule')
    unknown = sorted(set(study.search.backbones) - set(study.backbones))
    if unknown:
        raise ValueError(f'search.backbones: {unknown} are not backbones of '
                         'the study')
    if holdout:
        # every candidate schedule, on the search's backbones and seed
        return [
            dict(
                key=search_key(t, name, b, study.search.seed),
                task=t,
                backbone=b,
                seed=study.search.seed,
                schedule=name) for t in (tasks or study.tasks)
            for name in study.schedules[t]
            for b in (backbones or study.search.backbones)
        ]
    return [
        dict(
            key=run_key(t, b, s),
            task=t,
            backbone=b,
            seed=s,
            schedule=study.chosen_schedules[t]) for t in (tasks or study.tasks)
        for b in (backbones or study.backbones) for s in study.seeds
    ]


def length_runs(study: Config,
                backbones: Optional[List[str]] = None) -> List[dict]:
    """Every (schedule, backbone, seed) of ``study.lengths`` (or of the
    named backbones), keyed as the search's runs; an unknown backbone is an
    error that lists the known ones.

    Their schedules become the candidates of the task (``study.schedules``),
    so that a run's command and record are those of a search run.
    """
    chosen = backbones or study.lengths.backbones
    unknown = sorted(set(chosen) - set(study.backbones))
    if unknown:
        raise ValueError(f'lengths.backbones: unknown backbones {unknown}; '
                         f'the study has {sorted(study.backbones)}')
    _section_task(study, 'lengths')
    return _held_out_runs(study, 'lengths', chosen)


def _section_task(study: Config, section: str) -> str:
    """The task of the settings' ``section`` (``lengths``, ``init_parts``);
    one that is not a task of the study is an error naming it."""
    task = study[section].task
    if task not in study.tasks:
        raise ValueError(f'{section}.task: {task!r} is not a task of the '
                         f'study ({sorted(study.tasks)})')
    return task


def section_seeds(section: dict, name: str) -> List[int]:
    """The seeds of ``name`` in a settings' section (``lengths``,
    ``init_parts``): its variant's own ``seeds`` where it has them, else the
    section's."""
    variant = section.get('variants', {}).get(name, {})
    return list(variant.get('seeds', section['seeds']))


def _held_out_runs(study: Config, section: str,
                   names: List[str]) -> List[dict]:
    """Every (schedule, backbone of ``names``, seed) of the settings'
    ``section``, keyed as the search's runs; its schedules become its task's
    candidates (``study.schedules``)."""
    part = study[section]
    study.schedules = {part.task: part.schedules}
    return [
        dict(
            key=search_key(part.task, schedule, name, s),
            task=part.task,
            backbone=name,
            seed=s,
            schedule=schedule) for schedule in part.schedules for name in names
        for s in section_seeds(part, name)
    ]


def init_part_runs(study: Config,
                   variants: Optional[List[str]] = None,
                   section: str = 'init_parts') -> List[dict]:
    """Every (schedule, variant, seed) of the settings' ``section`` (an
    ``init_parts`` section: ``init_parts`` or ``init_parts_<name>``, one
    task each), or of its named variants, keyed as the search's runs.

    A variant is a backbone of the study whose checkpoint's weights named by
    ``keep_init`` (``fnmatch`` patterns of backbone keys) keep the
    fine-tuning model's own initialisation (``init_cfg.keep_init`` of
    ``SiameseIMMAE`` and ``ViTDetViT``); it becomes a backbone of
    ``study.backbones`` under its own name, and its schedules the task's
    candidates, so that its command and record are those of a search run.
    An unknown variant or backbone, a variant that keeps part of no
    checkpoint, or a task whose backbone cannot keep its own initialisation
    is an error that names it.
    """
    if not is_init_parts_section(section) or section not in study:
        found = sorted(k for k in study if is_init_parts_section(k))
        raise ValueError(f'{section!r} is not an init_parts section of the '
                         f'settings ({found})')
    parts = study[section]
    if not study.tasks[_section_task(study, section)].get('keep_init'):
        raise ValueError(f'{section}.task: the backbone of {parts.task!r} '
                         'cannot keep part of its own initialisation (the '
                         "task has no 'keep_init' in the settings)")
    chosen = variants or list(parts.variants)
    unknown = sorted(set(chosen) - set(parts.variants))
    if unknown:
        raise ValueError(f'{section}.variants: unknown variants {unknown}; '
                         f'the settings have {sorted(parts.variants)}')
    for name in chosen:
        variant = parts.variants[name]
        baseline = variant.get('baseline')
        if baseline is not None and baseline not in parts.variants:
            raise ValueError(
                f'{section}.variants.{name}.baseline: {baseline!r} is not '
                f'a variant ({sorted(parts.variants)})')
        base = study.backbones.get(variant.backbone)
        if base is None:
            raise ValueError(
                f'{section}.variants.{name}.backbone: {variant.backbone!r} '
                f'is not a backbone of the study ({sorted(study.backbones)})')
        keep = list(variant.get('keep_init', []))
        if keep and base.get('checkpoint', '') is None:
            raise ValueError(
                f'{section}.variants.{name}: keep_init {keep} of '
                f'{variant.backbone!r}, which loads no checkpoint')
        spec = {k: v for k, v in base.items() if k != 'baseline'}
        if keep:
            spec['keep_init'] = keep
        study.backbones[name] = spec
    return _held_out_runs(study, section, chosen)


def is_init_parts_section(name: str) -> bool:
    """Whether ``name`` names an ``init_parts`` section of the settings
    (``init_parts``, ``init_parts_<name>``), whose results file is
    ``downstream_miniature_<section>.json``."""
    return name == 'init_parts' or name.startswith('init_parts_')


def _results_data(path: str, root: str) -> dict:
    """The ``data`` of a results file (a path under ``root``); {} when the
    file is missing."""
    from mmsiameseim.atomic_io import load_json
    return (load_json(osp.join(root, path)) or {}).get('data') or {}


def resolve_claim_runs(study: Config,
                       names: Optional[List[str]] = None,
                       root: str = REPO) -> None:
    """Set the ``checkpoint`` of every backbone (of ``names``, or all) that
    names a ``claim_run`` and has no ``checkpoint`` of its own:

    the claim study's run of that method and seed ``claim.seed``, at the lr
    and weight decay its search chose (``search.chosen`` of
    ``claim.results``), under ``claim.work_dir``: its last epoch, or its
    initial weights (``initial``). Refused, naming the backbone, while the
    search has not chosen that method's setting.
    """
    from projects.claim.plan import run_key as claim_run_key
    named = {
        n: b
        for n, b in study.backbones.items()
        if b.get('claim_run') and 'checkpoint' not in b and (
            names is None or n in names)
    }
    if not named:
        return
    results = study.claim.results
    data = _results_data(results, root)
    chosen = (data.get('search') or {}).get('chosen') or {}
    for name, backbone in named.items():
        method = backbone['claim_run']
        setting = chosen.get(method)
        if not setting:
            raise ValueError(
                f'backbones.{name}: {results} holds no chosen setting of '
                f'{method!r} (search.chosen): run projects/claim/'
                'tools/claim_study.py --only search first, then its table')
        epochs = data['epochs']
        folder = osp.join(
            study.claim.work_dir,
            claim_run_key(method, study.claim.seed, epochs, setting['lr'],
                          setting['weight_decay']))
        backbone['checkpoint'] = osp.join(
            folder, 'initial_weights.pth'
            if backbone.get('initial') else f'epoch_{epochs}.pth')


@functools.lru_cache(maxsize=None)
def resolved_config(config: str) -> Config:
    """A task's config (a path from the repo root, or absolute) with its
    bases followed, parsed once per process; read it, never change it."""
    return Config.fromfile(osp.join(REPO, config))


def config_digest(config: str) -> str:
    """A task config's key (:func:`projects.common.config_values.values_key`
    of its values, bases followed, and the plugin's version): a record made
    under other values of the config or of one of its bases is not
    reused; one made under another comment or layout is."""
    return values_key(resolved_config(config).to_dict(), REPO)


def weights_digest(checkpoint: Optional[str]) -> Optional[str]:
    """SHA-1 (16 hex digits) of a checkpoint's weights: its state dict's
    names and values (read by the package's one checkpoint reader), not
    the file (whose meta holds dates); None for no checkpoint (random
    initialisation).

    A pretraining recreated on another host keeps its path, so a record names
    the weights it was fine-tuned from by this digest.
    """
    if not checkpoint:
        return None
    from mmsiameseim.checkpoint.reader import read_state_dict
    state = read_state_dict(checkpoint)
    digest = hashlib.sha1()
    for name in sorted(state):
        digest.update(name.encode())
        digest.update(state[name].detach().contiguous().numpy().tobytes())
    return digest.hexdigest()[:16]


def run_settings(study: Config, run: dict, holdout: bool) -> dict:
    """What a run's record must match to be reused."""
    task = study.tasks[run['task']]
    backbone = study.backbones[run['backbone']]
    settings = dict(
        config=task['config'],
        config_sha1=config_digest(task['config']),
        checkpoint=backbone['checkpoint'],
        seed=run['seed'],
        holdout=holdout,
        schedule=dict(
            name=run['schedule'],
            **study.schedules[run['task']][run['schedule']]))
    if backbone.get('keep_init'):
        settings['keep_init'] = list(backbone['keep_init'])
    return settings


def _schedule_shape(config: str) -> Tuple[int, tuple]:
    """A config's ``max_iters`` and schedulers."""
    cfg = resolved_config(config)
    return cfg.train_cfg.max_iters, tuple(cfg.param_scheduler)


def schedule_options(config: str, schedule: dict) -> List[str]:
    """The ``--cfg-options`` that give an iteration-based config another
    schedule of the same shape.

    ``schedule`` may hold ``iters`` (the number of iterations: the loop's
    ``max_iters``, its one evaluation and checkpoint at the end, every
    scheduler that ends at the config's last iteration ending there too and
    its milestones at the same fractions; warm-up keeps its length, cut to
    half the new schedule where it is longer, and a scheduler that began
    where the warm-up ended begins where it now ends),
    ``batch`` (images per iteration) and ``lr`` (the optimizer's learning
    rate, never scaled by itself). ``{}`` is the config's own.
    """
    unknown = sorted(set(schedule) - {'iters', 'batch', 'lr'})
    if unknown:
        raise ValueError(f'schedule {schedule}: unknown keys {unknown} (a '
                         'schedule may set iters, batch and lr)')
    options = []
    if 'batch' in schedule:
        options.append(f'train_dataloader.batch_size={schedule["batch"]}')
    if 'lr' in schedule:
        options.append(f'optim_wrapper.optimizer.lr={schedule["lr"]}')
    if 'iters' in schedule:
        old, schedulers = _schedule_shape(config)
        new = int(schedule['iters'])
        options += [
            f'train_cfg.max_iters={new}', f'train_cfg.val_interval={new}',
            f'default_hooks.checkpoint.interval={new}'
        ]
        # warm-ups (schedulers that end before the last iteration) longer
        # than half the new schedule: their old end -> their new end
        cut = {
            s['end']: max(1, new // 2)
            for s in schedulers
            if s.get('end') not in (None, old) and s['end'] > new // 2
        }
        for i, scheduler in enumerate(schedulers):
            if scheduler.get('end') == old:
                options.append(f'param_scheduler.{i}.end={new}')
            elif scheduler.get('end') in cut:
                options.append(
                    f'param_scheduler.{i}.end={cut[scheduler["end"]]}')
            if scheduler.get('begin') in cut:
                options.append(
                    f'param_scheduler.{i}.begin={cut[scheduler["begin"]]}')
            if 'milestones' in scheduler:
                milestones = [
                    round(m * new / old) for m in scheduler['milestones']
                ]
                options.append(f'param_scheduler.{i}.milestones='
                               f'[{",".join(map(str, milestones))}]')
    return options


def resolve_schedules(study: Config,
                      tasks: Optional[List[str]] = None,
                      root: str = REPO) -> None:
    """Set ``study.chosen_schedules``: each task's (of ``tasks``, or all)
    schedule chosen by the held-out search (``chosen`` of the results file
    ``search.results``); refused, naming the task, where it chose none or
    chose it with another version of the task's config."""
    path = study.search.results
    data = _results_data(path, root)
    chosen = data.get('chosen') or {}
    records = data.get('runs') or {}
    study.chosen_schedules = {}
    for task in tasks or study.tasks:
        name = chosen.get(task)
        if name is None:
            raise ValueError(
                f'{path} holds no schedule chosen for {task!r}: run '
                'projects/downstream_miniature/tools/downstream_miniature.py '
                '--holdout first')
        if name not in study.schedules.get(task, {}):
            raise ValueError(f'{path} chose schedule {name!r} for {task!r}, '
                             f'which schedules.{task} no longer holds')
        config = study.tasks[task]['config']
        now = config_digest(config)
        for backbone in study.search.backbones:
            key = search_key(task, name, backbone, study.search.seed)
            found = (records.get(key) or {}).get('config_sha1')
            if found != now:
                raise ValueError(
                    f'{path} chose {name!r} for {task!r} with another '
                    f'version of {config} (its record {key} has config_sha1 '
                    f'{found}, the config now {now}): '
                    'run projects/downstream_miniature/tools/'
                    'downstream_miniature.py --holdout again')
        study.chosen_schedules[task] = name


def choose_schedules(
        study: Config,
        records: Dict[str, dict]) -> Tuple[List[dict], Dict[str, str]]:
    """The held-out search's ranking and choice.

    Each candidate schedule of a task whose runs on every backbone of
    ``search.backbones`` are recorded is scored by the mean of the task's
    first metric over them. Once every candidate of the task is scored, the
    chosen one is the best-scoring candidate whose runs all ended within the
    budget (the first listed on a tie); none while the search is incomplete
    or where no candidate ended in time. Returns (ranking rows, {task:
    chosen name}).
    """
    ranking, chosen = [], {}
    for task, candidates in study.schedules.items():
        metric = study.tasks[task]['metrics'][0]
        rows = []
        for name in candidates:
            recs = [
                records.get(search_key(task, name, b, study.search.seed))
                for b in study.search.backbones
            ]
            if not all(recs):
                continue
            rows.append(
                dict(
                    task=task,
                    schedule=name,
                    metric=metric,
                    score=statistics.mean(r['metrics'][metric] for r in recs),
                    wall_s=max(r['wall_s'] for r in recs),
                    within_budget=all(r['within_budget'] for r in recs)))
        eligible = [r for r in rows if r['within_budget']]
        if eligible and len(rows) == len(candidates):
            best = max(eligible, key=lambda r: r['score'])
            chosen[task] = best['schedule']
        for r in rows:
            r['chosen'] = chosen.get(task) == r['schedule']
        ranking += rows
    return ranking, chosen


def run_options(
    task: dict,
    checkpoint: Optional[str],
    seed: int,
    schedule: dict,
    holdout: bool,
    extra: List[str] = (),
    keep_init: List[str] = ()) -> List[str]:
    """The ``--cfg-options`` of one run of ``task`` (a task of the
    settings): its seed, its backbone's ``checkpoint`` (None: the ViT's
    random initialisation) and the checkpoint's weights that keep the
    model's own initialisation (``keep_init``, the task's option
    ``keep_init``), its ``schedule`` (see :func:`schedule_options`), with
    ``holdout`` the task's held-out split, then ``extra``."""
    options = [f'randomness.seed={seed}']
    options.append('model.backbone.init_cfg=None' if checkpoint is None else
                   f'model.backbone.init_cfg.checkpoint={checkpoint}')
    if keep_init:
        options.append(f'{task["keep_init"]}=[{",".join(keep_init)}]')
    options += schedule_options(task['config'], schedule)
    if holdout:
        options += [f'{k}={v}' for k, v in task['holdout_options'].items()]
    return options + list(extra)


def train_command(study: Config, run: dict, work_dir: str,
                  holdout: bool) -> List[str]:
    """``tools/train.py`` (the codebase's training script) for one run,
    started in ``study.run_root`` (the repository unless a smoke run)."""
    task = study.tasks[run['task']]
    backbone = study.backbones[run['backbone']]
    options = run_options(task, backbone['checkpoint'], run['seed'],
                          study.schedules[run['task']][run['schedule']],
                          holdout, study.get('extra_options', []),
                          backbone.get('keep_init', ()))
    return [
        sys.executable,
        osp.join(REPO, 'tools', 'train.py'),
        osp.join(REPO, task['config']), '--work-dir', work_dir,
        '--cfg-options', *options
    ]


# what mmdet's CocoMetric and LVISMetric log, and then return no metric,
# when no prediction of the whole evaluation passed the test score threshold
EMPTY_RESULTS = 'The testing results of the whole dataset is empty'


def predicted_nothing(work_dir: str) -> bool:
    """Whether the newest text log of a run says its evaluation found no
    prediction (:data:`EMPTY_RESULTS`)."""
    logs = sorted(glob.glob(osp.join(work_dir, '*', '*.log')))
    if not logs:
        return False
    with open(logs[-1]) as f:
        return EMPTY_RESULTS in f.read()


def final_metrics(work_dir: str, keys: List[str]) -> dict:
    """The last evaluation of a finished run: the last line of its newest
    ``vis_data/scalars.json`` holding every one of ``keys``."""
    logs = sorted(
        glob.glob(osp.join(work_dir, '*', 'vis_data', 'scalars.json')))
    for path in reversed(logs):
        with open(path) as f:
            lines = [json.loads(line) for line in f if line.strip()]
        for line in reversed(lines):
            if all(k in line for k in keys):
                return {k: float(line[k]) for k in keys}
    raise RuntimeError(f'{work_dir}: no evaluation with {keys} in its logs '
                       f'({len(logs)} scalars.json files)')


def run_scores(work_dir: str, keys: List[str]) -> Tuple[dict, bool]:
    """A finished run's final metrics and whether it predicted nothing.

    A detector with no prediction above its test score threshold gets no metric
    from mmdet's evaluators: it scores 0 on every key (COCO's and LVIS's AP of
    no detection) and is flagged. Any other missing evaluation is an error.
    """
    try:
        return final_metrics(work_dir, keys), False
    except RuntimeError:
        if not predicted_nothing(work_dir):
            raise
        return {k: 0.0 for k in keys}, True


def taken_from(meta: dict) -> dict:
    """A run's ``taken``: the date, machine, host and commit of a results
    meta (:func:`projects.common.results.run_meta`), and the code files
    changed but not committed then."""
    return dict(
        date=meta['date'],
        machine=meta['machine'],
        host=meta.get('host'),
        commit=meta['commit'],
        code_changes=uncommitted_code(meta))


def run_once(study: Config, run: dict, work_root: str, holdout: bool) -> dict:
    """Fine-tune and evaluate one run; returns its record (with ``taken``:
    the date, machine and commit it started at, and the files of code
    changed but not committed then).

    A work dir left
    by an interrupted run is moved aside (``.interrupted``), never lost.
    """
    work_dir = osp.join(work_root, run['key'])
    if osp.exists(work_dir):
        aside = work_dir + f'.interrupted-{int(time.time())}'
        shutil.move(work_dir, aside)
        print(f'{work_dir}: left by an unrecorded run, moved to {aside}')
    os.makedirs(osp.dirname(work_dir), exist_ok=True)
    taken = taken_from(run_meta())
    weights = weights_digest(study.backbones[run['backbone']]['checkpoint'])
    start = time.time()
    subprocess.run(
        train_command(study, run, work_dir, holdout),
        cwd=study.get('run_root', REPO),
        check=True)
    wall = time.time() - start
    metrics, nothing = run_scores(work_dir,
                                  study.tasks[run['task']]['metrics'])
    return dict(
        run_settings(study, run, holdout),
        metrics=metrics,
        predicted_nothing=nothing,
        wall_s=round(wall, 1),
        within_budget=wall <= 60 * study.budget_minutes,
        checkpoint_weights_sha1=weights,
        taken=taken)


def results_data(study: Config,
                 records: Dict[str, dict],
                 kind: str,
                 smoke: bool = False,
                 section: Optional[str] = None) -> dict:
    """The ``data`` of a results file: ``records`` (key -> record), the
    CPU's bf16 flags and what its renderer reads for ``kind``: the table's
    comparisons and settings (``'table'``), the held-out search's ranking
    and choices (``'holdout'``), or the settings' section (``section``, by
    default the section named ``kind``) under ``kind`` and its task's
    metrics (``'lengths'``, ``'init_parts'``)."""
    from mmsiameseim.precision import cpu_bf16_flags
    data = dict(
        runs=records, cpu_bf16=cpu_bf16_flags(), holdout=kind != 'table')
    if kind in ('lengths', 'init_parts'):
        part = study[section or kind]
        data.update({
            kind: part.to_dict(),
            'metrics': list(study.tasks[part.task].metrics)
        })
    elif kind == 'holdout':
        ranking, chosen = choose_schedules(study, records)
        data.update(
            ranking=ranking, chosen=chosen, search=study.search.to_dict())
    else:
        data.update(
            comparisons=comparisons(study, records),
            seeds=list(study.seeds),
            backbones=list(study.backbones),
            tasks={
                t: list(v.metrics)
                for t, v in study.tasks.items()
            },
            budget_minutes=study.budget_minutes,
            smoke=smoke)
    return data


def comparisons(study: Config, records: Dict[str, dict]) -> List[dict]:
    """Each pretrained backbone against its baseline, per task and metric,
    over the seeds both have; Welch p, then Holm over all of them."""
    rows = []
    for task, spec in study.tasks.items():
        for name, backbone in study.backbones.items():
            base = backbone.get('baseline')
            if not base:
                continue
            rows += _metric_rows(
                records, [[run_key(task, n, s) for s in study.seeds]
                          for n in (name, base)],
                spec['metrics'],
                task=task,
                backbone=name,
                baseline=base)
    return judge(rows)


def _against(values: List[float], baseline_values: List[float],
             **where) -> dict:
    """A comparison row: ``where`` (what is compared), both sides' values
    and means and their difference, expected positive."""
    return dict(
        where,
        values=values,
        baseline_values=baseline_values,
        mean=statistics.mean(values),
        baseline_mean=statistics.mean(baseline_values),
        diff=statistics.mean(values) - statistics.mean(baseline_values),
        expected_sign=1)


def _metric_rows(records: Dict[str, dict], keys: List[List[str]],
                 metrics: List[str], **where) -> List[dict]:
    """One comparison row (:func:`_against`) per metric: the recorded runs
    of ``keys[0]`` (the compared side) against those of ``keys[1]`` (its
    baseline); none where a side has no recorded run."""
    rows = []
    for metric in metrics:
        a, b = ([records[k]['metrics'][metric] for k in side if k in records]
                for side in keys)
        if a and b:
            rows.append(_against(a, b, **where, metric=metric))
    return rows


def init_part_comparisons(data: dict) -> List[dict]:
    """Each variant of a ``--init-parts`` results file's ``data`` that names
    a ``baseline`` variant against it, per schedule and metric, over the
    seeds both have (``diff``: the variant's mean minus the baseline's,
    expected positive); Welch p, then Holm over all of them."""
    parts, runs = data['init_parts'], data['runs']
    rows = []
    for schedule in parts['schedules']:
        for name, variant in parts['variants'].items():
            base = variant.get('baseline')
            if not base:
                continue
            seeds = [
                s for s in section_seeds(parts, name)
                if s in section_seeds(parts, base)
            ]
            rows += _metric_rows(
                runs,
                [[search_key(parts['task'], schedule, n, s) for s in seeds]
                 for n in (name, base)],
                data['metrics'],
                schedule=schedule,
                variant=name,
                baseline=base)
    return judge(rows)


def judge(rows: List[dict]) -> List[dict]:
    """Welch's p of each row and the Holm-corrected verdicts over all of
    them, as the claim study states them."""
    for row in rows:
        row['p'] = welch_p(row['values'], row['baseline_values'])
    return holm_verdicts(rows)
