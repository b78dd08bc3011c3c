"""The one helper that finds the non-finite tensors of a state dict (the
converters, the strict Pretrained init and StopOnNonFiniteLossHook all
call it)."""
import pytest
import torch

from mmsiameseim.checkpoint import check_finite, nonfinite_tensors


def test_finds_nan_and_inf_in_float_tensors_only():
    state = {
        'ok': torch.randn(3),
        'nan': torch.tensor([1., float('nan')]),
        'steps': torch.tensor([7]),  # integers cannot hold NaN
        'inf_half': torch.tensor([float('-inf')], dtype=torch.float16),
        'meta': torch.empty(4, device='meta'),  # no values to read
        'not_a_tensor': 'x',
    }
    assert nonfinite_tensors(state) == ['nan', 'inf_half']
    check_finite({'ok': state['ok']}, 'a.pth')  # finite: no error


def test_the_message_names_the_source_each_tensor_and_its_counts():
    state = {
        f'layer{i}.weight': torch.full((2, 5), float('nan'))
        for i in range(7)
    }
    state['layer3.weight'][0] = float('inf')
    state['fine'] = torch.zeros(1)
    with pytest.raises(ValueError) as err:
        check_finite(state, 'work_dirs/x/iter_200.pth')
    message = str(err.value)
    assert message.startswith('work_dirs/x/iter_200.pth: refusing weights '
                              'that are not finite: 7 of 8 tensors hold NaN '
                              'or inf: layer0.weight (10 NaN, 0 inf of 10 '
                              'values)')
    assert 'layer3.weight (5 NaN, 5 inf of 10 values)' in message
    # five spelt out, the rest listed by name
    assert '... (7 in all: layer5.weight, layer6.weight)' in message
