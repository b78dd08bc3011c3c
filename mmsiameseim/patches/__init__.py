"""Import-time patches of other libraries, all of them here.

``import mmsiameseim`` applies them, in this order, before any of its
components is imported. Each works around one upstream defect of the
versions this plugin runs on (mmengine 0.10.7, mmcv 2.1.0, mmpretrain
1.2.0, torch >= 2.6, numpy 2) and goes when its upstream fixes it:

========================== ============================================ ==========================================
module                     works around                                 can go when
========================== ============================================ ==========================================
mmengine_checkpoints       torch >= 2.6 loads with ``weights_only``;    mmengine's checkpoints load weights-only
                           mmengine 0.10.7's checkpoints carry numpy    (it allow-lists what it stores, or stores
                           objects and ``getattr`` it refuses           plain tensors and numbers)
mmengine_config_errors     mmengine 0.10.7 reports a config's syntax    mmengine names the file in that error
                           error as ``File "<unknown>"``
mmcv_hue                   mmcv 2.1's pillow ``adjust_hue`` raises      the mmcv that mmdet and mmseg accept
                           ``OverflowError`` under numpy 2 for a        wraps the shift itself (mmcv 2.1 is
                           negative hue (mmpretrain's ``ColorJitter``)  their last)
mmcv_lite_warning          mmcv-lite warns at import about an op it     mmcv warns where the op is used, or the
                           cannot have, which nothing here uses         plugin requires the full mmcv
transformers_multimodal    mmpretrain 1.2.0's multimodal models import  mmpretrain's multimodal models import
                           names that transformers 4.57 / 5.x removed,  under the current transformers
                           which breaks ``import mmpretrain.models``
========================== ============================================ ==========================================

Each module says what it changes; none changes a number of a training
step that runs without it.
"""
# mmengine_checkpoints first: checkpoint loading; mmcv_lite_warning and
# transformers_multimodal before mmpretrain.models is first imported
from . import mmengine_checkpoints  # noqa: F401
from . import mmengine_config_errors  # noqa: F401
from . import mmcv_hue  # noqa: F401
from . import mmcv_lite_warning  # noqa: F401
from . import transformers_multimodal  # noqa: F401
