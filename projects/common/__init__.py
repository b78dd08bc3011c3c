"""What the studies share: the frozen-backbone protocol and the dense
probes they score with (``evaluation``), one metric vocabulary
(``metrics``), the published results files, their rendered blocks, record
keys and smoke fingerprints (``results``, ``docs_render``,
``config_values``, ``fingerprints``), the authors' code driven like ours
(``authors``), the pictures (``visualization``) and the command lines over
them (``tools/``: render, fingerprint, the method figure, the ViT-B parity
fixture)."""
