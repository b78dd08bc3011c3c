"""A folder of real photographs in many formats and modes, for the folder
dataset's tests: the sample photos that the project's own requirements ship
(matplotlib's ``grace_hopper.jpg`` and ``Minduka_Present_Blue_Pack.png``,
scikit-learn's ``china.jpg`` and ``flower.jpg``; scikit-image is not needed),
converted and nested, with one truncated file, a text file, a hidden folder and
a symlink cycle."""
import os

import cv2
import numpy as np
from matplotlib import cbook
from PIL import Image
from sklearn.datasets import load_sample_images  # noqa: F401  (its photos)

SKLEARN_IMAGES = os.path.join(
    os.path.dirname(os.path.abspath(load_sample_images.__code__.co_filename)),
    'images')


def sample_photos(width=96):
    """The four photos as PIL images, ``width`` pixels wide."""
    paths = {
        'grace':
        cbook.get_sample_data('grace_hopper.jpg', asfileobj=False),
        'present':
        cbook.get_sample_data(
            'Minduka_Present_Blue_Pack.png', asfileobj=False),
        'china':
        os.path.join(SKLEARN_IMAGES, 'china.jpg'),
        'flower':
        os.path.join(SKLEARN_IMAGES, 'flower.jpg'),
    }
    photos = {}
    for name, path in paths.items():
        with Image.open(path) as img:
            img.load()
            h = round(img.height * width / img.width)
            photos[name] = img.resize((width, h), Image.BICUBIC)
    assert photos['present'].mode == 'RGBA'
    return photos


def _rgb(img):
    return np.asarray(img.convert('RGB'))


def make_photo_folder(root, large=True):
    """Write the folder under ``root``.

    Returns:
        tuple: (expected, damaged): ``expected`` maps each readable image's
        path relative to ``root`` to (the 8-bit RGB array a correct reader
        gives, the mean absolute difference allowed: 0 for lossless files);
        ``damaged`` lists the damaged files' relative paths.
    """
    p = sample_photos()
    grace, china, flower, present = (p['grace'], p['china'], p['flower'],
                                     p['present'])
    expected = {}

    def put(rel, img, rgb, tol=0., **save):
        path = os.path.join(root, rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        if img is not None:
            img.save(path, **save)
        expected[rel] = (rgb, tol)
        return path

    put('a/grace.JPG', grace, _rgb(grace), 5., quality=95)
    put('a/b/china.png', china, _rgb(china))
    put('a/b/c/flower.webp', flower, _rgb(flower), lossless=True)
    tiny = flower.resize((7, 5), Image.BICUBIC)
    put('a/b/c/tiny/flower_7x5.tif', tiny, _rgb(tiny))
    grey = grace.convert('L')
    put('d/grace_grey.bmp', grey, _rgb(grey))
    # 16-bit grey and 16-bit RGB: the 8-bit values times 257
    china_l = np.asarray(china.convert('L'))
    put('d/china_16bit_grey.tif',
        Image.fromarray(china_l.astype(np.uint16) * 257),
        np.repeat(china_l[..., None], 3, axis=2))
    path = put('d/china_16bit_rgb.png', None, _rgb(china))
    cv2.imwrite(path, (_rgb(china).astype(np.uint16) * 257)[..., ::-1])
    cmyk = flower.convert('CMYK')
    put('d/flower_cmyk.tiff', cmyk, _rgb(cmyk))
    put('e/present_rgba.png', present, _rgb(present))
    palette = present.convert('RGB').quantize(64)
    put('e/present_palette.png', palette, _rgb(palette), transparency=0)
    one_bit = grace.convert('1')
    put('e/grace_1bit.png', one_bit, _rgb(one_bit))
    # EXIF orientation 6: a viewer shows it rotated 90 degrees clockwise
    exif = grace.getexif()
    exif[0x0112] = 6
    put('e/grace_exif6.jpeg',
        grace,
        _rgb(grace.transpose(Image.Transpose.ROTATE_270)),
        5.,
        quality=95,
        exif=exif)
    if large:
        big = china.resize((3000, 2000), Image.BICUBIC)
        put('large/china_3000x2000.jpg', big, _rgb(big), 5., quality=90)
    # not images, or not listed
    damaged = 'damaged/flower_truncated.jpg'
    path = os.path.join(root, damaged)
    os.makedirs(os.path.dirname(path))
    flower.save(path, quality=95)
    with open(path, 'rb') as f:
        data = f.read()
    with open(path, 'wb') as f:
        f.write(data[:len(data) // 2])
    with open(os.path.join(root, 'notes.txt'), 'w') as f:
        f.write('not an image\n')
    os.makedirs(os.path.join(root, '.thumbnails'))
    grace.save(os.path.join(root, '.thumbnails', 'grace.jpg'))
    grace.save(os.path.join(root, 'a', '._grace.JPG'))  # macOS fork name
    os.symlink('..', os.path.join(root, 'e', 'loop'))  # a cycle
    return expected, [damaged]


def make_labelled_photo_folder(root, train_per_class=3, val_per_class=2):
    """``root/{train,val}/<photo>/`` of real photographs: each of the four
    sample photos is a class, its images are crops of it (different places
    and sizes, some mirrored) saved as JPEG, PNG or 16-bit grey TIFF.

    Returns:
        list: the class names (sorted).
    """
    photos = sample_photos(width=160)
    for split, count, offset in (('train', train_per_class, 0),
                                 ('val', val_per_class, train_per_class)):
        for name, img in photos.items():
            folder = os.path.join(root, split, name)
            os.makedirs(folder, exist_ok=True)
            img = img.convert('RGB')
            for i in range(offset, offset + count):
                side = 64 + 16 * (i % 3)
                x = (i * 23) % (img.width - side)
                y = (i * 17) % (img.height - side)
                crop = img.crop((x, y, x + side, y + side))
                if i % 2:
                    crop = crop.transpose(Image.FLIP_LEFT_RIGHT)
                kind = i % 3
                if kind == 0:
                    crop.save(os.path.join(folder, f'{i}.jpg'), quality=90)
                elif kind == 1:
                    crop.save(os.path.join(folder, f'{i}.png'))
                else:
                    grey = np.asarray(crop.convert('L')).astype(np.uint16)
                    Image.fromarray(grey * 257).save(
                        os.path.join(folder, f'{i}.tif'))
    return sorted(photos)
