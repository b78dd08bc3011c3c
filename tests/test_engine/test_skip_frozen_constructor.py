"""SkipFrozenOptimWrapperConstructor: mmengine's parameter groups, exactly,
with the frozen modules named in one log line instead of a warning per
tensor."""
import logging

from mmengine.logging import MMLogger
from mmengine.optim import DefaultOptimWrapperConstructor
from mmpretrain.registry import MODELS

from mmsiameseim.engine.optimizers import SkipFrozenOptimWrapperConstructor
from tests.helpers import tiny_siameseim_cfg

WRAPPER = dict(
    type='OptimWrapper',
    optimizer=dict(type='AdamW', lr=1e-3, weight_decay=0.05))
PARAMWISE = dict(bias_decay_mult=0.0, flat_decay_mult=0.0)


class _Lines(logging.Handler):

    def __init__(self):
        super().__init__(logging.DEBUG)
        self.lines = []

    def emit(self, record):
        self.lines.append((record.levelno, record.getMessage()))


def _groups(constructor, model):
    handler = _Lines()
    logger = MMLogger.get_current_instance()
    logger.addHandler(handler)
    try:
        wrapper = constructor(WRAPPER, PARAMWISE)(model)
    finally:
        logger.removeHandler(handler)
    names = {id(p): n for n, p in model.named_parameters()}
    groups = [(tuple(names[id(p)] for p in g['params']), g['weight_decay'])
              for g in wrapper.optimizer.param_groups]
    return groups, handler.lines


def test_same_groups_as_mmengine_and_one_line_for_the_frozen_modules():
    model = MODELS.build(tiny_siameseim_cfg())
    ours, lines = _groups(SkipFrozenOptimWrapperConstructor, model)
    theirs, their_lines = _groups(DefaultOptimWrapperConstructor, model)
    assert ours == theirs
    assert not any(
        n.startswith(('target.', 'backbone.patch_embed.')) for names, _ in ours
        for n in names)

    def skipped(log):
        return [
            m for level, m in log if level == logging.WARNING
            and 'is skipped since its requires_grad=False' in m
        ]

    # mmengine: a warning per frozen tensor, the momentum target's included
    assert sum('target.' in m for m in skipped(their_lines)) > 10
    # ours: only the frozen tensors held beside trainable ones (the fixed
    # position embedding), and one line naming the frozen modules
    assert skipped(lines) == [
        'backbone.pos_embed is skipped since its requires_grad=False'
    ]
    frozen = [m for _, m in lines if m.startswith('left out of the optim')]
    target_tensors = len(list(model.target.parameters()))
    assert frozen == [
        'left out of the optimizer, frozen (requires_grad=False): '
        f'backbone.patch_embed (2 tensors), target ({target_tensors} '
        'tensors)'
    ]
