import json
import math
import os
import subprocess
import sys

import pytest

from tests.helpers import load_tool

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))
TOOL = os.path.join(ROOT, 'tools', 'benchmark_pipeline.py')


def _tool():
    return load_tool('benchmark_pipeline.py')


def test_tiny_run_with_profile_and_step_rate_from_json(tmp_path):
    # the format tools/benchmark_pretrain.py --json prints
    pretrain = tmp_path / 'pretrain.json'
    pretrain.write_text(json.dumps(dict(rows=[
        dict(model='siameseim', images_per_s=500.0),
        dict(model='mae', images_per_s=900.0)], siameseim_over_mae=1.8)))
    out = subprocess.run(
        [sys.executable, TOOL, '--images', '3', '--repeats', '1',
         '--image-size', '80', '60', '--profile', '--pretrain-json',
         str(pretrain), '--json'], capture_output=True, text=True,
        timeout=120, env=dict(os.environ, PYTHONPATH=ROOT))
    assert out.returncode == 0, out.stderr[-2000:]
    res = json.loads(out.stdout.strip().splitlines()[-1])
    assert res['step_images_per_s'] == 500.0
    assert [r['pipeline'] for r in res['rows']] == ['siameseim',
                                                      'torchvision']
    for row in res['rows']:
        assert row['images'] == 3 and row['image_size'] == [80, 60]
        assert row['images_per_s'] > 0
        assert row['ms_per_image'] == pytest.approx(1e3 / row['images_per_s'])
        assert row['workers_per_gpu'] == math.ceil(500 / row['images_per_s'])
    profile = res['profile_ms_per_image']
    for step in ('StrictLoadImageFromFile', 'TwoViewRandomResizedCrop',
                 'PerViewTransforms', 'BlockwiseMaskGenerator', 'PackInputs',
                 '  view a: GaussianBlur', '  view b: Solarize'):
        assert profile[step] > 0, step
    lines = _tool().format_table(res['rows'], 500.0, profile).splitlines()
    assert lines[0].startswith('pipeline | images/s per worker')
    assert lines[2].startswith('siameseim | ')
    assert lines[3].startswith('torchvision | ')
    assert 'step rate: 500.0 images/s per GPU' in lines
    assert 'transform | ms/image' in lines


def test_bad_pretrain_json_names_the_file(tmp_path):
    bad = tmp_path / 'bad.json'
    bad.write_text('{"rows": [{"model": "mae", "images_per_s": 1}]}')
    with pytest.raises(SystemExit, match='bad.json'):
        _tool().step_rate_from_json(str(bad))
