"""Small datasets in the on-disk layouts of the benchmarks (ImageNet and its
test sets, COCO / LVIS, ADE20k), painted from real Fashion-MNIST pixels, so
that every benchmark config can run end to end on a CPU, as
``mmdet.testing`` does for mmdet: the tests, the preflight and the command
lines ``tools/dataset_converters/make_smoke_*.py`` build them; the configs
that read them are ``configs/benchmarks/*/smoke/``. ``import mmsiameseim``
does not import this package.

The submodules are imported on their own (``coco_lvis`` needs pycocotools,
an mmdet requirement)::

    from mmsiameseim.testing.coco_lvis import make_coco_lvis
"""
