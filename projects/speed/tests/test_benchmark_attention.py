import json
import os
import subprocess
import sys

ROOT = os.path.dirname(
    os.path.dirname(
        os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
TOOL = os.path.join(ROOT, 'projects', 'speed', 'tools', 'attention.py')


def test_tiny_run_times_every_call_of_a_step():
    out = subprocess.run([
        sys.executable, TOOL, '--arch', 'deit-t', '--batch', '2', '--img-size',
        '32', '--patch-size', '8', '--masked', '10', '--repeats', '2', '--json'
    ],
                         capture_output=True,
                         text=True,
                         timeout=120,
                         env=dict(os.environ, PYTHONPATH=ROOT))
    assert out.returncode == 0, out.stderr[-2000:]
    rows = json.loads(out.stdout.strip().splitlines()[-1])['rows']
    by = {r['call']: r for r in rows}
    # 4x4 grid: 6 visible + cls, 17 tokens in all, 7 + 16 predictor tokens
    assert by['online backbone']['shape'] == [2, 3, 7, 64]
    assert by['target backbone']['shape'] == [2, 3, 17, 64]
    assert by['predictor']['shape'] == [2, 16, 23, 12]
    assert not by['target projector']['backward']
    assert by['predictor']['backward']
    total = by['step total']['ms']
    for variant, ms in total.items():
        assert ms == sum(r['calls'] * r['ms'][variant] for r in rows[:-1])
    for r in rows:
        assert r['fastest'] == min(r['ms'], key=r['ms'].get)


def test_bad_mask_count_is_named():
    out = subprocess.run([sys.executable, TOOL, '--masked', '196'],
                         capture_output=True,
                         text=True,
                         timeout=60,
                         env=dict(os.environ, PYTHONPATH=ROOT))
    assert out.returncode == 2
    assert '--masked must be in [0, 196)' in out.stderr
