"""The miniature downstream study's published tables
(projects/downstream_miniature/results/downstream_miniature*.json): the
held-out search's ranking of candidate schedules, Table 2 in miniature
(every backbone's scores over the seeds, each pretrained backbone against
its own initial weights), the longer fine-tunes and the checkpoints with
parts of their initialisation swapped beside it, and the held-out A/B runs
behind the miniature detection configs' choices."""
import functools
import os.path as osp
import statistics
from typing import Dict, List

from projects.claim.statistics import format_p
from projects.common.config_values import stale_check
from projects.common.metrics import DOWNSTREAM_HEADINGS, DOWNSTREAM_PERCENTAGES
from projects.common.results import (hosts_line, results_cell, results_table,
                                     smoke_note)
from projects.downstream_miniature.ablations import ABSENT
from projects.downstream_miniature.study import (init_part_comparisons,
                                                 run_key, search_key,
                                                 section_seeds)

# commits named one by one in a table's provenance line; more are counted
MAX_COMMITS_NAMED = 4


def heading(metric: str) -> str:
    return DOWNSTREAM_HEADINGS.get(metric, metric)


def score(metric: str, value: float) -> str:
    """mmdet's APs are fractions (3 decimals, as it logs them); mmseg's
    mIoU is a percentage (2 decimals)."""
    return f'{value:.2f}' if metric in DOWNSTREAM_PERCENTAGES else \
        f'{value:.3f}'


def _schedule_cells(schedule: dict) -> List[str]:
    return [
        str(schedule.get('iters', "config's")),
        str(schedule.get('lr', "config's")),
        str(schedule.get('batch', "config's"))
    ]


def _commits_line(records: List[dict]) -> str:
    """The commits the runs were taken at (a record's ``taken``): a
    handful by name, more by their count and dates; then the runs per
    host."""
    counts: Dict[str, int] = {}
    dates, unrecorded = [], 0
    for rec in records:
        taken = rec.get('taken')
        if taken is None:
            unrecorded += 1
            continue
        dates.append(str(taken.get('date', ''))[:10])
        key = taken['commit'][:7]
        if taken.get('code_changes'):
            key += (' with uncommitted changes to '
                    f'{", ".join(taken["code_changes"])}')
        elif taken.get('dirty'):  # records from before code_changes
            key += ' with uncommitted changes'
        counts[key] = counts.get(key, 0) + 1
    if not counts:
        text = ''
    elif len(counts) <= MAX_COMMITS_NAMED:
        text = 'Runs taken at: ' + '; '.join(
            f'{k} ({n})' for k, n in sorted(counts.items())) + '.'
    else:
        dirty = sum(n for k, n in counts.items() if ' with ' in k)
        text = (f'Runs taken at {len(counts)} commits between {min(dates)} '
                f'and {max(dates)}' +
                (f' ({dirty} with uncommitted changes)' if dirty else '') +
                '; each record names its own.')
    if unrecorded:
        text += f' {unrecorded} run(s) recorded no commit.'
    return (text + ' ' + hosts_line(records)).strip()


def _weights_line(data: dict) -> str:
    """Which weights each pretrained backbone's runs of the table were
    fine-tuned from (see :func:`_digests_line`)."""
    return _digests_line({
        backbone: [
            rec for task in data['tasks']
            for rec in _seed_records(data, task, backbone)
        ]
        for backbone in data['backbones']
    })


def _digests_line(records: Dict[str, List[dict]]) -> str:
    """Which weights each backbone's runs (``records``: backbone -> its
    records) were fine-tuned from (a record's ``checkpoint_weights_sha1``),
    since a pretraining recreated on another host keeps its path; runs
    recorded before records held the digest are counted."""
    parts, unnamed = [], 0
    for backbone, recs in records.items():
        counts: Dict[str, int] = {}
        for rec in recs:
            if not rec.get('checkpoint'):
                continue
            sha = rec.get('checkpoint_weights_sha1')
            if sha is None:
                unnamed += 1
            else:
                counts[sha] = counts.get(sha, 0) + 1
        if counts:
            parts.append(f'{backbone} ' +
                         ', '.join(f'{sha[:8]} ({n})'
                                   for sha, n in sorted(counts.items())))
    text = ('Weights fine-tuned from (SHA-1 of their values, runs): ' +
            '; '.join(parts) + '.') if parts else ''
    if unnamed:
        text += (' ' if text else '') + (
            f'{unnamed} run(s) from a checkpoint were recorded before '
            'records named its weights.')
    return text


@results_table('downstream_miniature_holdout')
def search_table(results: dict) -> str:
    """The held-out search of.

    ``projects/downstream_miniature/tools/downstream_miniature.py
    --holdout``: every candidate schedule's score on the held-out training
    images, its wall time and the choice.
    """
    data = results['data']
    search = data['search']
    lines = [
        '| task | candidate | iterations | lr | batch | held-out score | '
        'wall (min) | chosen |', '|---|---|---|---|---|---|---|---|'
    ]
    for row in data['ranking']:
        rec = data['runs'][search_key(row['task'], row['schedule'],
                                      search['backbones'][0], search['seed'])]
        over = '' if row['within_budget'] else ' (over the budget)'
        lines.append('| ' + ' | '.join([
            row['task'], row['schedule'], *_schedule_cells(rec['schedule']),
            f'{heading(row["metric"])} {score(row["metric"], row["score"])}',
            f'{row["wall_s"] / 60:.1f}{over}',
            '**yes**' if row['chosen'] else ''
        ]) + ' |')
    ranked = dict.fromkeys(r['task'] for r in data['ranking'])
    pending = [t for t in ranked if t not in data.get('chosen', {})]
    lines += [
        '', f'Fine-tuned from {", ".join(search["backbones"])} with seed '
        f'{search["seed"]}, one run a candidate: fit on the training '
        'images\' `*_fit` part, scored on their `*_holdout` part (never on '
        'the validation split); "config\'s": the miniature config\'s own '
        'setting. Each task chooses the best held-out score among the '
        'candidates that ended within the budget.', '',
        _commits_line([
            data['runs'][search_key(r['task'], r['schedule'], b,
                                    search['seed'])] for r in data['ranking']
            for b in search['backbones']
        ])
    ]
    if pending:
        lines.append(f'No choice yet for {", ".join(pending)}.')
    return '\n'.join(lines)


def _recorded(runs: dict, keys) -> List[dict]:
    """The records of those of ``keys`` that ``runs`` holds, in order."""
    return [runs[k] for k in keys if k in runs]


def _seed_records(data: dict, task: str, backbone: str) -> List[dict]:
    """A backbone's recorded runs of a task, in the order of the seeds."""
    return _recorded(data['runs'],
                     (run_key(task, backbone, s) for s in data['seeds']))


def _cell(values: List[float], metric: str) -> str:
    if not values:
        return '-'
    mean = statistics.mean(values)
    if len(values) < 2:
        return f'{score(metric, mean)} (1 seed)'
    sd = statistics.stdev(values)
    return f'{score(metric, mean)} ± {score(metric, sd)} ({len(values)})'


def _directions_line(comparisons: List[dict]) -> str:
    """Which backbones score above, below or level with their own initial
    weights on average, and which of those differences the corrected test
    decides: the table's reading in one sentence, so that no prose has to
    restate it by hand."""
    sides = {'above': [], 'below': [], 'level with': []}
    for c in comparisons:
        side = ('level with' if abs(c['diff']) < 1e-12 else
                'above' if c['diff'] > 0 else 'below')
        sides[side].append(c)
    parts = []
    for side, rows in sides.items():
        if not rows:
            continue
        metrics: Dict[str, List[str]] = {}
        for c in rows:
            metrics.setdefault(c['backbone'], []).append(heading(c['metric']))
        parts.append(f'{side.capitalize()} its own initial weights on '
                     'average: ' + '; '.join(f'{b} ({", ".join(ms)})'
                                             for b, ms in metrics.items()))
    decided = [c for c in comparisons if c['verdict'] != 'undecided']
    verdicts = ('; '.join(
        f'{c["backbone"]} on {heading(c["metric"])}, a '
        f'{"gain" if c["diff"] > 0 else "loss"} ({c["verdict"]}, Holm p '
        f'{format_p(c["p_holm"])})' for c in decided)
                if decided else 'none, every comparison is undecided')
    return ('**Reading.** ' + '. '.join(parts) +
            f'. Decided by the corrected test: {verdicts}.')


def _fresh_init_line(data: dict) -> str:
    """Where each backbone fine-tuned from no checkpoint (its task config's
    own initialisation) stands among the backbones loaded from one, on each
    task's first metric: a level that a pretraining has to clear besides
    its own initial weights.

    Empty while no task has both kinds.
    """
    parts = []
    for task, metrics in data['tasks'].items():
        metric = metrics[0]
        fresh, loaded = {}, {}
        for backbone in data['backbones']:
            recs = _seed_records(data, task, backbone)
            if not recs or any('checkpoint' not in r for r in recs):
                continue
            mean = statistics.mean(r['metrics'][metric] for r in recs)
            if all(r['checkpoint'] is None for r in recs):
                fresh[backbone] = mean
            elif all(r['checkpoint'] for r in recs):
                loaded[backbone] = mean
        if not fresh or not loaded:
            continue
        best = max(loaded, key=loaded.get)
        for backbone, mean in fresh.items():
            above = sum(mean > m for m in loaded.values())
            parts.append(
                f'{backbone} on {heading(metric)}, {score(metric, mean)}: '
                f'above {above} of the {len(loaded)} backbones loaded from '
                f'a checkpoint (the best of them {best}, '
                f'{score(metric, loaded[best])})')
    if not parts:
        return ''
    return ('**From no checkpoint** (the task config\'s own initialisation, '
            'fine-tuned alike; means over the seeds): ' + '; '.join(parts) +
            '.')


@results_table('downstream_miniature')
def downstream_table(results: dict) -> str:
    """Table 2 in miniature: per task, every backbone's mean ± sample
    standard deviation over its recorded seeds; then each pretrained
    backbone against its own initial weights, with Welch's p and the
    Holm-corrected verdict over the whole table."""
    data = results['data']
    runs = data['runs']
    lines, waiting = [], []
    for task, metrics in data['tasks'].items():
        if not any(k.startswith(f'{task}/') for k in runs):
            waiting.append(task)
            continue
        head = ['backbone', 'schedule'] + [heading(m) for m in metrics]
        lines += ['| ' + ' | '.join(head) + ' |', '|' + '---|' * len(head)]
        for backbone in data['backbones']:
            recs = _seed_records(data, task, backbone)
            if not recs:
                continue
            schedule = recs[0]['schedule']['name']
            lines.append('| ' + ' | '.join(
                [backbone, schedule] +
                [_cell([r['metrics'][m] for r in recs], m)
                 for m in metrics]) + ' |')
        lines.append('')
    total = len(data['tasks']) * len(data['backbones']) * len(data['seeds'])
    weights = _weights_line(data)
    lines.append(
        f'{len(runs)} of {total} runs recorded. mean ± sample standard '
        'deviation (seeds); each task fine-tuned with the schedule its '
        'held-out search chose, on the training images, scored on the '
        'validation split. ' + _commits_line(list(runs.values())) +
        (' ' + weights if weights else '') +
        (f' No run of {", ".join(waiting)} yet.' if waiting else '') +
        (' mmdet\'s CocoMetric and LVISMetric log their APs rounded to 3 '
         'decimals: the values recorded, averaged and tested here.' if any(
             m not in DOWNSTREAM_PERCENTAGES
             for t in data['tasks'] if t not in waiting
             for m in data['tasks'][t]) else ''))
    if data['comparisons']:
        lines += [
            '', '| task | metric | backbone | its initial weights | '
            'difference | Welch p | Holm p | verdict |',
            '|---|---|---|---|---|---|---|---|'
        ]
        for c in data['comparisons']:
            lines.append(
                f'| {c["task"]} | {heading(c["metric"])} | '
                f'{score(c["metric"], c["mean"])} ({c["backbone"]}) | '
                f'{score(c["metric"], c["baseline_mean"])} '
                f'({c["baseline"]}) | {c["diff"]:+.3g} | '
                f'{format_p(c["p"])} | {format_p(c["p_holm"])} | '
                f'{c["verdict"]} |')
        lines += [
            '', 'Holm\'s correction over every comparison of the table '
            '(one family); a comparison over fewer than two seeds a side '
            'has no test.' +
            (' **The table is incomplete: its family grows as runs are '
             'recorded, so these verdicts are provisional.**'
             if len(runs) < total else ''), '',
            _directions_line(data['comparisons'])
        ]
    fresh = _fresh_init_line(data)
    if fresh:
        lines += ['', fresh]
    return '\n'.join(lines + smoke_note(data))


@results_cell('downstream_miniature')
def downstream_cell(results: dict, key: str) -> str:
    """The model-zoo cell of task ``key``: the SiameseIM backbone's mean
    scores over its recorded seeds, beside its own initial weights'."""
    data = results['data']
    if key not in data['tasks']:
        raise KeyError(f'downstream_miniature results: no task {key!r} '
                       f'(tasks: {sorted(data["tasks"])})')
    parts = []
    for backbone in ('siameseim', 'siameseim_init'):
        recs = _seed_records(data, key, backbone)
        if not recs:
            raise KeyError(f'downstream_miniature results: no {backbone} '
                           f'run of {key!r} recorded yet')
        scores = ', '.join(
            f'{heading(m)} '
            f'{score(m, statistics.mean(r["metrics"][m] for r in recs))}'
            for m in data['tasks'][key])
        seeds = f'{len(recs)} seed' + ('s' if len(recs) > 1 else '')
        parts.append(f'{scores} ({seeds})')
    iters = recs[0]['schedule'].get('iters', "the config's")
    return (f'miniature, SiameseIM demo-size backbone, {iters} iterations: '
            f'{parts[0]}; from its initial weights: {parts[1]}')


@results_table('downstream_miniature_lengths')
def lengths_table(results: dict) -> str:
    """``projects/downstream_miniature/tools/downstream_miniature.py
    --lengths``: each backbone's
    held-out scores (mean ± sd over the seeds) at each fine-tune length,
    beside the table and outside its budget."""
    data = results['data']
    lengths, runs = data['lengths'], data['runs']
    metrics = data['metrics']
    head = ['schedule', 'iterations', 'lr', 'backbone'
            ] + [heading(m) for m in metrics] + ['wall (min)']
    lines = ['| ' + ' | '.join(head) + ' |', '|' + '---|' * len(head)]
    by_backbone: Dict[str, List[dict]] = {}
    for name, schedule in lengths['schedules'].items():
        for backbone in lengths['backbones']:
            recs = _recorded(runs,
                             (search_key(lengths['task'], name, backbone, s)
                              for s in lengths['seeds']))
            if not recs:
                continue
            by_backbone.setdefault(backbone, []).extend(recs)
            wall = statistics.mean(r['wall_s'] for r in recs) / 60
            lines.append('| ' + ' | '.join(
                [name, *_schedule_cells(schedule)[:2], backbone] +
                [_cell([r['metrics'][m] for r in recs], m)
                 for m in metrics] + [f'{wall:.1f}']) + ' |')
    digests = _digests_line(by_backbone)
    total = len(lengths['schedules']) * len(lengths['backbones']) * len(
        lengths['seeds'])
    lines += [
        '', f'{len(runs)} of {total} runs recorded. ' +
        _seeds_line(lengths['seeds']) + ' Fit on the training images\' '
        '`*_fit` part and scored on their `*_holdout` part (never the '
        'validation split), outside the table\'s budget. ' +
        _commits_line(list(runs.values())) + (' ' + digests if digests else '')
    ]
    return '\n'.join(lines)


def _seeds_line(seeds: List[int]) -> str:
    return ('mean ± sample standard deviation over the seeds.'
            if len(seeds) > 1 else f'One seed ({seeds[0]}) a row.')


_BASELINE_LINE = (
    'A variant that names a baseline (another variant) is tested against it '
    'over the seeds both have: Welch\'s test, Holm\'s correction over the '
    'comparisons of this block; fewer than two seeds a side give no test. ')


@results_table('downstream_miniature_init_parts_coco')
@results_table('downstream_miniature_init_parts')
def init_parts_table(results: dict) -> str:
    """``projects/downstream_miniature/tools/downstream_miniature.py
    --init-parts``: each
    variant (a checkpoint with the weights ``keep_init`` names left at the
    fine-tuning model's own initialisation) and its held-out scores."""
    data = results['data']
    parts, runs = data['init_parts'], data['runs']
    metrics = data['metrics']
    head = ['variant', 'weights from', 'left at the model\'s own init'
            ] + [heading(m) for m in metrics] + ['wall (min)']
    lines = ['| ' + ' | '.join(head) + ' |', '|' + '---|' * len(head)]
    by_backbone: Dict[str, List[dict]] = {}
    for schedule in parts['schedules']:
        for name, variant in parts['variants'].items():
            recs = _recorded(runs,
                             (search_key(parts['task'], schedule, name, s)
                              for s in section_seeds(parts, name)))
            if not recs:
                continue
            by_backbone.setdefault(variant['backbone'], []).extend(recs)
            kept = variant.get('keep_init')
            source = (f'`{variant["backbone"]}`'
                      if recs[0].get('checkpoint') else 'none (random ViT)')
            wall = statistics.mean(r['wall_s'] for r in recs) / 60
            lines.append('| ' + ' | '.join([
                name, source, ', '.join(f'`{k}`'
                                        for k in kept) if kept else '-'
            ] + [_cell([r['metrics'][m] for r in recs], m)
                 for m in metrics] + [f'{wall:.1f}']) + ' |')
    own = "the config's"
    schedules = '; '.join(
        f'{name} ({s.get("iters", own)} iterations, lr {s.get("lr", own)})'
        for name, s in parts['schedules'].items())
    total = len(parts['schedules']) * sum(
        len(section_seeds(parts, name)) for name in parts['variants'])
    digests = _digests_line(by_backbone)
    compared = init_part_comparisons(data)
    if compared:
        lines += [
            '', '| variant | its baseline | difference | Welch p | Holm p | '
            'verdict |', '|---|---|---|---|---|---|'
        ]
        for c in compared:
            lines.append(
                f'| {c["variant"]}: {score(c["metric"], c["mean"])} | '
                f'{c["baseline"]}: {score(c["metric"], c["baseline_mean"])} '
                f'| {c["diff"]:+.3g} | {format_p(c["p"])} | '
                f'{format_p(c["p_holm"])} | {c["verdict"]} |')
    lines += [
        '', f'{len(runs)} of {total} runs recorded. ' + _seeds_line(
            sorted({
                s
                for n in parts['variants']
                for s in section_seeds(parts, n)
            })) + f' Task {parts["task"]}, schedule '
        f'{schedules}. The weights left at the model\'s own initialisation '
        '(`init_cfg.keep_init`: fnmatch patterns of the backbone\'s keys) '
        'start as the random ViT\'s do; all others come from the '
        'checkpoint. Fit on the training images\' `*_fit` part and scored '
        'on their `*_holdout` part (never the validation split). ' +
        (_BASELINE_LINE if compared else '') +
        _commits_line(list(runs.values())) + (' ' + digests if digests else '')
    ]
    return '\n'.join(lines)


def _changed_cell(differs: List[list]) -> str:
    """What a row's config changes against its ablation's reference (the
    seed has its own column): ``key=value``, or ``key`` unset."""
    shown = [d for d in differs if d[0] != 'randomness.seed']
    if not shown:
        return '-'
    return '; '.join(f'`{k}` unset' if v == ABSENT else f'`{k}={v}`'
                     for k, _, v in shown)


def ablation_table(results: dict, name: str) -> str:
    """One ablation of ``downstream_miniature_ablations``: each run's
    held-out scores and wall time, and what its dumped config changes
    against the reference run's (read from the configs, never typed)."""
    data = results['data']
    if name not in data['ablations']:
        raise KeyError(f'downstream_miniature_ablations: no ablation '
                       f'{name!r} (ablations: {sorted(data["ablations"])})')
    ablation = data['ablations'][name]
    metrics = data['metrics']
    head = ['run', 'seed'] + [heading(m) for m in metrics] + [
        'wall (min)', 'its config against the reference run\'s'
    ]
    lines = ['| ' + ' | '.join(head) + ' |', '|' + '---|' * len(head)]
    for row, rec in ablation['rows'].items():
        changed = '(the reference)' if row == ablation['reference'] else \
            _changed_cell(rec['differs'])
        lines.append('| ' +
                     ' | '.join([rec['label'], str(rec['seed'])] +
                                [score(m, rec['metrics'][m])
                                 for m in metrics] +
                                [f'{rec["wall_s"] / 60:.1f}', changed]) + ' |')
    ref = ablation['rows'][ablation['reference']]
    shipped = ablation['reference_vs_shipped']
    against = (f'the shipped `{osp.basename(ablation["config"])}` as the '
               'study resolves it today for that run (schedule, seed, '
               'backbone, held-out split)')
    lines += [
        '', 'What a run changes is read from the config its Runner dumped, '
        'key by key of what the Runner reads (its folder and launcher '
        'aside). The reference run\'s config ' +
        (f'is {against}.' if not shipped else f'differs from {against} in '
         f'{_changed_cell(shipped)}.') +
        f' Fine-tuned from `{ref["checkpoint"]}`, fit on the training '
        'images\' `*_fit` part and scored on their `*_holdout` part (never '
        'the validation split). ' +
        _commits_line(list(ablation['rows'].values()))
    ]
    return '\n'.join(lines)


for _name in ('simplefpn_norm', 'finest_scale'):
    results_table(f'downstream_miniature_ablations:{_name}')(
        functools.partial(ablation_table, name=_name))


@stale_check('downstream_miniature', 'downstream_miniature_holdout',
             'downstream_miniature_lengths', 'downstream_miniature_init_parts',
             'downstream_miniature_init_parts_coco')
def stale_runs(data: dict) -> tuple:
    """The runs whose config key is not their config's at this code."""
    from projects.downstream_miniature.study import config_digest
    runs = data.get('runs') or {}
    now = {
        config: config_digest(config)
        for config in {run['config']
                       for run in runs.values()}
    }
    return ([
        key for key, run in runs.items()
        if run.get('config_sha1') != now[run['config']]
    ], len(runs))


@stale_check('downstream_miniature_ablations')
def stale_ablations(data: dict) -> tuple:
    """The ablations whose reference config (the shipped config they
    were gathered beside) is not the shipped config at this code; each
    counts its rows."""
    from projects.downstream_miniature.study import config_digest
    stale, total = [], 0
    for name, ablation in data['ablations'].items():
        total += len(ablation['rows'])
        if ablation.get('shipped_config_key') != config_digest(
                ablation['config']):
            stale += [f'{name}/{row}' for row in ablation['rows']]
    return stale, total
