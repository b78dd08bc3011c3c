"""The main job: SiameseIM pretraining and evaluation on Fashion-MNIST, on a CPU.

    python tools/demo.py [--work-dir work_dirs/demo] [--compare mae,mocov3]
                         [--smoke]

Stages (each is reused when a rerun finds it finished; pretraining resumes
from its last checkpoint):

1. pretrain SiameseIM on the 60k training images (mmengine Runner);
2. for SiameseIM, its own initial weights (the pretraining run's
   ``init_weights``, saved by ``SaveInitialWeightsHook`` before step 1: the
   floor of what pretraining adds), a separately initialised mmpretrain ViT
   of the same architecture (its own ``init_weights``, for reference), and
   the optional peers: frozen-backbone kNN (k=20, T=0.07), a linear probe
   through configs/benchmarks/mmpretrain (BatchNorm without affine + linear),
   1 % few-shot logistic regression; plus kNN on raw pixels;
3. work_dirs/demo/report.md with a results table and PNG figures.
"""
import argparse
import copy
import json
import os
import os.path as osp
import sys
import time

import numpy as np
import torch
from mmengine.config import Config

ROOT = osp.dirname(osp.dirname(osp.abspath(__file__)))
PRETRAIN_CFGS = {
    'siameseim': 'configs/pretrain/'
    'siameseim_vit-tiny-p4_1xb64-bf16-coslr-1e_fashionmnist.py',
    'mae': 'configs/pretrain/peers/mae_vit-tiny-p4_1xb64-bf16-coslr-1e_'
    'fashionmnist.py',
    'mocov3': 'configs/pretrain/peers/mocov3_vit-tiny-p4_1xb64-bf16-coslr-'
    '1e_fashionmnist.py',
    # the efficient target option (view b at 16 px: 16 target tokens)
    'siameseim-target16': 'configs/pretrain/siameseim-target16_vit-tiny-p4_'
    '1xb64-bf16-coslr-1e_fashionmnist.py',
}
# `--compare` also takes any config of the mix catalogue by name (its file
# name without .py) or any pretraining config by path
MIX_DIR = 'configs/pretrain/mix'
PROBE_CFG = 'configs/benchmarks/mmpretrain/' \
    'vit-tiny-p4_linear-probe-10e_fashionmnist.py'
INITIAL_WEIGHTS = 'initial_weights.pth'
# result rows: the floor (the pretraining run's own start) and a separately
# initialised mmpretrain ViT, kept for reference and labelled as such
FLOOR = 'siameseim initial weights'
OTHER_INIT = 'mmpretrain ViT init (not this run\'s start)'
FMNIST_FILES = ('train-images-idx3-ubyte', 'train-labels-idx1-ubyte',
                't10k-images-idx3-ubyte', 't10k-labels-idx1-ubyte')


def pretrain_config_path(method):
    """The pretraining config of a ``--compare`` entry, relative to the
    repository root or absolute: a name above, a mix catalogue name, or a
    config path. None when there is none."""
    if method in PRETRAIN_CFGS:
        return PRETRAIN_CFGS[method]
    mix = osp.join(MIX_DIR, method + '.py')
    if osp.isfile(osp.join(ROOT, mix)):
        return mix
    if method.endswith('.py') and osp.isfile(method):
        return osp.abspath(method)
    return None


def method_name(method):
    """Work-dir and report name of a ``--compare`` entry."""
    return osp.splitext(osp.basename(method))[0] \
        if method.endswith('.py') else method


_VITS = ('SiameseIMViT', 'MAEViT', 'MoCoV3ViT', 'VisionTransformer')
_SWINS = ('SimMIMSwinTransformer', 'SwinTransformer')


def adapt_probe_model(probe, pretrain):
    """Make the probe config's frozen backbone the plain mmpretrain
    counterpart of ``pretrain``'s backbone (same arch and weights layout),
    with the pretraining normalisation. ViTs give the last block's cls
    token (no final norm) as for the demo; Swins the global average of the
    last stage (no BatchNorm before the linear head)."""
    from mmpretrain.registry import MODELS
    src = copy.deepcopy(pretrain.backbone)
    kind = src.pop('type')
    arch = src.get('arch')
    if isinstance(arch, str):
        arch = MODELS.get(kind).arch_zoo[arch.lower()]
    init = probe.backbone.init_cfg
    if kind in _VITS:
        keep = ('img_size', 'patch_size', 'qkv_bias', 'pre_norm',
                'layer_scale_init_value', 'layer_cfgs')
        backbone = dict(
            type='VisionTransformer', arch=dict(arch),
            in_channels=src.get('in_channels', src.get('patch_cfg', {}).get(
                'in_channels', 3)),
            final_norm=False, out_type='cls_token',
            frozen_stages=arch['num_layers'],
            **{k: src[k] for k in keep if k in src})
        dims = arch['embed_dims']
        probe.neck = dict(type='ClsBatchNormNeck', input_features=dims)
    elif kind in _SWINS:
        keep = ('img_size', 'in_channels', 'out_indices', 'stage_cfgs',
                'patch_cfg', 'window_size', 'norm_cfg')
        stages = len(arch['depths'])
        backbone = dict(type='SwinTransformer', arch=dict(arch),
                        frozen_stages=stages - 1,  # index of the last one
                        **{k: src[k] for k in keep if k in src})
        dims = arch['embed_dims'] * 2**(stages - 1)
        probe.neck = dict(type='GlobalAveragePooling')
    else:
        sys.exit(f'--compare: no frozen-feature evaluation for a {kind} '
                 f'backbone (supported: {", ".join(_VITS + _SWINS)})')
    probe.backbone = dict(backbone, init_cfg=init)
    probe.head.in_channels = dims
    norm = pretrain.get('data_preprocessor') or {}
    for key in ('mean', 'std'):
        if key in norm:
            probe.data_preprocessor[key] = norm[key]


def say(msg):
    print(f'\033[1m[demo]\033[0m {msg}', flush=True)


def atomic_json(path, obj):
    """Write JSON so that an interrupted write never leaves a file a rerun
    would trust."""
    tmp = path + '.tmp'
    with open(tmp, 'w') as f:
        json.dump(obj, f, indent=2)
    os.replace(tmp, path)


def load_json(path):
    if osp.exists(path):
        with open(path) as f:
            return json.load(f)
    return None


def check_dataset(data_root):
    missing = [f for f in FMNIST_FILES if not osp.isfile(osp.join(data_root,
                                                                   f))]
    if missing:
        sys.exit(f'Fashion-MNIST is missing in {data_root}: {missing}.\n'
                 'Run `bash tools/setup_env.sh` (installs the Debian package '
                 'dataset-fashion-mnist and un-gzips it there), or put the '
                 'four un-gzipped files there yourself.')


def bf16_capable():
    """CPUs with native bf16 (AVX-512 BF16 / AMX) train faster in bf16."""
    try:
        flags = open('/proc/cpuinfo').read()
    except OSError:
        return False
    return 'avx512_bf16' in flags or 'amx_bf16' in flags


class Demo:

    def __init__(self, args):
        self.args = args
        self.wd = osp.abspath(args.work_dir)
        os.makedirs(self.wd, exist_ok=True)
        self.data_root = osp.abspath(args.data_root)
        self.smoke = args.smoke
        self.cfg_paths = dict(PRETRAIN_CFGS)

    # ------------------------------------------------------------ pretrain
    def pretrain(self, method):
        done_path = osp.join(self.wd, method, 'pretrain_done.json')
        done = load_json(done_path)
        if done:
            say(f'{method}: pretraining already finished, reusing '
                f'{done["checkpoint"]}')
            return done
        from mmengine.runner import Runner
        cfg = self.pretrain_run_cfg(method)
        say(f'{method}: pretraining ({cfg.train_cfg.max_epochs} epochs, '
            f'work dir {cfg.work_dir}); progress and ETA below')
        resumed = osp.exists(osp.join(cfg.work_dir, 'last_checkpoint'))
        runner = Runner.from_cfg(cfg)
        t0 = time.time()
        runner.train()
        wall = time.time() - t0
        from mmsiameseim.visualization import read_scalars
        iter_times = [r['time'] for r in read_scalars(cfg.work_dir)
                      if 'time' in r]
        epochs = cfg.train_cfg.max_epochs
        done = dict(
            checkpoint=osp.join(cfg.work_dir, f'epoch_{epochs}.pth'),
            initial_weights=osp.join(cfg.work_dir, INITIAL_WEIGHTS),
            wall_s=wall,
            resumed=resumed,
            epochs=epochs,
            images=len(runner.train_dataloader.dataset) * epochs,
            images_per_s=cfg.train_dataloader.batch_size /
            float(np.median(iter_times)) if iter_times else None)
        atomic_json(done_path, done)
        return done

    def pretrain_run_cfg(self, method):
        """``pretrain_cfg(method)`` with this run's work dir, data, epochs,
        seed and precision."""
        cfg = self.pretrain_cfg(method)
        cfg.work_dir = osp.join(self.wd, method)
        cfg.train_dataloader.dataset.data_prefix = self.data_root + '/'
        cfg.resume = True
        # the run's own initial weights, before step 1: the demo's floor
        cfg.custom_hooks = list(cfg.get('custom_hooks', [])) + [
            dict(type='SaveInitialWeightsHook', filename=INITIAL_WEIGHTS)
        ]
        if self.args.epochs:
            self._set_epochs(cfg, self.args.epochs)
        if self.args.seed is not None:
            cfg.randomness = dict(cfg.get('randomness', {}),
                                  seed=self.args.seed)
        if self.smoke:  # a handful of iterations (warm-up: one of them)
            self._set_epochs(cfg, 1)
            cfg.train_dataloader.dataset.indices = self.args.smoke_images
            cfg.train_dataloader.batch_size = 64
            cfg.default_hooks.logger.interval = 2
        if not bf16_capable():
            say('this CPU has no native bf16: training in fp32')
            cfg.optim_wrapper.dtype = 'float32'
        elif self.args.fp32:
            cfg.optim_wrapper.dtype = 'float32'
        return cfg

    def pretrain_cfg(self, method):
        """The pretraining config of ``method`` (subclasses swap it)."""
        return Config.fromfile(osp.join(ROOT, self.cfg_paths[method]))

    @staticmethod
    def _set_epochs(cfg, epochs):
        cfg.train_cfg.max_epochs = epochs
        for sched in cfg.param_scheduler:
            if sched.get('type', '').endswith('CosineAnnealingLR'):
                sched.T_max = epochs - sched.begin
                sched.end = epochs

    # ------------------------------------------------------------ evaluate
    def evaluate(self, method, checkpoint, arch=None):
        """Scores of ``checkpoint`` saved as ``method``; ``arch`` names the
        pretraining method whose backbone it holds (default ``method``)."""
        arch = arch or method
        out_path = osp.join(self.wd, 'results', f'{method}.json')
        result = load_json(out_path) or {}
        from mmsiameseim.evaluation import (build_frozen_backbone_model,
                                            logistic_regression_accuracy,
                                            weighted_knn_accuracy)
        cfg = self._probe_cfg(arch if checkpoint else None)
        if 'knn' not in result or 'fewshot' not in result:
            torch.manual_seed(0)
            model = build_frozen_backbone_model(cfg, checkpoint)
            feats = self._features(model, cfg, method)
            result['knn'] = weighted_knn_accuracy(
                feats['knn_x'], feats['knn_y'], feats['test_x'],
                feats['test_y'])['top1']
            few = logistic_regression_accuracy(
                feats['few_x'], feats['few_y'], feats['test_x'],
                feats['test_y'])
            result['fewshot'] = few['top1']
            result['fewshot_l2'] = few['l2']
            atomic_json(out_path, result)
            say(f'{method}: kNN {result["knn"]:.2f} %, 1 % few-shot '
                f'{result["fewshot"]:.2f} %')
        if 'linear' not in result:
            result['linear'] = self._linear_probe(method, checkpoint, arch)
            atomic_json(out_path, result)
            say(f'{method}: linear probe {result["linear"]:.2f} %')
        return result

    def _probe_cfg(self, method=None):
        """The probe config, its backbone matched to ``method``'s
        pretraining backbone (None: the demo's ViT)."""
        cfg = Config.fromfile(osp.join(ROOT, PROBE_CFG))
        if method is not None:
            adapt_probe_model(cfg.model, self.pretrain_cfg(method).model)
        for loader in (cfg.train_dataloader, cfg.val_dataloader,
                       cfg.test_dataloader):
            loader.dataset.data_prefix = self.data_root + '/'
        return cfg

    def _subsets(self):
        """Training-image indices for kNN, few-shot and the probe."""
        path = osp.join(self.wd, 'subsets.npz')
        if osp.exists(path):
            return dict(np.load(path))
        from mmsiameseim.evaluation import class_balanced_subset
        from mmpretrain.datasets import FashionMNIST
        labels = FashionMNIST(data_prefix=self.data_root + '/',
                              test_mode=False).get_gt_labels()
        rng = np.random.default_rng(0)
        n_knn = self.args.knn_train if not self.smoke else 400
        n_probe = self.args.probe_train if not self.smoke else 400
        subsets = dict(
            knn=np.sort(rng.choice(len(labels), n_knn, replace=False)),
            probe=np.sort(rng.choice(len(labels), n_probe, replace=False)),
            few=class_balanced_subset(labels, self.args.fewshot_fraction
                                      if not self.smoke else 0.002))
        if self.smoke:
            subsets['test'] = np.arange(300)
        np.savez(path + '.tmp.npz', **subsets)
        os.replace(path + '.tmp.npz', path)
        return subsets

    def _features(self, model, cfg, method):
        from mmsiameseim.evaluation import extract_features
        subsets = self._subsets()
        pipeline = cfg.test_dataloader.dataset.pipeline
        dtype = torch.bfloat16 if bf16_capable() else None
        train_ds, test_ds = cfg.train_dataloader.dataset, \
            cfg.test_dataloader.dataset
        knn_x, knn_y = extract_features(model, train_ds, pipeline,
                                        subsets['knn'], desc=f'{method} kNN '
                                        'training features',
                                        autocast_dtype=dtype)
        few_x, few_y = extract_features(model, train_ds, pipeline,
                                        subsets['few'], desc=f'{method} '
                                        'few-shot features',
                                        autocast_dtype=dtype)
        test_x, test_y = extract_features(model, test_ds, pipeline,
                                          subsets.get('test'),
                                          desc=f'{method} test features',
                                          autocast_dtype=dtype)
        return dict(knn_x=knn_x, knn_y=knn_y, few_x=few_x, few_y=few_y,
                    test_x=test_x, test_y=test_y)

    def _linear_probe(self, method, checkpoint, arch):
        from mmengine.runner import Runner
        cfg = self._probe_cfg(arch if checkpoint else None)
        cfg.work_dir = osp.join(self.wd, method, 'linear_probe')
        if checkpoint:
            cfg.model.backbone.init_cfg.checkpoint = checkpoint
        else:
            cfg.model.backbone.init_cfg = None
        subsets = self._subsets()
        cfg.train_dataloader.dataset.indices = subsets['probe'].tolist()
        if 'test' in subsets:
            cfg.test_dataloader.dataset.indices = subsets['test'].tolist()
            cfg.val_dataloader.dataset.indices = subsets['test'].tolist()
        epochs = self.args.probe_epochs if not self.smoke else 1
        cfg.train_cfg.max_epochs = epochs
        cfg.train_cfg.val_interval = epochs + 1  # test once at the end
        cfg.param_scheduler[0].T_max = epochs
        cfg.param_scheduler[0].end = epochs
        cfg.randomness = dict(seed=0)
        # scored once, by runner.test() below (a val loop would score the
        # same images again at the end of training)
        cfg.val_dataloader = cfg.val_cfg = cfg.val_evaluator = None
        if bf16_capable():  # the frozen forward dominates: run it in bf16
            cfg.optim_wrapper.type = 'AutocastOptimWrapper'
            cfg.optim_wrapper.dtype = 'bfloat16'
        say(f'{method}: linear probe ({epochs} epochs on '
            f'{len(subsets["probe"])} training images)')
        torch.manual_seed(0)
        runner = Runner.from_cfg(cfg)
        runner.train()
        metrics = runner.test()
        return float(metrics['accuracy/top1'])

    def pixel_knn(self):
        out_path = osp.join(self.wd, 'results', 'raw_pixels.json')
        result = load_json(out_path)
        if result:
            return result
        from mmpretrain.datasets import FashionMNIST
        from mmsiameseim.evaluation import weighted_knn_accuracy
        subsets = self._subsets()
        train = FashionMNIST(data_prefix=self.data_root + '/',
                             test_mode=False)
        test = FashionMNIST(data_prefix=self.data_root + '/', test_mode=True)

        def pixels(ds, idx):
            idx = range(len(ds)) if idx is None else idx
            x = np.stack([ds.get_data_info(int(i))['img'] for i in idx])
            y = np.array([int(ds.get_data_info(int(i))['gt_label'])
                          for i in idx])
            return torch.from_numpy(x.reshape(len(x), -1)).float(), \
                torch.from_numpy(y)

        tr_x, tr_y = pixels(train, subsets['knn'])
        te_x, te_y = pixels(test, subsets.get('test'))
        mean = tr_x.mean(0)
        result = dict(knn=weighted_knn_accuracy(tr_x - mean, tr_y,
                                                te_x - mean, te_y)['top1'])
        atomic_json(out_path, result)
        say(f'raw pixels: kNN {result["knn"]:.2f} %')
        return result

    # ------------------------------------------------------------ report
    def sample_figure(self, path):
        from mmpretrain.datasets import FashionMNIST
        from mmpretrain.registry import TRANSFORMS
        from mmsiameseim.visualization import draw_two_view_sample
        cfg = Config.fromfile(osp.join(ROOT, PRETRAIN_CFGS['siameseim']))
        pipe = {t['type']: t for t in cfg.train_dataloader.dataset.pipeline}
        np.random.seed(7)
        ds = FashionMNIST(data_prefix=self.data_root + '/', test_mode=True)
        img = ds.get_data_info(0)['img']
        results = TRANSFORMS.build(pipe['Pad'])(dict(img=img))
        padded = results['img']
        results = TRANSFORMS.build(pipe['TwoViewRandomResizedCrop'])(results)
        results = TRANSFORMS.build(pipe['BlockwiseMaskGenerator'])(results)
        grid = pipe['BlockwiseMaskGenerator']['input_size']
        draw_two_view_sample(padded, results, grid, path)

    def report(self, pretrain, results, pixel):
        from mmsiameseim.visualization import (plot_accuracy_chart,
                                               plot_training_curves,
                                               read_scalars)
        fig_dir = osp.join(self.wd, 'figures')
        os.makedirs(fig_dir, exist_ok=True)
        runs = {m: read_scalars(osp.join(self.wd, m)) for m in pretrain}
        plot_training_curves(runs, osp.join(fig_dir, 'training_curves.png'))
        plot_accuracy_chart(results, pixel['knn'],
                            osp.join(fig_dir, 'accuracy.png'))
        self.sample_figure(osp.join(fig_dir, 'two_view_sample.png'))
        lines = [
            '# SiameseIM on Fashion-MNIST (CPU demo)', '',
            f'Produced by `python tools/demo.py` on {time.strftime("%Y-%m-%d %H:%M")}'
            f'{" (--smoke: tiny subsets, numbers are not meaningful)" if self.smoke else ""}.',
            '', '| method | kNN top-1 | linear probe top-1 | 1 % few-shot '
            'top-1 | pretraining wall time | images/s |',
            '|---|---|---|---|---|---|'
        ]
        for name, res in results.items():
            pre = pretrain.get(name)
            wall = f'{pre["wall_s"] / 60:.1f} min' if pre else '-'
            wall += ' (resumed)' if pre and pre.get('resumed') else ''
            ips = f'{pre["images_per_s"]:.0f}' if pre and \
                pre.get('images_per_s') else '-'
            lines.append(f'| {name} | {res["knn"]:.2f} | {res["linear"]:.2f}'
                         f' | {res["fewshot"]:.2f} | {wall} | {ips} |')
        lines.append(f'| raw pixels (mean-centred) | {pixel["knn"]:.2f} | - '
                     '| - | - | - |')
        sim, rnd = results.get('siameseim'), results.get(FLOOR)
        lines += ['']
        if sim and rnd:
            lines.append(
                'SiameseIM vs. its own initial weights (the floor: the same '
                'run before step 1): kNN '
                f'{sim["knn"] - rnd["knn"]:+.1f} points, linear probe '
                f'{sim["linear"] - rnd["linear"]:+.1f}, few-shot '
                f'{sim["fewshot"] - rnd["fewshot"]:+.1f}. Versus raw '
                f'pixels on kNN: {sim["knn"] - pixel["knn"]:+.1f} points '
                f'({"learned features beat the pixels" if sim["knn"] > pixel["knn"] else "the pixels are still ahead"}). '
                f'The "{OTHER_INIT}" row is a ViT of the same architecture '
                'with mmpretrain\'s own initialisation, not the weights the '
                'pretraining started from.')
        a = self.args
        lines += [
            '', '## Protocol', '',
            f'* kNN: weighted cosine, k=20, T=0.07, on {a.knn_train} '
            'random training images, scored on the 10k test images.',
            f'* Linear probe: `{PROBE_CFG}` (frozen backbone, BatchNorm '
            f'without affine, linear head), {a.probe_epochs} epochs on '
            f'{a.probe_train} training images, test top-1.',
            f'* Few-shot: {a.fewshot_fraction:.0%} of the training labels '
            '(class-balanced), L2-regularised logistic regression on '
            'l2-normalised frozen features, strength chosen by 3-fold CV on '
            'the labelled images.',
            '* Backbone feature: the cls token of the last block (no final '
            'norm), the same for every method.', '',
            '## Figures', '',
            '![training curves](figures/training_curves.png)', '',
            '![accuracy](figures/accuracy.png)', '',
            'One training sample: the source image with both crops, view a '
            'with its blockwise mask, view b, and where each patch of view b '
            'lies in view a (the relative positions the predictor is given):',
            '', '![sample](figures/two_view_sample.png)', ''
        ]
        path = osp.join(self.wd, 'report.md')
        with open(path + '.tmp', 'w') as f:
            f.write('\n'.join(lines))
        os.replace(path + '.tmp', path)
        return path

    def initial_weights(self, pretrain):
        """The SiameseIM run's own initial weights (the floor)."""
        path = pretrain['siameseim'].get('initial_weights')
        if not path or not osp.exists(path):
            sys.exit(f'{osp.join(self.wd, "siameseim")}: this pretraining '
                     'finished before the demo saved its initial weights '
                     f'({INITIAL_WEIGHTS}); delete that folder to rerun it')
        return path

    def run(self):
        check_dataset(self.data_root)
        os.makedirs(osp.join(self.wd, 'results'), exist_ok=True)
        t0 = time.time()
        methods = ['siameseim']
        for m in [m for m in self.args.compare if m]:
            path = pretrain_config_path(m)
            if path is None:
                mix = sorted(f[:-3] for f in os.listdir(osp.join(ROOT,
                                                                 MIX_DIR))
                             if f.endswith('.py'))
                sys.exit(f'--compare: unknown method {m!r}; choose from '
                         f'{sorted(set(PRETRAIN_CFGS) - {"siameseim"})}, '
                         f'the mix catalogue {mix} or a config path')
            methods.append(method_name(m))
            self.cfg_paths[methods[-1]] = path
        pretrain = {m: self.pretrain(m) for m in methods}
        results = {m: self.evaluate(m, pretrain[m]['checkpoint'])
                   for m in methods}
        results[FLOOR] = self.evaluate(
            'siameseim_initial_weights', self.initial_weights(pretrain),
            arch='siameseim')
        results[OTHER_INIT] = self.evaluate('random_init', None)
        pixel = self.pixel_knn()
        path = self.report(pretrain, results, pixel)
        say(f'finished in {(time.time() - t0) / 60:.1f} min')
        say(f'report: {path}')
        return path


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('--work-dir', default='work_dirs/demo')
    parser.add_argument('--data-root', default='data/fashion_mnist')
    parser.add_argument('--compare', default='',
                        type=lambda s: [m.strip() for m in s.split(',')],
                        help='peers to pretrain and evaluate identically, '
                        'e.g. mae,mocov3,siameseim-target16, a config name '
                        f'of {MIX_DIR}/ (without .py) or a config path')
    parser.add_argument('--epochs', type=int, default=None,
                        help='override the pretraining epochs')
    parser.add_argument('--seed', type=int, default=None,
                        help='pretraining seed (default: the config\'s, 0); '
                        'evaluation always uses seed 0')
    parser.add_argument('--fp32', action='store_true',
                        help='pretrain in fp32 even on a CPU with bf16')
    parser.add_argument('--knn-train', type=int, default=20000)
    parser.add_argument('--probe-train', type=int, default=20000)
    parser.add_argument('--probe-epochs', type=int, default=3)
    parser.add_argument('--fewshot-fraction', type=float, default=0.01)
    parser.add_argument('--smoke', action='store_true',
                        help='tiny subsets, for CI: checks every stage runs')
    parser.add_argument('--smoke-images', type=int, default=256)
    return parser.parse_args(argv)


def main(argv=None):
    args = parse_args(argv)
    sys.path.insert(0, ROOT)
    os.chdir(ROOT)
    import mmsiameseim  # noqa: F401
    return Demo(args).run()


if __name__ == '__main__':
    main()
