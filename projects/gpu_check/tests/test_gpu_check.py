"""projects/gpu_check/tools/gpu_check.py on a CPU: as far as it honestly goes
without a
GPU (the no-CUDA exit, the plan and its dry run, the budget and time boxes of
the job runner on trivial commands).

Nothing here is a measurement.
"""
import json
import os
import sys

import pytest
import torch

from projects import gpu_check
from projects.preflight import shipped_configs
from tests.helpers import ROOT, load_tool


def test_without_cuda_it_says_so_and_measures_nothing(tmp_path, capsys,
                                                      monkeypatch):
    monkeypatch.setattr(torch.cuda, 'is_available', lambda: False)
    tool = load_tool('projects/gpu_check/tools/gpu_check.py')
    assert tool.main(['--results-dir', str(tmp_path)]) == 0
    assert 'no CUDA device' in capsys.readouterr().out
    assert list(tmp_path.iterdir()) == []


def test_dry_run_lists_every_job_for_two_gpus(capsys, monkeypatch):
    monkeypatch.setattr(torch.cuda, 'is_available', lambda: False)
    tool = load_tool('projects/gpu_check/tools/gpu_check.py')
    assert tool.main(['--dry-run', '--gpus', '2']) == 0
    out = capsys.readouterr().out
    assert 'dry run: nothing is run' in out
    assert '--precision fp16,bf16' in out and '--compile' in out
    assert 'ddp_check' in out
    # every shipped config, at its documented per-GPU batch
    for config in shipped_configs():
        assert config in out, config
    assert ('siameseim_vit-base-p16_16xb256-amp-coslr-1600e_in1k.py '
            '--iters 3 --batch-size 256') in out
    assert 'lsj-100e_coco.py --iters 3 --batch-size 4' in out
    assert 'projects.speed.device_augment --device cuda' in out


def test_plan_orders_main_jobs_first_and_needs_two_gpus_for_ddp():
    configs = list(gpu_check.MAIN_CONFIGS[:2]) + [
        'configs/pretrain/ablations/'
        'siameseim-table3a_vit-base-p16_16xb256-amp-coslr-400e_in1k.py'
    ]
    one = gpu_check.plan(1, configs=configs)
    two = gpu_check.plan(2, configs=configs)
    assert [j['kind'] for j in one] == [
        'benchmark', 'preflight', 'preflight', 'benchmark', 'preflight',
        'pipeline', 'device_augment'
    ]
    assert [j['kind'] for j in two].count('ddp') == 1
    assert one[-3]['config'] == configs[2]  # after the main ones
    assert any(j['name'].startswith('DDP') and j['status'] == 'skipped'
               for j in gpu_check.not_planned(1))
    # FSDP is recorded as left out, with why, whatever the GPU count
    for gpus in (1, 2):
        fsdp = [
            j for j in gpu_check.not_planned(gpus)
            if j['name'].startswith('FSDP')
        ]
        assert len(fsdp) == 1 and 'FlexibleRunner' in fsdp[0]['reason']


def test_runner_keeps_time_boxes_and_budget():
    py = sys.executable
    jobs = [
        dict(
            name='a',
            kind='x',
            timeout_s=30,
            argv=[py, '-c', 'print("log"); print(\'{"v": 1}\')']),
        dict(
            name='b',
            kind='x',
            timeout_s=1,
            argv=[py, '-c', 'import time; time.sleep(5)']),
        dict(
            name='c',
            kind='x',
            timeout_s=30,
            argv=[py, '-c', 'import sys; sys.exit(3)']),
        dict(name='d', kind='x', timeout_s=10**6, argv=[py, '-c', '']),
    ]
    done = gpu_check.run_plan(jobs, budget_s=120)
    status = {r['name']: r['status'] for r in done}
    assert status == {
        'a': 'ok',
        'b': 'timed out (1 s)',
        'c': 'failed (exit 3)',
        'd': 'skipped'
    }
    assert done[0]['output'] == {'v': 1}
    assert 'budget left' in done[3]['reason']
    table = gpu_check.gpu_check_table(
        dict(data=dict(device='-', budget_s=120, used_s=1, jobs=done)))
    assert table.count('\n| ') == 5  # header and four jobs


@pytest.mark.parametrize('text,out', [('x\n{"a": 1}\n', {
    'a': 1
}), ('{"a": 1}\nx', None), ('', None)])
def test_last_json_line(text, out):
    assert gpu_check.last_json(text) == out


def test_ddp_check_two_gloo_ranks_equal_one_process():
    """The DDP job's equivalence check, on CPU (gloo) with the Fashion-MNIST
    model; on a GPU machine the same code runs with NCCL."""
    from projects.preflight.ddp_check import ddp_equivalence
    out = ddp_equivalence(
        os.path.join(
            ROOT, 'configs', 'pretrain', 'siameseim_vit-tiny-p4_'
            '1xb64-fp32-coslr-1e_fashionmnist.py'),
        batch=4,
        backend='gloo',
        timeout_s=300)
    assert out['backend'] == 'gloo'
    assert out['loss_rel_err'] <= 1e-5 and out['grad_rel_err'] <= 1e-5
    json.dumps(out)
