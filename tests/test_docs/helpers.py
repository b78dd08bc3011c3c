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
            # the plugin's own (not mmsiameseim_lab's, which a benchmark
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
