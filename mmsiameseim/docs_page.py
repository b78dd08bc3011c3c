"""Where a page of the documentation is, for an error message to name.

The Markdown pages ship with the package (``mmsiameseim/.mim/docs/``, as
the configs do); in a checkout they are its ``docs/``. A message names the
page's path on this machine, which exists from a wheel and from a
checkout alike.
"""
import os.path as osp

_PACKAGE = osp.dirname(osp.abspath(__file__))


def docs_page(page: str) -> str:
    """The path of ``page`` (``'pretraining/memory.md#anchor'``) on this
    install: the checkout's ``docs/`` where there is one, else the
    package's copy; the anchor is kept."""
    name, _, anchor = page.partition('#')
    checkout = osp.join(osp.dirname(_PACKAGE), 'docs', name)
    path = checkout if osp.isfile(checkout) else osp.join(
        _PACKAGE, '.mim', 'docs', name)
    return path + (f'#{anchor}' if anchor else '')
