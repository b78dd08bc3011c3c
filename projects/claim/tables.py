"""The claim study's published tables (projects/claim/results/claim.json):

the main table of every method's scores over the seeds, the paper's orderings,
the learning curve and the readings, the setup and the search.
"""
import os.path as osp
import statistics
from typing import Callable, Dict, List, Optional

from projects.claim.data import FORMAT
from projects.claim.plan import PHASES, variant_name
from projects.claim.statistics import VERDICTS, format_p
from projects.common.config_values import stale_check
from projects.common.metrics import METRIC_NAMES, headings, stats_cells
from projects.common.results import host_label, results_table, smoke_note


@results_table('claim:summary')
def claim_summary(results: dict) -> str:
    """The README's part of ``projects/claim/tools/claim_study.py``: the main
    table
    and the reading."""
    data = _study_data(results)
    lines = _v2_progress(data) + _v2_main_rows(data, compact=True) + ['']
    lines += [f'* {x}' for x in v2_reading(data, short=True)]
    return '\n'.join(lines + smoke_note(data))


def _study_data(results: dict) -> dict:
    """The data of a claim results file.

    A file of the study's first format (before its search, pixel floors and
    corrected tests) has no renderer any more and is refused by name.
    """
    data = results['data']
    if data.get('format') != FORMAT:
        raise ValueError(
            f'a claim results file of format {data.get("format", 1)} (from '
            f'{results["meta"].get("command")!r}): only format {FORMAT} is '
            'rendered; run `python projects/claim/tools/claim_study.py` to '
            'replace it')
    return data


def _variant_text(v: dict) -> str:
    text = dict(
        cls_token='the cls token',
        avg_featmap='the mean of the patch tokens',
        featmap='the token map (every patch token, flattened)')[v['feature']]
    return text + (', after the final LayerNorm'
                   if v.get('final_norm') else ', without the final LayerNorm')


def _name(metric: str) -> str:
    return TOKEN_MAP_NAMES.get(metric) or METRIC_NAMES[metric]


TOKEN_MAP_NAMES = dict(
    token_map_knn='token-map kNN top-1',
    token_map_fewshot='token-map 1 % few-shot top-1')
FLOOR_NAMES = dict(
    raw='raw pixels',
    projection='the random projection of the pixels',
    dense='raw pixels')

ROW_NAMES = dict(
    scores='**{}**',
    equal_time='{} at equal wall time',
    initial_weights='{} initial weights',
    gain='{} gain over its initial weights')


def pixel_floor(floors: dict,
                key: str,
                metric: str,
                optional: bool = False) -> Optional[float]:
    """The pixel floor ``key`` (``raw``, ``projection``) of a column.

    The dense scores are read on raw pixels (``floors['dense']``, named
    without ``dense_``); the token map's columns have no pixel row (None).
    A missing floor raises KeyError unless ``optional``.
    """
    if metric.startswith('token_map_') or (metric.startswith('dense_')
                                           and key != 'raw'):
        return None
    floor, name = ('dense', metric[len('dense_'):]) \
        if metric.startswith('dense_') else (key, metric)
    if optional:
        return floors.get(floor, {}).get(name)
    return floors[floor][name]


def number_cells(numbers: list) -> list:
    """Table cells of ``numbers`` to two decimals, ``-`` for None."""
    return ['-' if v is None else f'{v:.2f}' for v in numbers]


def _summary_rows(data: dict, parts, metrics) -> list:
    """One row per part of the summary (``scores``, ``gain``, ...) and
    method that has it: its seeds and the stats of ``metrics``."""
    lines = []
    for part in parts:
        for m in data['methods']:
            s = data['summary'].get(m, {})
            if s.get(part):
                # the equal-time runs may not have every seed of the table
                seeds = sorted(
                    r['seed'] for r in data['records']
                    if r.get('kind') == 'equal_time' and r['method'] == m
                ) if part == 'equal_time' else s['seeds']
                lines.append('| ' + ' | '.join(
                    [ROW_NAMES[part].format(m), ','.join(map(str, seeds))] +
                    stats_cells(s[part], metrics)) + ' |')
    return lines


def _v2_main_rows(data: dict, compact: bool = False) -> list:
    """The table's rows: each method, at equal wall time, its initial
    weights, its gain over them, the pixel floors; ``compact``: the
    methods, their gains and the floors."""
    from projects.claim.verdicts import CLAIM_METRICS
    heads = [_name(m) for m in CLAIM_METRICS]
    lines = [
        '| row | seeds | ' + ' | '.join(heads) + ' |',
        '|---|---|' + '---|' * len(heads)
    ]
    parts = ('scores', 'gain') if compact else \
        ('scores', 'equal_time', 'initial_weights', 'gain')
    lines += _summary_rows(data, parts, CLAIM_METRICS)
    floors = data['pixel_floors']
    for key, label in (('raw', 'raw pixels'),
                       ('projection', 'random projection of the pixels')):
        cells = [pixel_floor(floors, key, m) for m in CLAIM_METRICS]
        lines.append(f'| {label} ({floors[key]["dim"]} values) | - | ' +
                     ' | '.join(number_cells(cells)) + ' |')
    return lines + [
        '', 'mean ± sample standard deviation (min-max) over the seeds; '
        'initial weights: each run before its first step; the pixel floors '
        'are read by the same kNN, linear probe and few-shot as the '
        'features (the token-map columns compare with their kNN and '
        'few-shot).'
    ]


def _v2_dense_details(data: dict) -> list:
    """The scattered dense probe's boundary IoU and low-shot fit per
    method, its initial weights, its gain and raw pixels: summarised, not
    tested (outside the Holm family)."""
    from projects.common.metrics import SCATTERED_METRICS
    summary = data['summary']
    if not any(
            summary.get(m, {}).get('scores', {}).get(k)
            for m in data['methods'] for k in SCATTERED_METRICS):
        return []
    heads = headings(SCATTERED_METRICS)
    lines = [
        '', 'The dense probe\'s other scores (described, not tested):', '',
        '| row | seeds | ' + ' | '.join(heads) + ' |',
        '|---|---|' + '---|' * len(heads)
    ]
    lines += _summary_rows(data, ('scores', 'initial_weights', 'gain'),
                           SCATTERED_METRICS)
    floors = [
        pixel_floor(data['pixel_floors'], 'raw', k, optional=True)
        for k in SCATTERED_METRICS
    ]
    return lines + [
        '| raw pixels | - | ' + ' | '.join(number_cells(floors)) + ' |'
    ]


def _v2_progress(data: dict) -> list:
    """What the file holds so far, while the table's runs are not all
    recorded (the study continues from it, run by run)."""
    records = data['records']
    planned = len(data['methods']) * len(data['seeds'])
    table = sum(r.get('kind') == 'table' for r in records)
    if table >= planned:
        return []
    search = sum(r.get('kind') == 'search' for r in records)
    return [
        f'**In progress**: {table} of the table\'s {planned} runs recorded '
        f'({search} search records); the rows and tests below hold what is '
        'recorded so far.', ''
    ]


def _p_cells(c: dict) -> str:
    return (f'{c["diff"]:+.2f} | {format_p(c["p"])} | '
            f'{format_p(c["p_holm"])} | {c["verdict"]}')


def _v2_tests(data: dict) -> list:
    stats = data['statistics']
    table = stats['table']
    alpha = stats['alpha']
    if not table:
        return ['', 'No comparison yet: no table run is recorded.']
    lines = [
        '', f'Every comparison of the table, one family: raw p and '
        f'Holm-adjusted p over all {len(table)}; "holds" / "reversed": the '
        f'adjusted p is below {alpha} with the expected / the other sign, '
        '"undecided" otherwise.', '',
        '| comparison | test | paper | difference | p | p (Holm) | '
        'verdict |', '|---|---|---|---|---|---|---|'
    ]
    for c in table:
        if c['kind'] == 'ordering':
            what = f'{c["column"]}: {c["a"]} - {c["b"]}' + (
                ' (equal wall time)' if c['budget'] == 'equal_time' else '')
            paper = f'{c["paper"]:+.1f}'
        elif c['kind'] == 'gain':
            what = f'{c["method"]} {_name(c["metric"])} over its initial ' \
                'weights'
            paper = '-'
        else:
            what = f'{c["method"]} {_name(c["metric"])} over ' \
                f'{FLOOR_NAMES[c["floor"]]} ({c["floor_value"]:.2f})'
            paper = '-'
        lines.append(f'| {what} | {c["test"]} | {paper} | {_p_cells(c)} |')
    return lines


def _v2_curve(data: dict) -> list:
    curve = [r for r in data['records'] if r.get('kind') == 'curve']
    if not curve:
        return []
    epochs = sorted({r['epochs'] for r in curve})
    lines = [
        '', 'Learning curve: the epoch checkpoints of one run per method and '
        f'seed (seeds {data["curve_seeds"]}; the first at each epoch of its '
        f'method ({_curve_epochs(data)}), the others at epochs '
        f'{data["curve_key_epochs"]}), each schedule ending '
        'at its last epoch, epoch 0 its initial weights; mean over the '
        'seeds scored (their number) of kNN top-1 / token-map kNN top-1 / '
        'dense mIoU:', '',
        '| method | ' + ' | '.join(f'{e} ep.' for e in epochs) + ' |',
        '|---|' + '---|' * len(epochs)
    ]
    for m in data['methods']:
        cells = []
        for e in epochs:
            rows = [r for r in curve if r['method'] == m and r['epochs'] == e]
            if not rows:
                cells.append('-')
                continue
            mean = {
                k: sum(r[k] for r in rows) / len(rows)
                for k in ('knn', 'token_map_knn', 'dense_miou')
            }
            cells.append(f'{mean["knn"]:.2f} / {mean["token_map_knn"]:.2f} '
                         f'/ {mean["dense_miou"]:.2f} ({len(rows)})')
        if any(c != '-' for c in cells):
            lines.append(f'| {m} | ' + ' | '.join(cells) + ' |')
    tests = data['statistics']['curve']
    if tests:
        lines += [
            '', 'At the key epochs, against the pixel floors (one-sample t '
            'over the seeds) and against the same runs\' initial weights '
            '(paired t, each seed at its epoch 0); Holm over these '
            f'{len(tests)}:', '', '| comparison | test | difference | p | '
            'p (Holm) | verdict |', '|---|---|---|---|---|---|'
        ]
        for c in tests:
            if c['kind'] == 'curve_gain':
                over = f'its initial weights ({c["initial_value"]:.2f})'
            else:
                over = f'{FLOOR_NAMES[c["floor"]]} ({c["floor_value"]:.2f})'
            lines.append(f'| {c["method"]} {_name(c["metric"])} at epoch '
                         f'{c["epoch"]} over {over} | {c["test"]} | '
                         f'{_p_cells(c)} |')
    untested = _untested_curve_epochs(curve, tests, data['curve_key_epochs'])
    if untested:
        lines += [
            '', 'Not tested yet (a test needs two seeds or more at the '
            'epoch): ' + '; '.join(untested) + '.'
        ]
    return lines


def _curve_epochs(data: dict) -> str:
    return ', '.join(f'{m} {e}' for m, e in data['curve'].items())


def _untested_curve_epochs(curve: list, tests: list, key_epochs: list) -> list:
    """Each method with curve records whose key epochs entered no test
    (``curve_comparisons`` needs two seeds at an epoch), with the seeds
    they hold, so that a row of the curve table without tests reads as
    waiting for seeds, not as left out."""
    tested = {(c['method'], c['epoch']) for c in tests}
    out = []
    for m in sorted({r['method'] for r in curve}):
        short = []
        for e in key_epochs:
            if (m, e) in tested:
                continue
            seeds = sorted(r['seed'] for r in curve
                           if r['method'] == m and r['epochs'] == e)
            held = ', '.join(map(str, seeds)) or 'none'
            short.append(f'{e} (seeds: {held})')
        if short:
            out.append(f'{m} at epoch(s) ' + ', '.join(short))
    return out


def v2_reading(data: dict, short: bool = False) -> list:
    """Sentences written from the tested comparisons: each verdict with
    its p-values; ``short``: the paper's orderings only."""
    out = []
    by = {}
    tests = data['statistics']['table']
    if not short:
        tests = tests + data['statistics']['curve']
    for c in tests:
        if short and c['kind'] != 'ordering':
            continue
        if c['kind'] == 'curve':
            what = f'{c["method"]} {_name(c["metric"])} at epoch ' \
                f'{c["epoch"]} above {FLOOR_NAMES[c["floor"]]}'
        elif c['kind'] == 'curve_gain':
            what = f'{c["method"]} {_name(c["metric"])} at epoch ' \
                f'{c["epoch"]} above its initial weights'
        elif c['kind'] == 'ordering':
            what = f'{c["a"]} vs {c["b"]} on {METRIC_NAMES[c["metric"]]}' + (
                ' at equal wall time' if c['budget'] == 'equal_time' else '')
        elif c['kind'] == 'gain':
            what = f'{c["method"]} above its initial weights on ' \
                f'{_name(c["metric"])}'
        else:
            what = f'{c["method"]} above {FLOOR_NAMES[c["floor"]]} on ' \
                f'{_name(c["metric"])}'
        by.setdefault(
            (c['kind'], c['verdict']),
            []).append(f'{what} ({c["diff"]:+.2f}, p {format_p(c["p"])}, Holm '
                       f'{format_p(c["p_holm"])})')
    heads = dict(
        ordering='The paper\'s orderings',
        gain='Gains over the initial weights',
        pixels='Against the pixel floors',
        curve='The curve against the pixel floors',
        curve_gain='The curve over its initial weights')

    def order(item):
        (kind, verdict), _ = item
        return list(heads).index(kind), VERDICTS.index(verdict)

    for (kind, verdict), items in sorted(by.items(), key=order):
        out.append(f'{heads[kind]}, {verdict}: ' + '; '.join(items) + '.')
    return out


@results_table('claim')
def claim_table(results: dict) -> str:
    """``projects/claim/tools/claim_study.py``: per method the mean and spread
    over
    seeds of every score, the floors, the tests and the learning curve."""
    data = _study_data(results)
    lines = _v2_progress(data) + _v2_main_rows(data) + _v2_dense_details(
        data) + _v2_tests(data) + _v2_curve(data)
    reading = v2_reading(data)
    if reading:
        lines += ['', 'Reading (written from the tests above):', '']
        lines += [f'* {x}' for x in reading]
    bf16 = 'native bf16' if data.get('native_bf16') else 'no native bf16 ' \
        '(fp32)'
    lines += [
        '', f'Pretraining: {data["epochs"]} epoch(s) per table run; '
        f'the CPU had {bf16}.'
    ]
    return '\n'.join(lines + smoke_note(data))


@results_table('claim:setup')
def claim_setup(results: dict) -> str:
    """The claim README's "what runs", written from the results file: seeds,
    each method's augmentation, the search and its choices (lr, weight
    decay, pooled feature and token map, final norm included), the
    dimensions and the equal-time budget."""
    data = _study_data(results)
    dims = data['dims']
    search = data.get('search') or {}
    chosen = search.get('chosen') or {}
    lines = [
        f'* Seeds: {len(data["seeds"])} per method in the table '
        f'({", ".join(map(str, data["seeds"]))}), {data["epochs"]} '
        f'epoch(s) each; the curve: seeds '
        f'{", ".join(map(str, data["curve_seeds"]))}.'
    ]
    for m in data['methods']:
        s = data['method_settings'][m]
        extra = ''
        if 'mask_ratio' in s:
            extra += f', {s["mask_ratio"]:.0%} of the patches masked'
        if s.get('norm_pix'):
            extra += ', normalised-pixel target'
        lines.append(f'* {m} (`{s["model"]}`{extra}): {s["augmentation"]}.')
    if search:
        lines.append(
            f'* Search, on {search["holdout"]} held-out training images '
            f'(seed {search["seed"]}, the table\'s budget, every method '
            f'alike): learning rate {search["lr"]} x weight decay '
            f'{search["weight_decay"]}, chosen by held-out '
            f'{METRIC_NAMES[search["criterion"]]} of each method\'s own '
            'feature; then the feature, among '
            f'{len(search["pooled"])} pooled and {len(search["token_map"])}'
            ' token-map variants, by the same criterion.')
    for m, c in chosen.items():
        norm = 'with' if c['token_map']['final_norm'] else 'without'
        lines.append(
            f'* {m}: lr {c["lr"]:g}, weight decay {c["weight_decay"]:g}; '
            f'pooled feature: {_variant_text(c["pooled"])}; token map '
            f'{norm} the final LayerNorm.')
    if not search:
        lines.append('* No search: each method at its config\'s settings '
                     'and own feature.')

    def each(d):
        return ', '.join(f'{m} {v}' for m, v in d.items())

    lines.append(f'* Dimensions: pooled features {each(dims["pooled"])}; '
                 f'token maps {each(dims["token_map"])}; raw pixels '
                 f'{dims["pixels"]}; their random projection '
                 f'{dims["projection"]}.')
    lines += data['protocol']  # the evaluation, from its settings
    eq = data.get('equal_time')
    if eq:
        lines.append(
            f'* Equal wall time: {eq["reference"]}\'s median table '
            f'pretraining, {eq["wall_s"]:.0f} s; ' + '; '.join(
                f'{m} {v["epochs"]} epoch(s) over {v["images_share"]:.2f} '
                f'of the training images ({v["epoch_wall_s"]:.0f} s per '
                'epoch of all of them' +
                (', the share fixed by the study\'s settings)' if v.
                 get('fixed') else ')')
                for m, v in eq['methods'].items() if m != eq['reference']) +
            ' (the same schedule in epochs, each epoch over that share of '
            'the images: the first ones, and above 1 all of them and the '
            'first ones again; a method at a share of 1.00 has no '
            'equal-time row: its table row is it).')
        took = _pretraining_walls(data['records'], 'equal_time')
        if took:
            table = _pretraining_walls(data['records'], 'table')
            lines.append(
                '* The equal-time pretrainings took (median, '
                'min-max over their runs; on the machines below): ' + took +
                (f'; the table\'s: {table}' if table else '') +
                '. Wall times include start-up and checkpoint '
                'writes, whose cost differs between machines; '
                'images/s is the steps\' own rate (the batch over the '
                'median iteration time).')
    lines.append(_machines_line(data['records']))
    return '\n'.join(lines + smoke_note(data))


def _pretraining_walls(records: List[dict], kind: str) -> str:
    """Each method's measured pretraining wall times (and images/s where
    recorded) over the runs of one phase (``kind``)."""
    walls: Dict[str, List[float]] = {}
    rates: Dict[str, List[float]] = {}
    for r in records:
        if r.get('kind') == kind and r.get('pretrain_wall_s'):
            walls.setdefault(r['method'], []).append(r['pretrain_wall_s'])
            if r.get('images_per_s'):
                rates.setdefault(r['method'], []).append(r['images_per_s'])

    def rate(m):
        v = rates.get(m)
        return (f', {statistics.median(v):.0f} images/s ({min(v):.0f}-'
                f'{max(v):.0f})') if v else ''

    return '; '.join(
        f'{m} {statistics.median(v):.0f} s ({min(v):.0f}-{max(v):.0f}, '
        f'{len(v)} run(s){rate(m)})' for m, v in walls.items())


def _machines_line(records: List[dict]) -> str:
    """Which host took which records (a study that spans sessions may
    move between hosts; wall times and bf16 kernels differ between them: a
    source of variation like the seed)."""
    order = {phase: i for i, phase in enumerate(PHASES)}
    by: Dict[str, Dict[str, int]] = {}
    for r in records:
        kinds = by.setdefault(host_label(r), {})
        kinds[r['kind']] = kinds.get(r['kind'], 0) + 1
    parts = [
        f'{name}: ' + ', '.join(
            f'{kinds[k]} {k.replace("_", "-")}'
            for k in sorted(kinds, key=lambda k: order.get(k, len(order))))
        for name, kinds in sorted(by.items())
    ]
    return ('* Runs per host (records of each phase taken on each): ' +
            '; '.join(parts) + '.')


@results_table('claim:search')
def claim_search(results: dict) -> str:
    """The search's held-out scores: the grid per method, then the feature
    variants of its best setting."""
    data = _study_data(results)
    search = data.get('search')
    if not search:
        return 'No search in this study.' + '\n'.join(smoke_note(data))
    rows = [r for r in data['records'] if r.get('kind') == 'search']
    lines = []
    for title, grid in (('the grid, each method\'s own feature', True),
                        ('the features, at each method\'s chosen setting',
                         False)):
        part = [r for r in rows if r['key'].endswith('@holdout') == grid]
        lines += [
            f'Held-out top-1 ({search["holdout"]} training images, seed '
            f'{search["seed"]}), {title}:', '',
            '| method | lr | weight decay | feature | kNN | 1 % few-shot |',
            '|---|---|---|---|---|---|'
        ]
        for r in sorted(
                part,
                key=lambda r: (data['methods'].index(r['method']), r['lr'], r[
                    'weight_decay'], r['key'])):
            lines.append(f'| {r["method"]} | {r["lr"]:g} | '
                         f'{r["weight_decay"]:g} | '
                         f'{variant_name(r["variant"])} | {r["knn"]:.2f} | '
                         f'{r["fewshot"]:.2f} |')
        lines.append('')
    lines.append(f'Criterion: held-out {METRIC_NAMES[search["criterion"]]}, '
                 'the highest chosen.')
    return '\n'.join(lines + smoke_note(data))


def _stale_claim_format(settings: str) -> Callable[[dict], tuple]:
    """The check of a results file the claim driver writes, from the study
    settings file ``settings`` (a path in the repository): the records its
    plan at this code would not reuse."""

    def check(data: dict) -> tuple:
        import tempfile

        from mmengine.config import Config

        from projects.claim.driver import current_records, study_scorer
        from projects.common.results import REPO
        study = Config.fromfile(osp.join(REPO, settings))
        with tempfile.TemporaryDirectory() as eval_dir:
            scorer = study_scorer(study, REPO, eval_dir,
                                  osp.join(REPO, 'data', 'fashion_mnist'))
            kept = {
                r['key']
                for r in current_records(study, data['records'], scorer, REPO)
            }
        return ([r['key'] for r in data['records']
                 if r['key'] not in kept], len(data['records']))

    return check


stale_check('claim')(
    _stale_claim_format('projects/claim/configs/claim_study.py'))
stale_check('accumulation_study')(
    _stale_claim_format('projects/accumulation/configs/accumulation_study.py'))
