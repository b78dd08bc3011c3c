import contextlib
import random
import time
from typing import Dict, Optional, Tuple

import numpy as np
import torch
from mmengine import dist
from mmengine.hooks import Hook
from mmengine.model import is_model_wrapper

from ...evaluation.frozen_features import (batch_features, describe_call,
                                           pool_backbone_output,
                                           whole_image_kwargs)
from ...precision import autocast

#: Samples of the first batch the start-up check encodes (twice).
CHECK_SAMPLES = 16


@contextlib.contextmanager
def kept_random_state():
    """Python's, numpy's and torch's (CPU) random states are as before the
    block: a data pipeline run inside draws from them."""
    py, npy = random.getstate(), np.random.get_state()
    with torch.random.fork_rng(devices=[]):
        try:
            yield
        finally:
            random.setstate(py)
            np.random.set_state(npy)


def _first_samples(batch: dict, n: int) -> dict:
    """The first ``n`` samples of a collated batch (tensors and lists)."""
    size = len(batch['data_samples'])
    return {
        k:
        v[:n]
        if isinstance(v, (list, tuple, torch.Tensor)) and len(v) == size else v
        for k, v in batch.items()
    }


class FrozenFeatureHook(Hook):
    """What the hooks that score the backbone during pretraining share: the
    labelled loaders, built once at start-up with an empty set refused by
    name; the backbone scored (online, or the target / momentum encoder);
    and features of a whole loader gathered over the ranks.

    The labelled batches are prepared by the model's data preprocessor, or
    by the hook's ``data_preprocessor`` (a config; for a model whose own
    preprocessor prepares several views per sample, as BEiT's
    ``TwoNormDataPreprocessor``). The backbone encodes whole, unmasked
    images: it is called with
    ``forward_kwargs``, by default ``mask=None`` when its ``forward`` takes
    a mask (mmpretrain's ``MAEViT``, which otherwise masks at random, the
    backbones of SimMIM, BEiT, CAE, MaskFeat, and ``SiameseIMViT``) and
    nothing else. Before the first step (``before_train``) it encodes the
    first samples of the first loader twice, in eval mode, and refuses,
    naming the backbone and what to set, a call that fails, an output that
    is not one float feature per image, NaN or inf, or features that differ
    between the two calls (a backbone that masks or drops at random): the
    run stops then, not at the first round 1 000 iterations later.

    Subclasses give ``__init__`` their loader configs (name -> dataloader
    config, the option ``{name}_dataloader``) and set ``needs``: what an
    empty set would break, for the error.
    """

    needs = 'every round needs at least one sample in each set'

    def __init__(self, loader_cfgs: Dict[str, dict], encoder: str,
                 target_backbone: str, precision: str,
                 max_samples: Optional[int], cache_inputs: bool,
                 forward_kwargs: Optional[dict],
                 data_preprocessor: Optional[dict]) -> None:
        if encoder not in ('online', 'target'):
            raise ValueError(f'{self.name}: encoder={encoder!r}, choose '
                             "'online' or 'target'")
        if forward_kwargs is not None and not isinstance(forward_kwargs, dict):
            raise TypeError(f'{self.name}: forward_kwargs={forward_kwargs!r} '
                            'must be a dict of keyword arguments or None')
        self.forward_kwargs = None if forward_kwargs is None else \
            dict(forward_kwargs)
        self.data_preprocessor_cfg = data_preprocessor
        self.preprocessor: Optional[torch.nn.Module] = None
        self.loader_cfgs = loader_cfgs
        self.encoder = encoder
        self.target_backbone = target_backbone
        self.precision = precision
        self.max_samples = max_samples
        self.cache_inputs = cache_inputs
        self.loaders = None
        self.cached_batches = {}

    @property
    def name(self) -> str:
        return type(self).__name__

    @staticmethod
    def unwrap(runner) -> torch.nn.Module:
        return runner.model.module if is_model_wrapper(runner.model) \
            else runner.model

    @staticmethod
    @contextlib.contextmanager
    def eval_mode(model: torch.nn.Module):
        """The model in eval mode inside the block, and after it in the
        train/eval mode it was in."""
        was_training = model.training
        model.eval()
        try:
            yield
        finally:
            model.train(was_training)

    def check_start(self, runner) -> None:
        """Build the loaders, find the backbone and try it on a real batch
        before the first iteration, so that an empty set, a wrong
        ``target_backbone`` or a backbone whose output is no feature of the
        whole image is named then; and refuse two such hooks that would log
        under the same names."""
        self.check_unique_prefix(runner)
        self.build_loaders(runner)
        self.check_backbone(runner)

    def check_unique_prefix(self, runner) -> None:
        """Refuse another frozen-feature hook of the runner with this hook's
        ``prefix``: both would write ``{prefix}/top1`` at the same step, and
        the log would keep one of them."""
        prefix = getattr(self, 'prefix', None)
        same = [
            h for h in runner.hooks
            if h is not self and isinstance(h, FrozenFeatureHook)
            and getattr(h, 'prefix', None) == prefix
        ]
        if prefix is not None and same:
            other = same[0]
            rename = other if self.encoder == 'online' else self
            raise ValueError(
                f'{self.name} (encoder={self.encoder!r}) and '
                f'{other.name} (encoder={other.encoder!r}) both log as '
                f'{prefix}/...: give one another prefix, e.g. '
                f"prefix='{prefix}_{rename.encoder}' for the "
                f'{rename.encoder} one')

    def check_backbone(self, runner) -> None:
        """Encode the first samples of the first loader twice in eval mode
        and refuse, naming the backbone and what to set, what would make
        every round fail or score noise."""
        model = self.unwrap(runner)
        backbone = self.backbone(model)
        what = f'{self.name}: the {self.encoder} backbone ' \
            f'({type(backbone).__name__})'
        prepare = self.prepare(model)
        fix = ('set forward_kwargs to the keyword arguments with which '
               f'{type(backbone).__name__}.forward encodes whole, unmasked '
               'images (e.g. forward_kwargs=dict(mask=None)), or score '
               "another module (encoder='target' with target_backbone)")
        if self.forward_kwargs is None:
            try:
                self.forward_kwargs = whole_image_kwargs(backbone)
            except TypeError as e:
                raise TypeError(f'{what}: {e}; {fix}') from None
        call = describe_call(backbone, self.forward_kwargs)
        loader = next(iter(self.loaders))
        with kept_random_state(), self.eval_mode(model), torch.no_grad():
            batch = _first_samples(
                next(iter(self.loaders[loader])), CHECK_SAMPLES)
            inputs = prepare(batch, False)['inputs']
            if not isinstance(inputs, torch.Tensor):
                raise TypeError(
                    f'{self.name}: the data preprocessor '
                    f'({type(prepare).__name__}) gives '
                    f'{type(inputs).__name__} inputs for a batch of single '
                    f'images of {loader}_dataloader, not one image tensor (it '
                    'prepares several views per sample, as BEiT\'s '
                    'TwoNormDataPreprocessor does); set the hook\'s '
                    "data_preprocessor, e.g. dict(type='SelfSupData"
                    "Preprocessor', mean=..., std=..., to_rgb=...)")
            outs = []
            for _ in range(2):
                try:
                    with autocast(inputs.device.type, self.precision):
                        outs.append(backbone(inputs, **self.forward_kwargs))
                except Exception as e:  # noqa: BLE001  (named, re-raised)
                    raise RuntimeError(
                        f'{what} fails on a batch of {loader}_dataloader '
                        f'called as {call}: {type(e).__name__}: {e}; {fix}'
                    ) from e
        last = outs[0][-1] if isinstance(outs[0], (tuple, list)) \
            and outs[0] else outs[0]
        n = len(batch['data_samples'])
        if not isinstance(last, torch.Tensor) or last.dim() < 2 or \
                last.shape[0] != n or not last.is_floating_point():
            got = type(last).__name__ if not isinstance(
                last, torch.Tensor) else f'{tuple(last.shape)} {last.dtype}'
            raise TypeError(
                f'{what}: {call} gives {got} (the last entry of its output) '
                f'for {n} images, not one float feature vector per image; '
                f'{fix}')
        a, b = (pool_backbone_output(o) for o in outs)
        if not bool(torch.isfinite(a).all()):
            raise ValueError(
                f'{what}: {call} gives NaN or inf features for real images '
                f'of {loader}_dataloader before training (precision='
                f"{self.precision!r}); try precision='float32'")
        diff = float((a - b).abs().max())
        if diff > 1e-3 * float(a.abs().max()) + 1e-6:
            raise ValueError(
                f'{what}: {call} gives different features for the same '
                f'images on two calls in eval mode (largest difference '
                f'{diff:.3g}): it masks, drops or samples at random, so the '
                f'scores would measure noise; {fix}')
        runner.logger.info(
            f'{what} encodes whole images as {call}: {a.shape[1]} features '
            f'per image, checked on {n} samples of {loader}_dataloader '
            '(finite, the same on two calls)')

    def build_loaders(self, runner) -> None:
        """The loaders, built once; an empty set is refused naming its
        option."""
        if self.loaders is not None:
            return
        loaders = {}
        for name, cfg in self.loader_cfgs.items():
            try:
                loaders[name] = runner.build_dataloader(cfg, seed=runner.seed)
            except ValueError:
                # mmengine's serialisation fails on an empty data list
                if self._unserialised_size(cfg) == 0:
                    self._refuse_empty(name)
                raise
            if len(loaders[name].dataset) == 0:
                self._refuse_empty(name)
        self.loaders = loaders

    @staticmethod
    def _unserialised_size(loader_cfg: dict) -> Optional[int]:
        """The length of the loader's dataset built without serialisation,
        None when that fails too."""
        from mmengine.registry import DATASETS
        dataset = loader_cfg.get('dataset')
        if not isinstance(dataset, dict):
            return None
        try:
            return len(DATASETS.build(dict(dataset, serialize_data=False)))
        except Exception:  # noqa: BLE001  (the first error is the one)
            return None

    def _refuse_empty(self, name: str) -> None:
        cfg = self.loader_cfgs[name].get('dataset', {})
        where = ', '.join(f'{key}={cfg[key]!r}'
                          for key in ('type', 'data_root', 'data_prefix',
                                      'ann_file', 'indices') if key in cfg)
        raise ValueError(
            f'{self.name}: {name}_dataloader has no samples ({where}): '
            f'{self.needs}; fix the dataset of {name}_dataloader or remove '
            'the hook')

    def prepare(self, model: torch.nn.Module) -> torch.nn.Module:
        """The data preprocessor of the labelled batches: the hook's
        ``data_preprocessor`` (built once, on the model's device), else the
        model's."""
        if self.data_preprocessor_cfg is None:
            return model.data_preprocessor
        if self.preprocessor is None:
            from mmpretrain.registry import MODELS
            device = next(model.parameters()).device
            self.preprocessor = MODELS.build(
                self.data_preprocessor_cfg).to(device)
        return self.preprocessor

    def backbone(self, model: torch.nn.Module) -> torch.nn.Module:
        """The backbone that is scored."""
        if self.encoder == 'online':
            return model.backbone
        try:
            return model.get_submodule(self.target_backbone)
        except AttributeError as e:
            raise AttributeError(
                f"{self.name}: encoder='target', but the model "
                f'({type(model).__name__}) has no module '
                f'{self.target_backbone!r} (target_backbone): {e}') from None

    def encode(
            self, model, backbone, name: str, deadline: Optional[float]
    ) -> Tuple[torch.Tensor, torch.Tensor, bool]:
        """Features and labels of one loader, gathered over the ranks,
        and whether the pass was capped (``max_samples`` or ``deadline``)."""
        world = dist.get_world_size()
        limit = None if self.max_samples is None else \
            -(-self.max_samples // world)
        feats, labels, index = [], [], []
        cached = self.cached_batches.get(name)
        batches = []
        count = 0
        for batch in (self.loaders[name] if cached is None else cached):
            if cached is None and self.cache_inputs:
                batches.append(batch)
            x, y = batch_features(
                model,
                batch,
                backbone,
                self.precision,
                forward_kwargs=self.forward_kwargs,
                data_preprocessor=self.prepare(model))
            feats.append(x)
            labels.append(y)
            index.append(
                torch.tensor([
                    s.metainfo.get('sample_idx', -1)
                    for s in batch['data_samples']
                ]))
            count = sum(len(f) for f in feats)
            stop = torch.tensor([
                float(limit is not None and count >= limit),
                float(deadline is not None and time.time() > deadline)
            ])
            dist.all_reduce(stop, op='max')
            if stop.any():
                break
        # capped: some rank stopped before the end of its share
        total = len(self.loaders[name].sampler) if cached is None else \
            sum(len(b['data_samples']) for b in cached)
        short = torch.tensor([float(count < total)])
        dist.all_reduce(short, op='max')
        capped = bool(short.item())
        if cached is None and self.cache_inputs and not capped:
            self.cached_batches[name] = batches  # complete passes only
        local = (torch.cat(feats), torch.cat(labels), torch.cat(index))
        parts = dist.all_gather_object(local) if world > 1 else [local]
        x, y, idx = (torch.cat(p) for p in zip(*parts))
        if world > 1 and bool((idx >= 0).all()):  # drop sampler padding
            keep = torch.zeros(len(idx), dtype=torch.bool)
            seen = set()
            for i, v in enumerate(idx.tolist()):
                keep[i] = v not in seen
                seen.add(v)
            x, y = x[keep], y[keep]
        if self.max_samples is not None and len(y) > self.max_samples:
            x, y = x[:self.max_samples], y[:self.max_samples]
        return x, y, capped

    def log_scalars(self, runner, scalars: Dict[str, float],
                    step: int) -> None:
        """To the message hub and every visualizer backend."""
        for key, value in scalars.items():
            runner.message_hub.update_scalar(key, value)
        runner.visualizer.add_scalars(scalars, step=step)
