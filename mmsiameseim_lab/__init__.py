"""The experiments that stand beside the mmsiameseim plugin: the CPU demo,
the Table 3 miniature, the side-by-side runs with the authors' code, the
benchmark harness, the smoke-data painters and the parity-fixture drawing.

Nothing here is registered and ``import mmsiameseim`` (what every config's
``custom_imports`` runs) never imports this package; ``tools/`` are the
command lines over it.
"""
