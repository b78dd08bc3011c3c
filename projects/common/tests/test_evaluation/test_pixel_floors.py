"""Raw pixels through the protocol as features go (kNN, linear probe and
few-shot, neither centred nor scaled), beside a seeded random projection
matched in width; stored and reused under the same settings."""
import os

import pytest
import torch
from mmengine.config import Config

from mmsiameseim.evaluation.cached_linear_probe import train_probe_on_features
from mmsiameseim.evaluation.knn import weighted_knn_accuracy
from projects.common.evaluation import (FrozenBackboneProtocol, PixelFloors,
                                        raw_images, vector_probe_config)
from tests.helpers import ROOT

DATA = os.path.join(ROOT, 'data', 'fashion_mnist')
needs_data = pytest.mark.skipif(
    not os.path.exists(os.path.join(DATA, 't10k-labels-idx1-ubyte')),
    reason='Fashion-MNIST not prepared (tools/setup_env.sh does it)')


def test_the_probe_config_trains_on_vectors_of_any_width():
    """Pixels get the probe config's own neck, head, optimizer and
    schedule, widened to the vectors; the flipped view is drawn in."""
    cfg = Config.fromfile(
        os.path.join(ROOT, 'configs', 'benchmarks', 'mmpretrain',
                     'vit-tiny-p4_linear-probe-10e_fashionmnist.py'))
    wide = vector_probe_config(cfg, 8)
    assert wide.model.neck.input_features == 8
    assert wide.model.head.in_channels == 8
    assert wide.optim_wrapper == cfg.optim_wrapper
    assert cfg.model.head.in_channels == 128  # the config is not changed
    gen = torch.Generator().manual_seed(0)
    x = torch.randn(3200, 8, generator=gen) + 3  # far from zero: BN centres
    y = (x[:, 0] > 3).long()
    acc = train_probe_on_features(
        wide, [x[:3000]], y[:3000], x[3000:], y[3000:], epochs=5)
    assert acc > 90
    # labels that only the flipped vectors carry pull the probe away
    flipped = x.clone()
    flipped[:, 0] = 6 - x[:, 0]
    acc_flip = train_probe_on_features(
        wide, [x[:3000], flipped[:3000]],
        y[:3000],
        x[3000:],
        y[3000:],
        flip_prob=0.5,
        epochs=5)
    assert acc_flip < acc


@needs_data
def test_pixels_go_through_the_protocol_as_features_do(tmp_path):
    smoke = Config.fromfile(
        os.path.join(ROOT, 'projects', 'claim', 'configs',
                     'claim_study_smoke.py'))
    protocol = FrozenBackboneProtocol.from_cfg(
        smoke.evaluation,
        work_dir=str(tmp_path),
        data_prefix=DATA,
        precision='float32')
    floors = PixelFloors(protocol, projection_dim=256, projection_seed=3)
    result = floors.evaluate()
    raw, proj = result['raw'], result['projection']
    assert raw['dim'] == 28 * 28 and proj['dim'] == 256 and proj['seed'] == 3
    for r in (raw, proj):
        for key in ('knn', 'linear', 'fewshot'):
            assert 10 < r[key] <= 100  # above chance on 10 classes
    # kNN on the pixels as they are stored (no centring: the features
    # are not centred either), on the protocol's own images
    cfg = protocol.config()
    subsets = protocol.subsets()
    bank, bank_y = raw_images(cfg.train_dataloader.dataset, subsets['knn'])
    test, test_y = raw_images(cfg.test_dataloader.dataset, subsets['test'])
    expected = weighted_knn_accuracy(
        torch.from_numpy(bank.reshape(len(bank), -1)).float(),
        torch.from_numpy(bank_y),
        torch.from_numpy(test.reshape(len(test), -1)).float(),
        torch.from_numpy(test_y),
        k=protocol.knn['k'],
        temperature=protocol.knn['temperature'])['top1']
    assert raw['knn'] == pytest.approx(expected)
    # stored and reused; another projection is refused by name
    floors._score = None  # a recomputation would fail
    assert floors.evaluate() == result
    with pytest.raises(ValueError, match='projection_dim'):
        PixelFloors(protocol, projection_dim=128).evaluate()
    with pytest.raises(ValueError, match='projection_dim=0'):
        PixelFloors(protocol, projection_dim=0)


@needs_data
def test_without_a_projection_only_the_raw_pixels_are_scored(tmp_path):
    """The demo's floor: raw pixels alone, the same scores as with a
    projection beside them."""
    smoke = Config.fromfile(
        os.path.join(ROOT, 'projects', 'claim', 'configs',
                     'claim_study_smoke.py'))

    def floors(work_dir, **kwargs):
        protocol = FrozenBackboneProtocol.from_cfg(
            smoke.evaluation,
            work_dir=str(work_dir),
            data_prefix=DATA,
            precision='float32')
        return PixelFloors(protocol, **kwargs)

    alone = floors(tmp_path / 'alone')
    result = alone.evaluate()
    assert set(result) == {'raw'}
    assert alone.settings()['projection_dim'] is None
    both = floors(tmp_path / 'both', projection_dim=64).evaluate()
    assert result['raw'] == both['raw']
    alone._score = None  # stored: a recomputation would fail
    assert alone.evaluate() == result
