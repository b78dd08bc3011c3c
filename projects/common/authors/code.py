"""The authors' SiameseIM training step, from a local checkout of their code.

Used by ``projects/speed/tools/pretrain.py --models official --official-repo
PATH`` to time OpenGVLab/Siamese-Image-Modeling side by side with ours. We
ship none of their code: point ``PATH`` at your own clone.

Their code predates torch 2 and numpy 2; importing it here supplies the
names it needs that are gone or moved (``torch._six.inf``, ``np.float``,
``np.int``,
timm 0.6's ``timm.models.layers.helpers``) and nothing else. Their model
runs with the arguments of their ViT-B launch script
(``configs/pretrain/dist_sim_base_1600ep.sh``): decoder width = encoder
width, 16 decoder heads, projector 2 and predictor 4 blocks with BatchNorm,
frozen patch embedding, λ = 0.02. Their loss all-reduces the correlation,
so a one-process gloo group is started if none is.
"""
import argparse
import importlib
import math
import os
import sys
import types
from typing import Optional

import numpy as np
import torch
import torch.nn as nn

from projects.common.authors.step import AuthorsStep, model_args


def checkout_problem(repo: Optional[str]) -> Optional[str]:
    """Why ``repo`` is not a checkout of the authors' code, or None."""
    if repo and os.path.isfile(os.path.join(repo, 'models_sim.py')):
        return None
    return (f'no models_sim.py in {repo!r}: give the root of a clone of '
            'OpenGVLab/Siamese-Image-Modeling')


def import_models_sim(repo: str):
    """``models_sim`` of the authors' checkout at ``repo``."""
    problem = checkout_problem(repo)
    if problem:
        raise FileNotFoundError(f'--official-repo: {problem}')
    if 'torch._six' not in sys.modules:  # removed in torch 2.0
        sys.modules['torch._six'] = types.SimpleNamespace(inf=math.inf)
    if not hasattr(np, 'float'):  # removed in numpy 1.24
        np.float = float
    if not hasattr(np, 'int'):  # removed in numpy 1.24 (their mask code)
        np.int = int
    try:  # their timm is 0.6; timm 1.x moved the helpers
        import timm.models.layers.helpers  # noqa: F401
    except ImportError:
        import timm.layers.helpers
        sys.modules['timm.models.layers.helpers'] = timm.layers.helpers
    sys.path.insert(0, os.path.abspath(repo))
    import models_sim
    return models_sim


def install_training_shims(repo: str,
                           autocast_dtype: torch.dtype = torch.bfloat16):
    """What their training code (``main_pretrain``, ``engine_pretrain``,
    ``util.misc``) needs on a CPU-only, current stack, on top of
    ``import_models_sim``'s: CUDA-only calls become their CPU meaning
    (``torch.cuda.synchronize`` does nothing; ``torch.cuda.amp.autocast``,
    their mixed precision, becomes CPU autocast to ``autocast_dtype``, and
    its ``enabled=False`` regions stay fp32 as on a GPU; their logger's
    cross-process reduction on 'cuda' is skipped in the one process), and a
    missing
    ``tensorboard`` (imported at the top of ``main_pretrain``) becomes a
    stub.

    Call it before anything imports their modules, and only in a process that
    runs their loop (projects/side_by_side/tools/side_by_side.py starts one per
    run).
    """
    if torch.cuda.is_available():
        return
    torch.cuda.synchronize = lambda *a, **k: None

    def cpu_autocast(enabled=True, dtype=None, cache_enabled=True):
        return torch.autocast(
            'cpu',
            dtype=autocast_dtype,
            enabled=enabled,
            cache_enabled=cache_enabled)

    torch.cuda.amp.autocast = cpu_autocast
    # before their modules bind torch.cuda.amp.autocast as a decorator
    import_models_sim(repo)
    # their logger all-reduces its meters on 'cuda' when a process group
    # exists (ours exists for their loss): one process has nothing to reduce
    from util import misc
    misc.SmoothedValue.synchronize_between_processes = lambda self: None
    try:
        importlib.import_module('torch.utils.tensorboard')
    except ImportError:
        sys.modules['torch.utils.tensorboard'] = types.SimpleNamespace(
            SummaryWriter=None)


def import_main_pretrain(repo: str):
    """Their ``main_pretrain`` (for ``DataAugmentationForSIM``); it asserts
    timm 0.6.12 at import, so that check sees the version it wants while the
    module loads (their model and loop run on the installed timm)."""
    import_models_sim(repo)
    import timm
    version = timm.__version__
    timm.__version__ = '0.6.12'
    try:
        import main_pretrain
    finally:
        timm.__version__ = version
    return main_pretrain


def _ensure_process_group():
    import torch.distributed as dist
    if not dist.is_initialized():
        dist.init_process_group(
            'gloo', store=dist.HashStore(), rank=0, world_size=1)


def build_model(repo: str,
                dims: int,
                depth: int,
                heads: int,
                img: int,
                patch: int = 16,
                in_chans: int = 3,
                decoder_heads: Optional[int] = None,
                args: Optional[argparse.Namespace] = None) -> nn.Module:
    """Their ``SiameseIMViT`` (random weights, their initialisation);
    ``decoder_heads`` defaults to their 16 where the width allows."""
    from functools import partial
    models_sim = import_models_sim(repo)
    from util.misc import LayerNorm
    _ensure_process_group()
    if decoder_heads is None:
        decoder_heads = 16 if dims % 16 == 0 else heads
    return models_sim.SiameseIMViT(
        img_size=img,
        patch_size=patch,
        in_chans=in_chans,
        embed_dim=dims,
        depth=depth,
        num_heads=heads,
        decoder_num_heads=decoder_heads,
        mlp_ratio=4,
        norm_layer=partial(LayerNorm, eps=1e-6),
        args=args or model_args(dims))


def build(repo: str,
          dims: int,
          depth: int,
          heads: int,
          img: int,
          patch: int = 16) -> AuthorsStep:
    """Their SiameseIM with the given ViT, random weights."""
    return AuthorsStep(build_model(repo, dims, depth, heads, img, patch))
