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
    """Converts epoch-based ``begin``/``end`` to iterations like mmengine,
    except that a fractional epoch keeps at least one iteration: a 0.1-epoch
    warm-up on an epoch of fewer than 10 iterations is one iteration long
    instead of failing with "end should be larger than begin", and a phase
    never ends where it begins. Identical to mmengine wherever the
    boundaries are at least one iteration apart."""

    @classmethod
    def build_iter_from_epoch(cls, *args, begin=0, end=INF, by_epoch=True,
                              epoch_length=None, **kwargs):
        if not by_epoch or not epoch_length or epoch_length < 1:
            raise ValueError('convert_to_iter_based needs by_epoch=True and '
                             f'a positive epoch length, got {epoch_length}')
        if kwargs.get('T_max') is not None:
            kwargs['T_max'] = kwargs['T_max'] * epoch_length
        begin = _epoch_to_iter(begin, epoch_length)
        end = max(_epoch_to_iter(end, epoch_length), begin + 1)
        return cls(*args, begin=begin, end=end, by_epoch=False, **kwargs)


@PARAM_SCHEDULERS.register_module()
class MinIterLinearLR(_MinIterMixin, LinearLR):
    """mmengine's ``LinearLR`` whose fractional-epoch boundaries keep at
    least one iteration (see ``_MinIterMixin``)."""


@PARAM_SCHEDULERS.register_module()
class MinIterCosineAnnealingLR(_MinIterMixin, CosineAnnealingLR):
    """mmengine's ``CosineAnnealingLR`` whose fractional-epoch boundaries
    keep at least one iteration (see ``_MinIterMixin``)."""
