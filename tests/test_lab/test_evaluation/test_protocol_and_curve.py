"""The frozen-backbone protocol's settings and report text, and the online
kNN curve read back from mmengine's scalars file."""
import json
import os

import pytest
from mmengine.config import Config

from mmsiameseim_lab.evaluation import FrozenBackboneProtocol
from mmsiameseim_lab.visualization import plot_knn_curve, read_knn_scalars
from tests.helpers import ROOT


def test_protocol_text_is_written_from_its_settings(tmp_path):
    demo = Config.fromfile(
        os.path.join(ROOT, 'configs', 'demo', 'fashionmnist_demo.py'))
    protocol = FrozenBackboneProtocol.from_cfg(
        demo.evaluation, work_dir=str(tmp_path), precision='float32')
    text = '\n'.join(protocol.describe())
    assert 'k=20, T=0.07, on 20000 random training images' in text
    assert '3 epoch(s) on 20000 training images' in text
    assert '1.0% of the training labels' in text
    assert '3-fold CV' in text and 'all the test images, in float32' in text
    smoke = Config.fromfile(
        os.path.join(ROOT, 'configs', 'demo', 'fashionmnist_demo_smoke.py'))
    protocol = FrozenBackboneProtocol.from_cfg(
        smoke.evaluation,
        work_dir=str(tmp_path),
        knn=dict(smoke.evaluation.knn, k=5))
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
