import json
import os
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))
TOOL = os.path.join(ROOT, 'tools', 'benchmark_pretrain.py')


def _run(*extra):
    out = subprocess.run(
        [sys.executable, TOOL, '--arch', 't', '--batch', '2', '--steps', '2',
         '--warmup', '1', '--json', *extra],
        capture_output=True, text=True, timeout=600,
        # one thread: tiny steps are all thread start-up and barriers
        env=dict(os.environ, OMP_NUM_THREADS='1'))
    assert out.returncode == 0, out.stderr[-2000:]
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_both_methods_at_two_precisions_in_one_run():
    res = _run('--img-size', '32', '--precision', 'fp32,bf16')
    rows = {(r['model'], r['precision']): r for r in res['rows']}
    assert set(rows) == {(m, p) for m in ('siameseim', 'mae')
                         for p in ('fp32', 'bf16')}
    for row in rows.values():
        assert 0 < row['step_s_min'] <= row['step_s_median'] \
            <= row['step_s_max']
        assert row['images_per_s'] == pytest.approx(
            2 / row['step_s_median'])
        assert row['gflop_per_s'] == pytest.approx(
            row['gflop_per_step'] / row['step_s_median'])
        # a separate worker per row: its own peak, above an interpreter's
        assert row['peak_mem_mb'] > 100
        assert row['peak_mem_kind'] == 'peak RSS of the worker'
    for precision in ('fp32', 'bf16'):
        s, m = rows['siameseim', precision], rows['mae', precision]
        assert res['step_over_mae']['siameseim'][precision] == pytest.approx(
            s['step_s_median'] / m['step_s_median'])
        assert res['flops_over_mae']['siameseim'][
            precision] == pytest.approx(
            s['gflop_per_step'] / m['gflop_per_step'])
    # autocast changes the precision, not the arithmetic
    assert rows['siameseim', 'bf16']['gflop_per_step'] == pytest.approx(
        rows['siameseim', 'fp32']['gflop_per_step'])
    assert set(res['speedup_over_fp32']) == {'siameseim bf16', 'mae bf16'}
    assert res['lowres_target_speedup'] == {}


def test_low_resolution_target_option_does_less_work():
    res = _run('--img-size', '64', '--models',
               'siameseim,siameseim-lowres,mae', '--target-size', '32')
    rows = {r['model']: r for r in res['rows']}
    assert list(rows) == ['siameseim', 'siameseim-lowres', 'mae']
    assert 0 < rows['siameseim-lowres']['gflop_per_step'] \
        < rows['siameseim']['gflop_per_step']
    assert res['lowres_target_speedup']['fp32'] == pytest.approx(
        rows['siameseim-lowres']['images_per_s'] /
        rows['siameseim']['images_per_s'])
    # every model gets its ratio to MAE: the 1.4x target reads off these
    assert res['step_over_mae']['siameseim-lowres']['fp32'] == pytest.approx(
        rows['siameseim-lowres']['step_s_median'] /
        rows['mae']['step_s_median'])
    assert set(res['flops_over_mae']) == {'siameseim', 'siameseim-lowres'}


@pytest.mark.parametrize('option,message', [
    (['--precision', 'fp8'], "--precision: unknown 'fp8'"),
    (['--precision', 'fp16'], 'fp16 AMP needs --device cuda'),
    (['--models', 'siameseim,beit'], "--models: unknown 'beit'"),
])
def test_bad_options_are_named(option, message):
    out = subprocess.run([sys.executable, TOOL, *option],
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 2
    assert message in out.stderr
