"""The frozen-backbone protocol's settings: the linear probe's engine is a
stored setting, and a probe config or precision it cannot honour is refused
when the protocol is built, before any work."""
import pytest

from projects.common.evaluation import FrozenBackboneProtocol
from tests.helpers import ROOT

PROBE = f'{ROOT}/configs/benchmarks/mmpretrain/' \
    'vit-tiny-p4_linear-probe-10e_fashionmnist.py'
TINY = dict(
    knn=dict(k=5, temperature=0.07, train_samples=10),
    fewshot=dict(fraction=0.01))


def test_a_probe_config_the_cached_probe_cannot_follow_is_refused_first(
        tmp_path):
    """The cached probe's own refusals (tests/test_evaluation/
    test_cached_linear_probe.py) reach the protocol before any work; the
    Runner engine is still open to that config."""
    from mmsiameseim.evaluation import probe_config
    cfg = probe_config(PROBE)
    cfg.model.neck = dict(type='LinearNeck', in_channels=128, out_channels=128)
    path = tmp_path / 'probe.py'
    cfg.dump(str(path))
    with pytest.raises(ValueError, match=r'model\.neck\.type'):
        FrozenBackboneProtocol(
            str(path),
            str(tmp_path / 'eval'),
            linear=dict(train_samples=10, epochs=1),
            **TINY)
    assert not (tmp_path / 'eval').exists()
    FrozenBackboneProtocol(
        str(path),
        str(tmp_path / 'eval'),
        linear=dict(train_samples=10, epochs=1, engine='runner'),
        **TINY)


def test_the_engine_is_a_stored_setting(tmp_path):
    cached = FrozenBackboneProtocol(
        PROBE, str(tmp_path), linear=dict(train_samples=10, epochs=1), **TINY)
    runner = FrozenBackboneProtocol(
        PROBE,
        str(tmp_path),
        linear=dict(train_samples=10, epochs=1, engine='runner'),
        **TINY)
    assert cached.settings()['linear'] == dict(
        train_samples=10, epochs=1, engine='cached')
    # as results stored before the engine existed (the Runner's) say
    assert runner.settings()['linear'] == dict(train_samples=10, epochs=1)
    assert 'both flips cached once' in cached.describe()[1]
    assert "mmengine's Runner" in runner.describe()[1]
    with pytest.raises(ValueError, match=r"linear\.engine='gpu'"):
        FrozenBackboneProtocol(
            PROBE,
            str(tmp_path),
            linear=dict(train_samples=10, epochs=1, engine='gpu'),
            **TINY)


def test_the_protocol_refuses_an_unknown_precision_when_built(tmp_path):
    with pytest.raises(
            ValueError, match='FrozenBackboneProtocol '
            "precision='bf16'"):
        FrozenBackboneProtocol({}, str(tmp_path), {}, {}, {}, precision='bf16')
