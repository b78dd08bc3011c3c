import time
from typing import Dict, Iterator, Optional

import numpy as np
import torch
import torch.nn.functional as F
from mmengine import dist
from mmpretrain.registry import HOOKS

from ...evaluation.frozen_features import batch_features
from ...precision import check_precision
from .frozen_feature_hook import FrozenFeatureHook, kept_random_state


@HOOKS.register_module()
class OnlineLinearProbeHook(FrozenFeatureHook):
    """A linear classifier trained on the detached features of the backbone
    being pretrained, its accuracy logged as a curve (solo-learn's online
    linear evaluation, beside :class:`OnlineKNNHook`).

    Every ``train_interval`` iterations, after the pretraining's own step,
    the backbone (in eval mode, without gradients) encodes the next batch of
    a labelled loader (e.g. the training set with the test pipeline: the
    pretraining's own batches hold masked two-view samples) and the
    classifier takes one SGD step on it: a non-affine BatchNorm, as MAE's
    linear probe, then a linear layer, cross-entropy. Its training loss
    goes to the message hub as ``train/{prefix}_loss`` (the logger's
    lines). Every ``val_interval`` iterations (or epochs), and optionally
    before the first step, it classifies a held-out labelled set: top-1 and
    top-5 go to the message hub (``{prefix}/top1``, ``{prefix}/top5``), the
    logger and ``runner.visualizer.add_scalars`` at step = the iterations
    trained so far.

    The pretraining does not see it: the features carry no gradient, the
    classifier is no part of the model (neither the optimizer nor the
    model's weights hold it), the model is put back in its train/eval
    mode, and python's, numpy's and torch's random states are left as they
    were. Checkpoints carry the classifier and its optimizer under
    ``online_linear_probe``, so a resumed run goes on with them; its loader
    starts a new pass.

    Before the first step the loaders are built and the backbone is tried
    on a real batch (whole, unmasked images: ``mask=None`` for a backbone
    that takes a mask), refused by name when it fails or gives no
    deterministic float feature per image (see
    :class:`~.frozen_feature_hook.FrozenFeatureHook`).

    Under distributed training each rank steps on its own batch with the
    gradients averaged over the ranks (and the BatchNorm statistics too),
    so every rank holds the same classifier; validation features are
    gathered as :class:`OnlineKNNHook` gathers its bank.

    Args:
        train_dataloader (dict): Dataloader config of the labelled training
            samples (use ``default_collate`` for a
            ``SelfSupDataPreprocessor``).
        val_dataloader (dict): Dataloader config of the labelled held-out
            samples.
        num_classes (int, optional): Classes; defaults to the number of
            ``classes`` in the training dataset's metainfo. A label outside
            ``[0, num_classes)`` is refused naming the option.
        train_interval (int): One classifier step every ``train_interval``
            pretraining iterations. Defaults to 1.
        val_interval (int): Validate every ``val_interval`` iterations or
            epochs. Defaults to 1000.
        by_epoch (bool): Count ``val_interval`` in epochs. Defaults to
            False.
        lr (float): SGD learning rate (constant). Defaults to 0.1.
        momentum (float): SGD momentum. Defaults to 0.9.
        weight_decay (float): SGD weight decay. Defaults to 0.
        encoder (str): 'online' (``model.backbone``) or 'target'.
            Defaults to 'online'.
        target_backbone (str): Module path of the target encoder's backbone
            (see :class:`OnlineKNNHook`). Defaults to
            'target.module.backbone'.
        max_val_samples (int, optional): Validate on at most this many
            samples. Defaults to None.
        before_train (bool): Also validate before the first step (the
            untrained classifier: chance level). Defaults to False.
        precision (str): Autocast of the backbone: 'float32', 'bfloat16'
            or 'float16'; the classifier runs in float32. Defaults to
            'float32'.
        forward_kwargs (dict, optional): Keyword arguments with which the
            backbone encodes whole, unmasked images; defaults to
            ``mask=None`` for a backbone whose ``forward`` takes a mask
            (see :class:`OnlineKNNHook`), none otherwise.
        data_preprocessor (dict, optional): Config of the data preprocessor
            of the labelled batches; defaults to None, the model's (set it
            when that one prepares several views per sample, as BEiT's
            ``TwoNormDataPreprocessor``: the start-up check says so).
        prefix (str): Name prefix of the logged scalars. Defaults to
            'linear'.
    """

    priority = 'LOW'
    needs = 'the online linear probe trains on one set and validates on ' \
        'the other'

    def __init__(self,
                 train_dataloader: dict,
                 val_dataloader: dict,
                 num_classes: Optional[int] = None,
                 train_interval: int = 1,
                 val_interval: int = 1000,
                 by_epoch: bool = False,
                 lr: float = 0.1,
                 momentum: float = 0.9,
                 weight_decay: float = 0.,
                 encoder: str = 'online',
                 target_backbone: str = 'target.module.backbone',
                 max_val_samples: Optional[int] = None,
                 before_train: bool = False,
                 precision: str = 'float32',
                 forward_kwargs: Optional[dict] = None,
                 data_preprocessor: Optional[dict] = None,
                 prefix: str = 'linear') -> None:
        counts = dict(
            num_classes=num_classes,
            train_interval=train_interval,
            val_interval=val_interval,
            max_val_samples=max_val_samples)
        for option, value in counts.items():
            if value is not None and value < 1:
                raise ValueError(f'OnlineLinearProbeHook: {option}={value} '
                                 'must be >= 1')
        if lr <= 0:
            raise ValueError(f'OnlineLinearProbeHook: lr={lr} must be > 0')
        check_precision(precision, option='OnlineLinearProbeHook precision')
        super().__init__(
            dict(train=train_dataloader,
                 val=val_dataloader), encoder, target_backbone, precision,
            max_val_samples, False, forward_kwargs, data_preprocessor)
        self.num_classes = num_classes
        self.train_interval = train_interval
        self.val_interval = val_interval
        self.by_epoch = by_epoch
        self.optim_options = dict(
            lr=lr, momentum=momentum, weight_decay=weight_decay)
        self.run_before_train = before_train
        self.prefix = prefix
        self.classifier: Optional[torch.nn.Module] = None
        self.optimizer: Optional[torch.optim.Optimizer] = None
        self.steps = 0
        self.pending_state: Optional[dict] = None
        self.batches: Optional[Iterator] = None
        self.passes = 0
        self.losses = []

    # ------------------------------------------------------------ schedule
    def before_train(self, runner) -> None:
        self.check_start(runner)
        if self.num_classes is None:
            classes = getattr(self.loaders['train'].dataset, 'metainfo',
                              {}).get('classes')
            if not classes:
                raise ValueError(
                    'OnlineLinearProbeHook: num_classes is not given and '
                    'the dataset of train_dataloader names no classes in '
                    'its metainfo; set num_classes')
            self.num_classes = len(classes)
        if self.run_before_train:
            self.validate(runner, step=runner.iter)

    def after_train_iter(self,
                         runner,
                         batch_idx: int,
                         data_batch=None,
                         outputs=None) -> None:
        if self.every_n_train_iters(runner, self.train_interval):
            self.train_step(runner)
        if not self.by_epoch and self.every_n_train_iters(
                runner, self.val_interval):
            self.validate(runner, step=runner.iter + 1)

    def after_train_epoch(self, runner) -> None:
        if self.by_epoch and self.every_n_epochs(runner, self.val_interval):
            self.validate(runner, step=runner.iter)

    # ---------------------------------------------------------- checkpoint
    def before_save_checkpoint(self, runner, checkpoint: dict) -> None:
        if self.classifier is not None:
            checkpoint.setdefault('online_linear_probe', {})[self.prefix] = \
                dict(classifier=self.classifier.state_dict(),
                     optimizer=self.optimizer.state_dict(),
                     steps=self.steps)

    def after_load_checkpoint(self, runner, checkpoint: dict) -> None:
        state = checkpoint.get('online_linear_probe', {}).get(self.prefix)
        if state is not None:
            self.pending_state = state
            self.classifier = self.optimizer = None

    # ------------------------------------------------------------ classify
    def build_classifier(self, channels: int) -> None:
        """BatchNorm (no affine) + Linear, with the state of a resumed
        checkpoint when there is one, else rank 0's initialisation."""
        self.classifier = torch.nn.Sequential(
            torch.nn.BatchNorm1d(channels, affine=False, eps=1e-6),
            torch.nn.Linear(channels, self.num_classes))
        torch.nn.init.trunc_normal_(self.classifier[1].weight, std=0.01)
        torch.nn.init.zeros_(self.classifier[1].bias)
        self.optimizer = torch.optim.SGD(self.classifier.parameters(),
                                         **self.optim_options)
        if self.pending_state is not None:
            state, self.pending_state = self.pending_state, None
            try:
                self.classifier.load_state_dict(state['classifier'])
            except RuntimeError as e:
                raise RuntimeError(
                    'OnlineLinearProbeHook: the checkpoint\'s classifier '
                    f'(online_linear_probe.{self.prefix}) does not fit '
                    f'{channels} features and num_classes='
                    f'{self.num_classes}: {e}') from None
            self.optimizer.load_state_dict(state['optimizer'])
            self.steps = int(state['steps'])
        elif dist.get_world_size() > 1:
            for p in self.classifier.parameters():
                dist.broadcast(p.data, src=0)

    def next_batch(self, runner) -> dict:
        """The next training batch of two samples or more (BatchNorm's
        statistics need two), a new shuffled pass when one ends."""
        loader = self.loaders['train']
        for _ in range(len(loader) + 2):
            if self.batches is None:
                if hasattr(loader.sampler, 'set_epoch'):
                    loader.sampler.set_epoch(self.passes)
                self.passes += 1
                self.batches = iter(loader)
            try:
                batch = next(self.batches)
            except StopIteration:
                self.batches = None
                continue
            if len(batch['data_samples']) > 1:
                return batch
        raise ValueError(
            'OnlineLinearProbeHook: train_dataloader gives no batch of two '
            'samples or more; raise its batch_size')

    def train_step(self, runner) -> None:
        """One SGD step of the classifier on detached features."""
        model = self.unwrap(runner)
        with kept_random_state():
            with self.eval_mode(model), torch.no_grad():
                x, y = batch_features(
                    model,
                    self.next_batch(runner),
                    self.backbone(model),
                    self.precision,
                    forward_kwargs=self.forward_kwargs,
                    data_preprocessor=self.prepare(model))
            self.check_labels(y)
            if self.classifier is None:
                self.build_classifier(x.shape[1])
            self.classifier.train()
            loss = F.cross_entropy(self.classifier(x), y)
            self.optimizer.zero_grad()
            loss.backward()
            self.sync_ranks()
            self.optimizer.step()
        self.steps += 1
        self.losses.append(loss.item())
        runner.message_hub.update_scalar(f'train/{self.prefix}_loss',
                                         self.losses[-1])

    def check_labels(self, labels: torch.Tensor) -> None:
        bad = labels[(labels < 0) | (labels >= self.num_classes)]
        if len(bad):
            raise ValueError(
                f'OnlineLinearProbeHook: label {int(bad[0])} of '
                f'train_dataloader is outside [0, {self.num_classes}) '
                f'(num_classes={self.num_classes}); set num_classes to the '
                'number of classes of the labelled data')

    def sync_ranks(self) -> None:
        """Averaged gradients and BatchNorm statistics: the same classifier
        on every rank."""
        world = dist.get_world_size()
        if world == 1:
            return
        for p in self.classifier.parameters():
            dist.all_reduce(p.grad, op='mean')
        norm = self.classifier[0]
        for buffer in (norm.running_mean, norm.running_var):
            dist.all_reduce(buffer, op='mean')

    def validate(self, runner, step: int) -> Dict[str, float]:
        """Top-1 / top-5 on the held-out set; returns the logged
        scalars."""
        model = self.unwrap(runner)
        start = time.time()
        with kept_random_state():
            with self.eval_mode(model), torch.no_grad():
                x, y, _ = self.encode(model, self.backbone(model), 'val', None)
            if self.classifier is None:
                self.build_classifier(x.shape[1])
            self.classifier.eval()
            with torch.no_grad():
                logits = self.classifier(x)
        top5 = logits.topk(min(5, logits.shape[1]), dim=1).indices
        hits = top5 == y[:, None]
        p = self.prefix
        scalars = {
            f'{p}/top1': 100. * hits[:, 0].float().mean().item(),
            f'{p}/top5': 100. * hits.any(dim=1).float().mean().item(),
            f'{p}/steps': self.steps,
            f'{p}/samples': len(y),
            f'{p}/seconds': time.time() - start
        }
        if self.losses:
            scalars[f'{p}/train_loss'] = float(np.mean(self.losses))
            self.losses = []
        self.log_scalars(runner, scalars, step)
        runner.logger.info(
            f'OnlineLinearProbeHook ({self.encoder} encoder) at step '
            f'{step}: top-1 {scalars[f"{p}/top1"]:.2f} %, top-5 '
            f'{scalars[f"{p}/top5"]:.2f} % on {len(y)} held-out samples '
            f'after {self.steps} classifier steps')
        return scalars
