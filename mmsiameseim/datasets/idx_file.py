"""Check an idx file (the format of MNIST and Fashion-MNIST) before it is
read: its header against its size, so that a damaged file is named with
what was expected and what was found instead of failing inside a reshape.

The format: two zero bytes, a type byte, a byte giving the number of
dimensions, one big-endian uint32 per dimension, then the values.
"""
import math
import os
from typing import Optional, Sequence, Tuple

# type byte -> (name, bytes per value)
IDX_TYPES = {
    0x08: ('unsigned byte', 1),
    0x09: ('signed byte', 1),
    0x0B: ('short', 2),
    0x0C: ('int', 4),
    0x0D: ('float', 4),
    0x0E: ('double', 8),
}
_GZIP_MAGIC = b'\x1f\x8b'


def _starts_as_text(head: bytes) -> str:
    """``"; it is text, starting '...'"`` when ``head`` reads as text."""
    text = head.decode('utf-8', errors='ignore')
    if text and len(text) >= len(head) // 2 and all(
            c.isprintable() or c.isspace() for c in text):
        return f'; it is text, starting {text[:40]!r}'
    return ''


def check_idx_file(path: str,
                   ndim: int,
                   type_code: int = 0x08,
                   expected_dims: Optional[Sequence[int]] = None,
                   hint: str = '') -> Tuple[int, ...]:
    """Check that ``path`` is a complete idx file of ``ndim`` dimensions of
    type ``type_code``, without reading its values.

    Args:
        path (str): The file.
        ndim (int): The number of dimensions it must have.
        type_code (int): Its type byte (see ``IDX_TYPES``). Defaults to
            0x08, unsigned bytes.
        expected_dims (Sequence[int], optional): The dimensions the file
            normally has, to say what size was expected when the header
            itself cannot be read (an empty or cut file).
        hint (str): Appended to every message (e.g. how to set the data
            up again).

    Returns:
        tuple: The dimensions its header gives.

    Raises:
        FileNotFoundError: No such file.
        ValueError: Empty, not an idx file of that type and rank
            (gzip-compressed, text, another type), or its size differs
            from the one its header gives; the message names the file,
            the expected and the actual size or header.
    """
    size = os.path.getsize(path)
    header = 4 + 4 * ndim
    type_name, itemsize = IDX_TYPES[type_code]
    want = f'an idx file of {ndim}-dimensional {type_name} values'
    usual = ''
    if expected_dims is not None:
        full = header + itemsize * math.prod(expected_dims)
        usual = (f' ({full:,} bytes for the usual '
                 f'{" x ".join(map(str, expected_dims))} values)')
    with open(path, 'rb') as f:
        head = f.read(max(header, 64))
    if size < header:
        found = 'empty' if size == 0 else f'{size} bytes long'
        raise ValueError(
            f'{path}: the file is {found}: {want} was expected, at least '
            f'its {header}-byte header{usual}{hint}')
    if head[:2] == _GZIP_MAGIC:
        raise ValueError(
            f'{path}: the file is gzip-compressed; {want} was expected '
            f'(un-gzip it){hint}')
    magic = int.from_bytes(head[:4], 'big')
    want_magic = (type_code << 8) | ndim
    if magic != want_magic:
        raise ValueError(
            f'{path}: not {want}: its first 4 bytes are 0x{magic:08x}, '
            f'0x{want_magic:08x} was expected{_starts_as_text(head)}{hint}')
    dims = tuple(
        int.from_bytes(head[4 + 4 * i:8 + 4 * i], 'big') for i in range(ndim))
    expected = header + itemsize * math.prod(dims)
    if size != expected:
        state = 'truncated' if size < expected else \
            f'{size - expected:,} bytes longer than that'
        raise ValueError(
            f'{path}: {size:,} bytes, but its header describes '
            f'{" x ".join(map(str, dims))} {type_name} values, '
            f'{expected:,} bytes in all: the file is {state}{hint}')
    return dims
