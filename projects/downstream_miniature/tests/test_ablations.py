"""The held-out A/B runs gathered into a results file
(projects.downstream_miniature.ablations, tools/
collect_downstream_ablations.py) and their rendered tables: metrics from
each run's own logs, what a run changed read from the configs its Runner
dumped."""
import json
import os
import os.path as osp
import textwrap

import pytest
from mmengine.config import Config

from projects.common.results import read_results
from projects.downstream_miniature import ablations, tables
from projects.downstream_miniature.ablations import ABSENT
from tests.helpers import load_tool

TASK = textwrap.dedent('''
    model = dict(type='M', neck=dict(norm_cfg=dict(type='GN', num_groups=32)))
    randomness = dict(seed=None)
    optim_wrapper = dict(optimizer=dict(type='AdamW', lr=1e-4))
    train_dataloader = dict(dataset=dict(ann_file='train.json'))
    helper = dict(size=128)
''')
METRICS = ['coco/bbox_mAP', 'coco/bbox_mAP_50']
KEY = 'coco/lr1e_3/siameseim/seed{}'


def _record(seed, taken=None):
    rec = dict(
        config='unused',
        checkpoint='pretrain.pth',
        seed=seed,
        holdout=True,
        schedule=dict(name='lr1e_3', lr=1e-3),
        metrics={'coco/bbox_mAP': 0.5},
        wall_s=600.0)
    if taken:
        rec['taken'] = taken
    return rec


def _meta(commit):
    return dict(
        date='2026-11-28T10:00:00+00:00',
        machine='cpu, 2 cores',
        command=('projects/downstream_miniature/tools/downstream_miniature.py'
                 ' --holdout'),
        commit=commit,
        dirty=True,
        dirty_paths=['configs/x.py', 'docs/a.md'])


def _make_run(root, name, seed, box, changes=None, runs=None):
    """A study work root ``root/name`` holding one (or ``runs``) record,
    the config its Runner dumped (the task config with the study's options
    and ``changes``) and its scalars."""
    study_cfg = Config.fromfile(osp.join(root, 'study.py'))
    task = study_cfg.tasks.coco
    cfg = ablations.shipped_config(task, _record(seed))
    cfg.merge_from_dict(changes or {})
    cfg.work_dir = osp.join(root, name, KEY.format(seed))
    run_dir = cfg.work_dir
    os.makedirs(osp.join(run_dir, '20261128_100000', 'vis_data'))
    cfg.dump(osp.join(run_dir, 'task.py'))
    with open(
            osp.join(run_dir, '20261128_100000', 'vis_data', 'scalars.json'),
            'w') as f:
        f.write(json.dumps(dict(loss=2.0, step=10)) + '\n')
        f.write(
            json.dumps({
                'coco/bbox_mAP': box,
                'coco/bbox_mAP_50': box * 3,
                'step': 0
            }) + '\n')
    records = runs or {KEY.format(seed): _record(seed)}
    with open(osp.join(root, name, 'holdout.json'), 'w') as f:
        json.dump(
            dict(
                meta=_meta(f'{seed}' * 40),
                data=dict(runs=records, cpu_bf16=dict(avx512_bf16=False))), f)
    return dict(
        results=osp.join(root, name, 'holdout.json'), key=KEY.format(seed))


@pytest.fixture
def root(tmp_path):
    (tmp_path / 'task.py').write_text(TASK)
    (tmp_path / 'study.py').write_text(
        f'tasks = dict(coco=dict(config={str(tmp_path / "task.py")!r}, '
        'holdout_options={"train_dataloader.dataset.ann_file": '
        '"fit.json"}))\n')
    return str(tmp_path)


def _settings(root, runs, reference='gn_seed0'):
    return Config(
        dict(
            study=osp.join(root, 'study.py'),
            task='coco',
            metrics=METRICS,
            ablations=dict(norm=dict(reference=reference, runs=runs))))


def test_a_row_changes_what_its_dumped_config_changes_against_the_reference(
        root):
    gn = _make_run(root, 'gn', 0, 0.020)
    ln2d = _make_run(
        root,
        'ln2d',
        0,
        0.001,
        changes={
            'model.neck.norm_cfg': dict(_delete_=True, type='LN2d', eps=1e-6),
            'helper.size': 64,  # not read by the Runner
        })
    data = ablations.collect(
        _settings(
            root,
            dict(
                gn_seed0=dict(label='GN', **gn),
                ln2d_seed0=dict(label='LN2d', **ln2d))), root)
    rows = data['ablations']['norm']['rows']
    assert rows['gn_seed0']['differs'] == []
    assert rows['ln2d_seed0']['differs'] == [
        ['model.neck.norm_cfg.eps', ABSENT, 1e-6],
        ['model.neck.norm_cfg.num_groups', 32, ABSENT],
        ['model.neck.norm_cfg.type', 'GN', 'LN2d'],
    ]
    # the last evaluation of the run's own logs, not the study's record
    assert rows['ln2d_seed0']['metrics'] == {
        'coco/bbox_mAP': 0.001,
        'coco/bbox_mAP_50': 0.003
    }
    assert rows['gn_seed0']['config_sha1'] != rows['ln2d_seed0']['config_sha1']
    # the record has no `taken`: its file's meta, code files only
    taken = rows['gn_seed0']['taken']
    assert taken['commit'] == '0' * 40
    assert taken['code_changes'] == ['configs/x.py']
    assert rows['gn_seed0']['cpu_bf16'] == dict(avx512_bf16=False)
    # the reference's dumped config is the shipped one as the study
    # resolves it for that run
    assert data['ablations']['norm']['reference_vs_shipped'] == []


def test_the_reference_is_compared_with_the_shipped_config_of_today(root):
    gn = _make_run(root, 'gn', 0, 0.020)
    with open(osp.join(root, 'task.py'), 'a') as f:
        f.write("model['neck']['norm_cfg']['num_groups'] = 16\n")
    data = ablations.collect(
        _settings(root, dict(gn_seed0=dict(label='GN', **gn))), root)
    assert data['ablations']['norm']['reference_vs_shipped'] == [[
        'model.neck.norm_cfg.num_groups', 16, 32
    ]]
    md = tables.ablation_table(dict(data=data, meta=_meta('a' * 40)), 'norm')
    assert 'differs from the shipped `task.py`' in md
    assert '`model.neck.norm_cfg.num_groups=32`' in md


def test_the_rendered_table_names_each_change_and_the_reference(root):
    gn = _make_run(root, 'gn', 0, 0.020)
    gn1 = _make_run(root, 'gn1', 1, 0.025)
    ln2d = _make_run(
        root,
        'ln2d',
        0,
        0.001,
        changes={'model.neck.norm_cfg': dict(_delete_=True, type='LN2d')})
    data = ablations.collect(
        _settings(
            root,
            dict(
                ln2d_seed0=dict(label='LN2d', **ln2d),
                gn_seed0=dict(label='GN', **gn),
                gn_seed1=dict(label='GN', **gn1))), root)
    lines = tables.ablation_table(dict(data=data), 'norm').splitlines()
    assert lines[2] == ('| LN2d | 0 | 0.001 | 0.003 | 10.0 | '
                        '`model.neck.norm_cfg.num_groups` unset; '
                        '`model.neck.norm_cfg.type=LN2d` |')
    assert lines[3] == '| GN | 0 | 0.020 | 0.060 | 10.0 | (the reference) |'
    # another seed alone changes nothing the table shows beside the seed
    assert lines[4] == '| GN | 1 | 0.025 | 0.075 | 10.0 | - |'
    assert 'is the shipped `task.py`' in lines[6]
    assert 'Fine-tuned from `pretrain.pth`' in lines[6]
    assert ('Runs taken at: 0000000 with uncommitted changes to '
            'configs/x.py (2); 1111111 with uncommitted changes to '
            'configs/x.py (1).') in lines[6]
    with pytest.raises(KeyError, match="no ablation 'other'"):
        tables.ablation_table(dict(data=data), 'other')


def test_a_reference_outside_the_runs_and_a_missing_run_are_refused(root):
    gn = _make_run(root, 'gn', 0, 0.020)
    with pytest.raises(KeyError, match='ablations.norm.reference'):
        ablations.collect(
            _settings(
                root,
                dict(gn_seed0=dict(label='GN', **gn)),
                reference='ln2d_seed0'), root)
    missing = dict(gn, key=KEY.format(5))
    with pytest.raises(KeyError, match='holds no run'):
        ablations.collect(
            _settings(root, dict(gn_seed0=dict(label='GN', **missing))), root)


def test_a_shared_results_file_needs_the_record_s_own_taken(root):
    runs = {KEY.format(0): _record(0), KEY.format(1): _record(1)}
    gn = _make_run(root, 'gn', 0, 0.020, runs=runs)
    with pytest.raises(ValueError, match='its meta is not that run'):
        ablations.collect(
            _settings(root, dict(gn_seed0=dict(label='GN', **gn))), root)
    taken = dict(commit='c' * 40, code_changes=[])
    runs[KEY.format(0)] = _record(0, taken=taken)
    gn = _make_run(root, 'gn2', 0, 0.020, runs=runs)
    data = ablations.collect(
        _settings(root, dict(gn_seed0=dict(label='GN', **gn))), root)
    assert data['ablations']['norm']['rows']['gn_seed0']['taken'] == taken


def test_the_command_writes_the_results_file(root, tmp_path):
    main = load_tool(
        'projects/downstream_miniature/tools/collect_downstream_ablations.py'
    ).main
    gn = _make_run(root, 'gn', 0, 0.020)
    settings = tmp_path / 'settings.py'
    settings.write_text(
        f'study = {osp.join(root, "study.py")!r}\ntask = "coco"\n'
        f'metrics = {METRICS!r}\nablations = dict(norm=dict('
        f'reference="gn_seed0", runs=dict(gn_seed0=dict(label="GN", '
        f'results={gn["results"]!r}, key={gn["key"]!r}))))\n')
    out = tmp_path / 'results'
    main(['--config', str(settings), '--results-dir', str(out)])
    results = read_results('downstream_miniature_ablations', str(out))
    assert results['meta']['command']
    assert results['data']['ablations']['norm']['rows']['gn_seed0']['metrics'][
        'coco/bbox_mAP'] == 0.020


def test_flatten_names_every_leaf_by_its_path():
    assert ablations.flatten(dict(a=[1, dict(b=None)], c=dict(d=int))) == {
        'a.0': 1,
        'a.1.b': None,
        'c.d': "<class 'int'>"
    }
