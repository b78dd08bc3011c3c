import pytest
import torch
from mmpretrain.registry import MODELS

import mmsiameseim  # noqa: F401


def test_global_loss_is_the_loss_of_token_averages():
    torch.manual_seed(0)
    p, t = torch.randn(4, 9, 8), torch.randn(4, 9, 8)
    loss = dict(type='UniGradLoss', target_norm='moco-like')
    dense = MODELS.build(dict(type='UniGradHead', loss=loss))
    glob = MODELS.build(dict(type='UniGradHead', loss=loss,
                             loss_type='global'))
    torch.testing.assert_close(
        glob.loss(p, t), dense.loss_module(p.mean(1), t.mean(1)))
    torch.testing.assert_close(dense.loss(p, t), dense.loss_module(p, t))
    assert not torch.allclose(glob.loss(p, t), dense.loss(p, t))


def test_bad_loss_type_and_shapes_are_refused():
    with pytest.raises(ValueError, match="'dense' or 'global'"):
        MODELS.build(dict(type='UniGradHead', loss_type='avg'))
    head = MODELS.build(dict(type='UniGradHead'))
    with pytest.raises(ValueError, match='same shape'):
        head.loss(torch.randn(2, 3, 4), torch.randn(2, 3, 5))
