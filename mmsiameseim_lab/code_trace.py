"""Which plugin files one training step runs, and how long they are.

Two images of a config's training set go through its dataset (the training
pipeline), the collate, the data preprocessor and the model's ``loss``,
while ``sys.setprofile`` records the file of every Python function called.
The files of the ``mmsiameseim`` package among them are counted: lines, and
code lines (not blank, not a comment, not a docstring). Building the
dataset and the model is not traced: only what a step runs.

``tools/trace_step.py`` writes the results file ``code_trace.json`` (one
snapshot per label, e.g. before and after a refactor, each with its
commit); docs/code_layout.md renders it.
"""
import ast
import io
import os
import os.path as osp
import sys
import tempfile
import tokenize
from typing import Dict, List, Optional

import numpy as np

TRACED_STAGES = ('dataset', 'collate', 'data preprocessor', 'loss')


def count_lines(path: str) -> Dict[str, int]:
    """``lines`` of a Python file and its ``code_lines``: lines holding a
    token that is not a comment, outside the docstrings of the module, its
    classes and functions."""
    with open(path) as f:
        source = f.read()
    docstrings = set()
    for node in ast.walk(ast.parse(source)):
        body = getattr(node, 'body', None)
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef,
                             ast.AsyncFunctionDef)) and body and isinstance(
                                 body[0], ast.Expr) and isinstance(
                                     body[0].value, ast.Constant) and \
                isinstance(body[0].value.value, str):
            docstrings.update(range(body[0].lineno, body[0].end_lineno + 1))
    code = set()
    skip = (tokenize.COMMENT, tokenize.NL, tokenize.NEWLINE, tokenize.INDENT,
            tokenize.DEDENT, tokenize.ENDMARKER, tokenize.ENCODING)
    for tok in tokenize.generate_tokens(io.StringIO(source).readline):
        if tok.type not in skip:
            code.update(range(tok.start[0], tok.end[0] + 1))
    return dict(
        lines=len(source.splitlines()), code_lines=len(code - docstrings))


def _paint_folder(folder: str, count: int = 2) -> None:
    from PIL import Image
    rng = np.random.default_rng(0)
    for i in range(count):
        Image.fromarray(rng.integers(0, 256, (240, 320, 3), np.uint8)).save(
            osp.join(folder, f'{i}.jpg'))


def traced_files(config: str, cfg_options: Optional[dict] = None) -> List[str]:
    """The plugin files (paths inside the package's parent folder, sorted)
    whose functions run while two images of ``config``'s own-images
    training set go through the dataset, collate, data preprocessor and
    ``loss``.

    The config's dataset reads a folder (its ``data_root`` is set
    to two painted JPEGs).
    """
    import torch
    from mmengine.config import Config
    from mmengine.registry import FUNCTIONS, init_default_scope
    from mmpretrain.registry import DATASETS, MODELS

    import mmsiameseim
    package = osp.dirname(osp.abspath(mmsiameseim.__file__))
    cfg = Config.fromfile(config)
    if cfg_options:
        cfg.merge_from_dict(cfg_options)
    init_default_scope('mmpretrain')
    seen = set()

    def profile(frame, event, arg):
        if event == 'call':
            seen.add(frame.f_code.co_filename)

    with tempfile.TemporaryDirectory() as folder:
        _paint_folder(folder)
        cfg.train_dataloader.dataset.data_root = folder
        dataset = DATASETS.build(cfg.train_dataloader.dataset)
        collate = FUNCTIONS.get(
            cfg.train_dataloader.get('collate_fn',
                                     dict(type='pseudo_collate'))['type'])
        torch.manual_seed(0)
        model = MODELS.build(cfg.model).train()
        sys.setprofile(profile)
        try:
            batch = collate([dataset[0], dataset[1]])
            data = model.data_preprocessor(batch, training=True)
            model(**data, mode='loss')
        finally:
            sys.setprofile(None)
    root = osp.dirname(package)
    return sorted(
        osp.relpath(f, root) for f in seen
        if osp.abspath(f).startswith(package + os.sep))


def trace_snapshot(config: str, cfg_options: Optional[dict] = None) -> dict:
    """``files`` (path, lines, code_lines) and their totals, for
    :func:`traced_files` of ``config``."""
    import mmsiameseim
    root = osp.dirname(osp.dirname(osp.abspath(mmsiameseim.__file__)))
    files = [
        dict(path=p, **count_lines(osp.join(root, p)))
        for p in traced_files(config, cfg_options)
    ]
    return dict(
        config=config,
        stages=list(TRACED_STAGES),
        files=files,
        total_files=len(files),
        total_lines=sum(f['lines'] for f in files),
        total_code_lines=sum(f['code_lines'] for f in files))
