import json
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))


def test_benchmark_table_fields_on_a_tiny_setting():
    out = subprocess.run(
        [sys.executable, os.path.join(ROOT, 'tools', 'benchmark_pretrain.py'),
         '--arch', 't', '--img-size', '32', '--batch', '2', '--steps', '2',
         '--warmup', '1', '--json'],
        capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr[-2000:]
    res = json.loads(out.stdout.strip().splitlines()[-1])
    assert {r['model'] for r in res['rows']} == {'siameseim', 'mae'}
    for row in res['rows']:
        assert row['step_s_median'] > 0 and row['images_per_s'] > 0
        assert row['peak_mem_mb'] > 0 and row['peak_mem_kind'] == 'RSS'
    assert res['siameseim_over_mae'] > 0


def test_benchmark_times_the_low_resolution_target_option():
    out = subprocess.run(
        [sys.executable, os.path.join(ROOT, 'tools', 'benchmark_pretrain.py'),
         '--arch', 't', '--img-size', '64', '--batch', '2', '--steps', '1',
         '--warmup', '1', '--models', 'siameseim,siameseim-lowres',
         '--target-size', '32', '--json'],
        capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr[-2000:]
    res = json.loads(out.stdout.strip().splitlines()[-1])
    assert [r['model'] for r in res['rows']] == ['siameseim',
                                                 'siameseim-lowres']
    assert res['lowres_target_speedup'] > 0
    assert res['siameseim_over_mae'] is None
