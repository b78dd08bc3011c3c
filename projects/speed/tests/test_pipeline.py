from projects.speed.pipeline import write_jpegs


def test_jpegs_are_real_photo_crops_of_the_requested_size(tmp_path):
    from PIL import Image
    paths = write_jpegs(str(tmp_path), 3, (50, 40))
    assert len(paths) == 3
    for path in paths:
        with Image.open(path) as img:
            assert img.format == 'JPEG' and img.size == (50, 40)
            assert len(set(img.convert('L').getdata())) > 20  # not flat
