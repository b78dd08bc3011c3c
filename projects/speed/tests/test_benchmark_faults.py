"""The fault matrix of the benchmark tools (projects/speed/tools/ and
tools/evaluation/*_eval.py): bad options and input files are refused
before anything is built, naming the option or file; a kill while writing
``--out`` leaves the earlier file."""
import json
import os
import os.path as osp

import pytest
import torch
from mmengine.config import Config

from projects.speed.pipeline import step_rate_from_json
from tests.helpers import ROOT, load_tool
from tests.user_files import snapshot

PROBE = osp.join(ROOT, 'configs', 'benchmarks', 'mmpretrain',
                 'vit-tiny-p4_linear-probe-10e_fashionmnist.py')
needs_data = pytest.mark.skipif(
    not osp.isfile(
        osp.join(ROOT, 'data', 'fashion_mnist', 't10k-labels-idx1-ubyte')),
    reason='Fashion-MNIST not prepared (tools/setup_env.sh does it)')


def _usage_error(capsys, tool, argv, entry='main'):
    """Run the tool's ``entry`` on ``argv``; argparse's message (exit 2)."""
    with pytest.raises(SystemExit) as exit_:
        getattr(load_tool(tool), entry)(argv)
    assert exit_.value.code == 2
    return capsys.readouterr().err


@pytest.mark.fault_matrix(
    'benchmarks', 'samples', 'a count or size below 1 (--batch, --steps, '
    '--images, --tokens, --k, --train-samples ...): '
    'refused by argparse naming the option (exit 2)')
@pytest.mark.parametrize('tool, argv, entry, words', [
    ('projects/speed/tools/pretrain.py', ['--batch', '0'], 'parse_args',
     'argument --batch: at least 1, got 0'),
    ('projects/speed/tools/pretrain.py', ['--steps', '-1'], 'parse_args',
     'argument --steps: at least 1, got -1'),
    ('projects/speed/tools/attention.py', ['--repeats', '0'], 'main',
     'argument --repeats: at least 1, got 0'),
    ('projects/speed/tools/unigrad.py', ['--tokens', '0'], 'main',
     'argument --tokens: at least 1, got 0'),
    ('projects/speed/tools/pipeline.py', ['--images', '0'], 'main',
     'argument --images: at least 1, got 0'),
    ('evaluation/knn_eval.py', [PROBE, '--train-samples', '0'], 'main',
     '--train-samples 0: at least 1 (leave it out for the whole training '
     'set)'),
    ('evaluation/knn_eval.py', [PROBE, '--k', '0'
                                ], 'main', '--k 0: at least 1'),
])
def test_counts_below_one_are_refused_naming_the_option(
        capsys, tool, argv, entry, words):
    """Before: --batch 0 failed inside a worker, --train-samples 0 silently
    used the whole training set."""
    assert words in _usage_error(capsys, tool, argv, entry)


@pytest.mark.fault_matrix(
    'benchmarks', 'architecture',
    'an image size that is not a whole number of '
    'patches, or an unknown arch: refused naming the '
    'option (exit 2)')
@pytest.mark.parametrize('tool, argv, entry, words', [
    ('projects/speed/tools/pretrain.py', ['--img-size', '100'], 'parse_args',
     '--img-size 100: a multiple of the patch size 16 was expected'),
    ('projects/speed/tools/attention.py', [
        '--img-size', '64', '--patch-size', '12'
    ], 'main', '--img-size 64: a multiple of the patch size 12 was expected'),
    ('projects/speed/tools/pretrain.py', ['--arch', 't'], 'parse_args',
     "argument --arch: invalid choice: 't'"),
])
def test_a_model_shape_that_cannot_be_built_is_refused(capsys, tool, argv,
                                                       entry, words):
    assert words in _usage_error(capsys, tool, argv, entry)


@pytest.mark.parametrize('fault, content', [
    pytest.param(
        'missing',
        None,
        marks=pytest.mark.fault_matrix(
            'benchmarks', 'missing', '--pretrain-json or --config missing: '
            'refused naming the file')),
    pytest.param(
        'empty',
        '',
        marks=pytest.mark.fault_matrix(
            'benchmarks', 'empty', '--pretrain-json empty: refused naming the '
            'file and what it should hold')),
    pytest.param(
        'truncated',
        '{"rows": [{"model": "siameseim", "images_',
        marks=pytest.mark.fault_matrix(
            'benchmarks', 'truncated', '--pretrain-json cut short: '
            'refused naming the file and the JSON error')),
    pytest.param(
        'text',
        'siameseim 3.35 img/s\n',
        marks=pytest.mark.fault_matrix(
            'benchmarks', 'text', '--pretrain-json not JSON: '
            'refused naming the file and the JSON error')),
])
def test_a_bad_pretrain_json_is_named(tmp_path, fault, content):
    """Before: an empty file gave an IndexError traceback."""
    path = tmp_path / 'pretrain.json'
    if content is not None:
        path.write_text(content)
    before = snapshot(tmp_path)
    with pytest.raises(SystemExit) as exit_:
        step_rate_from_json(str(path))
    assert str(exit_.value.code).startswith(
        f'--pretrain-json {path}: no siameseim images_per_s in a '
        'projects/speed/tools/pretrain.py --json output (')
    assert snapshot(tmp_path) == before


def test_a_missing_pipeline_config_is_named(capsys, tmp_path):
    assert f'--config {tmp_path}/x.py: no such file' in _usage_error(
        capsys, 'projects/speed/tools/pipeline.py',
        ['--config', str(tmp_path / 'x.py')])


def _probe_checkpoint(path, dims=128, nan=False):
    from mmpretrain.registry import MODELS
    cfg = Config.fromfile(PROBE).model
    cfg.backbone.init_cfg = None
    cfg.backbone.arch.update(embed_dims=dims, feedforward_channels=dims * 4)
    cfg.neck.input_features = cfg.head.in_channels = dims
    state = MODELS.build(cfg).state_dict()
    if nan:
        state['backbone.layers.0.attn.qkv.weight'][0, 0] = float('nan')
    torch.save({'state_dict': state}, path)


@pytest.mark.parametrize('dims, nan, words', [
    pytest.param(
        128,
        True,
        'refusing weights that are not finite: 1 of ',
        marks=pytest.mark.fault_matrix(
            'benchmarks', 'nonfinite', 'knn_eval / fewshot_eval: '
            'refused naming the file and each NaN/inf tensor '
            '(exit 1)')),
    pytest.param(
        64,
        False,
        'its tensors do not fit VisionTransformer',
        marks=pytest.mark.fault_matrix(
            'benchmarks', 'architecture', 'knn_eval / fewshot_eval: '
            'a backbone of another width refused naming the '
            'tensors and both shapes (exit 1)')),
])
def test_knn_eval_refuses_a_checkpoint_it_cannot_use(tmp_path, dims, nan,
                                                     words):
    ckpt = tmp_path / 'ckpt.pth'
    _probe_checkpoint(ckpt, dims, nan)
    before = snapshot(tmp_path)
    with pytest.raises(SystemExit) as exit_:
        load_tool('evaluation/knn_eval.py').main([
            PROBE, '--checkpoint',
            str(ckpt), '--out',
            str(tmp_path / 'res.json')
        ])
    message = str(exit_.value.code)
    assert message.startswith(f"error: {ckpt} (prefix 'backbone.'): ")
    assert words in message
    assert snapshot(tmp_path) == before  # and no --out written


@needs_data
@pytest.mark.fault_matrix(
    'benchmarks', 'mid_write',
    'knn_eval / fewshot_eval --out: written under a '
    'temporary name; a kill mid-write keeps the '
    'earlier file')
def test_a_kill_while_writing_out_keeps_the_earlier_file(
        tmp_path, monkeypatch):
    config = tmp_path / 'tiny.py'
    config.write_text(f'_base_ = {PROBE!r}\n'
                      'test_dataloader = dict(dataset=dict(indices=30))\n')
    out = tmp_path / 'res.json'
    argv = [
        str(config), '--train-samples', '20', '--k', '50', '--out',
        str(out)
    ]
    main = load_tool('evaluation/knn_eval.py').main
    main(argv)
    result = json.loads(out.read_text())
    # fewer training images than k: all of them voted, and it says so
    assert (result['k'], result['k_asked'], result['train_samples'],
            result['test_samples']) == (20, 50, 20, 30)
    before = snapshot(out)
    real_replace = os.replace

    def killed(src, dst):
        if str(dst) == str(out):  # the temporary file is written by now
            raise KeyboardInterrupt
        real_replace(src, dst)

    monkeypatch.setattr(os, 'replace', killed)
    with pytest.raises(KeyboardInterrupt):
        main(argv)
    assert snapshot(out) == before
