import contextlib
import time
from typing import Dict, Optional, Tuple

import torch
from mmengine import dist
from mmengine.hooks import Hook
from mmengine.model import is_model_wrapper

from ...evaluation.frozen_features import batch_features


class FrozenFeatureHook(Hook):
    """What the hooks that score the backbone during pretraining share: the
    labelled loaders, built once at start-up with an empty set refused by
    name; the backbone scored (online, or the target / momentum encoder);
    and features of a whole loader gathered over the ranks.

    Subclasses give ``__init__`` their loader configs (name -> dataloader
    config, the option ``{name}_dataloader``) and set ``needs``: what an
    empty set would break, for the error.
    """

    needs = 'every round needs at least one sample in each set'

    def __init__(self, loader_cfgs: Dict[str, dict], encoder: str,
                 target_backbone: str, precision: str,
                 max_samples: Optional[int], cache_inputs: bool) -> None:
        if encoder not in ('online', 'target'):
            raise ValueError(f'{self.name}: encoder={encoder!r}, choose '
                             "'online' or 'target'")
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
        """Build the loaders and find the backbone before the first
        iteration, so that an empty set or a wrong ``target_backbone`` is
        named then."""
        self.build_loaders(runner)
        self.backbone(self.unwrap(runner))

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
            x, y = batch_features(model, batch, backbone, self.precision)
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
