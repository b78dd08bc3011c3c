import time
from typing import Dict, Optional

import torch
from mmpretrain.registry import HOOKS

from ...evaluation.knn import weighted_knn_accuracy
from ...precision import check_precision
from .frozen_feature_hook import FrozenFeatureHook


@HOOKS.register_module()
class OnlineKNNHook(FrozenFeatureHook):
    """Weighted kNN accuracy of the backbone being pretrained, logged as a
    curve during training.

    Every ``interval`` iterations (or epochs with ``by_epoch=True``), and
    optionally before the first step, the current backbone (the online one, or
    the target / momentum encoder) encodes a labelled query set and a
    labelled bank, and each query is classified by its ``k`` nearest bank
    features (:func:`mmsiameseim.evaluation.weighted_knn_accuracy`, the
    same features as :func:`mmsiameseim.evaluation.batch_features`). Top-1
    and top-5 go to the message hub (``{prefix}/top1``, ``{prefix}/top5``),
    the logger, and ``runner.visualizer.add_scalars`` (so every visualizer
    backend, e.g. TensorBoard or W&B, draws the curve), at step = the
    iterations trained so far.

    Under distributed training each rank encodes its share (the loaders
    get distributed samplers) and the features are gathered through
    ``mmengine.dist``; sampler padding is dropped by sample index. The time
    a round takes is capped by ``max_seconds`` (queries first, then the
    bank; the ranks stop together) and its size by ``max_samples``; a
    capped round says so in the log and logs the numbers of bank and query
    samples it used. The model is put back in the train/eval mode it was
    in, and torch's random state is left as it was.

    The loaders are built at start-up (``before_train``), before the first
    iteration: an empty bank or query set, or a ``target_backbone`` the
    model does not have, is refused there, naming the option; the backbone
    then encodes a few query images twice and is refused, naming it and
    what to set, when it fails, gives no float feature per image, NaN or
    inf, or different features on the two calls (see
    :class:`~.frozen_feature_hook.FrozenFeatureHook`). A bank of
    fewer than ``k`` samples is used with all of them voting; the start-up
    log says so and every round logs the k it used (``{prefix}/k``). A
    round whose features hold NaN or inf is skipped with a warning.

    Args:
        bank_dataloader (dict): Dataloader config of the labelled bank
            (e.g. a training subset with the test pipeline). Use
            ``default_collate`` for a ``SelfSupDataPreprocessor``.
        query_dataloader (dict): Dataloader config of the labelled queries
            (e.g. a held-out subset).
        interval (int): Evaluate every ``interval`` iterations or epochs.
            Defaults to 1000.
        by_epoch (bool): Count ``interval`` in epochs. Defaults to False.
        k (int): Neighbours. Defaults to 20.
        temperature (float): Vote temperature. Defaults to 0.07.
        encoder (str): 'online' (``model.backbone``) or 'target'.
            Defaults to 'online'.
        target_backbone (str): Module path of the target encoder's backbone
            in the model. Defaults to 'target.module.backbone' (SiameseIM's
            momentum target; mmpretrain's MoCo-v3: 'momentum_encoder.module
            .0').
        max_samples (int, optional): Use at most this many bank and this
            many query samples. Defaults to None.
        max_seconds (float, optional): Stop encoding after this many
            seconds. Defaults to None.
        before_train (bool): Also evaluate before the first step (or at a
            resume): the curve's starting point. Defaults to False.
        precision (str): 'float32' (no autocast), 'bfloat16' or 'float16'
            (:func:`~mmsiameseim.evaluation.autocast`). Defaults to
            'float32'.
        cache_inputs (bool): Keep the collated batches of the first
            complete pass in memory and encode them again in later rounds,
            instead of running the loaders' pipelines each time (for small
            subsets without random transforms). Defaults to False.
        forward_kwargs (dict, optional): Keyword arguments with which the
            backbone encodes whole, unmasked images. Defaults to None:
            ``mask=None`` for a backbone whose ``forward`` takes a mask
            (mmpretrain's ``MAEViT``, which masks at random without it,
            SimMIM's, BEiT's and CAE's backbones, ``SiameseIMViT``),
            ``importance=None`` for MILAN's, nothing for others.
        data_preprocessor (dict, optional): Config of the data preprocessor
            of the labelled batches; defaults to None, the model's (set it
            when that one prepares several views per sample, as BEiT's
            ``TwoNormDataPreprocessor``: the start-up check says so).
        prefix (str): Name prefix of the logged scalars. Defaults to 'knn'.
    """

    priority = 'LOW'
    needs = 'every kNN round needs at least one bank and one query sample'

    def __init__(self,
                 bank_dataloader: dict,
                 query_dataloader: dict,
                 interval: int = 1000,
                 by_epoch: bool = False,
                 k: int = 20,
                 temperature: float = 0.07,
                 encoder: str = 'online',
                 target_backbone: str = 'target.module.backbone',
                 max_samples: Optional[int] = None,
                 max_seconds: Optional[float] = None,
                 before_train: bool = False,
                 precision: str = 'float32',
                 cache_inputs: bool = False,
                 forward_kwargs: Optional[dict] = None,
                 data_preprocessor: Optional[dict] = None,
                 prefix: str = 'knn') -> None:
        if interval < 1:
            raise ValueError(f'OnlineKNNHook: interval={interval} must be '
                             '>= 1')
        check_precision(precision, option='OnlineKNNHook precision')
        for option, value in (('k', k), ('max_samples', max_samples)):
            if value is not None and value < 1:
                raise ValueError(f'OnlineKNNHook: {option}={value} must be '
                                 '>= 1')
        if temperature <= 0:
            raise ValueError(f'OnlineKNNHook: temperature={temperature} '
                             'must be > 0')
        super().__init__(
            dict(bank=bank_dataloader,
                 query=query_dataloader), encoder, target_backbone, precision,
            max_samples, cache_inputs, forward_kwargs, data_preprocessor)
        self.interval = interval
        self.by_epoch = by_epoch
        self.k = k
        self.temperature = temperature
        self.max_seconds = max_seconds
        self.run_before_train = before_train
        self.prefix = prefix

    # ------------------------------------------------------------ schedule
    def before_train(self, runner) -> None:
        self.check_sets(runner)
        if self.run_before_train:
            self.evaluate(runner, step=runner.iter)

    def check_sets(self, runner) -> None:
        """Refuse, before the first iteration, what would fail at the first
        round; say when the bank is smaller than ``k``."""
        self.check_start(runner)
        bank = len(self.loaders['bank'].dataset)
        if self.max_samples is not None:
            bank = min(bank, self.max_samples)
        if bank < self.k:
            runner.logger.warning(
                f'OnlineKNNHook: the bank has {bank} samples, fewer than '
                f'k={self.k}: every round uses k={bank} (all of them vote)')

    def after_train_iter(self,
                         runner,
                         batch_idx: int,
                         data_batch=None,
                         outputs=None) -> None:
        if not self.by_epoch and self.every_n_train_iters(
                runner, self.interval):
            self.evaluate(runner, step=runner.iter + 1)

    def after_train_epoch(self, runner) -> None:
        if self.by_epoch and self.every_n_epochs(runner, self.interval):
            self.evaluate(runner, step=runner.iter)

    # ------------------------------------------------------------ evaluate
    def evaluate(self, runner, step: int) -> Optional[Dict[str, float]]:
        """One kNN round; returns the logged scalars (None if skipped)."""
        self.build_loaders(runner)
        model = self.unwrap(runner)
        start = time.time()
        deadline = None if self.max_seconds is None else \
            start + self.max_seconds
        # the training's random stream stays as it would be without the
        # hook (iterating a DataLoader draws from torch's global generator)
        with self.eval_mode(model), torch.no_grad(), \
                torch.random.fork_rng(devices=[]):
            backbone = self.backbone(model)
            queries, query_labels, capped_q = self.encode(
                model, backbone, 'query', deadline)
            bank, bank_labels, capped_b = self.encode(model, backbone, 'bank',
                                                      deadline)
        seconds = time.time() - start
        sizes = (f'{len(bank_labels)}/{len(self.loaders["bank"].dataset)} '
                 f'bank and {len(query_labels)}/'
                 f'{len(self.loaders["query"].dataset)} query samples')
        capped = capped_q or capped_b
        if capped:
            runner.logger.warning(
                f'OnlineKNNHook: round at step {step} capped '
                f'(max_samples={self.max_samples}, max_seconds='
                f'{self.max_seconds}): used {sizes}')
        if len(bank_labels) == 0 or len(query_labels) == 0:
            runner.logger.warning(
                f'OnlineKNNHook: no kNN at step {step}: {sizes}; raise '
                'max_seconds or max_samples')
            return None
        bad = [
            name for name, x in (('bank', bank), ('query', queries))
            if not bool(torch.isfinite(x).all())
        ]
        if bad:
            runner.logger.warning(
                f'OnlineKNNHook: no kNN at step {step}: the '
                f'{" and ".join(bad)} features hold NaN or inf '
                f'({self.encoder} encoder, precision {self.precision})')
            return None
        acc = weighted_knn_accuracy(bank, bank_labels, queries, query_labels,
                                    self.k, self.temperature)
        p = self.prefix
        k = acc['k']
        scalars = {
            f'{p}/top1': acc['top1'],
            f'{p}/top5': acc['top5'],
            f'{p}/k': k,
            f'{p}/bank': len(bank_labels),
            f'{p}/queries': len(query_labels),
            f'{p}/seconds': seconds,
            f'{p}/capped': int(capped)
        }
        self.log_scalars(runner, scalars, step)
        clamped = f' of the k={self.k} asked: the bank has {k}' \
            if k < self.k else ''
        runner.logger.info(
            f'OnlineKNNHook ({self.encoder} encoder) at step {step}: '
            f'top-1 {acc["top1"]:.2f} %, top-5 {acc["top5"]:.2f} % '
            f'(k={k}{clamped}, T={self.temperature}, {sizes}, '
            f'{seconds:.1f} s)')
        return scalars
