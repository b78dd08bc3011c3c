"""Every GPU figure the README lacks, in one command (``make gpu-check``).

    python projects/gpu_check/tools/gpu_check.py [--budget-min 30] [--dry-run
    [--gpus N]]
        [--kinds preflight,...] [--keep EARLIER.json]
        [--configs A.py,B.py] [--results-dir DIR]

On a machine with CUDA: runs the plan of projects.gpu_check
inside the device-time budget (default 30 minutes; each job has its own
time box, what does not fit is recorded as skipped): the pretraining
benchmark (SiameseIM and MAE, fp16 and bf16, eager and compiled, against
the device's measured GEMM peak), the preflight of every shipped config at
its documented per-GPU batch, the two-process DDP equivalence check (NCCL)
with two or more GPUs, and the data pipeline's rate per worker. Writes
projects/gpu_check/results/gpu_check.json and prints its markdown table
(also written beside it, as gpu_check.md).

Without CUDA it says so and exits 0 having measured nothing. ``--dry-run``
lists the commands it would run, for ``--gpus N`` devices (default: the
devices seen, at least 1), without running them. See
projects/gpu_check/README.md.
"""
import argparse
import os.path as osp
import sys


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument(
        '--budget-min',
        type=float,
        default=30.,
        help='device time for all jobs (default 30)')
    parser.add_argument(
        '--dry-run',
        action='store_true',
        help='list the commands, run nothing')
    parser.add_argument(
        '--gpus',
        type=int,
        default=None,
        help='devices to plan for with --dry-run')
    parser.add_argument(
        '--configs',
        default=None,
        help='comma-separated configs to preflight '
        '(default: every shipped config)')
    parser.add_argument(
        '--results-dir',
        default=None,
        help='default projects/gpu_check/results')
    parser.add_argument(
        '--kinds',
        default=None,
        help='run only jobs of these kinds (comma-separated: benchmark, '
        'preflight, ddp, pipeline, device_augment)')
    parser.add_argument(
        '--keep',
        default=None,
        help='an earlier gpu_check.json whose records of the jobs not run '
        'now are kept (rerun the jobs that failed)')
    args = parser.parse_args(argv)
    if args.budget_min <= 0:
        parser.error(f'--budget-min must be > 0, got {args.budget_min}')
    if args.gpus is not None and not args.dry_run:
        parser.error('--gpus plans a --dry-run; a real run uses the '
                     'devices it sees')
    if args.gpus is not None and args.gpus < 1:
        parser.error(f'--gpus must be >= 1, got {args.gpus}')
    return args


def main(argv=None) -> int:
    args = parse_args(argv)
    import torch

    from projects import gpu_check
    from projects.common.results import results_path, write_results
    seen = torch.cuda.device_count() if torch.cuda.is_available() else 0
    if not args.dry_run and not seen:
        print('gpu_check: no CUDA device on this machine: nothing measured, '
              'no results written (run it where a GPU is; --dry-run lists '
              'its commands)')
        return 0
    gpus = args.gpus or max(seen, 1)
    configs = args.configs.split(',') if args.configs else None
    jobs = gpu_check.plan(gpus, configs=configs)
    if args.kinds:
        jobs = [j for j in jobs if j['kind'] in args.kinds.split(',')]
    budget_s = args.budget_min * 60
    if args.dry_run:
        print(f'gpu_check plan for {gpus} GPU(s), budget '
              f'{args.budget_min:g} min (dry run: nothing is run)')
        total = 0
        for job in jobs:
            total += job['timeout_s']
            mark = '' if total <= budget_s else '  [beyond the budget]'
            print(f'- {job["name"]} (time box {job["timeout_s"]} s){mark}\n'
                  f'    {" ".join(job["argv"])}')
        for job in gpu_check.not_planned(gpus):
            print(f'- {job["name"]}: {job["status"]}: {job["reason"]}')
        return 0
    import time
    t0 = time.monotonic()
    done = gpu_check.run_plan(jobs, budget_s)
    data = dict(
        device=f'{seen} x {torch.cuda.get_device_name(0)}',
        budget_s=budget_s,
        used_s=time.monotonic() - t0,
        jobs=done + gpu_check.not_planned(seen))
    if args.keep:
        from mmsiameseim.atomic_io import load_json
        data['jobs'] = gpu_check.keep_records(data['jobs'],
                                              load_json(args.keep))
    path = write_results('gpu_check', data, results_dir=args.results_dir)
    table = gpu_check.gpu_check_table(dict(data=data))
    md = osp.splitext(results_path('gpu_check', args.results_dir))[0] + '.md'
    with open(md, 'w') as f:
        f.write(table + '\n')
    print(table)
    print(f'wrote {path} and {md}', file=sys.stderr)
    return 0 if all(j['status'] in ('ok', 'skipped', 'not present')
                    for j in data['jobs']) else 1


if __name__ == '__main__':
    sys.exit(main())
