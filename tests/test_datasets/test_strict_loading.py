import numpy as np
import pytest
from mmpretrain.registry import TRANSFORMS
from PIL import Image

import mmsiameseim  # noqa: F401


def _jpeg(path):
    rng = np.random.default_rng(0)
    Image.fromarray(rng.integers(0, 255, (64, 64, 3), dtype=np.uint8)).save(
        path, quality=95)


def test_good_image_loads(tmp_path):
    path = tmp_path / 'ok.jpg'
    _jpeg(path)
    out = TRANSFORMS.build(dict(type='StrictLoadImageFromFile'))(
        dict(img_path=str(path)))
    assert out['img'].shape == (64, 64, 3)


@pytest.mark.parametrize('damage', ['truncated', 'garbage'])
def test_corrupt_image_error_names_the_file(tmp_path, damage):
    path = tmp_path / f'{damage}.jpg'
    _jpeg(path)
    data = path.read_bytes()
    path.write_bytes(data[:len(data) // 2] if damage ==
                     'truncated' else b'not an image at all')
    loader = TRANSFORMS.build(dict(type='StrictLoadImageFromFile'))
    with pytest.raises(OSError, match=str(path)):
        loader(dict(img_path=str(path)))
