import os.path as osp
from typing import Any, List, Optional, Sequence, Union

from mmengine.dataset import BaseDataset
from mmengine.logging import print_log
from mmpretrain.registry import DATASETS, TRANSFORMS
from PIL import Image

from .image_folder_damage import DamagedImagePolicy, TooManyDamagedImagesError
from .image_folder_files import FOLDER_IMAGE_EXTENSIONS, list_image_files
from .transforms.strict_loading import (DamagedImageError, ImageModeError,
                                        check_mode, to_rgb)

#: ``verify`` values: what the pre-scan reads of each file.
VERIFY_MODES = ('header', 'decode')


def check_image_file(path: str, mode: str = 'header') -> None:
    """Raise if ``path`` is not a readable image of a supported mode.

    Args:
        path (str): The file.
        mode (str): 'header' (Pillow's ``verify``: the header, and a PNG's
            checksums; fast, but a truncated JPEG passes) or 'decode' (the
            whole image, as training reads it). Defaults to 'header'.

    Raises:
        DamagedImageError: The file cannot be read as an image.
        ImageModeError: Its mode has no documented 8-bit reading.
    """
    try:
        with Image.open(path) as img:
            if mode == 'decode':
                to_rgb(img, path)
                return
            img_mode = img.mode
            img.verify()
    except ImageModeError:
        raise
    except Exception as e:  # noqa: BLE001  (any decoder error)
        raise DamagedImageError(f'{path}: cannot load image '
                                f'({type(e).__name__}: {e})') from e
    check_mode(img_mode, path)


@DATASETS.register_module()
class UnlabeledImageFolder(BaseDataset):
    """Every image under a folder, recursively, without labels: pretraining on
    one's own images.

    Files are found by extension (``.jpg .jpeg .png .bmp .webp .tif .tiff``,
    any case), in sorted order of their paths, following symbolic links
    (each real folder once, each image once: a link to an image already
    listed is left out, with a warning); hidden files and folders (names
    starting with '.') are left out and counted in the log. Any image mode
    or bit depth is read right by ``StrictLoadImageFromFile``
    (:func:`~mmsiameseim.datasets.transforms.strict_loading.to_rgb`).

    **Damaged files.** When the pipeline's loader cannot read a file
    (``StrictLoadImageFromFile``'s :class:`DamagedImageError` or
    :class:`ImageModeError`: truncated, empty, not an image, an unsupported
    mode), the file is skipped, named in the log with the running count, and
    another image is drawn in its place (mmengine's refetch); a file found
    damaged is not read again by that process. Once more than
    ``max_damaged_fraction`` of the images read so far are damaged, and at
    least ``min_damaged``, training stops with an error naming the damaged
    files (:class:`DamagedImagePolicy`; counted per dataloader process).
    ``verify`` checks every file before training instead, with the same
    policy over the whole folder, and leaves the damaged ones out.

    Args:
        data_root (str): The folder. Required: in a config,
            ``--cfg-options train_dataloader.dataset.data_root=DIR``.
        pipeline (Sequence): The data pipeline. Defaults to ().
        data_prefix (str): A sub-folder of ``data_root`` to read instead.
            Defaults to ''.
        extensions (Sequence[str]): Image extensions (any case).
            Defaults to ``FOLDER_IMAGE_EXTENSIONS``.
        skip_hidden (bool): Leave out hidden files and folders.
            Defaults to True.
        max_damaged_fraction (float): Stop when more than this share of the
            images read are damaged. Defaults to 0.01.
        min_damaged (int): ... and at least this many. 1 with
            ``max_damaged_fraction=0.`` stops at the first. Defaults to 10.
        verify (bool | str): Check every file before training: False,
            'header' (or True; fast) or 'decode' (the whole image; as slow as
            an epoch of loading). Defaults to False.
        **kwargs: Other :class:`mmengine.dataset.BaseDataset` arguments
            (``indices``, ``serialize_data``, ``max_refetch``...).

    Raises:
        ValueError: ``data_root`` is not set.
        FileNotFoundError: The folder does not exist, or holds no image file
            (the message names the folder and the extensions).
        TooManyDamagedImagesError: The damaged-file policy stops the run.
    """

    def __init__(self,
                 data_root: Optional[str] = None,
                 pipeline: Sequence = (),
                 data_prefix: str = '',
                 extensions: Sequence[str] = FOLDER_IMAGE_EXTENSIONS,
                 skip_hidden: bool = True,
                 max_damaged_fraction: float = 0.01,
                 min_damaged: int = 10,
                 verify: Union[bool, str] = False,
                 **kwargs) -> None:
        name = type(self).__name__
        if not data_root:
            raise ValueError(
                f'{name}: data_root is not set; give the image folder, e.g. '
                '--cfg-options train_dataloader.dataset.data_root=/path/to/'
                'images')
        if verify is True:
            verify = 'header'
        if verify and verify not in VERIFY_MODES:
            raise ValueError(f'{name}: verify must be False, True or one of '
                             f'{VERIFY_MODES}, got {verify!r}')
        if isinstance(extensions, str) or not extensions:
            raise ValueError(f'{name}: extensions must be a non-empty list '
                             f'such as [".jpg", ".png"], got {extensions!r}')
        self.extensions = tuple(e.lower() for e in extensions)
        self.skip_hidden = skip_hidden
        self.verify = verify
        self.folder = osp.normpath(osp.join(data_root, data_prefix))
        self.damage = DamagedImagePolicy(self.folder, max_damaged_fraction,
                                         min_damaged)
        self._damaged_indices = set()
        # built from mmpretrain's registry, whatever the default scope
        pipeline = [
            TRANSFORMS.build(t) if isinstance(t, dict) else t for t in pipeline
        ]
        super().__init__(
            data_root=data_root,
            data_prefix=dict(img_path=data_prefix),
            pipeline=pipeline,
            **kwargs)

    def list_files(self) -> List[str]:
        """The image paths under the folder, sorted (logged with what was left
        out)."""
        name = type(self).__name__
        listing = list_image_files(
            self.folder, self.extensions, self.skip_hidden, what=name)
        exts = ' '.join(self.extensions)
        if not listing.files:
            others = ', '.join(listing.others[:5]) or 'none'
            raise FileNotFoundError(
                f'{name}: {self.folder} holds no image file (searched '
                f'recursively for {exts}, any case; {listing.hidden} hidden '
                f'image files left out; other files found: {others})')
        notes = [f'{listing.hidden} hidden image files left out'
                 ] if listing.hidden else []
        if listing.others:
            notes.append(f'{len(listing.others)} files of other types '
                         f'ignored, e.g. {listing.others[0]}')
        if listing.duplicates:
            notes.append(f'{len(listing.duplicates)} symlinks to an image '
                         f'already listed left out, e.g. '
                         f'{listing.duplicates[0][0]}')
        if listing.revisited:
            notes.append('symlinked folders already listed not entered '
                         f'again: {", ".join(listing.revisited[:5])}')
        print_log(
            f'{name}: {len(listing.files)} images under {self.folder} '
            f'({exts})' + ''.join(f'; {n}' for n in notes),
            logger='current')
        return [osp.join(self.folder, f) for f in listing.files]

    def verified(self, paths: List[str]) -> List[str]:
        """``paths`` less the damaged ones, under the damaged-file policy
        (which raises when too many are)."""
        good = []
        for path in paths:
            try:
                check_image_file(path, self.verify)
            except (DamagedImageError, ImageModeError) as e:
                self.damage.damaged(path, str(e))
                continue
            self.damage.ok()
            good.append(path)
        print_log(
            f'{type(self).__name__}: verify={self.verify!r} checked '
            f'{len(paths)} images, left out {len(paths) - len(good)} '
            'damaged',
            logger='current')
        # training counts afresh: the damaged files are out of the list
        self.damage = DamagedImagePolicy(self.folder,
                                         self.damage.max_damaged_fraction,
                                         self.damage.min_damaged)
        return good

    def load_data_list(self) -> List[dict]:
        paths = self.list_files()
        if self.verify:
            paths = self.verified(paths)
        return [dict(img_path=p) for p in paths]

    def prepare_data(self, idx: int) -> Any:
        """The pipeline's output, or None for a damaged image (mmengine then
        draws another); in test mode a damaged image raises."""
        if idx in self._damaged_indices:
            return None
        data_info = self.get_data_info(idx)
        try:
            out = self.pipeline(data_info)
        except (DamagedImageError, ImageModeError) as e:
            if self.test_mode:
                raise
            self._damaged_indices.add(idx)
            self.damage.damaged(data_info['img_path'], str(e))
            if len(self._damaged_indices) >= len(self):
                raise TooManyDamagedImagesError(
                    self.damage.stop_message('every image is damaged'))
            return None
        self.damage.ok()
        return out
