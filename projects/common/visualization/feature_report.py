"""All the feature pictures of some checkpoints
(tools/visualization/visualize_features.py):

each checkpoint's backbone is loaded once, the Fashion-MNIST images come from
the claim study's protocol.
"""
import os
import os.path as osp
from typing import Dict, List, Optional, Sequence

import numpy as np

from projects.common.visualization.feature_pictures import (draw_attention,
                                                            draw_dense_maps,
                                                            draw_neighbours,
                                                            draw_pca)

FASHION_CLASSES = [
    'T-shirt', 'trouser', 'pullover', 'dress', 'coat', 'sandal', 'shirt',
    'sneaker', 'bag', 'ankle boot', 'background'
]


def sample_photos() -> List[str]:
    """Paths of the sample photos that matplotlib and scikit-learn ship."""
    from matplotlib import cbook
    from sklearn.datasets import load_sample_images
    folder = osp.join(
        osp.dirname(osp.abspath(load_sample_images.__code__.co_filename)),
        'images')
    return [
        cbook.get_sample_data('grace_hopper.jpg', asfileobj=False),
        osp.join(folder, 'china.jpg'),
        osp.join(folder, 'flower.jpg')
    ]


def load_photos(paths: Sequence[str], size: int, grey: bool) -> np.ndarray:
    """Square centre crops resized to ``size``: (N, size, size[, 3]) uint8.

    Raises:
        ValueError: A file cannot be read; the message names it.
    """
    from PIL import Image
    out = []
    for path in paths:
        try:
            with Image.open(path) as img:
                img = img.convert('L' if grey else 'RGB')
        except OSError as e:
            raise ValueError(f'photo {path}: cannot be read ({e})') from e
        side = min(img.size)
        left, top = (img.width - side) // 2, (img.height - side) // 2
        img = img.crop((left, top, left + side, top + side))
        out.append(np.asarray(img.resize((size, size), Image.BICUBIC)))
    return np.stack(out)


def load_models(checkpoints: Dict[str, str],
                config: Optional[str] = None,
                final_norm: bool = False,
                initial_weights: bool = False) -> Dict[str, tuple]:
    """Name -> (frozen backbone, mean, std, pretraining model config) of
    each checkpoint (and of the ``initial_weights.pth`` beside it)."""
    from mmsiameseim.evaluation import checkpoint_config, frozen_vit
    models = {}
    for name, path in checkpoints.items():
        model_cfg = checkpoint_config(path, config).model
        models[name] = frozen_vit(path, model_cfg, final_norm) + (model_cfg, )
        start = osp.join(osp.dirname(path), 'initial_weights.pth')
        if initial_weights:
            if not osp.isfile(start):
                raise FileNotFoundError(
                    f'--initial-weights: {start} not found beside {path}')
            models[f'{name} (initial)'] = frozen_vit(
                start, model_cfg, final_norm) + (model_cfg, )
    return models


def draw_all(checkpoints: Dict[str, str],
             out_dir: str,
             config: Optional[str] = None,
             study: str = 'projects/claim/configs/claim_study.py',
             data_root: str = 'data/fashion_mnist',
             photos: Sequence[str] = (),
             photo_size: int = 128,
             count: int = 6,
             initial_weights: bool = False) -> List[str]:
    """Draw every picture of the module into ``out_dir``; returns the paths.

    The Fashion-MNIST pictures (mosaics, neighbours, dense maps) need one-
    channel models; for others they are left out with a message.
    """
    from mmengine.config import Config

    from projects.common.evaluation import (FrozenBackboneProtocol,
                                            build_dense_probe, raw_images)
    os.makedirs(out_dir, exist_ok=True)
    st = Config.fromfile(study)
    protocol = FrozenBackboneProtocol.from_cfg(
        st.evaluation,
        work_dir=osp.join(out_dir, 'protocol'),
        data_prefix=data_root)
    loaded = load_models(checkpoints, config, protocol.final_norm,
                         initial_weights)
    models = {n: m[:3] for n, m in loaded.items()}
    grey = {n: int(m[1].numel()) == 1 for n, m in models.items()}
    paths = []
    if photos:
        for kind in sorted({grey[n] for n in models}):
            group = {n: m for n, m in models.items() if grey[n] == kind}
            path = osp.join(
                out_dir, 'pca_photos.png' if len(set(grey.values())) == 1 else
                f'pca_photos_{"grey" if kind else "rgb"}.png')
            images = load_photos(photos, photo_size, kind)
            names = [osp.basename(p) for p in photos]
            draw_pca(group, images, path, names)
            paths.append(path)
            path = path.replace('pca_photos', 'attention_photos')
            draw_attention(group, images, path, names)
            paths.append(path)
    pairs = [n for n in checkpoints if loaded[n][3].type == 'SiameseIM']
    for n in (n for n in pairs if not grey[n] and photos):
        paths.append(
            _prediction_pairs(n, checkpoints[n], config,
                              load_photos(photos[:3], photo_size, False),
                              out_dir))
    fmnist = {n: m for n, m in models.items() if grey[n]}
    if len(fmnist) < len(models):
        print('Fashion-MNIST pictures left out for the models that are not '
              f'one-channel: {sorted(set(models) - set(fmnist))}')
    if not fmnist:
        return paths
    dense = build_dense_probe(protocol, st.get('dense'))
    d = dense.data()
    mosaics, truth = d['test'][2][:count], d['test'][1][:count]
    paths.append(osp.join(out_dir, 'pca_mosaics.png'))
    draw_pca(fmnist, mosaics, paths[-1])
    cfg = protocol.config()
    subsets = protocol.subsets()
    test_idx = subsets.get('test')
    queries = raw_images(
        protocol.test_dataset(cfg),
        None if test_idx is None else test_idx[:count])[0]
    if test_idx is None:
        queries = queries[:count]
    for n in (n for n in pairs if grey[n]):
        paths.append(
            _prediction_pairs(n, checkpoints[n], config, queries[:3], out_dir))
    bank = raw_images(cfg.train_dataloader.dataset, subsets['knn'][:5000])[0]
    paths.append(osp.join(out_dir, 'neighbours.png'))
    # each model's feature: the study's for its algorithm, else the
    # protocol's
    features = {
        n: st.get('features', {}).get(loaded[n][3].type.lower(),
                                      protocol.feature)
        for n in fmnist
    }
    draw_neighbours(fmnist, _pad(queries, mosaics.shape[-1]),
                    _pad(bank, mosaics.shape[-1]), paths[-1], features)
    predictions = {}
    for name in fmnist:
        ckpt = checkpoints.get(name) or osp.join(
            osp.dirname(checkpoints[name[:-len(' (initial)')]]),
            'initial_weights.pth')
        predictions[name] = dense.predict(ckpt, loaded[name][3],
                                          name)['prediction'][:count]
    paths.append(osp.join(out_dir, 'dense_maps.png'))
    draw_dense_maps(mosaics, truth, predictions, paths[-1], FASHION_CLASSES)
    return paths


def _prediction_pairs(name: str, checkpoint: str, config: Optional[str],
                      images: np.ndarray, out_dir: str) -> str:
    """SiameseIM's predictor against its target on two-view pairs of
    ``images`` (see :mod:`.prediction_pairs`)."""
    from mmsiameseim.evaluation import checkpoint_config
    from projects.common.visualization.prediction_pairs import (
        draw_prediction_pairs, load_siameseim, two_view_pairs)
    cfg = checkpoint_config(checkpoint, config)
    path = osp.join(out_dir, f'prediction_pairs_{_file_name(name)}.png')
    draw_prediction_pairs(
        load_siameseim(checkpoint, cfg), two_view_pairs(cfg, images), path,
        name)
    return path


def _file_name(name: str) -> str:
    return ''.join(c if c.isalnum() or c in '-_' else '_' for c in name)


def _pad(images: np.ndarray, side: int) -> np.ndarray:
    """Zero-pad (N, h, w) images to ``side`` (the test pipeline's Pad)."""
    n, h, w = images.shape
    out = np.zeros((n, side, side), images.dtype)
    out[:, :h, :w] = images
    return out
