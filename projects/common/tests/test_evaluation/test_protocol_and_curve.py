"""The frozen-backbone protocol's settings and report text, its kNN bank,
and the online kNN curve read back from mmengine's scalars file."""
import json
import os
import re

import numpy as np
import pytest
from mmengine.config import Config

from mmsiameseim.evaluation import frozen_features
from projects.common.evaluation import FrozenBackboneProtocol
from projects.common.visualization import plot_knn_curve, read_knn_scalars
from tests.helpers import ROOT


def test_protocol_text_is_written_from_its_settings(tmp_path):
    demo = Config.fromfile(
        os.path.join(ROOT, 'configs', 'demo', 'fashionmnist_demo.py'))
    protocol = FrozenBackboneProtocol.from_cfg(
        demo.evaluation, work_dir=str(tmp_path), precision='float32')
    text = '\n'.join(protocol.describe())
    assert "k=20, T=0.07, on the linear probe's 20000 training images " \
        '(unflipped)' in text
    assert '3 epoch(s) on 20000 training images' in text
    assert '1.0% of the training labels' in text
    assert '3-fold CV' in text and 'all the test images, in float32' in text
    smoke = Config.fromfile(
        os.path.join(ROOT, 'configs', 'demo', 'fashionmnist_demo_smoke.py'))
    protocol = FrozenBackboneProtocol.from_cfg(
        smoke.evaluation,
        work_dir=str(tmp_path),
        knn=dict(smoke.evaluation.knn, k=5, bank='own'))
    text = '\n'.join(protocol.describe())
    assert 'k=5, T=0.07, on 400 random' in text
    assert 'the first 300 test images' in text


def test_the_token_map_feature_has_no_linear_probe(tmp_path):
    demo = Config.fromfile(
        os.path.join(ROOT, 'configs', 'demo', 'fashionmnist_demo.py'))
    protocol = FrozenBackboneProtocol.from_cfg(
        demo.evaluation, work_dir=str(tmp_path), feature='featmap')
    assert protocol.settings()['feature'] == 'featmap'
    assert 'patch tokens, flattened (the token map) (no final norm)' in \
        protocol.feature_text()
    with pytest.raises(ValueError, match='linear=False'):
        protocol.evaluate('run', None)
    assert not os.listdir(os.path.join(str(tmp_path), 'results'))


PROBE = os.path.join(ROOT, 'configs', 'benchmarks', 'mmpretrain',
                     'vit-tiny-p4_linear-probe-10e_fashionmnist.py')
TINY = dict(
    linear=dict(train_samples=100, epochs=1),
    fewshot=dict(fraction=0.0005, folds=2),
    test_samples=100,
    precision='float32')

needs_data = pytest.mark.skipif(
    not os.path.isfile(
        os.path.join(ROOT, 'data', 'fashion_mnist', 't10k-labels-idx1-ubyte')),
    reason='Fashion-MNIST not prepared (tools/setup_env.sh does it)')


def _tiny(work_dir, **knn):
    return FrozenBackboneProtocol(
        PROBE,
        work_dir=str(work_dir),
        knn=dict(k=20, temperature=0.07, **knn),
        **TINY)


@needs_data
def test_the_probes_images_as_the_knn_bank_are_encoded_once(
        tmp_path, monkeypatch):
    encoded = []
    batch_features = frozen_features.batch_features

    def counting(model, data_batch, **kwargs):
        encoded.append(len(data_batch['inputs']))
        return batch_features(model, data_batch, **kwargs)

    monkeypatch.setattr(frozen_features, 'batch_features', counting)
    scores, counts, subsets = {}, {}, {}
    for bank, knn in (('own', dict(train_samples=100)), ('probe',
                                                         dict(bank='probe'))):
        protocol = _tiny(tmp_path / bank, **knn)
        subsets[bank] = protocol.subsets()
        encoded.clear()
        scores[bank] = protocol.evaluate('random_init', None)
        counts[bank] = sum(encoded)
    own, probe = subsets['own'], subsets['probe']
    np.testing.assert_array_equal(probe['knn'], probe['probe'])
    # the shared bank is drawn first, as the own bank is: the same images
    np.testing.assert_array_equal(probe['knn'], own['knn'])
    assert not np.array_equal(own['knn'], own['probe'])
    np.testing.assert_array_equal(probe['few'], own['few'])
    # the bank's features are the probe's unflipped view: the same scores
    assert scores['probe']['knn'] == scores['own']['knn']
    assert scores['probe']['fewshot'] == scores['own']['fewshot']
    few = len(own['few'])
    assert counts['own'] == 100 + few + 100 + 2 * 100
    assert counts['probe'] == few + 100 + 2 * 100
    assert 'bank' in json.dumps(
        json.load(open(tmp_path / 'probe' / 'results' /
                       'random_init.json'))['settings'])


@needs_data
def test_a_second_row_reads_the_first_rows_pipeline_batches(
        tmp_path, monkeypatch):
    made = []
    collate = frozen_features.collate_samples

    def counting(samples):
        made.append(len(samples))
        return collate(samples)

    monkeypatch.setattr(frozen_features, 'collate_samples', counting)
    protocol = _tiny(tmp_path / 'one', bank='probe')
    first = protocol.evaluate('a', None)
    few = len(protocol.subsets()['few'])
    # the few-shot and test images and the probe's two views
    assert sum(made) == few + 100 + 2 * 100
    second = protocol.evaluate('b', None)
    assert sum(made) == few + 100 + 2 * 100
    # a protocol of its own, running every pipeline: the same scores
    alone = _tiny(tmp_path / 'two', bank='probe').evaluate('b', None)
    assert sum(made) == 2 * (few + 100 + 2 * 100)
    assert first == second == alone


def test_the_knn_bank_is_a_setting_old_results_keep(tmp_path):
    before = _tiny(tmp_path / 'a', train_samples=100)
    own = _tiny(tmp_path / 'b', train_samples=100, bank='own')
    probe = _tiny(tmp_path / 'c', bank='probe')
    for p in (before, own, probe):
        p.work_dir = ''
    # an explicit 'own' bank is the protocol results were stored under
    assert own.settings() == before.settings()
    assert own.subset_settings() == before.subset_settings()
    assert own.knn == before.knn  # what PixelFloors stores
    # the claim's config (bank 'own' pinned) stores what its results hold
    from projects.common.evaluation.protocol import stored_knn
    study = Config.fromfile(
        os.path.join(ROOT, 'projects', 'claim', 'configs', 'claim_study.py'))
    from projects.common.results import read_results
    stored = read_results('claim')['data']['settings']
    assert stored_knn(study.evaluation.knn) == \
        stored['evaluation']['knn'] == stored['pixel_floors']['knn']
    assert probe.settings()['knn']['bank'] == 'probe'
    # the probe's count spelt out is the same protocol, stored alike
    spelt = _tiny(tmp_path / 'e', bank='probe', train_samples=100)
    spelt.work_dir = ''
    assert spelt.settings() == probe.settings()
    assert 'train_samples' not in probe.knn
    assert probe.subset_settings()['knn_bank'] == 'probe'
    cfg = probe.config()
    assert probe.shares_bank(cfg) and not own.shares_bank(cfg)
    runner = FrozenBackboneProtocol(
        PROBE,
        work_dir=str(tmp_path / 'd'),
        knn=dict(k=20, temperature=0.07, bank='probe'),
        **dict(
            TINY, linear=dict(train_samples=100, epochs=1, engine='runner')))
    assert not runner.shares_bank(cfg)


@pytest.mark.parametrize('knn, words', [
    (dict(bank='probe', train_samples=50),
     "knn.bank='probe' is the linear probe's 100 training images, but "
     'knn.train_samples=50'),
    (dict(bank='pool', train_samples=100),
     "knn.bank='pool': choose one of ('own', 'probe')"),
    (dict(bank='own'), 'knn.train_samples: missing'),
    (dict(), 'knn.train_samples: missing'),
])
def test_a_bank_the_settings_cannot_give_is_refused_by_key(
        tmp_path, knn, words):
    with pytest.raises(ValueError, match=re.escape(words)):
        _tiny(tmp_path, **knn)
    assert not os.path.exists(tmp_path / 'results')


def test_knn_curve_reads_every_run_of_a_work_dir(tmp_path):
    for run, steps in (('20260101_000000', (0, 100)),
                       ('20260101_010000', (100, 200))):  # a resume
        vis = tmp_path / run / 'vis_data'
        vis.mkdir(parents=True)
        with open(vis / 'scalars.json', 'w') as f:
            for step in steps:
                f.write(
                    json.dumps({
                        'knn/top1': 50. + step / 10,
                        'knn/top5': 90.,
                        'knn/bank': 5000,
                        'knn/queries': 1000,
                        'step': step
                    }) + '\n')
            # the logger's training records are not kNN rounds
            f.write(json.dumps({'loss': 1., 'iter': 10, 'step': 10}) + '\n')
    recs = read_knn_scalars(str(tmp_path))
    assert [r['step'] for r in recs] == [0, 100, 200]
    assert recs[1]['knn/top1'] == 60.  # the resumed run's round wins
    path = tmp_path / 'knn_curve.png'
    plot_knn_curve({'siameseim': recs}, str(path))
    assert path.stat().st_size > 10_000
