import torch.nn as nn
from mmcv.cnn.bricks.drop import DropPath


def drop_zero_drop_paths(module: nn.Module) -> nn.Module:
    """Replace every ``DropPath`` of rate 0 in ``module`` by ``nn.Identity``
    (the same function, no parameters). Returns ``module``.

    Dynamo sees mmcv's ``if drop_prob == 0.`` on a float attribute (a numpy
    float in mmpretrain's ViT) as data-dependent control flow and breaks
    the graph at every block; without the module there is nothing to
    trace. Non-zero rates keep their ``DropPath``.
    """
    for name, child in list(module.named_children()):
        if isinstance(child, DropPath) and float(child.drop_prob) == 0.:
            setattr(module, name, nn.Identity())
        else:
            drop_zero_drop_paths(child)
    return module
