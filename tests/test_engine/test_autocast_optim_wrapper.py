import warnings

import pytest
import torch

import mmsiameseim  # noqa: F401
from mmsiameseim.engine.optimizers import AutocastOptimWrapper


def _wrapper(dtype):
    model = torch.nn.Linear(2, 2)
    return model, AutocastOptimWrapper(
        dtype=dtype, optimizer=torch.optim.SGD(model.parameters(), lr=0.1))


def test_bfloat16_autocasts_without_warnings():
    model, wrapper = _wrapper('bfloat16')
    with warnings.catch_warnings():
        warnings.simplefilter('error')
        with wrapper.optim_context(model):
            assert torch.is_autocast_enabled('cpu')
            assert model(torch.ones(1, 2)).dtype == torch.bfloat16
    assert not torch.is_autocast_enabled('cpu')


def test_float32_is_refused_pointing_to_the_one_fp32_route():
    """Before: dtype='float32' was a second route to fp32 beside
    mmengine's OptimWrapper (and autocast asked for float32 on CPU warns
    'not supported, disabling')."""
    with pytest.raises(
            ValueError,
            match="dtype='float32': float32 is no "
            "autocast; train it with mmengine's OptimWrapper.*"
            r"set_training_precision\(cfg, 'float32'\)"):
        _wrapper('float32')


def test_unknown_dtype_is_named_with_the_vocabulary():
    with pytest.raises(
            ValueError,
            match="AutocastOptimWrapper dtype='fp32'"
            r": choose from \['float32', 'bfloat16', 'float16'\] "
            r"\('fp32' is a tools' --precision flag"):
        _wrapper('fp32')
    with pytest.raises(ValueError, match="dtype='half'"):
        _wrapper('half')
