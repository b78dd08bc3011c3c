"""Shared pieces of the documentation tests."""
import os.path as osp
import re
from typing import Optional

ROOT = osp.dirname(osp.dirname(osp.dirname(osp.abspath(__file__))))
DOCS = osp.join(ROOT, 'docs')
_TOCTREE = re.compile(r'^```\{toctree\}\s*\n(.*?)^```', re.M | re.S)


def toctree_entries(text: str):
    """(entries, glob) of each ``{toctree}`` block of a MyST page; options
    (``:maxdepth: 2``) are left out."""
    for block in _TOCTREE.findall(text):
        lines = [line.strip() for line in block.splitlines()]
        glob = ':glob:' in lines
        yield [line for line in lines
               if line and not line.startswith(':')], glob


def registered_classes():
    """(registry name, class name, class) of everything ``import mmsiameseim``
    registers in mmengine's and mmpretrain's registries (not what
    ``mmsiameseim.det`` / ``mmsiameseim.seg`` add to mmdet's and mmseg's,
    which an earlier test of the same process may have imported)."""
    import mmengine.registry
    import mmpretrain.registry
    from mmengine.registry import Registry

    import mmsiameseim  # noqa: F401
    seen, found = set(), []

    def walk(registry):
        if id(registry) in seen:
            return
        seen.add(id(registry))
        for name, cls in registry.module_dict.items():
            module = getattr(cls, '__module__', '')
            # the plugin's own (not a project's, which a benchmark
            # imports; nor mmdet's / mmseg's)
            if (module == 'mmsiameseim' or module.startswith('mmsiameseim.')
                ) and not module.startswith(
                    ('mmsiameseim.det', 'mmsiameseim.seg')):
                found.append((registry.name, name, cls))
        for child in registry.children.values():
            walk(child)

    for module in (mmengine.registry, mmpretrain.registry):
        for value in vars(module).values():
            if isinstance(value, Registry):
                walk(value)
    return found


def documented_commands(path: str,
                        heading: Optional[str] = None,
                        start: str = 'mim '):
    """The commands starting with ``start`` in the ```bash blocks of the
    section ``heading`` of a Markdown page (to the next heading of its level
    or above; None: the whole page), continuation lines joined, as
    ``shlex`` tokens."""
    import shlex
    with open(path, encoding='utf-8') as f:
        section = f.read()
    if heading:
        level = heading.split(' ')[0]
        begin = section.index(heading + '\n') + len(heading)
        end = len(section)
        for match in re.finditer(r'^(#+) ', section[begin:], re.M):
            if len(match.group(1)) <= len(level):
                end = begin + match.start()
                break
        section = section[begin:end]
    commands = []
    for block in re.findall(r'^```bash\n(.*?)^```', section, re.M | re.S):
        for command in block.replace('\\\n', ' ').splitlines():
            if command.strip().startswith(start):
                commands.append(shlex.split(command))
    return commands


def parse_command(tokens, substitutions=None):
    """What a ``mim train|test PACKAGE CONFIG ...`` command gives mmengine.

    Returns ``dict(action, config, work_dir, checkpoint, options)``, the
    options parsed by mmengine's ``DictAction`` as ``mim`` and
    ``tools/train.py`` do; ``substitutions`` replaces placeholders
    (``DIR``) in every token.
    """
    import argparse

    from mmengine.config import DictAction
    for old, new in (substitutions or {}).items():
        tokens = [t.replace(old, new) for t in tokens]
    assert tokens[0] == 'mim' and tokens[1] in ('train', 'test'), tokens
    parser = argparse.ArgumentParser()
    parser.add_argument('config')
    parser.add_argument('--work-dir')
    parser.add_argument('--checkpoint')
    parser.add_argument('--cfg-options', nargs='+', action=DictAction)
    args, _ = parser.parse_known_args(tokens[3:])  # --launcher, --gpus
    return dict(
        action=tokens[1],
        config=args.config,
        work_dir=args.work_dir,
        checkpoint=args.checkpoint,
        options=args.cfg_options or {})
