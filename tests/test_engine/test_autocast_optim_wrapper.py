import warnings

import pytest
import torch

import mmsiameseim  # noqa: F401
from mmsiameseim.engine.optimizers import AutocastOptimWrapper


def _wrapper(dtype):
    model = torch.nn.Linear(2, 2)
    return model, AutocastOptimWrapper(
        dtype=dtype, optimizer=torch.optim.SGD(model.parameters(), lr=0.1))


def test_float32_is_plain_fp32_without_autocast_warning():
    """Before: autocast asked for float32 on CPU, which warns 'not
    supported, disabling' and only then runs fp32."""
    model, wrapper = _wrapper('float32')
    with warnings.catch_warnings():
        warnings.simplefilter('error')
        with wrapper.optim_context(model):
            assert not torch.is_autocast_enabled('cpu')
            assert model(torch.ones(1, 2)).dtype == torch.float32


def test_bfloat16_autocasts():
    model, wrapper = _wrapper('bfloat16')
    with wrapper.optim_context(model):
        assert model(torch.ones(1, 2)).dtype == torch.bfloat16


def test_unknown_dtype_is_named():
    with pytest.raises(ValueError, match="dtype must be one of .* 'fp32'"):
        _wrapper('fp32')
