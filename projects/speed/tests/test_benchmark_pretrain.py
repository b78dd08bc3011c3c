import json
import os
import subprocess
import sys

import pytest

ROOT = os.path.dirname(
    os.path.dirname(
        os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
TOOL = os.path.join(ROOT, 'projects', 'speed', 'tools', 'pretrain.py')

# one thread: tiny steps are all thread start-up and barriers; this
# checkout's package first
ENV = dict(os.environ, OMP_NUM_THREADS='1', PYTHONPATH=ROOT)


def _run(*extra):
    out = subprocess.run([
        sys.executable, TOOL, '--arch', 'deit-t', '--batch', '2', '--steps',
        '2', '--warmup', '1', '--gemm-size', '256', '--json', *extra
    ],
                         capture_output=True,
                         text=True,
                         timeout=600,
                         env=ENV)
    assert out.returncode == 0, out.stderr[-2000:]
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_both_methods_at_two_precisions_in_one_run():
    res = _run('--img-size', '32', '--precision', 'fp32,bf16')
    rows = {(r['model'], r['precision']): r for r in res['rows']}
    assert set(rows) == {(m, p)
                         for m in ('gemm', 'siameseim', 'mae')
                         for p in ('fp32', 'bf16')}
    for precision in ('fp32', 'bf16'):
        # the GEMM peak of the same run, and each model's fraction of it
        gemm = rows['gemm', precision]
        assert gemm['gflop_per_step'] == pytest.approx(2 * 256**3 / 1e9)
        for model in ('siameseim', 'mae'):
            assert res['fraction_of_gemm_peak'][model][
                precision] == pytest.approx(
                    rows[model, precision]['gflop_per_s'] /
                    gemm['gflop_per_s'])
            assert not rows[model, precision]['compiled']
    for row in rows.values():
        assert 0 < row['step_s_min'] <= row['step_s_median'] \
            <= row['step_s_max']
        assert row['images_per_s'] == pytest.approx(2 / row['step_s_median'])
        assert row['gflop_per_s'] == pytest.approx(row['gflop_per_step'] /
                                                   row['step_s_median'])
        # a separate worker per row: its own peak, above an interpreter's
        assert row['peak_mem_mb'] > 100
        assert row['peak_mem_kind'] == 'peak RSS of the worker'
    for precision in ('fp32', 'bf16'):
        s, m = rows['siameseim', precision], rows['mae', precision]
        assert res['step_over_mae']['siameseim'][precision] == pytest.approx(
            s['step_s_median'] / m['step_s_median'])
        assert res['flops_over_mae']['siameseim'][precision] == pytest.approx(
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
    assert list(rows) == ['gemm', 'siameseim', 'siameseim-lowres', 'mae']
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
    (['--arch', 't'], "--arch: invalid choice: 't'"),
])
def test_bad_options_are_named(option, message):
    out = subprocess.run([sys.executable, TOOL, *option],
                         capture_output=True,
                         text=True,
                         timeout=60,
                         env=ENV)
    assert out.returncode == 2
    assert message in out.stderr


def _spawned_workers(pid):
    """Pids of the worker processes (multiprocessing spawn children) of
    ``pid``."""
    workers = []
    for entry in os.listdir('/proc'):
        if not entry.isdigit():
            continue
        try:
            with open(f'/proc/{entry}/stat') as f:
                ppid = int(f.read().rsplit(')', 1)[1].split()[1])
            with open(f'/proc/{entry}/cmdline', 'rb') as f:
                cmdline = f.read()
        except (OSError, IndexError, ValueError):
            continue  # gone meanwhile
        if ppid == pid and b'spawn_main' in cmdline:
            workers.append(int(entry))
    return workers


@pytest.mark.fault_matrix(
    'benchmarks', 'signal', 'a worker killed (SIGKILL, as the OOM killer): '
    'named with the signal and the likely cause, exit '
    '1, no traceback')
def test_a_worker_that_dies_is_named_with_its_signal():
    """A worker killed as the OOM killer kills (SIGKILL): the tool names
    it, the signal and the likely cause, and exits 1 without a
    traceback (before: a BrokenPipeError, or a parent waiting forever)."""
    import signal
    import time
    proc = subprocess.Popen([
        sys.executable, TOOL, '--arch', 'deit-t', '--batch', '2', '--steps',
        '1', '--warmup', '1', '--img-size', '32', '--gemm-size', '256',
        '--json'
    ],
                            stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE,
                            text=True,
                            env=ENV)
    try:
        deadline = time.monotonic() + 120
        while not _spawned_workers(proc.pid):
            assert time.monotonic() < deadline and proc.poll() is None
            time.sleep(0.05)
        # the first worker (the fp32 GEMM), while it is still starting
        os.kill(_spawned_workers(proc.pid)[0], signal.SIGKILL)
        out, err = proc.communicate(timeout=300)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 1, err[-2000:]
    assert 'worker gemm (fp32) was killed by SIGKILL (exit code -9) ' \
        'while starting (importing, building the model): most likely out ' \
        'of memory' in err
    assert 'Traceback' not in err and 'BrokenPipeError' not in err
    assert out == ''


def test_max_workers_one_keeps_one_worker_alive_at_a_time():
    import time
    proc = subprocess.Popen([
        sys.executable, TOOL, '--arch', 'deit-t', '--batch', '2', '--steps',
        '1', '--warmup', '1', '--img-size', '32', '--gemm-size', '256',
        '--max-workers', '1', '--json'
    ],
                            stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE,
                            text=True,
                            env=ENV)
    most, seen = 0, set()
    while proc.poll() is None:
        alive = _spawned_workers(proc.pid)
        most, seen = max(most, len(alive)), seen | set(alive)
        time.sleep(0.02)
    out, err = proc.communicate()
    assert proc.returncode == 0, err[-2000:]
    assert most == 1 and len(seen) == 3  # the GEMM, siameseim, then mae
    rows = json.loads(out.strip().splitlines()[-1])['rows']
    assert [(r['model'], r['workers_alive'])
            for r in rows] == [('gemm', 1), ('siameseim', 1), ('mae', 1)]
