"""Keeps mmcv-lite's "Fail to import ``MultiScaleDeformableAttention``"
warning out of runs that cannot use the op.

mmcv-lite 2.1.0 has no compiled ops. When ``mmcv.cnn.bricks.transformer``
is first imported it tries ``mmcv.ops.MultiScaleDeformableAttention`` and
warns when that fails. mmpretrain's backbones import that module (for
``FFN`` and ``PatchEmbed``), so ``import mmsiameseim`` (``make demo``,
every pretraining config) printed the warning, although SiameseIM and
mmpretrain never use the op. The models that do (mmdet's deformable DETR
family) import it from ``mmcv.ops`` themselves and fail there with
mmcv-lite's own ``ImportError``, so the warning tells them nothing either.

Here that module is imported first, with that one message filtered for
the duration of the import only; every other warning still shows. With the
full mmcv (``make setup-full``) the import succeeds and nothing is
filtered. ``mim train mmpretrain ...`` imports mmpretrain before the
plugin, so there the warning still shows once.
"""
import warnings

with warnings.catch_warnings():
    warnings.filterwarnings(
        'ignore', message='Fail to import ``MultiScaleDeformableAttention``')
    import mmcv.cnn.bricks.transformer  # noqa: F401
