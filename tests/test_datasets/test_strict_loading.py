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


@pytest.mark.person_matrix(
    'datasets', 'mixing',
    'StrictLoadImageFromFile(ignore_empty=True): a damaged file the dataset '
    'replaces with another sample is named in a warning with the running '
    'count of files replaced (it was silent)')
@pytest.mark.fault_matrix(
    'datasets', 'truncated',
    'under ignore_empty=True a truncated image is replaced by another sample, '
    'named in the log and counted')
def test_a_file_replaced_under_ignore_empty_is_named_and_counted(tmp_path):
    from mmpretrain.datasets import CustomDataset

    from tests.helpers import logged
    for name in ('a', 'b', 'c'):
        _jpeg(tmp_path / f'{name}.jpg')
    bad = tmp_path / 'b.jpg'
    bad.write_bytes(bad.read_bytes()[:300])
    dataset = CustomDataset(
        data_root=str(tmp_path),
        with_label=False,
        pipeline=[
            dict(type='StrictLoadImageFromFile', ignore_empty=True),
            dict(type='PackInputs')
        ])
    index = [
        i for i in range(3) if dataset.get_data_info(i)['img_path'] == str(bad)
    ][0]
    with logged() as log:
        samples = [dataset[index] for _ in range(2)]
    # another, readable sample in its place
    assert all(s['data_samples'].img_path != str(bad) for s in samples)
    text = log.getvalue()
    # each replacement (a redraw may hit the bad file again) named, counted
    loader = dataset.pipeline.transforms[0]
    count = len(loader.skipped)
    assert count >= 2 and loader.skipped == [str(bad)] * count
    assert text.count(f'{bad}: cannot load image') == count
    assert 'ignore_empty=True' in text
    for n in range(1, count + 1):
        assert f'{n} file(s) replaced so far' in text
