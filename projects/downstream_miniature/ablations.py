"""The held-out A/B runs behind the miniature detection configs' choices,
gathered from the downstream study's own records and logs into one results
file (``downstream_miniature_ablations.json`` in this project's
``results/``).

Each run was made by
``projects/downstream_miniature/tools/downstream_miniature.py --holdout``
and is named in the settings
(``projects/downstream_miniature/configs/downstream_miniature_ablations.py``)
by its study results
file and record key; its folder (the results file's
folder / the key) holds the config its Runner dumped and its logs. What a
row changed is read from those dumped configs, never typed: every key the
Runner reads is compared with the ablation's reference run, and the
reference with the shipped task config as the study resolves it for that
run today.
"""
import argparse
import glob
import inspect
import os.path as osp
from typing import Dict, List

from mmengine.config import Config, DictAction

from mmsiameseim.atomic_io import load_json
from projects.common.config_values import values_key
from projects.common.results import REPO
from projects.downstream_miniature.study import (config_digest, final_metrics,
                                                 run_options, taken_from)

ABSENT = '<unset>'
# what a Runner is built from (the arguments of Runner's constructor) less
# where a run writes and how it was launched
IGNORED_KEYS = frozenset({'work_dir', 'launcher', 'cfg', 'experiment_name'})


def runner_keys() -> List[str]:
    from mmengine.runner import Runner
    params = inspect.signature(Runner.__init__).parameters
    return [k for k in params if k != 'self' and k not in IGNORED_KEYS]


def flatten(value, path: str = '') -> Dict[str, object]:
    """Every leaf of nested dicts and lists, by its dotted path
    (``model.neck.norm_cfg.type``; list items by index); a leaf that JSON
    cannot hold (a class in a config, say) as its ``str``."""
    if isinstance(value, dict):
        items = value.items()
    elif isinstance(value, (list, tuple)):
        items = enumerate(value)
    elif value is None or isinstance(value, (str, int, float, bool)):
        return {path: value}
    else:
        return {path: str(value)}
    out = {}
    for key, item in items:
        out.update(flatten(item, f'{path}.{key}' if path else str(key)))
    return out


def runner_leaves(cfg: Config) -> Dict[str, object]:
    """The flattened part of a config that a Runner reads."""
    return flatten({k: cfg[k] for k in runner_keys() if k in cfg})


def differences(reference: Config, other: Config) -> List[list]:
    """``[key, reference's value, other's value]`` for every leaf a Runner
    reads that differs (:data:`ABSENT` where one config lacks it), sorted by
    key."""
    a, b = runner_leaves(reference), runner_leaves(other)
    return [[k, a.get(k, ABSENT), b.get(k, ABSENT)] for k in sorted({*a, *b})
            if a.get(k, ABSENT) != b.get(k, ABSENT)]


def dumped_config(run_dir: str) -> Config:
    """The config a run's Runner dumped into its folder (the one ``.py``
    file there)."""
    found = glob.glob(osp.join(run_dir, '*.py'))
    if len(found) != 1:
        raise FileNotFoundError(
            f'{run_dir}: expected the one config its Runner dumped, found '
            f'{len(found)} .py files')
    return Config.fromfile(found[0])


def shipped_config(task: dict, record: dict) -> Config:
    """The shipped task config as the study resolves it today for the run
    of ``record`` (its seed, checkpoint, schedule and split)."""
    schedule = {k: v for k, v in record['schedule'].items() if k != 'name'}
    options = run_options(task, record['checkpoint'], record['seed'], schedule,
                          record['holdout'])
    parser = argparse.ArgumentParser()
    parser.add_argument('--cfg-options', nargs='+', action=DictAction)
    cfg = Config.fromfile(osp.join(REPO, task['config']))
    cfg.merge_from_dict(
        parser.parse_args(['--cfg-options', *options]).cfg_options)
    return cfg


def source_run(source: dict, root: str = REPO) -> dict:
    """A run's record in its study results file (``source``: ``results``
    and ``key``), with ``taken`` (the record's own, else the file's meta
    when the file holds that run alone), the CPU's bf16 flags the file
    recorded and the run's folder."""
    path = osp.join(root, source['results'])
    results = load_json(path)
    if results is None:
        raise FileNotFoundError(f'no study results file {path}')
    runs = results['data']['runs']
    if source['key'] not in runs:
        raise KeyError(f'{path} holds no run {source["key"]!r} (runs: '
                       f'{sorted(runs)})')
    record = dict(runs[source['key']])
    if 'taken' not in record:
        if len(runs) != 1:
            raise ValueError(
                f'{path}: run {source["key"]!r} has no `taken` and the file '
                'holds other runs, so its meta is not that run\'s')
        meta = results['meta']
        record['taken'] = dict(taken_from(meta), command=meta['command'])
    record['cpu_bf16'] = results['data'].get('cpu_bf16')
    record['run_dir'] = osp.join(osp.dirname(path), source['key'])
    return record


def collect(settings: Config, root: str = REPO) -> dict:
    """Every ablation of ``settings`` as the results file's ``data``: per
    row its metrics, wall time, provenance and what its dumped config
    changes against the reference row's; per ablation what the reference's
    config changes against the shipped one."""
    study = Config.fromfile(osp.join(root, settings.study))
    task = study.tasks[settings.task]
    out = {}
    for name, ablation in settings.ablations.items():
        if ablation.reference not in ablation.runs:
            raise KeyError(f'ablations.{name}.reference: '
                           f'{ablation.reference!r} is not one of its runs '
                           f'({sorted(ablation.runs)})')
        records = {
            row: source_run(spec, root)
            for row, spec in ablation.runs.items()
        }
        configs = {
            row: dumped_config(rec['run_dir'])
            for row, rec in records.items()
        }
        reference = configs[ablation.reference]
        rows = {}
        for row, rec in records.items():
            spec = ablation.runs[row]
            rows[row] = dict(
                label=spec.label,
                source=dict(results=spec.results, key=spec.key),
                seed=rec['seed'],
                schedule=rec['schedule'],
                checkpoint=rec['checkpoint'],
                metrics=final_metrics(rec['run_dir'], settings.metrics),
                wall_s=rec['wall_s'],
                taken=rec['taken'],
                cpu_bf16=rec['cpu_bf16'],
                config_sha1=values_key(runner_leaves(configs[row])),
                differs=differences(reference, configs[row]))
        out[name] = dict(
            config=task['config'],
            # the shipped config's key when gathered: the ablation is
            # current while it is the config's key at this code
            shipped_config_key=config_digest(task['config']),
            reference=ablation.reference,
            reference_vs_shipped=differences(
                shipped_config(task, records[ablation.reference]), reference),
            rows=rows)
    return dict(
        task=settings.task, metrics=list(settings.metrics), ablations=out)
