import json
import os
import subprocess
import sys

import pytest

from tests.helpers import load_tool

ROOT = os.path.dirname(
    os.path.dirname(
        os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
TOOL = os.path.join(ROOT, 'projects', 'speed', 'tools', 'unigrad.py')


def _tool():
    return load_tool('projects/speed/tools/unigrad.py')


def test_tiny_run_gives_rows_and_table():
    out = subprocess.run([
        sys.executable, TOOL, '--batch', '2', '--tokens', '8', '--channels',
        '16', '--repeats', '2', '--step-seconds', '0.5', '--json'
    ],
                         capture_output=True,
                         text=True,
                         timeout=120,
                         env=dict(os.environ, PYTHONPATH=ROOT))
    assert out.returncode == 0, out.stderr[-2000:]
    res = json.loads(out.stdout.strip().splitlines()[-1])
    rows = res['rows']
    assert [r['variant'] for r in rows] == ['chunked', 'autograd']
    assert res['step_seconds'] == 0.5
    for row in rows:
        assert (row['batch'], row['tokens'], row['channels']) == (2, 8, 16)
        assert 0 < row['fwd_bwd_ms_min'] <= row['fwd_bwd_ms_median'] \
            <= row['fwd_bwd_ms_max']
        assert row['pct_of_step'] == pytest.approx(row['fwd_bwd_ms_median'] /
                                                   5)
        assert row['extra_mem_kind'] == 'peak RSS growth'
        assert isinstance(row['extra_mem_mb'], float)
    lines = _tool().format_table(rows, 0.5, 2).splitlines()
    assert lines[0].startswith('variant | B x N x C')
    assert lines[2].startswith('chunked | 2 x 8 x 16 | fp32 | cpu')
    assert lines[3].startswith('autograd | 2 x 8 x 16')
    assert lines[-1] == 'step: 0.500 s (batch 2)'


def test_step_options_are_exclusive():
    with pytest.raises(SystemExit):
        _tool().main(['--step-seconds', '1', '--measure-step'])
