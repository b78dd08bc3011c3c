"""Running the claim study: each phase's runs (:mod:`.plan`) pretrained once
and scored, every evaluation a record kept under the settings it was taken
with (a record whose settings digest matches is reused, so the study
continues from its results file, run by run)."""
import copy
import os
import os.path as osp
import time
from typing import Dict, List, Optional

from mmengine.config import Config

from mmsiameseim.evaluation.feature_cache import cache_digest
from projects.claim.plan import record_key, variant_name
from projects.common.config_values import config_key
from projects.common.evaluation import build_dense_probe

# every score of a table record; the token map is scored by kNN and
# few-shot only (the linear probe reads a pooled feature)
TOKEN_MAP_METRICS = ('token_map_knn', 'token_map_fewshot')


def token_map_dim(cfg: Config) -> int:
    """Values of the token map of a pretraining config's ViT: patches x
    width."""
    bb = cfg.model.backbone
    side = bb.img_size // bb.patch_size
    return int(side * side * bb.arch['embed_dims'])


class Scorer:
    """The study's evaluations: a protocol per feature variant (test images,
    or ``holdout`` held-out training images), the dense probe and the pixel
    floors.

    Args:
        evaluation (dict): The study's ``evaluation`` (protocol settings).
        eval_dir (str): Where evaluations go (held-out ones in
            ``holdoutN``).
        data_root (str): The dataset folder.
        dense (dict): The study's ``dense``.
        holdout (int, optional): Score the table and curve on held-out
            training images too (``--holdout``).
        search_holdout (int, optional): The held-out images of the search.
    """

    def __init__(self,
                 evaluation: dict,
                 eval_dir: str,
                 data_root: str,
                 dense: dict,
                 holdout: Optional[int] = None,
                 search_holdout: Optional[int] = None) -> None:
        self.evaluation = dict(evaluation)
        self.eval_dir = eval_dir
        self.data_root = data_root
        self.holdout = holdout
        self.search_holdout = holdout or search_holdout
        self._protocols: Dict[tuple, object] = {}
        self.dense = build_dense_probe(self.protocol(None), dense)

    def protocol(self, variant: Optional[dict], holdout=False):
        """The protocol reading ``variant`` (None: the cls token); held-out
        when ``holdout`` is a number or the study scores on held-out
        images."""
        from projects.demo.cli import build_protocol
        variant = variant or dict(feature='cls_token')
        held = holdout or self.holdout
        key = (held, variant['feature'], bool(variant.get('final_norm')))
        if key not in self._protocols:
            ev = dict(
                self.evaluation,
                feature=key[1],
                final_norm=key[2],
                **(dict(holdout=held, test_samples=None) if held else {}))
            folder = osp.join(self.eval_dir, f'holdout{held}') \
                if held else self.eval_dir
            self._protocols[key] = build_protocol(
                Config(dict(evaluation=ev)), folder, self.data_root)
        return self._protocols[key]

    def score(self, name: str, ckpt: Optional[str], model, chosen: dict,
              linear: bool) -> dict:
        """Every score of one checkpoint: the chosen pooled feature (the
        linear probe when ``linear``), the chosen token map and the dense
        probe."""
        pooled, tm = chosen['pooled'], chosen['token_map']
        out = self.protocol(pooled).evaluate(
            f'{name}~{variant_name(pooled)}', ckpt, model, linear=linear)
        out = {k: out.get(k) for k in ('knn', 'linear', 'fewshot')}
        tmr = self.protocol(tm).evaluate(
            f'{name}~{variant_name(tm)}', ckpt, model, linear=False)
        out.update(token_map_knn=tmr['knn'], token_map_fewshot=tmr['fewshot'])
        d = self.dense.evaluate(name, ckpt, model)
        out.update(
            dense_miou=d['miou'],
            dense_accuracy=d['accuracy'],
            dense_iou=d['iou'])
        # the scattered probe's per-pixel boundary IoU and low-shot fit
        out.update({
            f'dense_{k}': d[k]
            for k in ('boundary_iou', 'lowshot_miou', 'lowshot_boundary_iou')
            if k in d
        })
        return out

    def settings(self, chosen: dict, held=False) -> dict:
        """What a record's scores depend on besides the pretraining."""

        def portable(d):
            return {k: v for k, v in d.items() if k != 'data_prefix'}

        if held:
            return dict(
                protocol=portable(self.protocol(chosen, held).settings()))
        return dict(
            pooled=portable(self.protocol(chosen['pooled']).settings()),
            token_map=portable(self.protocol(chosen['token_map']).settings()),
            dense=portable(self.dense.settings()))


def pretrain_settings(study: Config, run: dict, root: str) -> dict:
    """What a run's pretraining depends on: its config's key (its values,
    bases followed, and the plugin's version:

    :mod:`projects.common.config_values`), the overrides, lr, weight decay,
    seed and epochs.
    """
    share = run.get('images_share', 1.0)
    return dict(
        config=config_key(study.pretrain_configs[run['method']], root),
        overrides=study.pretrain_overrides,
        hooks=study.hook_overrides,
        **{k: run[k]
           for k in ('lr', 'weight_decay', 'seed', 'epochs')},
        **(dict(images_share=share) if share != 1.0 else {}))


def share_images(cfg: Config, share: float) -> None:
    """Each epoch of ``cfg`` over ``share`` of its training images: the
    first ones below 1, all of them and then the first ones again above 1
    (the sampler shuffles them), so that a run sees ``share`` times the
    images of its epochs, its schedule (in epochs) spread over them."""
    from mmpretrain.registry import DATASETS
    dataset = cfg.train_dataloader.dataset
    indices = dataset.get('indices')
    if indices is None:
        # its length only: the pipeline is not needed (nor registered here)
        indices = len(DATASETS.build(dict(dataset, pipeline=[])))
    if isinstance(indices, int):
        indices = list(range(indices))
    count = round(share * len(indices))
    if count < 1:
        raise ValueError(f'claim study: images_share={share} leaves no '
                         f'image of {len(indices)}')
    dataset.indices = (list(indices) * (count // len(indices) + 1))[:count]


def run_config(study: Config, run: dict, work_dir: str, data_prefix: str,
               precision: Optional[str], root: str) -> Config:
    """The pretraining config of one run: its lr and weight decay, seed,
    epochs and share of the images; a curve run keeps every epoch's
    checkpoint."""
    from projects.demo import prepare_pretrain_cfg
    overrides = Config(copy.deepcopy(dict(study.pretrain_overrides)))
    overrides.merge_from_dict({
        'optim_wrapper.optimizer.lr':
        run['lr'],
        'optim_wrapper.optimizer.weight_decay':
        run['weight_decay']
    })
    cfg = prepare_pretrain_cfg(
        Config.fromfile(osp.join(root, study.pretrain_configs[run['method']])),
        osp.join(work_dir, run['key']),
        data_prefix=data_prefix,
        overrides=overrides.to_dict(),
        hook_overrides=copy.deepcopy(study.hook_overrides),
        epochs=run['epochs'],
        seed=run['seed'],
        precision=precision)
    if run['kind'] == 'curve':
        cfg.default_hooks.checkpoint.update(interval=1, max_keep_ckpts=-1)
    if run.get('images_share', 1.0) != 1.0:
        share_images(cfg, run['images_share'])
    return cfg


def run_once(run: dict, cfg: Config, scorer: Scorer, chosen: Optional[dict],
             epochs: List[int], pretrain: dict) -> List[dict]:
    """Pretrain (or reuse) one run and score its checkpoints of ``epochs``
    (0: its initial weights).

    A search run is scored on held-out images
    with ``chosen`` (a feature variant; ``run['variants']``: each of
    them); a table run also at its initial weights.
    """
    from projects.common.results import git_output, host, machine
    from projects.demo import initial_weights, pretrain_once
    t0 = time.time()
    pre = pretrain_once(cfg)
    common = dict(
        method=run['method'],
        seed=run['seed'],
        kind=run['kind'],
        table=run['table'],
        curve=run['curve'],
        lr=run['lr'],
        weight_decay=run['weight_decay'],
        schedule_epochs=run['epochs'],
        images_share=run.get('images_share', 1.0),
        images_per_s=pre['images_per_s'],
        pretrain_wall_s=pre['wall_s'],
        resumed=pre['resumed'],
        commit=git_output('rev-parse', 'HEAD'),
        machine=machine(),
        host=host(),
        load_avg_1min=round(os.getloadavg()[0], 2))
    held = scorer.search_holdout
    records = []
    if run['kind'] == 'search':
        ckpt = osp.join(cfg.work_dir, f'epoch_{run["epochs"]}.pth')
        for v in run.get('variants') or [None]:
            variant = v or chosen
            key = record_key(run, 0, v)
            r = scorer.protocol(variant, held).evaluate(
                key, ckpt, cfg.model, linear=False)
            records.append(
                dict(
                    common,
                    key=key,
                    epochs=run['epochs'],
                    variant=dict(variant),
                    knn=r['knn'],
                    fewshot=r['fewshot'],
                    settings_sha1=cache_digest(
                        [pretrain, scorer.settings(variant, held)])))
        return records
    sha = cache_digest([pretrain, scorer.settings(chosen)])
    for epoch in epochs:
        t1 = time.time()
        key = record_key(run, epoch)
        ckpt = initial_weights(pre) if epoch == 0 else osp.join(
            cfg.work_dir, f'epoch_{epoch}.pth')
        record = dict(
            common,
            key=key,
            epochs=epoch,
            features=dict(
                pooled=chosen['pooled'], token_map=chosen['token_map']),
            **scorer.score(
                key, ckpt, cfg.model, chosen, linear=run['kind'] != 'curve'),
            settings_sha1=sha)
        if run['table']:
            floor = scorer.score(f'{key}_initial_weights',
                                 initial_weights(pre), cfg.model, chosen, True)
            floor.pop('dense_iou')
            record['initial_weights'] = floor
        record['eval_wall_s'] = time.time() - t1
        records.append(record)
    records[-1]['wall_s'] = time.time() - t0
    return records
