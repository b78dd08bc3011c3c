"""The one rule that keys published records: a config's values (bases
followed) and the plugin's version, never its bytes. Tried on a real
config of each study in a copy of the checkout's configs: a comment and a
reformatting orphan nothing; a changed value orphans exactly the records
that read it."""
import os
import shutil

import pytest
from mmengine.config import Config

from projects.common.config_values import (config_key, portable_values,
                                           stale_check, stale_records,
                                           values_key)
from tests.helpers import ROOT

SIAMESEIM = 'configs/pretrain/' \
    'siameseim_vit-tiny-p4_1xb64-bf16-coslr-1e_fashionmnist.py'
MAE = 'configs/pretrain/peers/' \
    'mae_vit-tiny-p4_1xb64-bf16-coslr-1e_fashionmnist.py'
COCO = 'configs/benchmarks/mmdet/miniature/' \
    'mask-rcnn_vitdet-tiny-p4-siameseim-pre_1xb4-300it_miniature-coco-128.py'
LVIS = ('configs/benchmarks/mmdet/miniature/mask-rcnn_vitdet-tiny-p4-'
        'siameseim-pre_1xb4-300it_miniature-lvis-v1-128.py')
MINIATURE_BASE = 'configs/benchmarks/mmdet/miniature/_base_/' \
    'vitdet-tiny-p4_miniature-128.py'
PROBE = 'configs/benchmarks/mmpretrain/' \
    'vit-tiny-p4_linear-probe-10e_fashionmnist.py'


@pytest.fixture
def checkout(tmp_path) -> str:
    """A copy of the checkout's configs (the root the keys are taken
    from)."""
    shutil.copytree(os.path.join(ROOT, 'configs'), tmp_path / 'configs')
    return str(tmp_path)


def _edit(root: str, config: str, old: str, new: str) -> None:
    path = os.path.join(root, config)
    with open(path) as f:
        text = f.read()
    assert old in text, (config, old)
    with open(path, 'w') as f:
        f.write(text.replace(old, new, 1))


def _comment_and_reformat(root: str, config: str) -> None:
    """A comment above every line's first assignment and blank lines: the
    values stay, the bytes change."""
    path = os.path.join(root, config)
    with open(path) as f:
        text = f.read()
    with open(path, 'w') as f:
        f.write('# a comment a contributor adds\n\n\n' +
                text.replace('\n', '\n\n', 3) + '\n# and one at the end\n')


def test_the_key_reads_values_with_paths_from_the_checkout(checkout):
    # the same config in two checkouts: absolute paths written relative
    assert config_key(SIAMESEIM, checkout) == config_key(SIAMESEIM, ROOT)
    values = portable_values(
        dict(a=os.path.join(checkout, 'data', 'x') + '/', b=['/elsewhere']),
        checkout)
    assert values == dict(a=os.path.join('data', 'x'), b=['/elsewhere'])
    # the plugin's version is part of it
    import projects.common.config_values as module
    before = values_key(dict(a=1))
    old, module.__version__ = module.__version__, '0.0.0'
    try:
        assert values_key(dict(a=1)) != before
    finally:
        module.__version__ = old


def test_claim_records_survive_a_comment_and_follow_their_own_values(checkout):
    """The claim study (and the accumulation study, same driver): a
    method's pretraining settings, and the probe every record is scored
    with."""
    from projects.claim.plan import table_runs
    from projects.claim.runner import pretrain_settings
    study = Config.fromfile(
        os.path.join(ROOT, 'projects', 'claim', 'configs', 'claim_study.py'))
    chosen = {m: dict(lr=1e-3, weight_decay=0.05) for m in study.methods}
    runs = {
        r['method']: r
        for r in table_runs(study, chosen) if r['seed'] == study.seeds[0]
    }

    def settings(root):
        return {m: pretrain_settings(study, r, root) for m, r in runs.items()}

    before = settings(checkout)
    assert before == settings(ROOT)
    _comment_and_reformat(checkout, SIAMESEIM)
    assert settings(checkout) == before
    # a value of MAE's config: MAE's records alone
    _edit(checkout, MAE, 'mask_ratio=0.75', 'mask_ratio=0.7')
    after = settings(checkout)
    assert after['mae'] != before['mae']
    assert {m: s for m, s in after.items() if m != 'mae'} == \
        {m: s for m, s in before.items() if m != 'mae'}


def test_the_probe_settings_survive_a_comment_and_follow_a_value(checkout):
    probe = os.path.join(checkout, PROBE)
    before = config_key(probe, checkout)
    _comment_and_reformat(checkout, PROBE)
    assert config_key(probe, checkout) == before
    with open(probe, 'a') as f:
        f.write('\ntrain_dataloader = dict(batch_size=7)\n')
    assert config_key(probe, checkout) != before


def test_downstream_records_follow_their_task_config_and_its_bases(checkout):
    """The downstream study (table, search, lengths, init parts): each
    record names its task config's key; the ablations the shipped
    config's."""

    def key(config):  # parsed afresh: a base is edited in this process
        return values_key(
            Config.fromfile(os.path.join(checkout, config)).to_dict(),
            checkout)

    coco, lvis = key(COCO), key(LVIS)
    assert coco == config_key(COCO, ROOT)
    _comment_and_reformat(checkout, COCO)
    _comment_and_reformat(checkout, MINIATURE_BASE)
    assert (key(COCO), key(LVIS)) == (coco, lvis)
    with open(os.path.join(checkout, COCO), 'a') as f:
        f.write('\ntrain_cfg = dict(max_iters=301)\n')
    assert key(COCO) != coco
    assert key(LVIS) == lvis
    # a value of the shared base: both
    _edit(checkout, MINIATURE_BASE, 'std=[90.02] * 3', 'std=[90.0] * 3')
    assert key(LVIS) != lvis


def test_published_downstream_and_ablation_records_are_current():
    """What the footers of the rendered tables say: no published record
    of these studies is stale at this code."""
    from mmsiameseim.atomic_io import load_json
    from projects.common.docs_render import load_renderers
    from projects.common.results import results_path
    load_renderers()
    for name in ('downstream_miniature', 'downstream_miniature_holdout',
                 'downstream_miniature_lengths',
                 'downstream_miniature_init_parts',
                 'downstream_miniature_init_parts_coco',
                 'downstream_miniature_ablations'):
        data = load_json(results_path(name))['data']
        stale, total = stale_records(name, data)
        assert total and not stale, (name, stale[:3])


def test_a_stale_record_is_named_in_the_footer_check():
    from projects.downstream_miniature.tables import (stale_ablations,
                                                      stale_runs)
    run = dict(config=LVIS, config_sha1=config_key(LVIS))
    assert stale_runs(dict(runs=dict(a=run))) == ([], 1)
    assert stale_runs(
        dict(runs=dict(a=run, b=dict(run, config_sha1='0' * 16)))) == (['b'],
                                                                       2)
    ablation = dict(
        config=COCO, shipped_config_key='0' * 16, rows=dict(x={}, y={}))
    assert stale_ablations(dict(ablations=dict(n=ablation))) == \
        (['n/x', 'n/y'], 2)
    stale_check('test_config_values_probe')(lambda data: (['k'], 3))
    assert stale_records('test_config_values_probe', {}) == (['k'], 3)
    assert stale_records('not_a_keyed_study', {}) is None
