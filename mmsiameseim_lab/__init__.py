"""The studies that stand beside the mmsiameseim plugin, one folder each
with its runner, its renderers and its published tables: ``demo``,
``claim``, ``side_by_side``, ``table3``, ``accumulation``, ``speed`` (the
speed benchmarks) and ``gpu_check``; beside them the machinery they share
(``evaluation``: the frozen-backbone protocol and the dense probe;
``metrics``: one metric vocabulary; ``results``, ``docs_render`` and
``fingerprints``: the published results files, their blocks and their smoke
fingerprints), the preflight, the authors' code driven like ours, the
smoke-data painters and the pictures.

Nothing here is registered and ``import mmsiameseim`` (what every config's
``custom_imports`` runs) never imports this package; it is not in the wheel.
``tools/`` holds the command lines over it (``tools/studies/``,
``tools/speed_benchmarks/``, ``tools/docs/``).
"""
