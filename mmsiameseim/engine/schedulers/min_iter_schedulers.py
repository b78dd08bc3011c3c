from math import cos, pi
from typing import List

from mmengine.optim import CosineAnnealingLR, LinearLR
from mmengine.optim.scheduler.param_scheduler import INF
from mmpretrain.registry import PARAM_SCHEDULERS


def _epoch_to_iter(epoch: float, epoch_length: int) -> int:
    """mmengine's ``int(epoch * epoch_length)``, but a boundary after the
    start never falls on iteration 0."""
    if epoch == INF:
        return INF
    return max(int(epoch * epoch_length), 1 if epoch > 0 else 0)


class _MinIterMixin:
    """Epoch boundaries that keep at least one iteration, and values in
    closed form that reach the phase's end value.

    **Boundaries.** ``begin``/``end`` in epochs become iterations like
    mmengine's ``int(epoch * epoch_length)``, except that a boundary after
    the start is at least iteration 1 (a 0.1-epoch warm-up on an epoch of
    fewer than 10 iterations keeps one iteration instead of failing with
    "end should be larger than begin"), and a phase never ends where it
    begins: when rounding leaves no room (a run of one iteration), it starts
    one iteration before its end. ``T_max`` in epochs is converted at the
    point where the period ends (``begin + T_max``), like ``end``, so a
    cosine whose period is the phase ends exactly at ``end``.

    **Values.** mmengine's schedulers are chainable: each step multiplies
    the current value, and a phase stops one step before its ``end``. Its
    ``LinearLR`` of one iteration therefore only applies ``start_factor``
    and never returns to the base value, and the cosine after it starts
    from that floor: with fewer than 20 iterations per epoch the 0.1-epoch
    warm-up left the whole run at ``start_factor * lr``. Here every value
    is computed from the base value (the optimizer's ``initial_lr``) and the
    step, and the phase's end value is set at its ``end`` step too: the
    warm-up hands over at exactly the configured lr, and the cosine leaves
    the optimizer at exactly ``eta_min`` after the run's last iteration,
    whatever the epoch length. Phases must not overlap (the closed form does
    not multiply with another scheduler's value); where two phases share a
    boundary step, the later one in ``param_scheduler`` sets the value.
    """

    @classmethod
    def build_iter_from_epoch(cls,
                              *args,
                              begin=0,
                              end=INF,
                              by_epoch=True,
                              epoch_length=None,
                              **kwargs):
        if not by_epoch or not epoch_length or epoch_length < 1:
            raise ValueError('convert_to_iter_based needs by_epoch=True and '
                             f'a positive epoch length, got {epoch_length}')
        begin_iter = _epoch_to_iter(begin, epoch_length)
        end_iter = _epoch_to_iter(end, epoch_length)
        if end_iter != INF:
            end_iter = max(end_iter, 1)
            begin_iter = min(begin_iter, end_iter - 1)
        if kwargs.get('T_max') is not None:
            kwargs['T_max'] = max(
                _epoch_to_iter(begin + kwargs['T_max'], epoch_length) -
                begin_iter, 1)
        return cls(
            *args, begin=begin_iter, end=end_iter, by_epoch=False, **kwargs)

    def _values_at(self, step: int) -> List[float]:
        """The value of each param group ``step`` steps after ``begin``."""
        raise NotImplementedError

    def step(self) -> None:
        """Set the value of the next step, ``end`` included."""
        self._global_step += 1
        if self.begin <= self._global_step <= self.end:
            self.last_step = self._global_step - self.begin
            for group, value in zip(self.optimizer.param_groups,
                                    self._values_at(self.last_step)):
                group[self.param_name] = value
        self._last_value = [
            group[self.param_name] for group in self.optimizer.param_groups
        ]


@PARAM_SCHEDULERS.register_module()
class MinIterLinearLR(_MinIterMixin, LinearLR):
    """mmengine's ``LinearLR`` whose fractional-epoch boundaries keep at
    least one iteration and whose factor reaches ``end_factor`` at ``end``
    (see ``_MinIterMixin``): the lr goes linearly from ``start_factor *
    lr`` at ``begin`` to ``end_factor *
    lr`` at ``end``, the step the next phase starts.

    Args:
        optimizer (Optimizer | OptimWrapper): The optimizer.
        start_factor (float): Factor of the first step. Defaults to 1/3.
        end_factor (float): Factor at ``end``. Defaults to 1.
        begin (int): First step. Defaults to 0.
        end (int): Step at which the factor reaches ``end_factor``.
            Defaults to INF.
        **kwargs: Other arguments of ``LinearLR``.
    """

    def _values_at(self, step: int) -> List[float]:
        length = self.end - self.begin
        fraction = 1. if length == INF else min(step / length, 1.)
        factor = self.start_factor + (self.end_factor -
                                      self.start_factor) * fraction
        return [base * factor for base in self.base_values]


@PARAM_SCHEDULERS.register_module()
class MinIterCosineAnnealingLR(_MinIterMixin, CosineAnnealingLR):
    """mmengine's ``CosineAnnealingLR`` whose fractional-epoch boundaries
    keep at least one iteration and whose value reaches ``eta_min`` at
    ``begin + T_max`` (see ``_MinIterMixin``). Leave ``end`` and ``T_max``
    out of a config to make the cosine end with the training loop's
    ``max_epochs`` (mmengine's default ``end``), also when ``max_epochs`` is
    changed on the command line.

    Args:
        optimizer (Optimizer | OptimWrapper): The optimizer.
        T_max (int, optional): Length of the half period; defaults to
            ``end - begin``.
        eta_min (float, optional): Value at the end of the half period.
        begin (int): First step. Defaults to 0.
        end (int): Last step. Defaults to INF.
        **kwargs: Other arguments of ``CosineAnnealingLR``
            (``eta_min_ratio`` included).
    """

    def _values_at(self, step: int) -> List[float]:
        annealing = (1 + cos(pi * step / self.T_max)) / 2
        values = []
        for base in self.base_values:
            eta_min = (
                self.eta_min if self.eta_min_ratio is None else base *
                self.eta_min_ratio)
            values.append(eta_min + (base - eta_min) * annealing)
        return values
