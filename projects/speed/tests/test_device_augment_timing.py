"""The GPU check's device-augmentation timing, run on the CPU (what it
measures there is the CPU, and the record says so)."""
import json

import pytest

from projects.speed import device_augment


def test_times_the_deviceaug_configs_preprocessor_on_a_small_batch():
    record = device_augment.time_device_augment(
        'cpu', batch=2, size=32, steps=2, warmup=1)
    assert record['device'] == 'cpu' and record['batch'] == 2
    assert record['s_per_batch'] > 0
    assert record['images_per_s'] == pytest.approx(2 / record['s_per_batch'])


def test_prints_one_json_object_last(capsys):
    device_augment.main([
        '--batch', '2', '--size', '32', '--steps', '1', '--warmup', '0',
        '--json'
    ])
    last = capsys.readouterr().out.strip().splitlines()[-1]
    assert json.loads(last)['batch'] == 2


def test_refuses_cuda_without_cuda(monkeypatch, capsys):
    import torch
    monkeypatch.setattr(torch.cuda, 'is_available', lambda: False)
    with pytest.raises(SystemExit):
        device_augment.main(['--device', 'cuda'])
    assert 'CUDA is not available' in capsys.readouterr().err
