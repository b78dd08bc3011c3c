"""SegmentationFolder reads a symlinked image once (issue 37)."""
import os

import pytest

import mmsiameseim.seg  # noqa: F401
from mmsiameseim.seg import SegmentationFolder
from tests.helpers import logged
from tests.test_seg.test_segmentation_folder import make_photo_masks


@pytest.mark.person_matrix(
    'datasets', 'symlink', 'SegmentationFolder reads an image linked '
    'twice in its images folder once, and names the link it left out')
def test_a_symlinked_image_is_read_once(tmp_path):
    root = make_photo_masks(tmp_path / 'seg')
    images = root / 'images' / 'train'
    os.symlink('0.png', images / '5.png')  # a second name for 0.png
    (root / 'masks' / 'train' / '5.png').symlink_to('0.png')
    os.symlink('..', images / 'deep' / 'loop')  # a loop: not entered again
    with logged() as log:
        ds = SegmentationFolder(str(root), split='train', serialize_data=False)
    assert [
        os.path.relpath(ds.get_data_info(i)['img_path'], images)
        for i in range(len(ds))
    ] == ['0.png', '2.png', 'deep/1.jpg']
    assert 'e.g. 5.png is 0.png' in log.getvalue()
