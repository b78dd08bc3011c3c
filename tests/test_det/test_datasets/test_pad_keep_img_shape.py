"""PadKeepImgShape: ViTDet's LSJ test padding as the canvas (pad_shape),
with img_shape left the image's own size."""
import numpy as np
from mmcv.transforms import Compose
from mmengine.registry import init_default_scope

import mmsiameseim.det  # noqa: F401


def test_the_padding_is_the_canvas_not_the_image_size():
    init_default_scope('mmdet')
    pipeline = Compose([
        dict(type='Resize', scale=(128, 128), keep_ratio=True),
        dict(
            type='PadKeepImgShape',
            size=(128, 128),
            pad_val=dict(img=(114, 114, 114))),
    ])
    img = np.random.default_rng(0).integers(0, 255, (60, 100, 3), np.uint8)
    out = pipeline(dict(img=img, img_shape=img.shape[:2], ori_shape=(60, 100)))
    assert out['img'].shape == (128, 128, 3)
    assert out['pad_shape'][:2] == (128, 128)
    assert tuple(out['img_shape']) == (77, 128)  # 60 x 100 resized to fit
    assert (out['img'][77:] == 114).all()  # the padding, below the image
    # mmcv's Pad (the benchmark configs' former test step) says 128 x 128
    plain = Compose([dict(type='Pad', size=(128, 128))])(
        dict(img=out['img'][:77], img_shape=(77, 128)))
    assert tuple(plain['img_shape']) == (128, 128)
