"""A resumed run whose config plans another schedule than its checkpoint
(``train_cfg.max_epochs`` raised to extend a run, another lr or warm-up).

mmengine's resume loads the checkpoint's param scheduler states over the
ones the config built, so a longer run keeps the old schedule: its lr stays
at the old end value (2.2e-6 over the whole new epoch of the Fashion-MNIST
demo) while the target momentum, which follows ``max_iters``, is re-planned
for the new length. :func:`follow_config_schedule` rebuilds the schedulers
from the config instead and steps them to the resumed iteration, so lr and
momentum are both those of a run planned at the new length from the start.
:func:`pinned_schedule` names a config whose schedule cannot follow the new
length (an ``end`` fixed at the old one).
"""
import copy
from typing import List, Optional, Sequence, Tuple

from mmengine.optim import OptimWrapper

# scheduler state that changes as training runs; the rest is the plan
_PROGRESS_KEYS = {
    'last_step', '_global_step', '_last_value', 'verbose',
    '_get_lr_called_within_step'
}


def saved_run_length(checkpoint: dict) -> Tuple[Optional[int], Optional[int]]:
    """``max_epochs`` and ``max_iters`` of the run that wrote
    ``checkpoint`` (from its message hub)."""
    info = checkpoint.get('message_hub', {}).get('runtime_info', {})
    return info.get('max_epochs'), info.get('max_iters')


def schedule_plan(states: Sequence[dict]) -> List[dict]:
    """The planned part of param scheduler states (boundaries, lengths,
    factors, base values), without their progress."""
    return [{
        k: v
        for k, v in s.items() if k not in _PROGRESS_KEYS
    } for s in states]


def plan_changes(saved: Sequence[dict], current: Sequence[dict],
                 types: Sequence[str]) -> List[str]:
    """How the config's schedule differs from the checkpoint's, one line a
    scheduler (empty: the same plan).

    Args:
        saved (Sequence[dict]): :func:`schedule_plan` of the checkpoint.
        current (Sequence[dict]): :func:`schedule_plan` of this run.
        types (Sequence[str]): The schedulers' type names, for messages.
    """
    if len(saved) != len(current):
        return [
            f'{len(saved)} param schedulers in the checkpoint, '
            f'{len(current)} in the config'
        ]
    lines = []
    for i, (old, new) in enumerate(zip(saved, current)):
        diffs = [
            f'{k} {old.get(k)} -> {new.get(k)}'
            for k in sorted(set(old) | set(new)) if old.get(k) != new.get(k)
        ]
        if diffs:
            lines.append(f'param_scheduler[{i}] ({types[i]}): '
                         f'{", ".join(diffs)}')
    return lines


def schedule_end(states: Sequence[dict], epoch_length: int) -> float:
    """The last step (in iterations) any scheduler of ``states`` acts on."""
    ends = [
        s['end'] * (epoch_length if s.get('by_epoch') else 1) for s in states
    ]
    return max(ends) if ends else float('inf')


def config_schedule(schedulers, optim_wrapper) -> Optional[dict]:
    """The schedule the config planned, taken before a checkpoint's state
    replaces it: plan, type names and the optimizer's ``initial_*``
    values. None where it cannot be followed (several optimizers)."""
    if not isinstance(schedulers, list) or not isinstance(
            optim_wrapper, OptimWrapper):
        return None
    return dict(
        plan=schedule_plan([s.state_dict() for s in schedulers]),
        types=[type(s).__name__ for s in schedulers],
        initial={
            key: [g[key] for g in optim_wrapper.param_groups]
            for key in {f'initial_{s.param_name}'
                        for s in schedulers}
        })


def pinned_schedule(saved_states, saved_iters: Optional[int], schedulers,
                    max_iters: int, epoch_length: int) -> Optional[str]:
    """Why a run made longer than its checkpoint's cannot follow the
    config's schedule (None when it can): the old schedule ended with the
    old run, but the config's still ends before the new run does.

    Args:
        saved_states (list): The checkpoint's param scheduler states.
        saved_iters (int, optional): The checkpoint's run length.
        schedulers (list): This run's param schedulers, as the config
            built them.
        max_iters (int): This run's length.
        epoch_length (int): Iterations an epoch (for epoch-based
            schedulers).
    """
    if not (isinstance(saved_states, list) and saved_iters
            and isinstance(schedulers, list) and max_iters > saved_iters
            and schedule_end(saved_states, epoch_length) >= saved_iters):
        return None
    fresh = [s.state_dict() for s in schedulers]
    end = schedule_end(fresh, epoch_length)
    if end >= max_iters:
        return None
    last = max(
        range(len(fresh)),
        key=lambda i: schedule_end([fresh[i]], epoch_length))
    return (f'the run grows from {saved_iters} to {max_iters} iterations, '
            f'but param_scheduler[{last}] ({type(schedulers[last]).__name__})'
            f' still ends at iteration {int(end)}, so the lr would stay '
            'where the old run ended. Leave `end` and `T_max` out of that '
            "scheduler's config (it then ends with train_cfg.max_epochs), or "
            f'set them for the new length: --cfg-options '
            f'param_scheduler.{last}.end=... param_scheduler.{last}.T_max=...')


def follow_config_schedule(runner, config: dict, checkpoint: dict) -> None:
    """When the config plans another schedule than the checkpoint's,
    rebuild the runner's param schedulers from the config and step them to
    the resumed iteration (as ``ParamSchedulerHook`` would have); the log
    says what changed.

    Args:
        runner (Runner): The resumed runner (checkpoint state loaded).
        config (dict): :func:`config_schedule`, taken before the resume.
        checkpoint (dict): The checkpoint resumed from.
    """
    saved = checkpoint.get('param_schedulers')
    if not isinstance(saved, list):
        return
    changes = plan_changes(
        schedule_plan(saved), config['plan'], config['types'])
    if not changes:
        return
    groups = runner.optim_wrapper.param_groups
    before = groups[0]['lr']
    # the chained mmengine schedulers start from the base values
    for key, values in config['initial'].items():
        for group, value in zip(groups, values):
            group[key] = value
            group[key[len('initial_'):]] = value
    schedulers = runner.build_param_scheduler(
        copy.deepcopy(runner.cfg.param_scheduler))
    for _ in range(runner.iter):
        for scheduler in schedulers:
            if not scheduler.by_epoch:
                scheduler.step()
    for _ in range(runner.epoch):
        for scheduler in schedulers:
            if scheduler.by_epoch:
                scheduler.step()
    runner.param_schedulers = schedulers
    saved_epochs, saved_iters = saved_run_length(checkpoint)
    max_epochs = getattr(runner.train_loop, 'max_epochs', None)
    runner.logger.info(
        "the schedule differs from the checkpoint's (run length "
        f'{saved_iters} -> {runner.max_iters} iterations, max_epochs '
        f'{saved_epochs} -> {max_epochs}):\n  ' + '\n  '.join(changes) +
        '\nthe param schedulers were rebuilt from the config and stepped '
        f'to iteration {runner.iter}: lr {before:.3e} -> '
        f'{groups[0]["lr"]:.3e}; the target momentum follows the new '
        'length too. From here on, lr and momentum are those of a run '
        'planned at the new length from the start.')
