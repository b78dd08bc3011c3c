"""Small datasets in the on-disk layouts of the benchmarks (ImageNet and its
test sets, COCO / LVIS, ADE20k), painted from real Fashion-MNIST pixels, so
that every benchmark config can run end to end on a CPU. Command lines:
``tools/dataset_converters/make_smoke_*.py``; the configs that read them:
``configs/benchmarks/*/smoke/``.

The submodules are imported on their own (``coco_lvis`` needs pycocotools,
an mmdet requirement)::

    from mmsiameseim.testing.coco_lvis import make_coco_lvis
"""
