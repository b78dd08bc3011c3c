"""Projects/common/authors: the authors' step behind our benchmark.

Their code is not shipped; a stand-in checkout (their module layout, their
constructor and forward signatures, and the three imports that broke on today's
torch, numpy and timm) proves the loading and the call.
"""
import json
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest
import torch

ROOT = os.path.dirname(
    os.path.dirname(
        os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
TOOLS = os.path.join(ROOT, 'tools')

STAND_IN = {
    'util/__init__.py':
    '',
    'util/misc.py':
    '''
        import torch.nn as nn
        from torch._six import inf  # gone since torch 2.0


        class LayerNorm(nn.LayerNorm):
            pass
        ''',
    'models_sim.py':
    '''
        import numpy as np
        import torch
        import torch.nn as nn
        from timm.models.layers.helpers import to_2tuple  # timm 0.6 path

        CALLS = []


        class SiameseIMViT(nn.Module):
            def __init__(self, img_size=224, patch_size=16, in_chans=3,
                         embed_dim=1024, depth=24, num_heads=16,
                         decoder_embed_dim=512, decoder_depth=8,
                         decoder_num_heads=16, mlp_ratio=4.,
                         norm_layer=None, norm_pix_loss=False, args=None):
                super().__init__()
                assert np.float is float  # gone since numpy 1.24
                self.args = args
                self.grid = to_2tuple(img_size // patch_size)
                self.proj = nn.Linear(3 * patch_size**2,
                                      args.decoder_embed_dim)
                self.norm = norm_layer(args.decoder_embed_dim)
                self.patch = patch_size

            def forward(self, x1, x2, rel_pos_21, mm, update_mm, mask=None):
                CALLS.append((mm, update_mm, len(rel_pos_21)))
                assert mask.shape == (x1.shape[0], *self.grid)
                p = self.patch
                tokens = x1.unfold(2, p, p).unfold(3, p, p)
                tokens = tokens.permute(0, 2, 3, 1, 4, 5).flatten(3)
                loss = self.norm(self.proj(tokens)).pow(2).mean()
                total = loss.detach().clone()
                torch.distributed.all_reduce(total)  # needs a group
                return loss, dict(loss_sim=total.item())
        ''',
}


@pytest.fixture
def stand_in_repo(tmp_path):
    for name, text in STAND_IN.items():
        path = tmp_path / name
        path.parent.mkdir(exist_ok=True)
        path.write_text(textwrap.dedent(text))
    return str(tmp_path)


def _tool():
    from projects.common import authors
    return authors


def test_rel_pos_is_their_tuple_for_the_parity_fixture(parity_fixture):
    tool = _tool()
    inputs = parity_fixture['inputs']
    mask = inputs['mask']
    data = tool.batch(inputs['crop_boxes'].numpy(), inputs['flips'].numpy(),
                      mask.numpy(), np.full(len(mask), 64.), 32, 'cpu')
    expected = inputs['official_rel_pos']
    assert len(data['rel_pos']) == 6
    for name, got in zip(tool.REL_POS_ORDER, data['rel_pos']):
        want = expected[name]
        if want.dtype == torch.bool:
            assert torch.equal(got, want), name
        else:
            torch.testing.assert_close(
                got, want, rtol=1e-6, atol=1e-6, msg=name)
    assert data['x1'].shape == data['x2'].shape == (4, 3, 32, 32)
    assert torch.equal(data['mask'], mask)


def test_a_folder_without_their_code_is_named(tmp_path):
    with pytest.raises(FileNotFoundError, match='no models_sim.py'):
        _tool().import_models_sim(str(tmp_path))


def test_benchmark_times_the_stand_in_beside_ours(stand_in_repo):
    out = subprocess.run([
        sys.executable,
        os.path.join(ROOT, 'projects', 'speed', 'tools',
                     'pretrain.py'), '--arch', 'deit-t', '--img-size', '32',
        '--batch', '2', '--steps', '1', '--warmup', '1', '--gemm-size', '256',
        '--models', 'siameseim,official', '--official-repo', stand_in_repo,
        '--precision', 'fp32,bf16', '--json'
    ],
                         capture_output=True,
                         text=True,
                         timeout=600,
                         env=dict(
                             os.environ, OMP_NUM_THREADS='1', PYTHONPATH=ROOT))
    assert out.returncode == 0, out.stderr[-2000:]
    # their autocast is torch.cuda.amp: no bf16 row, and the log says so
    assert 'no bf16 row for official' in out.stderr
    res = json.loads(out.stdout.strip().splitlines()[-1])
    rows = {(r['model'], r['precision']): r for r in res['rows']}
    assert set(rows) == {('gemm', 'fp32'), ('siameseim', 'fp32'),
                         ('gemm', 'bf16'), ('siameseim', 'bf16'),
                         ('official', 'fp32')}
    official = rows['official', 'fp32']
    assert official['step_s_median'] > 0 and official['gflop_per_step'] > 0
    assert res['speedup_over_official']['fp32'] == pytest.approx(
        official['step_s_median'] / rows['siameseim', 'fp32']['step_s_median'])
    assert res['step_over_mae'] == {}


def test_official_without_a_checkout_is_refused(tmp_path):
    out = subprocess.run([
        sys.executable,
        os.path.join(ROOT, 'projects', 'speed', 'tools', 'pretrain.py'),
        '--models', 'siameseim,official', '--official-repo',
        str(tmp_path)
    ],
                         capture_output=True,
                         text=True,
                         timeout=60,
                         env=dict(os.environ, PYTHONPATH=ROOT))
    assert out.returncode == 2
    assert '--models official needs --official-repo' in out.stderr
    assert 'no models_sim.py' in out.stderr
