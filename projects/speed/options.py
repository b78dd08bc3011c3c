"""Command-line option types of the benchmark tools: counts and sizes are
refused by argparse (exit status 2, the option named) before anything is
built, instead of failing inside a worker."""
import argparse


def positive_int(text: str) -> int:
    """An ``argparse`` type: an integer of at least 1."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f'an integer was expected, got {text!r}') from None
    if value < 1:
        raise argparse.ArgumentTypeError(f'at least 1, got {value}')
    return value


def check_patch_grid(parser: argparse.ArgumentParser, img_size: int,
                     patch_size: int) -> None:
    """Refuse an image size that is not a whole number of patches."""
    if img_size % patch_size:
        parser.error(f'--img-size {img_size}: a multiple of the patch size '
                     f'{patch_size} was expected')
