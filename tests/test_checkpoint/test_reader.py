"""The one checkpoint reader: where it looks for the state dict, in which
order, and how it names a file it cannot use."""
import pytest
import torch

from mmsiameseim.checkpoint import (STATE_DICT_KEYS, read_checkpoint_state,
                                    read_state_dict)
from mmsiameseim.checkpoint.strict_pretrained_init import \
    read_state_dict as init_reader

A, B, C = torch.zeros(1), torch.ones(1), torch.full((1, ), 2.)


def test_lookup_order_is_state_dict_then_model_then_the_top(tmp_path):
    assert STATE_DICT_KEYS == ('state_dict', 'model')
    cases = [
        # mmengine's Runner: the weights under 'state_dict'
        ({
            'meta': {},
            'state_dict': {
                'a': A
            },
            'model': {
                'b': B
            }
        }, 'state_dict', {
            'a': A
        }),
        # the authors' training script: under 'model'
        ({
            'model': {
                'b': B
            },
            'epoch': 400,
            'args': 'namespace'
        }, 'model', {
            'b': B
        }),
        # a bare torch.save(model.state_dict())
        ({
            'c': C
        }, None, {
            'c': C
        }),
    ]
    for i, (ckpt, where, state) in enumerate(cases):
        path = tmp_path / f'{i}.pth'
        torch.save(ckpt, path)
        found = read_checkpoint_state(str(path))
        assert found.found_under == where
        assert found.source == str(path)
        assert found.state_dict == state
        assert read_state_dict(str(path)) == state
    found = read_checkpoint_state({'model': {'b': B}})  # already loaded
    assert found.source == 'the checkpoint'
    assert found.where == "under 'model'"
    # every loader of weights reads through this reader
    assert init_reader is read_state_dict


def test_a_ddp_wrapper_prefix_is_removed_and_counted():
    found = read_checkpoint_state(
        {'state_dict': {
            'module.backbone.x': A,
            'head.y': B
        }})
    assert list(found.state_dict) == ['backbone.x', 'head.y']
    assert found.unwrapped == 1
    assert found.where == "under 'state_dict'"


@pytest.mark.parametrize('ckpt, words', [
    ([A, B],
     ['expected a checkpoint dict', "'state_dict' or 'model'", 'got list']),
    ({
        'model': [A],
        'epoch': 3
    }, ["its 'model' entry is a list, not a state dict", "['epoch', 'model']"
        ]),
    ({
        'state_dict': {
            'w': A,
            'meta': {
                'epoch': 3
            }
        }
    }, [
        "holds no state dict of tensors (looked under 'state_dict')",
        'these keys are not tensors: meta'
    ]),
    ({
        'w': A,
        'epoch': 3,
        'lr': 0.1
    }, [
        "looked under 'state_dict', 'model' and at the top",
        'not tensors: epoch, lr'
    ]),
])
def test_what_is_not_a_state_dict_is_named(tmp_path, ckpt, words):
    path = tmp_path / 'odd.pth'
    torch.save(ckpt, path)
    with pytest.raises(ValueError) as err:
        read_checkpoint_state(str(path))
    message = str(err.value)
    assert message.startswith(f'{path}: ')
    for word in words:
        assert word in message, message
    with pytest.raises(ValueError) as err:  # the same, already loaded
        read_checkpoint_state(ckpt)
    assert str(err.value) == message[len(f'{path}: '):]


@pytest.mark.fault_matrix('converters', 'empty',
                          'refused naming the file (not a checkpoint)')
def test_an_empty_file_is_named(tmp_path):
    path = tmp_path / 'empty.pth'
    path.write_bytes(b'')
    with pytest.raises(
            ValueError, match=f'{path}: cannot be read as a '
            'PyTorch checkpoint'):
        read_state_dict(str(path))
    assert path.read_bytes() == b''  # left as it was


@pytest.mark.fault_matrix('converters', 'truncated',
                          'refused naming the file and the loader error')
def test_a_truncated_checkpoint_is_named(tmp_path):
    whole = tmp_path / 'whole.pth'
    torch.save({'state_dict': {'w': torch.randn(64, 64)}}, whole)
    cut = tmp_path / 'cut.pth'
    cut.write_bytes(whole.read_bytes()[:len(whole.read_bytes()) // 2])
    with pytest.raises(ValueError) as err:
        read_state_dict(str(cut))
    assert str(err.value).startswith(f'{cut}: cannot be read as a PyTorch '
                                     'checkpoint (a file written by '
                                     'torch.save was expected; torch.load '
                                     'says ')
    assert 'it is text' not in str(err.value)


@pytest.mark.fault_matrix('converters', 'text',
                          'refused naming the file and how it starts')
def test_a_text_file_says_how_it_starts(tmp_path):
    path = tmp_path / 'notes.pth'
    path.write_text('epoch 400, lr 1.5e-4\n')
    with pytest.raises(ValueError, match="it is text, starting 'epoch 400"):
        read_state_dict(str(path))


@pytest.mark.fault_matrix('converters', 'missing',
                          'FileNotFoundError naming the path')
def test_a_missing_file_is_file_not_found(tmp_path):
    with pytest.raises(FileNotFoundError, match='absent.pth'):
        read_state_dict(str(tmp_path / 'absent.pth'))
