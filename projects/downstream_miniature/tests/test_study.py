"""The miniature downstream study's driver (tools/
downstream_miniature.py, projects.downstream_miniature.study) without its
fine-tunes: the planned runs and their commands, the metrics read off a
finished run's logs, a results file written run by run that a rerun
continues, and the comparisons with each backbone's own initial weights."""
import json
import os

import pytest
from mmengine.config import Config

from projects.downstream_miniature import study
from projects.downstream_miniature.smoke import smoke_settings
from tests.helpers import ROOT

SETTINGS = os.path.join(ROOT, 'projects', 'downstream_miniature', 'configs',
                        'downstream_miniature.py')


def _claim_results(path, chosen):
    # the part of a claim study's results file the downstream study reads
    path.write_text(
        json.dumps(
            dict(meta={}, data=dict(epochs=1, search=dict(chosen=chosen)))))
    return str(path)


def _search_results(path, chosen, settings):
    # the part of the held-out search's results file the table reads: its
    # choices and the digest of the config each chosen run fine-tuned
    runs = {
        study.search_key(task, name, backbone, settings.search.seed):
        dict(config_sha1=study.config_digest(settings.tasks[task].config))
        for task, name in chosen.items()
        for backbone in settings.search.backbones
    }
    path.write_text(
        json.dumps(dict(meta={}, data=dict(chosen=chosen, runs=runs))))
    return str(path)


def _fake_record(settings, run, holdout, metrics, wall_s=1.0):
    # what study.run_once records for a run, without its fine-tune
    return dict(
        study.run_settings(settings, run, holdout),
        metrics=metrics,
        predicted_nothing=False,
        wall_s=wall_s,
        within_budget=wall_s <= 60 * settings.budget_minutes)


@pytest.fixture
def settings(tmp_path):
    cfg = Config.fromfile(SETTINGS)
    cfg.claim.results = _claim_results(
        tmp_path / 'claim.json', {
            m: dict(lr=1e-3, weight_decay=0.05)
            for m in ('siameseim', 'mae', 'mocov3')
        })
    study.resolve_claim_runs(cfg)
    # the tests' own candidates, not the settings' (which a search revises)
    cfg.schedules = dict(
        coco=dict(shipped={}, longer=dict(iters=600, lr=4e-4)),
        lvis=dict(shipped={}),
        ade20k=dict(shipped={}))
    cfg.search.results = _search_results(
        tmp_path / 'search.json',
        dict(coco='longer', lvis='shipped', ade20k='shipped'), cfg)
    study.resolve_schedules(cfg)
    return cfg


def test_claim_runs_are_found_by_the_setting_their_search_chose(tmp_path):
    cfg = Config.fromfile(SETTINGS)
    cfg.claim.results = _claim_results(
        tmp_path / 'claim.json',
        dict(siameseim=dict(lr=5e-4, weight_decay=0.1)))
    with pytest.raises(
            ValueError,
            match='backbones.mae: .* holds no chosen '
            "setting of 'mae'"):
        study.resolve_claim_runs(cfg)
    study.resolve_claim_runs(cfg, ['siameseim', 'siameseim_init'])
    assert cfg.backbones.siameseim.checkpoint == \
        'work_dirs/claim/siameseim_lr0.0005_wd0.1_seed0_1e/epoch_1.pth'
    assert cfg.backbones.siameseim_init.checkpoint == \
        'work_dirs/claim/siameseim_lr0.0005_wd0.1_seed0_1e/' \
        'initial_weights.pth'


def test_every_task_backbone_and_seed_is_planned(settings):
    runs = study.planned_runs(settings)
    assert len(runs) == 3 * 7 * 3
    assert runs[0] == dict(
        key='coco/siameseim/seed0',
        task='coco',
        backbone='siameseim',
        seed=0,
        schedule='longer')
    assert {r['schedule'] for r in runs if r['task'] == 'lvis'} == {'shipped'}
    for task in settings.tasks.values():
        assert os.path.isfile(os.path.join(ROOT, task['config']))
    with pytest.raises(ValueError, match=r"unknown task \['cocoo'\]"):
        study.planned_runs(settings, tasks=['cocoo'])
    settings.backbones.mae.baseline = 'mae_initial'
    with pytest.raises(ValueError, match='backbones.mae.baseline'):
        study.planned_runs(settings)


def test_the_held_out_search_plans_every_candidate_schedule(settings):
    runs = study.planned_runs(settings, holdout=True)
    assert [r['key'] for r in runs] == [
        'coco/shipped/siameseim/seed0', 'coco/longer/siameseim/seed0',
        'lvis/shipped/siameseim/seed0', 'ade20k/shipped/siameseim/seed0'
    ]
    assert runs[1]['schedule'] == 'longer'
    settings.search.backbones = ['siameseim', 'dino']
    with pytest.raises(ValueError, match=r"search.backbones: \['dino'\]"):
        study.planned_runs(settings, holdout=True)
    settings.schedules.lvis = {}
    with pytest.raises(ValueError, match='schedules.lvis: the task has no'):
        study.planned_runs(settings)


def test_the_table_reads_the_schedule_its_search_chose(settings, tmp_path):
    settings.search.results = _search_results(tmp_path / 'partial.json',
                                              dict(coco='longer'), settings)
    with pytest.raises(ValueError, match="no schedule chosen for 'lvis'"):
        study.resolve_schedules(settings)
    study.resolve_schedules(settings, ['coco'])
    assert settings.chosen_schedules == dict(coco='longer')
    del settings.schedules.coco['longer']
    with pytest.raises(
            ValueError,
            match="chose schedule 'longer' for "
            "'coco', which schedules.coco no longer holds"):
        study.resolve_schedules(settings, ['coco'])


def test_a_choice_made_with_another_version_of_the_config_is_refused(
        settings, tmp_path):
    # e.g. a search run before the miniature neck's norm changed
    path = tmp_path / 'stale.json'
    _search_results(path, dict(coco='longer'), settings)
    data = json.loads(path.read_text())
    key = 'coco/longer/siameseim/seed0'
    assert data['data']['runs'][key]['config_sha1'] == study.config_digest(
        settings.tasks.coco.config)
    data['data']['runs'][key]['config_sha1'] = '0123456789abcdef'
    path.write_text(json.dumps(data))
    settings.search.results = str(path)
    with pytest.raises(
            ValueError,
            match="chose 'longer' for 'coco' with another version of "
            'configs/benchmarks/mmdet/miniature/.* config_sha1 '
            '0123456789abcdef'):
        study.resolve_schedules(settings, ['coco'])
    del data['data']['runs'][key]  # a search file from before the digests
    path.write_text(json.dumps(data))
    with pytest.raises(ValueError, match='config_sha1 None'):
        study.resolve_schedules(settings, ['coco'])


def test_the_config_digest_follows_the_bases(tmp_path):
    base = tmp_path / 'base.py'
    child = tmp_path / 'child.py'
    base.write_text("model = dict(neck=dict(norm_cfg=dict(type='LN2d')))\n")
    child.write_text("_base_ = ['./base.py']\nseed = 0\n")
    before = study.config_digest(str(child))
    study.resolved_config.cache_clear()
    base.write_text("model = dict(neck=dict(norm_cfg=dict(type='GN')))\n")
    assert study.config_digest(str(child)) != before
    study.resolved_config.cache_clear()


def test_a_schedule_keeps_the_configs_shape_at_another_length(settings):
    coco = settings.tasks.coco.config
    assert study.schedule_options(coco, {}) == []
    # 300 iterations, warm-up 50, x0.1 at 267 and 288 (89 % and 96 %)
    assert study.schedule_options(coco, dict(iters=600, lr=4e-4)) == [
        'optim_wrapper.optimizer.lr=0.0004', 'train_cfg.max_iters=600',
        'train_cfg.val_interval=600', 'default_hooks.checkpoint.interval=600',
        'param_scheduler.1.end=600', 'param_scheduler.1.milestones=[534,576]'
    ]
    # 600 iterations, warm-up 50, then linear decay to 0 at the last one
    assert study.schedule_options(settings.tasks.ade20k.config,
                                  dict(iters=200)) == [
                                      'train_cfg.max_iters=200',
                                      'train_cfg.val_interval=200',
                                      'default_hooks.checkpoint.interval=200',
                                      'param_scheduler.1.end=200'
                                  ]
    # at 100 the 50-iteration warm-up still fits in half; at 2 it is cut
    # to 1, and the decay that began where it ended begins there
    assert 'param_scheduler.0.end=50' not in study.schedule_options(
        settings.tasks.ade20k.config, dict(iters=100))
    assert study.schedule_options(settings.tasks.ade20k.config,
                                  dict(iters=2))[3:] == [
                                      'param_scheduler.0.end=1',
                                      'param_scheduler.1.end=2',
                                      'param_scheduler.1.begin=1'
                                  ]
    assert study.schedule_options(coco, dict(iters=2))[3:] == [
        'param_scheduler.0.end=1', 'param_scheduler.1.end=2',
        'param_scheduler.1.milestones=[2,2]'
    ]
    assert study.schedule_options(coco, dict(batch=2, lr=2e-4)) == [
        'train_dataloader.batch_size=2', 'optim_wrapper.optimizer.lr=0.0002'
    ]
    with pytest.raises(ValueError, match=r"unknown keys \['epochs'\]"):
        study.schedule_options(coco, dict(epochs=3))


def test_the_search_chooses_the_best_candidate_within_the_budget(settings):
    settings.schedules.coco.fast = dict(lr=1e-3)
    settings.search.backbones = ['siameseim', 'random']

    def rec(score, minutes):
        return dict(
            metrics={'coco/bbox_mAP': score},
            wall_s=60 * minutes,
            within_budget=minutes <= 15)

    records = {
        'coco/shipped/siameseim/seed0': rec(0.10, 10),
        'coco/shipped/random/seed0': rec(0.02, 10),
        'coco/longer/siameseim/seed0': rec(0.30, 20),  # over the budget
        'coco/longer/random/seed0': rec(0.20, 14),
        'coco/fast/siameseim/seed0': rec(0.12, 11),  # fast/random missing
        'ade20k/shipped/siameseim/seed0':
        dict(rec(0, 5), metrics=dict(mIoU=5.0)),
    }
    ranking, chosen = study.choose_schedules(settings, records)
    assert chosen == {}  # no choice before every candidate is scored
    coco = {r['schedule']: r for r in ranking if r['task'] == 'coco'}
    assert set(coco) == {'shipped', 'longer'}
    records['coco/fast/random/seed0'] = rec(0.0, 11)
    ranking, chosen = study.choose_schedules(settings, records)
    assert chosen == dict(coco='shipped')  # ade20k: random not run yet
    coco = {r['schedule']: r for r in ranking if r['task'] == 'coco'}
    assert coco['fast']['score'] == pytest.approx(0.06)  # a tie: not first
    assert coco['shipped']['score'] == pytest.approx(0.06)
    assert coco['shipped']['chosen'] and not coco['longer']['chosen']
    assert not coco['longer']['within_budget']
    assert coco['longer']['wall_s'] == 1200


def _run(task, backbone, seed, schedule):
    return dict(
        key=study.run_key(task, backbone, seed),
        task=task,
        backbone=backbone,
        seed=seed,
        schedule=schedule)


def test_train_command_sets_seed_checkpoint_and_holdout(settings):
    run = _run('lvis', 'random', 2, 'shipped')
    cmd = study.train_command(settings, run, '/w', holdout=False)
    assert cmd[1] == os.path.join(ROOT, 'tools', 'train.py')
    assert cmd[2:5] == [
        os.path.join(ROOT, settings.tasks.lvis.config), '--work-dir', '/w'
    ]
    assert cmd[5:] == [
        '--cfg-options', 'randomness.seed=2', 'model.backbone.init_cfg=None'
    ]
    run = _run('coco', 'mae', 0, 'longer')
    cmd = study.train_command(settings, run, '/w', holdout=True)
    assert cmd.index('train_cfg.max_iters=600') < cmd.index(
        'train_dataloader.dataset.ann_file='
        'annotations/instances_train2017_fit.json')
    run = _run('ade20k', 'mae', 0, 'shipped')
    cmd = study.train_command(settings, run, '/w', holdout=True)
    assert 'model.backbone.init_cfg.checkpoint=work_dirs/claim/' \
        'mae_lr0.001_wd0.05_seed0_1e/epoch_1.pth' in cmd
    assert 'train_dataloader.dataset.ann_file=fit.txt' in cmd
    assert 'val_dataloader.dataset.ann_file=holdout.txt' in cmd


def test_smoke_settings_fine_tune_random_weights_briefly_on_a_small_build(
        tmp_path, monkeypatch):
    built = {}
    monkeypatch.setattr(
        'projects.downstream_miniature.layouts.make_miniature_datasets',
        lambda fmnist, out, **kw: built.update(fmnist=fmnist, out=out, **kw))
    cfg = Config.fromfile(SETTINGS)
    smoke_settings(cfg, str(tmp_path), 'data/fashion_mnist')
    assert built == dict(
        fmnist='data/fashion_mnist',
        out=str(tmp_path / 'data' / 'miniature'),
        num_train=cfg.smoke.num_train,
        num_val=cfg.smoke.num_val)
    runs = study.planned_runs(cfg)
    assert [r['key'] for r in runs
            ] == [f'{t}/random/seed0' for t in ('coco', 'lvis', 'ade20k')]
    cmd = study.train_command(cfg, runs[0], '/w', holdout=False)
    assert 'model.backbone.init_cfg=None' in cmd
    assert f'train_cfg.max_iters={cfg.smoke.iters}' in cmd
    assert cmd[-1] == 'default_hooks.logger.interval=1'
    assert cfg.run_root == str(tmp_path)  # where data/miniature is


def test_a_smoke_dry_run_prints_the_commands_and_builds_nothing(
        tmp_path, monkeypatch, capsys):
    monkeypatch.syspath_prepend(
        os.path.join(ROOT, 'projects', 'downstream_miniature', 'tools'))
    import downstream_miniature as tool

    def refuse(*args, **kwargs):
        raise AssertionError('a dry run built the datasets')

    monkeypatch.setattr(
        'projects.downstream_miniature.layouts.make_miniature_datasets',
        refuse)
    tool.main(['--smoke', '--dry-run', '--work-dir', str(tmp_path)])
    out = capsys.readouterr().out
    assert '0 of 3 runs recorded; 3 to run' in out
    assert out.count('tools/train.py') == 3
    assert not (tmp_path / 'smoke_root').exists()


def test_final_metrics_are_the_last_evaluation_in_the_logs(tmp_path):
    logs = tmp_path / '20261127_120000' / 'vis_data'
    logs.mkdir(parents=True)
    lines = [
        dict(loss=1.0, step=10),
        dict(mIoU=5.0, aAcc=50.0, step=10),
        dict(loss=0.5, step=20),
        dict(mIoU=7.5, aAcc=60.0, step=20),
        dict(loss=0.4, step=30),
    ]
    (logs / 'scalars.json').write_text('\n'.join(map(json.dumps, lines)))
    assert study.final_metrics(str(tmp_path), ['mIoU']) == dict(mIoU=7.5)
    with pytest.raises(RuntimeError, match=r"no evaluation with \['mAcc'\]"):
        study.final_metrics(str(tmp_path), ['mAcc'])


def test_comparisons_with_own_initial_weights(settings):
    records = {}
    for seed, (pre, init) in enumerate(
        ((30.0, 20.0), (31.0, 21.0), (32.0, 19.0))):
        for backbone, value in (('siameseim', pre), ('siameseim_init', init)):
            records[study.run_key('ade20k', backbone,
                                  seed)] = dict(metrics=dict(mIoU=value))
    rows = study.comparisons(settings, records)
    assert len(rows) == 1  # only pairs with records on both sides
    row = rows[0]
    assert (row['task'], row['backbone'],
            row['baseline']) == ('ade20k', 'siameseim', 'siameseim_init')
    assert row['values'] == [30.0, 31.0, 32.0]
    assert row['diff'] == pytest.approx(11.0)
    assert row['verdict'] in ('holds', 'not judged: projects.claim.'
                              'statistics is missing')


def test_the_study_records_run_by_run_and_a_rerun_continues(
        tmp_path, monkeypatch, capsys):
    monkeypatch.syspath_prepend(
        os.path.join(ROOT, 'projects', 'downstream_miniature', 'tools'))
    import downstream_miniature as tool
    done = []

    def fake_run_once(settings, run, work_root, holdout):
        done.append(run['key'])
        return _fake_record(settings, run, holdout, {
            m: 1.0 + run['seed']
            for m in settings.tasks[run['task']]['metrics']
        })

    monkeypatch.setattr(tool, 'run_once', fake_run_once)
    claim = _claim_results(tmp_path / 'claim.json',
                           dict(siameseim=dict(lr=1e-3, weight_decay=0.05)))
    search = tmp_path / 'downstream_miniature_holdout.json'
    # the settings with two candidate schedules of their own
    settings = tmp_path / 'settings.py'
    settings.write_text(f'_base_ = {SETTINGS!r}\n'
                        'schedules = dict(ade20k=dict(_delete_=True, '
                        'shipped={}, longer=dict(iters=1200)))\n')
    argv = [
        '--config',
        str(settings), '--work-dir',
        str(tmp_path), '--results-dir',
        str(tmp_path), '--tasks', 'ade20k'
    ]
    options = [
        '--cfg-options', f'claim.results={claim}', f'search.results={search}'
    ]
    # the table waits for its schedule, chosen on held-out images
    table = ['--backbones', 'siameseim,siameseim_init']
    with pytest.raises(SystemExit, match="no schedule chosen for 'ade20k'"):
        tool.main(argv + table + options)
    tool.main(argv + ['--holdout'] + options)
    assert done == [
        'ade20k/shipped/siameseim/seed0', 'ade20k/longer/siameseim/seed0'
    ]
    held = json.load(open(search))['data']
    assert held['chosen'] == dict(ade20k='shipped')  # the first on a tie
    assert held['holdout'] and held['search']['backbones'] == ['siameseim']
    assert held['runs']['ade20k/longer/siameseim/seed0']['schedule'] == dict(
        name='longer', iters=1200)
    assert 'ade20k shipped: mIoU 1 in 0.0 min <- chosen' in \
        capsys.readouterr().out
    done.clear()
    argv += table + options
    tool.main(argv + ['--max-runs', '4'])
    results = json.load(open(tmp_path / 'downstream_miniature.json'))
    assert len(results['data']['runs']) == 4 == len(done)
    assert set(results['data']['cpu_bf16']) == {'avx512_bf16', 'amx_bf16'}
    tool.main(argv)
    assert len(done) == 6 and len(set(done)) == 6  # the rest, once each
    capsys.readouterr()
    tool.main(argv)
    assert len(done) == 6
    assert '6 of 6 runs recorded; 0 to run' in capsys.readouterr().out
    # a record under other settings is refused, not silently reused
    with pytest.raises(SystemExit, match='under other settings'):
        tool.main(argv + ['backbones.siameseim.checkpoint=x.pth'])


def test_a_detector_that_predicted_nothing_scores_zero_and_says_so(tmp_path):
    run = tmp_path / '20261127_120000'
    (run / 'vis_data').mkdir(parents=True)
    # what mmdet's CocoMetric leaves: an evaluation line with no metric
    scalars = [dict(loss=2.2, iter=300, step=300), dict(time=1.4, step=0)]
    (run / 'vis_data' / 'scalars.json').write_text('\n'.join(
        map(json.dumps, scalars)))
    keys = ['coco/bbox_mAP', 'coco/segm_mAP']
    with pytest.raises(RuntimeError, match='no evaluation'):
        study.run_scores(str(tmp_path), keys)
    assert not study.predicted_nothing(str(tmp_path))
    (run / '20261127_120000.log').write_text(
        'mmengine - ERROR - coco_metric.py - compute_metrics - 465 - '
        f'{study.EMPTY_RESULTS}.\n')
    assert study.predicted_nothing(str(tmp_path))
    assert study.run_scores(str(tmp_path), keys) == ({
        'coco/bbox_mAP': 0.0,
        'coco/segm_mAP': 0.0
    }, True)
    # an empty early evaluation does not flag a later one that scored
    scalars.append({'coco/bbox_mAP': 0.01, 'coco/segm_mAP': 0.02, 'step': 1})
    (run / 'vis_data' / 'scalars.json').write_text('\n'.join(
        map(json.dumps, scalars)))
    assert study.run_scores(str(tmp_path), keys) == ({
        'coco/bbox_mAP': 0.01,
        'coco/segm_mAP': 0.02
    }, False)


def test_lengths_plan_every_schedule_backbone_and_seed(settings):
    settings.lengths = dict(
        task='coco',
        backbones=['siameseim', 'siameseim_init'],
        seeds=[0, 1],
        schedules=dict(short=dict(iters=200), long=dict(iters=800)))
    runs = study.length_runs(settings)
    assert [r['key'] for r in runs] == [
        'coco/short/siameseim/seed0', 'coco/short/siameseim/seed1',
        'coco/short/siameseim_init/seed0', 'coco/short/siameseim_init/seed1',
        'coco/long/siameseim/seed0', 'coco/long/siameseim/seed1',
        'coco/long/siameseim_init/seed0', 'coco/long/siameseim_init/seed1'
    ]
    # a length's run is a held-out run with its schedule, recorded as such
    assert settings.schedules == dict(coco=settings.lengths.schedules)
    cmd = study.train_command(settings, runs[-1], '/w', holdout=True)
    assert 'train_cfg.max_iters=800' in cmd
    assert ('train_dataloader.dataset.ann_file='
            'annotations/instances_train2017_fit.json') in cmd
    assert study.run_settings(settings, runs[-1], True)['schedule'] == dict(
        name='long', iters=800)
    with pytest.raises(ValueError, match=r"unknown backbones \['vit'\]"):
        study.length_runs(settings, ['vit'])


def test_the_lengths_run_by_run_into_their_own_results_file(
        tmp_path, monkeypatch, capsys):
    monkeypatch.syspath_prepend(
        os.path.join(ROOT, 'projects', 'downstream_miniature', 'tools'))
    import downstream_miniature as tool
    roots = []

    def fake_run_once(settings, run, work_root, holdout):
        assert holdout
        roots.append(work_root)
        return _fake_record(
            settings,
            run,
            holdout, {
                'coco/bbox_mAP': 0.01,
                'coco/segm_mAP': 0.02
            },
            wall_s=2700.0)

    monkeypatch.setattr(tool, 'run_once', fake_run_once)
    claim = _claim_results(tmp_path / 'claim.json',
                           dict(siameseim=dict(lr=1e-3, weight_decay=0.05)))
    argv = [
        '--lengths', '--work-dir',
        str(tmp_path), '--results-dir',
        str(tmp_path), '--cfg-options', f'claim.results={claim}'
    ]
    tool.main(argv + ['--dry-run'])
    out = capsys.readouterr().out
    # SiameseIM, its initial weights and the random ViT at two lengths
    assert '0 of 6 runs recorded; 6 to run' in out
    assert f'{tmp_path}/lengths/coco/lr5e_4_800it/siameseim/seed0' in out
    random_run = next(line for line in out.splitlines()
                      if '/lr5e_4_800it/random/seed0' in line)
    assert 'model.backbone.init_cfg=None' in random_run
    assert 'train_cfg.max_iters=800' in out
    tool.main(argv[:1] + ['--max-runs', '1'] + argv[1:])
    assert roots == [f'{tmp_path}/lengths']
    data = json.load(open(tmp_path / 'downstream_miniature_lengths.json'))
    assert list(data['data']['runs']) == ['coco/lr5e_4_200it/siameseim/seed0']
    assert data['data']['holdout'] and data['data']['lengths']['task'] == \
        'coco'
    assert data['data']['metrics'] == ['coco/bbox_mAP', 'coco/segm_mAP']
    # the table's own results file is untouched
    assert not (tmp_path / 'downstream_miniature.json').exists()
    with pytest.raises(SystemExit, match='--tasks does not apply'):
        tool.main(argv + ['--tasks', 'coco'])


def test_init_parts_plan_each_variant_with_the_weights_it_keeps(settings):
    runs = study.init_part_runs(settings)
    variants = list(settings.init_parts.variants)
    assert [r['key'] for r in runs] == [
        f'ade20k/lr1e_3_100it/{v}/seed{s}' for v in variants
        for s in study.section_seeds(settings.init_parts, v)
    ]
    assert settings.schedules == dict(ade20k=settings.init_parts.schedules)
    by_name = {r['backbone']: r for r in runs if r['seed'] == 0}

    def command(name):
        return study.train_command(settings, by_name[name], '/w', True)

    # the whole checkpoint and the random ViT keep nothing
    whole = command('siameseim_init')
    assert not any('keep_init' in c for c in whole)
    assert 'model.backbone.init_cfg=None' in command('random')
    # a variant loads its backbone's checkpoint but keeps the named weights
    own_pos = command('siameseim_init_own_pos_embed')
    assert ('model.backbone.init_cfg.checkpoint='
            f'{settings.backbones.siameseim_init.checkpoint}') in own_pos
    assert 'model.backbone.init_cfg.keep_init=[pos_embed]' in own_pos
    assert 'model.backbone.init_cfg.keep_init=[layers.*]' in command(
        'siameseim_init_own_blocks')
    assert ('model.backbone.init_cfg.checkpoint='
            f'{settings.backbones.siameseim.checkpoint}'
            ) in command('siameseim_own_pos_embed')
    assert 'train_dataloader.dataset.ann_file=fit.txt' in own_pos
    # what the weights kept is part of the record a rerun must match
    assert study.run_settings(settings, by_name['siameseim_init_own_blocks'],
                              True)['keep_init'] == ['layers.*']
    assert 'keep_init' not in study.run_settings(settings,
                                                 by_name['siameseim_init'],
                                                 True)
    assert {r['backbone']
            for r in study.init_part_runs(settings, ['random'])} == {'random'}
    with pytest.raises(ValueError, match=r"unknown variants \['vit'\]"):
        study.init_part_runs(settings, ['vit'])


def test_a_variants_own_seeds_replace_the_sections(settings):
    settings.init_parts.seeds = [0]
    settings.init_parts.variants = dict(
        more=dict(backbone='random', seeds=[3, 4]),
        once=dict(backbone='random'))
    assert [(r['backbone'], r['seed'])
            for r in study.init_part_runs(settings)] == [('more', 3),
                                                         ('more', 4),
                                                         ('once', 0)]


@pytest.mark.parametrize('change, message', [
    (dict(variants=dict(v=dict(backbone='random', keep_init=['pos_embed']))),
     "keep_init \\['pos_embed'\\] of 'random', which loads no checkpoint"),
    (dict(variants=dict(v=dict(backbone='vit'))),
     "variants.v.backbone: 'vit' is not a backbone"),
    (dict(variants=dict(v=dict(backbone='random', baseline='w'))),
     "variants.v.baseline: 'w' is not a variant"),
    (dict(task='no_keep_init'), "the backbone of 'no_keep_init' cannot "
     'keep part'),
    (dict(task='imagenet'), "'imagenet' is not a task"),
])
def test_init_parts_refuse_what_cannot_run(settings, change, message):
    # a task whose backbone has no keep_init option
    settings.tasks.no_keep_init = {
        k: v
        for k, v in settings.tasks.ade20k.items() if k != 'keep_init'
    }
    settings.init_parts.update(change)
    if 'variants' in change:  # replaces, rather than merges, the variants
        settings.init_parts.variants = change['variants']
    with pytest.raises(ValueError, match=message):
        study.init_part_runs(settings)


def test_the_init_parts_run_into_their_own_results_file(
        tmp_path, monkeypatch, capsys):
    monkeypatch.syspath_prepend(
        os.path.join(ROOT, 'projects', 'downstream_miniature', 'tools'))
    import downstream_miniature as tool
    roots = []

    def fake_run_once(settings, run, work_root, holdout):
        assert holdout
        roots.append(work_root)
        return _fake_record(settings, run, holdout, {'mIoU': 4.0})

    monkeypatch.setattr(tool, 'run_once', fake_run_once)
    claim = _claim_results(tmp_path / 'claim.json',
                           dict(siameseim=dict(lr=1e-3, weight_decay=0.05)))
    argv = [
        '--init-parts', '--work-dir',
        str(tmp_path), '--results-dir',
        str(tmp_path), '--cfg-options', f'claim.results={claim}',
        'init_parts.seeds=[0]'
    ]
    tool.main(argv + ['--dry-run'])
    out = capsys.readouterr().out
    # init_parts.seeds=[0] leaves the variants with their own seeds alone
    total = sum(
        len(v.get('seeds', [0]))
        for v in Config.fromfile(SETTINGS).init_parts.variants.values())
    assert f'0 of {total} runs recorded; {total} to run' in out
    assert (f'{tmp_path}/init_parts/ade20k/lr1e_3_100it/'
            'siameseim_init_own_pos_embed/seed0') in out
    tool.main(argv[:1] + ['--max-runs', '2'] + argv[1:])
    assert roots == [f'{tmp_path}/init_parts'] * 2
    data = json.load(open(tmp_path / 'downstream_miniature_init_parts.json'))
    runs = data['data']['runs']
    assert list(runs) == [
        'ade20k/lr1e_3_100it/siameseim_init/seed0',
        'ade20k/lr1e_3_100it/siameseim_init_own_pos_embed/seed0'
    ]
    assert runs['ade20k/lr1e_3_100it/siameseim_init_own_pos_embed/seed0'][
        'keep_init'] == ['pos_embed']
    assert data['data']['holdout'] and data['data']['metrics'] == ['mIoU']
    assert data['data']['init_parts']['task'] == 'ade20k'
    # a rerun continues with the runs it lacks
    tool.main(argv + ['--dry-run'])
    assert (f'2 of {total} runs recorded; {total - 2} to run'
            in capsys.readouterr().out)
    assert not (tmp_path / 'downstream_miniature.json').exists()
    with pytest.raises(SystemExit, match='--tasks does not apply'):
        tool.main(argv + ['--tasks', 'ade20k'])


def test_another_init_parts_section_plans_its_own_task(settings):
    runs = study.init_part_runs(settings, section='init_parts_coco')
    parts = settings.init_parts_coco
    assert [r['key'] for r in runs] == [
        f'coco/lr5e_4_200it/{v}/seed{s}' for v in parts.variants
        for s in parts.seeds
    ]
    assert settings.schedules == dict(coco=parts.schedules)
    own_pos = study.train_command(settings, runs[0], '/w', True)
    # ViTDetViT's checkpoint loader keeps its own position table
    assert runs[0]['backbone'] == 'siameseim_init_own_pos_embed'
    assert 'model.backbone.init_cfg.keep_init=[pos_embed]' in own_pos
    assert ('val_dataloader.dataset.ann_file=annotations/'
            'instances_train2017_holdout.json') in own_pos
    for name in ('lengths', 'init_partsx', 'init_parts_lvis'):
        with pytest.raises(
                ValueError,
                match=f"'{name}' is not an init_parts section of the "
                r"settings \(\['init_parts', 'init_parts_coco'\]\)"):
            study.init_part_runs(settings, section=name)


def test_another_init_parts_section_runs_into_its_own_results_file(
        tmp_path, monkeypatch, capsys):
    monkeypatch.syspath_prepend(
        os.path.join(ROOT, 'projects', 'downstream_miniature', 'tools'))
    import downstream_miniature as tool
    roots = []

    def fake_run_once(settings, run, work_root, holdout):
        roots.append(work_root)
        return _fake_record(settings, run, holdout, {
            'coco/bbox_mAP': 0.01,
            'coco/segm_mAP': 0.02
        })

    monkeypatch.setattr(tool, 'run_once', fake_run_once)
    claim = _claim_results(tmp_path / 'claim.json',
                           dict(siameseim=dict(lr=1e-3, weight_decay=0.05)))
    tool.main([
        '--init-parts', 'init_parts_coco', '--max-runs', '1', '--work-dir',
        str(tmp_path), '--results-dir',
        str(tmp_path), '--cfg-options', f'claim.results={claim}'
    ])
    assert roots == [f'{tmp_path}/init_parts_coco']
    data = json.load(
        open(tmp_path / 'downstream_miniature_init_parts_coco.json'))['data']
    assert list(data['runs']) == [
        'coco/lr5e_4_200it/siameseim_init_own_pos_embed/seed0'
    ]
    # stored under `init_parts`, as the renderer and comparisons read it
    assert data['init_parts']['task'] == 'coco'
    assert data['metrics'] == ['coco/bbox_mAP', 'coco/segm_mAP']
    assert not (tmp_path / 'downstream_miniature_init_parts.json').exists()
    assert '0 of 12 runs recorded; 12 to run' in capsys.readouterr().out
    with pytest.raises(SystemExit, match='init_parts_x'):
        tool.main(['--init-parts', 'init_parts_x', '--dry-run'])


def test_a_record_names_its_weights_by_their_values_not_their_file(tmp_path):
    import torch
    weights = {'backbone.w': torch.arange(6.).reshape(2, 3)}
    one, two, other = (str(tmp_path / f'{n}.pth') for n in 'abc')
    torch.save(dict(meta=dict(time='then'), state_dict=weights), one)
    torch.save(dict(meta=dict(time='now'), state_dict=weights), two)
    torch.save(
        dict(state_dict={'backbone.w': weights['backbone.w'] + 1}), other)
    digest = study.weights_digest(one)
    assert len(digest) == 16
    assert study.weights_digest(two) == digest  # meta (dates) left out
    assert study.weights_digest(other) != digest
    assert study.weights_digest(None) is None  # random initialisation
