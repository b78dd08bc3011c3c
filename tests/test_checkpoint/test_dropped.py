"""Which dropped checkpoint tensors change what a backbone computes."""
import pytest
import torch

from mmsiameseim.checkpoint import changes_function, check_dropped
from tests.helpers import logged_warnings


@pytest.mark.parametrize('key,value,why', [
    ('cls_token', torch.randn(1, 1, 8), None),
    ('ln1.weight', torch.randn(8), None),
    ('layers.0.attn.relative_position_index', torch.arange(9), None),
    ('layers.0.gamma_1', torch.ones(8), None),
    ('layers.0.gamma_1', torch.full((8, ), 0.1), 'layer scale, not all 1'),
    ('layers.1.gamma2.weight', torch.full((8, ), 2.), 'layer scale'),
    ('layers.0.attn.relative_position_bias_table', torch.zeros(5, 2), None),
    ('layers.0.attn.rel_pos_h', torch.ones(
        7, 2), 'relative position table, not zero'),
    ('layers.0.attn.q_bias', torch.zeros(8), 'a block weight'),
])
def test_what_changes_the_function(key, value, why):
    found = changes_function(key, value)
    assert (found is None) == (why is None), found
    assert why is None or why in found


def test_dropped_tensors_are_named_at_warning_and_refused_when_they_matter():
    with logged_warnings() as warned:
        check_dropped({}, model='M', source='f.pth')
        check_dropped({'cls_token': torch.zeros(1, 1, 8)},
                      model='M',
                      source='f.pth')
    assert warned == [
        'f.pth: M drops 1 tensors of the checkpoint it has no place for: '
        'cls_token'
    ]
    gamma = {'layers.3.gamma_2': torch.full((8, ), 0.5)}
    with pytest.raises(ValueError) as e:
        check_dropped(gamma, model='M', source='f.pth')
    assert 'layers.3.gamma_2 (layer scale, not all 1 (0.5 to 0.5))' in str(
        e.value)
    assert 'model.backbone.init_cfg.allow_dropped=True' in str(e.value)
    with logged_warnings() as warned:
        check_dropped(gamma, model='M', source='f.pth', allow_dropped=True)
    assert 'computes another function than the checkpoint' in warned[0]
