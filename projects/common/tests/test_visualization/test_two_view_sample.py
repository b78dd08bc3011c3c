import numpy as np
import torch
from mmcv.transforms import Compose
from mmpretrain.registry import TRANSFORMS

import mmsiameseim  # noqa: F401
from mmsiameseim.models.utils import crop_pair_offsets
from projects.common.visualization import two_view_sample


def test_figure_places_view_b_in_the_frame_of_the_padded_image(
        tmp_path, monkeypatch):
    """28 x 28 image padded to 32 x 32 before the crop: the p_b panel is
    computed in the crop's frame (crop_source_shape), and a PNG is written."""
    seen = []
    centres = two_view_sample.relative_patch_centres
    monkeypatch.setattr(
        two_view_sample, 'relative_patch_centres',
        lambda offsets, grid: seen.append(offsets) or centres(offsets, grid))
    pipeline = Compose([
        TRANSFORMS.build(t) for t in [
            dict(type='Pad', size=(32, 32), pad_val=0),
            dict(type='TwoViewRandomResizedCrop', size=32, scale=(0.25, 1.0)),
            dict(
                type='BlockwiseMaskGenerator',
                input_size=8,
                num_masking_patches=38,
                min_num_patches=4),
        ]
    ])
    np.random.seed(0)
    img = np.random.default_rng(0).integers(0, 255, (28, 28), np.uint8)
    results = pipeline(dict(img=img, ori_shape=(28, 28)))
    path = tmp_path / 'sample.png'
    two_view_sample.draw_two_view_sample(img, results, 8, str(path))
    want = crop_pair_offsets(
        torch.as_tensor(results['crop_boxes'])[None],
        torch.as_tensor(results['flips'])[None], torch.tensor([32.]))
    # flip_delta_j depends on the source width: 32, not the loaded 28
    for got, ref in zip(seen[0], want):
        torch.testing.assert_close(got, ref)
    assert path.read_bytes()[:8] == b'\x89PNG\r\n\x1a\n'
