"""A dataloader's ``collate_fn`` inherited from another library's config.

A config whose ``_base_`` is another library's (``mmpretrain::selfsup/
mae/...``) gets every inherited dict with a ``type`` tagged with that
library's scope (``_scope_='mmpretrain'``), ``collate_fn`` included.
mmengine's ``Runner.build_dataloader`` passes the collate dict's other keys
to the function, and the tag with them: ``default_collate() got an
unexpected keyword argument '_scope_'``. :func:`scoped_collate_fn` looks the
function up in that scope instead (what the tag means for every other
registered object), so such a child config trains as written under
``FaultTolerantRunner``; under mmengine's own Runner the child sets
``collate_fn=dict(_delete_=True, type='default_collate')``.
"""
import copy
from typing import Any

from mmengine.registry import FUNCTIONS


def scoped_collate_fn(dataloader: Any) -> Any:
    """``dataloader`` (a config dict) with a scope-tagged ``collate_fn``
    resolved in its scope; anything else as it is."""
    if not isinstance(dataloader, dict):
        return dataloader
    collate = dataloader.get('collate_fn')
    if not isinstance(collate, dict) or '_scope_' not in collate:
        return dataloader
    collate = copy.deepcopy(dict(collate))
    scope = collate.pop('_scope_')
    kind = collate.get('type')
    if isinstance(kind, str):
        # the scope's own function registry when the library has one (it
        # falls back to mmengine's); mmpretrain registers its collate
        # functions in mmengine's
        registry = FUNCTIONS.children.get(scope, FUNCTIONS)
        function = registry.get(kind)
        if function is None:
            raise KeyError(
                f'collate_fn type={kind!r} (scope {scope!r}) is not a '
                'registered function; see mmengine.registry.FUNCTIONS')
        collate['type'] = function
    return dict(dataloader, collate_fn=collate)
