"""Shared pieces of the documentation tests."""
import os.path as osp
import re

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
    registers in mmengine's and mmpretrain's registries."""
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
            if getattr(cls, '__module__', '').startswith('mmsiameseim'):
                found.append((registry.name, name, cls))
        for child in registry.children.values():
            walk(child)

    for module in (mmengine.registry, mmpretrain.registry):
        for value in vars(module).values():
            if isinstance(value, Registry):
                walk(value)
    return found
