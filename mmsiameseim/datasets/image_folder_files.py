import logging
import os
import os.path as osp
from typing import List, NamedTuple, Sequence, Tuple

from mmengine.logging import print_log
from PIL import Image

from .image_folder_damage import DamagedImagePolicy
from .transforms.strict_loading import (DamagedImageError, ImageModeError,
                                        check_mode, to_rgb)

#: The image files a folder dataset reads (case-insensitive).
FOLDER_IMAGE_EXTENSIONS = ('.jpg', '.jpeg', '.png', '.bmp', '.webp', '.tif',
                           '.tiff')


class FolderListing(NamedTuple):
    """What :func:`list_image_files` found under a folder."""
    files: List[str]  # image paths relative to the folder, sorted
    hidden: int  # image files ignored because they or a folder are hidden
    others: List[str]  # non-image files (relative paths, sorted)
    revisited: List[str]  # folders reached again through a symlink
    # (dropped, kept): a second path to an image already listed (a symlink)
    duplicates: List[Tuple[str, str]]


def drop_duplicate_files(
        paths: Sequence[str],
        root: str = '') -> Tuple[List[str], List[Tuple[str, str]]]:
    """``paths`` less those that resolve (``os.path.realpath``, through
    symbolic links) to a file already in the list: the first in the list's
    order is kept.

    Args:
        paths (Sequence[str]): File paths, relative to ``root``.
        root (str): The folder they are relative to. Defaults to ''.

    Returns:
        tuple: (kept paths, in order; (dropped, kept) pairs).
    """
    first = {}
    kept, duplicates = [], []
    for path in paths:
        real = osp.realpath(osp.join(root, path))
        if real in first:
            duplicates.append((path, first[real]))
        else:
            first[real] = path
            kept.append(path)
    return kept, duplicates


def warn_duplicates(duplicates: Sequence[Tuple[str, str]], folder: str,
                    what: str) -> None:
    """Log a warning naming how many second paths to one image were left
    out, with an example (nothing if there are none)."""
    if not duplicates:
        return
    dropped, kept = duplicates[0]
    print_log(
        f'{what}: {len(duplicates)} image paths under {folder} lead to an '
        f'image already listed (symbolic links) and are left out, each image '
        f'is read once; e.g. {dropped} is {kept}',
        logger='current',
        level=logging.WARNING)


def _check_folder(folder: str, what: str) -> None:
    if not osp.exists(folder):
        raise FileNotFoundError(f'{what}: image folder {folder!r} does not '
                                'exist')
    if not osp.isdir(folder):
        raise NotADirectoryError(f'{what}: {folder!r} is not a folder')


def list_image_files(folder: str,
                     extensions: Sequence[str] = FOLDER_IMAGE_EXTENSIONS,
                     skip_hidden: bool = True,
                     what: str = 'image folder') -> FolderListing:
    """Every image file under ``folder``, recursively, in sorted order.

    Extensions match case-insensitively. Symbolic links are followed, each
    real folder once: a link back to a folder already listed (a cycle, or
    two links to one folder) is not entered again. Each image is listed
    once: a file that is a symbolic link to an image listed before it (in
    sorted order; its realpath) is left out, counted in ``duplicates`` and
    named in a logged warning; a link to an image outside the folder is
    listed (it is the only copy). With ``skip_hidden``,
    files and folders whose names start with '.' (``.git``, macOS ``._x.jpg``
    resource forks, ``.ipynb_checkpoints``) are left out and counted.

    Args:
        folder (str): The folder.
        extensions (Sequence[str]): Image extensions, with the dot.
            Defaults to :data:`FOLDER_IMAGE_EXTENSIONS`.
        skip_hidden (bool): Leave out hidden files and folders.
            Defaults to True.
        what (str): Names the caller in errors. Defaults to 'image folder'.

    Returns:
        FolderListing: The image files (relative paths, sorted, each image
        once), and what was left out.

    Raises:
        FileNotFoundError: ``folder`` does not exist.
        NotADirectoryError: ``folder`` is a file.
    """
    _check_folder(folder, what)
    extensions = tuple(e.lower() for e in extensions)
    files, others, revisited = [], [], []
    hidden = 0
    seen_dirs = set()
    for root, dirs, names in os.walk(folder, followlinks=True):
        real = osp.realpath(root)
        rel_root = osp.relpath(root, folder)
        if real in seen_dirs:
            revisited.append(rel_root)
            dirs[:] = []
            continue
        seen_dirs.add(real)
        if skip_hidden:
            for d in [d for d in dirs if d.startswith('.')]:
                hidden += sum(n.lower().endswith(extensions)
                              for _, _, ns in os.walk(osp.join(root, d))
                              for n in ns)
            dirs[:] = [d for d in dirs if not d.startswith('.')]
        dirs.sort()
        for name in names:
            rel = osp.normpath(osp.join(rel_root, name))
            if not name.lower().endswith(extensions):
                others.append(rel)
            elif skip_hidden and name.startswith('.'):
                hidden += 1
            else:
                files.append(rel)
    files, duplicates = drop_duplicate_files(sorted(files), folder)
    warn_duplicates(duplicates, folder, what)
    return FolderListing(files, hidden, sorted(others), sorted(revisited),
                         duplicates)


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


def folder_image_paths(folder: str, extensions: Sequence[str],
                       skip_hidden: bool, what: str) -> List[str]:
    """The image paths under ``folder`` (:func:`list_image_files`, joined to
    the folder), logged with what was left out.

    Raises:
        FileNotFoundError: The folder holds no image file (the message names
            the folder, the extensions and what else it found).
    """
    listing = list_image_files(folder, extensions, skip_hidden, what=what)
    exts = ' '.join(extensions)
    if not listing.files:
        others = ', '.join(listing.others[:5]) or 'none'
        raise FileNotFoundError(
            f'{what}: {folder} holds no image file (searched '
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
        f'{what}: {len(listing.files)} images under {folder} ({exts})' +
        ''.join(f'; {n}' for n in notes),
        logger='current')
    return [osp.join(folder, f) for f in listing.files]


def verified_paths(paths: List[str], mode: str, damage: DamagedImagePolicy,
                   what: str) -> List[str]:
    """``paths`` less the damaged ones (:func:`check_image_file` with
    ``mode``), under the damaged-file policy ``damage`` (which raises when
    too many are)."""
    good = []
    for path in paths:
        try:
            check_image_file(path, mode)
        except (DamagedImageError, ImageModeError) as e:
            damage.damaged(path, str(e))
            continue
        damage.ok()
        good.append(path)
    print_log(
        f'{what}: verify={mode!r} checked {len(paths)} images, left out '
        f'{len(paths) - len(good)} damaged',
        logger='current')
    return good
