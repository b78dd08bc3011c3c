"""Import-time patches of other libraries, all of them here.

``import mmsiameseim`` applies them, in this order, before any of its
components is imported. Each works around one upstream defect of the
versions this plugin runs on (mmengine 0.10.7, mmcv 2.1.0, mmpretrain
1.2.0, torch >= 2.6, numpy 2) and goes when its upstream fixes it:

* ``mmengine_checkpoints``: torch >= 2.6 loads with ``weights_only``, and
  mmengine 0.10.7's checkpoints carry numpy objects and ``getattr`` that it
  refuses. Can go when mmengine's checkpoints load weights-only.
* ``mmengine_config_errors``: mmengine 0.10.7 reports a config's syntax
  error as ``File "<unknown>"``. Can go when mmengine names the file.
* ``mmengine_config_text``: mmengine 0.10.7 formats a config's text with
  yapf at every log, dump and checkpoint (1-2 s each). Can go when
  mmengine keeps the formatted text.
* ``mmengine_package_configs``: mmengine 0.10.7 resolves ``PACKAGE::``
  config paths only for its own table of OpenMMLab packages, and looks for
  an editable install's configs in site-packages. Can go when mmengine lets
  a package register itself.
* ``mmcv_hue``: mmcv 2.1's pillow ``adjust_hue`` raises ``OverflowError``
  under numpy 2 for a negative hue (mmpretrain's ``ColorJitter``). Can go
  when the mmcv that mmdet and mmseg accept wraps the shift itself (2.1 is
  their last).
* ``mmcv_lite_warning``: mmcv-lite warns at import about an op it cannot
  have, which nothing here uses. Can go when mmcv warns where the op is
  used, or the plugin requires the full mmcv.
* ``transformers_multimodal``: mmpretrain 1.2.0's multimodal models import
  names that transformers 4.57 / 5.x removed, which breaks ``import
  mmpretrain.models``. Can go when they import under the current
  transformers.

Each module says what it changes; none changes a number of a training
step that runs without it.
"""
# mmengine_checkpoints first: checkpoint loading; mmcv_lite_warning and
# transformers_multimodal before mmpretrain.models is first imported
from . import mmcv_hue  # noqa: F401
from . import mmcv_lite_warning  # noqa: F401
from . import mmengine_checkpoints  # noqa: F401
from . import mmengine_config_errors  # noqa: F401
from . import mmengine_config_text  # noqa: F401
from . import mmengine_package_configs  # noqa: F401
from . import transformers_multimodal  # noqa: F401
