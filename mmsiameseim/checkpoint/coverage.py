"""Refuse a pretrained checkpoint that does not supply the weights a model
needs, naming what is missing and what the file holds.

Used by the ViT checkpoint adapter (:mod:`.vit_adapter`), through which
every loader of pretrained encoders goes.
"""
import fnmatch
import logging
from typing import Iterable, List, Sequence

from mmengine.logging import print_log

from .keys import describe_keys, short_list


def check_coverage(expected: Sequence[str],
                   supplied: Iterable[str],
                   *,
                   model: str,
                   source: str,
                   file_keys: Iterable[str],
                   allow_missing: Sequence[str] = (),
                   allow_partial: bool = False) -> List[str]:
    """Refuse a checkpoint that supplies too few of the weights a model needs.

    "Too few" is any: every key of ``expected`` must be in ``supplied``,
    except those matching a pattern of ``allow_missing`` (keys that are
    new by design, e.g. relative position tables a pretraining checkpoint
    does not have). ``allow_partial=True`` accepts a checkpoint that lacks
    some of the others (they keep their initialisation) and logs the
    counts and names at WARNING; a checkpoint that supplies none of them is
    refused even then.

    Args:
        expected: The model's keys (its ``state_dict()`` names).
        supplied: The checkpoint's keys, in the model's naming (prefix
            stripped, adapted).
        model: The model's name, for messages.
        source: The checkpoint file (and prefix), for messages.
        file_keys: The keys of the whole file as the user wrote them, to say
            what it holds.
        allow_missing: ``fnmatch`` patterns of model keys that may be absent.
        allow_partial: Accept a checkpoint lacking other keys too.

    Returns:
        list: The required keys the checkpoint lacks (empty unless
        ``allow_partial``).

    Raises:
        ValueError: Too few weights; the message names the file, the count,
            the missing keys and what the file holds.
    """
    supplied = set(supplied)
    required = [
        k for k in expected
        if not any(fnmatch.fnmatchcase(k, p) for p in allow_missing)
    ]
    missing = [k for k in required if k not in supplied]
    found = len(required) - len(missing)
    if missing and (not allow_partial or found == 0):
        hint = '' if allow_partial else (
            '. If a partial load is intended, set allow_partial=True in the '
            'init_cfg')
        raise ValueError(
            f'{source}: refusing to initialise {model} from this '
            f'checkpoint: it supplies {found} of the {len(required)} '
            f'weights the model needs; missing {len(missing)}: '
            f'{short_list(missing)}; the file holds '
            f'{describe_keys(file_keys)}{hint}')
    if missing:
        print_log(
            f'{source}: allow_partial: {model} loads {found} of the '
            f'{len(required)} weights it needs; {len(missing)} keep their '
            f'initialisation: {short_list(missing, 40)}',
            logger='current',
            level=logging.WARNING)
    return missing
