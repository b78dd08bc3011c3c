"""The demo's ``--cfg-options``, checked against its config before any
work: a misspelt key (``evaluation.knn.kk=3``) would otherwise be merged in
beside the real one and ignored."""
import difflib
from typing import Mapping

# settings whose keys are the user's own (merged into other configs)
OPEN_SETTINGS = ('pretrain_configs', 'pretrain_overrides', 'hook_overrides')


def check_demo_options(cfg: Mapping, options: Mapping) -> None:
    """Refuse ``--cfg-options`` keys that the demo config does not have,
    naming the nearest valid keys at that place.

    Args:
        cfg (Mapping): The demo config before the options are merged.
        options (Mapping): ``--cfg-options``, dotted key -> value.

    Raises:
        ValueError: One line per unknown key.
    """
    problems = []
    for dotted in options:
        parts = dotted.split('.')
        if parts[0] in OPEN_SETTINGS:
            continue
        node, place = cfg, []
        for part in parts:
            if not isinstance(node, Mapping):
                break  # a value replaced by a dict: the config's own check
            if part not in node:
                valid = sorted(k for k in node if not k.startswith('_'))
                near = difflib.get_close_matches(part, valid, 3, 0.6)
                where = '.'.join(place) or 'the top level'
                hint = (f"did you mean {' or '.join(map(repr, near))}? "
                        if near else '')
                problems.append(f'{dotted}: {where} has no {part!r}; {hint}'
                                f'({where} has {", ".join(valid)})')
                break
            node, place = node[part], place + [part]
    if problems:
        raise ValueError(
            'demo --cfg-options with keys the demo config does not have (they '
            'would be ignored):\n  ' + '\n  '.join(problems))
