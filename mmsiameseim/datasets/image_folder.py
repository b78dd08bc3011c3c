import os.path as osp
from typing import Any, List, Optional, Sequence, Union

from mmengine.dataset import BaseDataset
from mmpretrain.registry import DATASETS, TRANSFORMS

from .image_folder_damage import DamagedImagePolicy, TooManyDamagedImagesError
from .image_folder_files import (FOLDER_IMAGE_EXTENSIONS, VERIFY_MODES,
                                 folder_image_paths, verified_paths)
from .transforms.strict_loading import DamagedImageError, ImageModeError


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

    def load_data_list(self) -> List[dict]:
        name = type(self).__name__
        paths = folder_image_paths(self.folder, self.extensions,
                                   self.skip_hidden, name)
        if self.verify:
            paths = verified_paths(paths, self.verify, self.damage, name)
            # training counts afresh: the damaged files are out of the list
            self.damage = DamagedImagePolicy(self.folder,
                                             self.damage.max_damaged_fraction,
                                             self.damage.min_damaged)
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
