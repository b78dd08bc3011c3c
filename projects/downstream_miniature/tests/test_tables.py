"""The miniature downstream study's published blocks
(projects.downstream_miniature.tables): the held-out search's ranking and the
table of every backbone's scores with its verdicts, from results files."""
import functools

import pytest

from projects.downstream_miniature import study, tables


def _run(metrics, schedule, wall_s=600.0):
    return dict(
        metrics=metrics,
        schedule=schedule,
        wall_s=wall_s,
        within_budget=wall_s <= 900)


def _row(task, schedule, metric, score, wall_s, chosen=False):
    # a ranking row of the search (study.choose_schedules)
    return dict(
        task=task,
        schedule=schedule,
        metric=metric,
        score=score,
        wall_s=wall_s,
        within_budget=wall_s <= 900,
        chosen=chosen)


def test_search_table_ranks_every_candidate_and_marks_the_choice():
    runs = {
        study.search_key('coco', 'a', 'siameseim', 0):
        _run({'coco/bbox_mAP': 0.009}, dict(name='a', iters=200, lr=5e-4)),
        study.search_key('coco', 'b', 'siameseim', 0):
        _run({'coco/bbox_mAP': 0.004}, dict(name='b', iters=200)),
        study.search_key('ade20k', 'c', 'siameseim', 0):
        _run({'mIoU': 5.06}, dict(name='c', iters=100), wall_s=1000),
    }
    ranking = [
        _row('coco', 'a', 'coco/bbox_mAP', 0.009, 600.0, chosen=True),
        _row('coco', 'b', 'coco/bbox_mAP', 0.004, 600.0),
        _row('ade20k', 'c', 'mIoU', 5.06, 1000.0),
    ]
    data = dict(
        runs=runs,
        ranking=ranking,
        chosen=dict(coco='a'),
        search=dict(backbones=['siameseim'], seed=0),
        cpu_bf16=dict(avx512_bf16=False, amx_bf16=False))
    md = tables.search_table(dict(data=data))
    lines = md.splitlines()
    assert lines[2] == ('| coco | a | 200 | 0.0005 | config\'s | COCO box AP '
                        '0.009 | 10.0 | **yes** |')
    assert lines[3] == ('| coco | b | 200 | config\'s | config\'s | COCO box '
                        'AP 0.004 | 10.0 |  |')
    assert lines[4] == ('| ade20k | c | 100 | config\'s | config\'s | ADE20k '
                        'mIoU 5.06 | 16.7 (over the budget) |  |')
    assert 'No choice yet for ade20k.' in md
    assert ('3 run(s) recorded no commit. Runs per host: host not '
            'recorded: 3.') in md


def test_table_gives_each_backbone_over_its_seeds_and_the_verdicts():
    seeds = [0, 1, 2]
    runs = {}
    for s, (pre, init) in enumerate(
        ((0.02, 0.01), (0.03, 0.01), (0.025, 0.012))):
        runs[study.run_key('coco', 'siameseim',
                           s)] = _run({'coco/bbox_mAP': pre}, dict(name='x'))
        runs[study.run_key('coco', 'siameseim_init',
                           s)] = _run({'coco/bbox_mAP': init}, dict(name='x'))
    for rec in runs.values():
        rec['taken'] = dict(commit='a' * 40, code_changes=[])
    runs[study.run_key('coco', 'siameseim',
                       0)]['taken']['code_changes'] = ['mmsiameseim/x.py']
    runs[study.run_key('coco', 'siameseim', 1)]['taken'] = dict(
        commit='b' * 40, dirty=True)
    rows = study.judge([
        dict(
            task='coco',
            metric='coco/bbox_mAP',
            backbone='siameseim',
            baseline='siameseim_init',
            values=[0.02, 0.03, 0.025],
            baseline_values=[0.01, 0.01, 0.012],
            mean=0.025,
            baseline_mean=0.010667,
            diff=0.014333,
            expected_sign=1)
    ])
    data = dict(
        runs=runs,
        seeds=seeds,
        backbones=['siameseim', 'siameseim_init', 'random'],
        tasks=dict(coco=['coco/bbox_mAP']),
        comparisons=rows,
        cpu_bf16=dict(avx512_bf16=True, amx_bf16=False))
    md = tables.downstream_table(dict(data=data))
    assert '| siameseim | x | 0.025 ± 0.005 (3) |' in md
    assert '| siameseim_init | x | 0.011 ± 0.001 (3) |' in md
    assert '| random |' not in md  # no run recorded
    assert '6 of 9 runs recorded.' in md
    p = rows[0]['p']
    assert p is not None and 0 < p < 0.05
    assert (f'| coco | COCO box AP | 0.025 (siameseim) | 0.011 '
            f'(siameseim_init) | +0.0143 | {p:.3g} | {p:.3g} | holds |') in md
    assert (
        'Runs taken at: aaaaaaa (4); aaaaaaa with uncommitted changes '
        'to mmsiameseim/x.py (1); bbbbbbb with uncommitted changes (1).') in md
    assert 'provisional' in md  # the family grows as the table fills
    assert ('**Reading.** Above its own initial weights on average: '
            'siameseim (COCO box AP). Decided by the corrected test: '
            f'siameseim on COCO box AP, a gain (holds, Holm p {p:.3g}).') in md
    assert 'log their APs rounded to 3 decimals' in md
    # mmseg's mIoU alone: no word on mmdet's rounding
    data.update(
        tasks=dict(ade20k=['mIoU']),
        runs={
            study.run_key('ade20k', 'siameseim', 0):
            _run(dict(mIoU=40.0), dict(name='x'))
        },
        comparisons=[])
    md = tables.downstream_table(dict(data=data))
    assert '| siameseim | x | 40.00 (1 seed) |' in md
    assert 'rounded' not in md


def test_reading_sorts_backbones_by_side_and_names_no_decision():

    def row(backbone, metric, diff):
        return dict(
            backbone=backbone,
            metric=metric,
            diff=diff,
            p=0.2,
            p_holm=0.6,
            verdict='undecided')

    line = tables._directions_line([
        row('siameseim', 'coco/bbox_mAP', -0.007),
        row('mocov3', 'coco/bbox_mAP', 0.004),
        row('siameseim', 'coco/segm_mAP', -0.01),
        row('siameseim', 'lvis/bbox_APr', 0.0),
    ])
    assert line == (
        '**Reading.** Above its own initial weights on average: mocov3 '
        '(COCO box AP). Below its own initial weights on average: siameseim '
        '(COCO box AP, COCO mask AP). Level with its own initial weights on '
        'average: siameseim (LVIS box AP<sub>r</sub>). Decided by the '
        'corrected test: none, every comparison is undecided.')


def test_backbones_from_no_checkpoint_stand_among_the_loaded_ones():
    runs = {}
    for backbone, checkpoint, values in (
        ('siameseim', 'a.pth', (3.0, 3.6)),
        ('siameseim_init', 'b.pth', (3.5, 3.5)),
        ('random', None, (10.0, 11.0)),
    ):
        for s, v in enumerate(values):
            rec = _run(dict(mIoU=v), dict(name='x'))
            rec['checkpoint'] = checkpoint
            runs[study.run_key('ade20k', backbone, s)] = rec
    data = dict(
        runs=runs,
        seeds=[0, 1],
        backbones=['siameseim', 'siameseim_init', 'random'],
        tasks=dict(ade20k=['mIoU']),
        comparisons=[])
    assert tables._fresh_init_line(data) == (
        '**From no checkpoint** (the task config\'s own initialisation, '
        'fine-tuned alike; means over the seeds): random on ADE20k mIoU, '
        '10.50: above 2 of the 2 backbones loaded from a checkpoint (the '
        'best of them siameseim_init, 3.50).')
    assert '**From no checkpoint**' in tables.downstream_table(dict(data=data))
    # records that do not say what they were loaded from are left out
    for rec in runs.values():
        del rec['checkpoint']
    assert tables._fresh_init_line(data) == ''


def test_the_weights_each_backbone_was_fine_tuned_from_are_named():

    def rec(checkpoint, sha=None):
        return dict(
            checkpoint=checkpoint,
            **({} if sha is None else dict(checkpoint_weights_sha1=sha)))

    runs = {
        'coco/random/seed0': rec(None),
        'coco/mae/seed0': rec('claim/mae/epoch_1.pth'),  # an old record
        'coco/mae/seed1': rec('claim/mae/epoch_1.pth', 'a' * 16),
        'lvis/mae/seed0': rec('claim/mae/epoch_1.pth', 'b' * 16),
        'lvis/mae_init/seed0': rec('claim/mae/initial.pth', 'c' * 16),
    }
    # a pretraining recreated elsewhere under the same path shows as a
    # second digest of its backbone
    data = dict(
        runs=runs,
        tasks=dict(coco=[], lvis=[]),
        backbones=['random', 'mae', 'mae_init'],
        seeds=[0, 1])
    assert tables._weights_line(data) == (
        'Weights fine-tuned from (SHA-1 of their values, runs): mae '
        'aaaaaaaa (1), bbbbbbbb (1); mae_init cccccccc (1). 1 run(s) from a '
        'checkpoint were recorded before records named its weights.')
    assert tables._weights_line(
        dict(data, runs={'coco/random/seed0': rec(None)})) == ''


def test_model_zoo_cell_gives_siameseim_beside_its_initial_weights():
    runs = {
        study.run_key('coco', 'siameseim', 0):
        _run({
            'coco/bbox_mAP': 0.02,
            'coco/segm_mAP': 0.03
        }, dict(name='x', iters=200)),
        study.run_key('coco', 'siameseim', 1):
        _run({
            'coco/bbox_mAP': 0.04,
            'coco/segm_mAP': 0.05
        }, dict(name='x', iters=200)),
        study.run_key('coco', 'siameseim_init', 0):
        _run({
            'coco/bbox_mAP': 0.01,
            'coco/segm_mAP': 0.02
        }, dict(name='x', iters=200)),
    }
    data = dict(
        runs=runs,
        seeds=[0, 1, 2],
        tasks=dict(coco=['coco/bbox_mAP', 'coco/segm_mAP']))
    assert tables.downstream_cell(dict(data=data), 'coco') == (
        'miniature, SiameseIM demo-size backbone, 200 iterations: COCO box '
        'AP 0.030, COCO mask AP 0.040 (2 seeds); from its initial weights: '
        'COCO box AP 0.010, COCO mask AP 0.020 (1 seed)')
    with pytest.raises(KeyError, match="no task 'lvis'"):
        tables.downstream_cell(dict(data=data), 'lvis')
    del runs[study.run_key('coco', 'siameseim_init', 0)]
    with pytest.raises(KeyError, match='no siameseim_init run'):
        tables.downstream_cell(dict(data=data), 'coco')


def test_lengths_table_gives_each_backbone_at_each_length():
    lengths = dict(
        task='coco',
        backbones=['siameseim', 'siameseim_init'],
        seeds=[0, 1],
        schedules=dict(
            short=dict(iters=200, lr=5e-4), long=dict(iters=800, lr=5e-4)))
    runs = {
        study.search_key('coco', 'short', 'siameseim', 0):
        _run({'coco/bbox_mAP': 0.005}, dict(name='short', iters=200)),
        study.search_key('coco', 'short', 'siameseim', 1):
        _run({'coco/bbox_mAP': 0.007}, dict(name='short', iters=200)),
        study.search_key('coco', 'long', 'siameseim_init', 0):
        _run({'coco/bbox_mAP': 0.030},
             dict(name='long', iters=800),
             wall_s=2700.0),
    }
    data = dict(
        runs=runs,
        lengths=lengths,
        metrics=['coco/bbox_mAP'],
        cpu_bf16=dict(avx512_bf16=False, amx_bf16=False))
    lines = tables.lengths_table(dict(data=data)).splitlines()
    assert lines[0] == ('| schedule | iterations | lr | backbone | COCO box '
                        'AP | wall (min) |')
    assert lines[2] == ('| short | 200 | 0.0005 | siameseim | 0.006 ± 0.001 '
                        '(2) | 10.0 |')
    assert lines[3] == ('| long | 800 | 0.0005 | siameseim_init | 0.030 (1 '
                        'seed) | 45.0 |')
    assert lines[5].startswith('3 of 8 runs recorded.')
    assert 'never the validation split' in lines[5]
    # no run names a checkpoint: no weights line
    assert 'Weights fine-tuned from' not in lines[5]


def test_lengths_table_names_the_weights_of_each_backbone():
    lengths = dict(
        task='coco',
        backbones=['siameseim', 'siameseim_init'],
        seeds=[0],
        schedules=dict(short=dict(iters=200), long=dict(iters=800)))

    def run(name, sha):
        return dict(
            _run({'coco/bbox_mAP': 0.01}, dict(name=name)),
            checkpoint='work_dirs/claim/x/epoch_1.pth',
            checkpoint_weights_sha1=sha)

    runs = {
        study.search_key('coco', 'short', 'siameseim', 0):
        run('short', 'b644a63bae813238'),
        study.search_key('coco', 'long', 'siameseim', 0):
        run('long', 'b644a63bae813238'),
        study.search_key('coco', 'short', 'siameseim_init', 0):
        run('short', '0123456789abcdef'),
    }
    data = dict(
        runs=runs,
        lengths=lengths,
        metrics=['coco/bbox_mAP'],
        cpu_bf16=dict(avx512_bf16=True))
    last = tables.lengths_table(dict(data=data)).splitlines()[-1]
    assert last.endswith('Weights fine-tuned from (SHA-1 of their values, '
                         'runs): siameseim b644a63b (2); siameseim_init '
                         '01234567 (1).')


def _init_parts_lines(parts: dict,
                      runs: dict,
                      bf16: bool,
                      metrics=('mIoU', ),
                      render=tables.init_parts_table) -> list:
    """The init-parts block's lines for ``parts`` (the settings' section)
    and ``runs`` (key -> record), drawn by ``render`` over ``metrics``."""
    data = dict(
        runs=runs,
        init_parts=parts,
        metrics=list(metrics),
        cpu_bf16=dict(avx512_bf16=bf16))
    return render(dict(data=data)).splitlines()


def test_init_parts_table_names_what_each_variant_keeps():
    parts = dict(
        task='ade20k',
        seeds=[0],
        schedules=dict(lr1e_3_100it=dict(iters=100, lr=1e-3)),
        variants=dict(
            siameseim_init=dict(backbone='siameseim_init'),
            siameseim_init_own_pos_embed=dict(
                backbone='siameseim_init', keep_init=['pos_embed']),
            random=dict(backbone='random')))

    def run(miou, checkpoint, sha=None, **extra):
        return dict(
            _run({'mIoU': miou},
                 dict(name='lr1e_3_100it', iters=100, lr=1e-3),
                 wall_s=360.0),
            checkpoint=checkpoint,
            checkpoint_weights_sha1=sha,
            **extra)

    init = 'work_dirs/claim/x/initial_weights.pth'
    key = functools.partial(study.search_key, 'ade20k', 'lr1e_3_100it')
    runs = {
        key('siameseim_init', 0):
        run(3.5, init, '0e2a166a00000000'),
        key('siameseim_init_own_pos_embed', 0):
        run(9.5, init, '0e2a166a00000000', keep_init=['pos_embed']),
        key('random', 0):
        run(10.4, None),
    }
    lines = _init_parts_lines(parts, runs, bf16=True)
    assert lines[0] == ("| variant | weights from | left at the model's own "
                        'init | ADE20k mIoU | wall (min) |')
    assert lines[2:5] == [
        '| siameseim_init | `siameseim_init` | - | 3.50 (1 seed) | 6.0 |',
        '| siameseim_init_own_pos_embed | `siameseim_init` | `pos_embed` '
        '| 9.50 (1 seed) | 6.0 |',
        '| random | none (random ViT) | - | 10.40 (1 seed) | 6.0 |',
    ]
    assert lines[6].startswith('3 of 3 runs recorded. One seed (0) a row. '
                               'Task ade20k, schedule lr1e_3_100it (100 '
                               'iterations, lr 0.001).')
    assert 'never the validation split' in lines[6]
    assert lines[6].endswith('Weights fine-tuned from (SHA-1 of their '
                             'values, runs): siameseim_init 0e2a166a (2).')
    assert 'Welch' not in lines[6]  # no variant names a baseline


def test_init_parts_table_tests_a_variant_against_its_baseline():
    parts = dict(
        task='ade20k',
        seeds=[0, 1],
        schedules=dict(s=dict(iters=100)),
        variants=dict(
            init_own_pos=dict(
                backbone='siameseim_init', keep_init=['pos_embed']),
            pre_own_pos=dict(
                backbone='siameseim',
                keep_init=['pos_embed'],
                baseline='init_own_pos')))
    scores = dict(init_own_pos=[5.0, 5.5], pre_own_pos=[9.0, 9.5])
    runs = {
        study.search_key('ade20k', 's', name, seed):
        dict(
            _run({'mIoU': value}, dict(name='s', iters=100)),
            checkpoint='c.pth',
            keep_init=['pos_embed'])
        for name, values in scores.items()
        for seed, value in zip((0, 1), values)
    }
    lines = _init_parts_lines(parts, runs, bf16=False)
    assert lines[2] == ('| init_own_pos | `siameseim_init` | `pos_embed` | '
                        '5.25 ± 0.35 (2) | 10.0 |')
    assert lines[5:7] == [
        '| variant | its baseline | difference | Welch p | Holm p | verdict '
        '|', '|---|---|---|---|---|---|'
    ]
    # equal spreads, 4.0 apart: t = 4 / 0.354 = 11.3 on 2 degrees of freedom
    assert lines[7].startswith('| pre_own_pos: 9.25 | init_own_pos: 5.25 | '
                               '+4 | 0.00')
    assert lines[7].endswith('| holds |')
    assert 'mean ± sample standard deviation over the seeds' in lines[9]
    assert "Holm's correction over the comparisons of this block" in lines[9]


def test_init_parts_table_counts_and_tests_a_variants_own_seeds():
    parts = dict(
        task='ade20k',
        seeds=[0],
        schedules=dict(s=dict(iters=100)),
        variants=dict(
            base=dict(backbone='siameseim_init', seeds=[0, 1, 2]),
            pre=dict(backbone='siameseim', seeds=[0, 1, 2], baseline='base'),
            once=dict(backbone='siameseim_init')))
    scores = dict(base=[5.0, 5.5, 6.0], pre=[9.0, 9.5, 10.0], once=[4.0])
    runs = {
        study.search_key('ade20k', 's', name, seed):
        dict(_run({'mIoU': value}, dict(name='s', iters=100)), checkpoint='c')
        for name, values in scores.items()
        for seed, value in enumerate(values)
    }
    lines = _init_parts_lines(parts, runs, bf16=False)
    assert lines[2].startswith(
        '| base | `siameseim_init` | - | 5.50 ± 0.50 (3)')
    assert lines[4].startswith('| once | `siameseim_init` | - | 4.00 (1 seed)')
    # three seeds a side are compared, not the section's one
    assert lines[8].startswith('| pre: 9.50 | base: 5.50 | +4 | ')
    assert lines[10].startswith('7 of 7 runs recorded. mean ± sample '
                                'standard deviation over the seeds.')
    # a seed only one side is planned for stays out of the comparison
    parts['variants']['base']['seeds'] = [0, 1, 2, 3]
    runs[study.search_key('ade20k', 's', 'base', 3)] = dict(
        _run({'mIoU': 100.0}, dict(name='s', iters=100)), checkpoint='c')
    lines = _init_parts_lines(parts, runs, bf16=False)
    assert lines[2].startswith('| base | `siameseim_init` | - | 29.1')
    assert lines[8].startswith('| pre: 9.50 | base: 5.50 | +4 | ')


def test_the_coco_init_parts_file_renders_as_the_ade20k_one():
    from projects.common.results import table_renderers
    render = table_renderers()['downstream_miniature_init_parts_coco']
    parts = dict(
        task='coco',
        seeds=[0],
        schedules=dict(lr5e_4_200it=dict(iters=200, lr=5e-4)),
        variants=dict(
            siameseim_init_own_pos_embed=dict(
                backbone='siameseim_init', keep_init=['pos_embed'])))
    key = study.search_key('coco', 'lr5e_4_200it',
                           'siameseim_init_own_pos_embed', 0)
    runs = {
        key:
        dict(
            _run({
                'coco/bbox_mAP': 0.012,
                'coco/segm_mAP': 0.02
            }, dict(name='lr5e_4_200it', iters=200, lr=5e-4)),
            checkpoint='c.pth',
            keep_init=['pos_embed'])
    }
    lines = _init_parts_lines(
        parts,
        runs,
        bf16=False,
        metrics=['coco/bbox_mAP', 'coco/segm_mAP'],
        render=render)
    assert lines[0] == ("| variant | weights from | left at the model's own "
                        'init | COCO box AP | COCO mask AP | wall (min) |')
    assert lines[2] == ('| siameseim_init_own_pos_embed | `siameseim_init` '
                        '| `pos_embed` | 0.012 (1 seed) | 0.020 (1 seed) '
                        '| 10.0 |')
    assert lines[4].startswith('1 of 1 runs recorded. One seed (0) a row. '
                               'Task coco, schedule lr5e_4_200it (200 '
                               'iterations, lr 0.0005).')
