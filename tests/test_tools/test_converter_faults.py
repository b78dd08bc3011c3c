"""The fault matrix of the checkpoint converters
(tools/model_converters/*.py over mmsiameseim.apis): every bad input is
refused with a message naming the file, what was expected and what was
found; the input is left as it was and no output is written."""
import os

import pytest
import torch

from tests.helpers import (load_tool, save_resnet18_checkpoint,
                           tiny_siameseim_cfg)
from tests.user_files import snapshot

# tool, the kind of checkpoint it reads, extra arguments
TOOLS = {
    'mmsiameseim_to_mmpretrain.py': ('ours', []),
    'mmsiameseim_to_timm.py': ('ours', []),
    'official_to_mmsiameseim.py':
    ('official', ['--num-heads', '4', '--decoder-num-heads', '4']),
}
# a tensor of the encoder in each kind's own key names
NAMES = {
    'ours': ('backbone.layers.1.attn.qkv.weight', 'backbone.cls_token'),
    'official': ('blocks.1.attn.qkv.weight', 'cls_token'),
}


@pytest.fixture(scope='module')
def states(parity_fixture):
    """A state dict of each kind: our tiny SiameseIM as mmengine's Runner
    saves it, and the authors' format (the parity fixture)."""
    from mmpretrain.registry import MODELS

    import mmsiameseim  # noqa: F401
    model = MODELS.build(tiny_siameseim_cfg())
    model.init_weights()
    return dict(
        ours={
            'meta': {
                'epoch': 1
            },
            'state_dict': model.state_dict()
        },
        official={'model': parity_fixture['official_state_dict']})


def _convert(tool, src, dst):
    """Run the tool's ``main`` in this process; its exit message (None on
    success)."""
    extra = TOOLS[tool][1]
    try:
        load_tool(os.path.join('model_converters',
                               tool)).main([str(src),
                                            str(dst), *extra])
    except SystemExit as e:
        return str(e.code)
    return None


def _weights(ckpt):
    return ckpt.get('state_dict', ckpt.get('model'))


@pytest.mark.fault_matrix(
    'converters', 'nonfinite',
    'refused: the file and each NaN/inf tensor named '
    'with its counts; no output')
@pytest.mark.parametrize('tool', sorted(TOOLS))
def test_nonfinite_weights_are_refused_naming_file_and_tensors(
        tmp_path, states, tool):
    """Before: converted, exit status 0."""
    kind = TOOLS[tool][0]
    ckpt = {
        k: dict(v) if isinstance(v, dict) else v
        for k, v in states[kind].items()
    }
    weights = _weights(ckpt)
    nan_key, inf_key = NAMES[kind]
    weights[nan_key] = weights[nan_key].clone()
    weights[nan_key][0, :3] = float('nan')
    weights[inf_key] = weights[inf_key].clone()
    weights[inf_key].view(-1)[0] = float('inf')
    src, dst = tmp_path / 'diverged.pth', tmp_path / 'out' / 'out.pth'
    torch.save(ckpt, src)
    before = snapshot(tmp_path)

    message = _convert(tool, src, dst)
    assert message is not None, 'converted non-finite weights'
    assert message.startswith(f'{src}: refusing weights that are not '
                              'finite: 2 of ')
    n = weights[nan_key].numel()
    assert f'{nan_key} (3 NaN, 0 inf of {n} values)' in message
    assert f'{inf_key} (0 NaN, 1 inf of ' in message
    assert snapshot(tmp_path) == before  # src as it was, no output


def _damaged(kind, fault, src, states):
    if fault == 'empty':
        src.write_bytes(b'')
    elif fault == 'truncated':
        torch.save(states[kind], src)
        data = src.read_bytes()
        src.write_bytes(data[:len(data) // 2])
    elif fault == 'text':
        src.write_text('version https://git-lfs.github.com/spec/v1\n'
                       'oid sha256:4d7a\nsize 1234\n')


@pytest.mark.parametrize('fault', [
    pytest.param(
        'missing',
        marks=pytest.mark.fault_matrix(
            'converters', 'missing', 'refused naming the file (No such file); '
            'no output')),
    pytest.param(
        'empty',
        marks=pytest.mark.fault_matrix(
            'converters', 'empty', 'refused: the file cannot be read as a '
            'PyTorch checkpoint (torch.load\'s error quoted); no output')),
    pytest.param(
        'truncated',
        marks=pytest.mark.fault_matrix(
            'converters', 'truncated', 'refused: the file cannot be read as a '
            'PyTorch checkpoint (torch.load\'s error quoted); no output')),
    pytest.param(
        'text',
        marks=pytest.mark.fault_matrix(
            'converters', 'text', 'refused: not a PyTorch checkpoint, "it is '
            'text, starting ..."; no output')),
])
@pytest.mark.parametrize('tool', sorted(TOOLS))
def test_unreadable_inputs_are_named_and_nothing_is_written(
        tmp_path, states, tool, fault):
    src, dst = tmp_path / 'in.pth', tmp_path / 'out.pth'
    _damaged(TOOLS[tool][0], fault, src, states)
    before = snapshot(tmp_path)
    message = _convert(tool, src, dst)
    assert message is not None and message.startswith(f'{src}: ')
    if fault == 'missing':
        assert 'No such file' in message
    else:
        assert 'cannot be read as a PyTorch checkpoint (a file written by ' \
            'torch.save was expected; torch.load says' in message
    if fault == 'text':
        assert "it is text, starting 'version https://git-lfs" in message
    assert snapshot(tmp_path) == before


@pytest.mark.fault_matrix(
    'converters', 'architecture',
    'refused: the file, the keys expected and the '
    'keys it holds, in its own names; no output')
@pytest.mark.parametrize('tool', sorted(TOOLS))
def test_another_architecture_is_refused_naming_expected_and_found(
        tmp_path, tool):
    src, dst = tmp_path / 'resnet18.pth', tmp_path / 'out.pth'
    save_resnet18_checkpoint(src)
    before = snapshot(tmp_path)
    message = _convert(tool, src, dst)
    assert message is not None and message.startswith(f'{src}: ')
    assert 'cls_token' in message  # what was expected
    assert 'conv1.weight' in message  # what the file holds
    assert snapshot(tmp_path) == before


@pytest.mark.fault_matrix(
    'converters', 'architecture',
    'an official checkpoint whose widths disagree: '
    'refused naming each tensor and both shapes')
def test_official_tensor_of_another_width_is_named_with_both_shapes(
        tmp_path, states):
    ckpt = {'model': dict(states['official']['model'])}
    ckpt['model']['decoder_pos_mlp.weight'] = torch.zeros(64, 96)
    src, dst = tmp_path / 'official.pth', tmp_path / 'out.pth'
    torch.save(ckpt, src)
    before = snapshot(tmp_path)
    message = _convert('official_to_mmsiameseim.py', src, dst)
    assert message is not None and message.startswith(f'{src}: ')
    assert 'decoder_pos_mlp.weight: checkpoint shape (64, 96), expected ' \
        '(64, 128)' in message
    assert snapshot(tmp_path) == before


@pytest.mark.fault_matrix(
    'converters', 'mid_write', 'the output is written to a temporary file and '
    'renamed: an earlier output keeps its bytes')
@pytest.mark.parametrize('tool', sorted(TOOLS))
def test_a_kill_mid_write_leaves_the_earlier_output(tmp_path, states, tool,
                                                    monkeypatch):
    """Before: torch.save wrote into OUT itself, so the kill left OUT cut
    short."""
    src, dst = tmp_path / 'in.pth', tmp_path / 'out.pth'
    torch.save(states[TOOLS[tool][0]], src)
    assert _convert(tool, src, dst) is None
    before = snapshot(tmp_path)
    real_save = torch.save

    def killed_mid_write(obj, f, *args, **kwargs):
        real_save({'partial': torch.zeros(8)}, f)
        raise KeyboardInterrupt  # what SIGINT raises mid-write

    monkeypatch.setattr(torch, 'save', killed_mid_write)
    with pytest.raises(KeyboardInterrupt):
        _convert(tool, src, dst)
    assert snapshot(tmp_path) == before  # no temporary file left either


@pytest.mark.parametrize('tool', sorted(TOOLS))
def test_the_output_may_not_replace_the_input(tmp_path, states, tool):
    src = tmp_path / 'in.pth'
    torch.save(states[TOOLS[tool][0]], src)
    before = snapshot(tmp_path)
    message = _convert(tool, src, f'{tmp_path}/./in.pth')  # same file
    assert message == (f'{tmp_path}/./in.pth: the output would replace the '
                       'input checkpoint; give another output path')
    assert snapshot(tmp_path) == before
