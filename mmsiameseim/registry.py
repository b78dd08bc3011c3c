"""mmsiameseim's own registry scope.

Everything else of mmsiameseim registers into mmpretrain's (mmdet's,
mmseg's) registries. The one exception is the weight initializer
``Pretrained`` of scope ``mmsiameseim``
(:class:`~mmsiameseim.checkpoint.StrictPretrainedInit`): it must keep the
type name ``'Pretrained'``, because mmengine's ``BaseModule`` and mmpretrain's
``VisionTransformer`` recognise a checkpoint initialisation by that name
(it runs after every other initialisation and keeps the loaded position
embedding). A config selects it with
``init_cfg=dict(type='Pretrained', _scope_='mmsiameseim', ...)``; mmengine
imports this module to find the scope.
"""
from mmengine.registry import \
    WEIGHT_INITIALIZERS as MMENGINE_WEIGHT_INITIALIZERS
from mmengine.registry import Registry

WEIGHT_INITIALIZERS = Registry(
    'weight initializer',
    parent=MMENGINE_WEIGHT_INITIALIZERS,
    scope='mmsiameseim',
    locations=['mmsiameseim.checkpoint'])
