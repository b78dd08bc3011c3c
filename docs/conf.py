"""Sphinx configuration of the mmsiameseim documentation (``make docs``).

Markdown pages (MyST) in ``docs/``, the Read the Docs theme, the API
reference from the docstrings (autodoc + napoleon, Google style as in
OpenMMLab). The config folders' READMEs (``configs/**/README.md``) become
pages of the site as OpenMMLab's model-zoo pages do: each is copied to
``docs/model_zoo/<its folder under configs>/README.md`` (generated, not
committed) with its relative links rewritten to work from there, and links
from the docs pages into ``configs/**/README.md`` are pointed at the copies.
The projects' READMEs (``projects/**/README.md``, the studies) are copied
the same way to ``docs/projects/``.
"""
import glob
import os
import os.path as osp
import re
import runpy
import sys

DOCS = osp.dirname(osp.abspath(__file__))
ROOT = osp.dirname(DOCS)
MODEL_ZOO = osp.join(DOCS, 'model_zoo')
PROJECTS = osp.join(DOCS, 'projects')
#: repository folder -> where its READMEs are copied on the site
COPIED = {'configs': MODEL_ZOO, 'projects': PROJECTS}
sys.path.insert(0, ROOT)

project = 'mmsiameseim'
author = 'mmsiameseim contributors'
copyright = '2026, mmsiameseim contributors'


def _version() -> str:
    """Read, not imported: the package (and torch) is imported only by autodoc;
    the installed distribution's when this conf.py is elsewhere."""
    path = osp.join(ROOT, 'mmsiameseim', 'version.py')
    if osp.isfile(path):
        return runpy.run_path(path)['__version__']
    from importlib.metadata import version
    return version('mmsiameseim')


version = release = _version()

extensions = [
    'myst_parser',
    'sphinx.ext.autodoc',
    'sphinx.ext.napoleon',
    'sphinx.ext.viewcode',
]
source_suffix = {'.md': 'markdown'}
root_doc = 'index'
# pypi.md is the package's long description (setup.cfg), not a page
exclude_patterns = ['_build', 'results', 'README.md', 'pypi.md']
# Pages of index.md's toctrees that other parts of the project write: left
# out of the toctree while a checkout does not have them yet.
OPTIONAL_PAGES = ('preflight', 'data_pipeline')

# MyST: headings get GitHub's anchors, so ``page.md#a-heading`` links work
# on GitHub and on the site alike.
myst_heading_anchors = 6
myst_enable_extensions = ['colon_fence', 'deflist']

# The API reference.
autodoc_default_options = {
    'members': True,
    'show-inheritance': True,
}
autodoc_member_order = 'bysource'
autodoc_typehints = 'description'
autodoc_inherit_docstrings = False
napoleon_google_docstring = True
napoleon_numpy_docstring = False
napoleon_use_ivar = True  # NamedTuple fields are documented once

html_theme = 'sphinx_rtd_theme'
html_title = f'mmsiameseim {release}'
html_static_path = ['_static']
html_theme_options = {'navigation_depth': 3, 'collapse_navigation': False}

_LINK = re.compile(
    r'(?P<bang>!?)\[(?P<text>(?:[^\[\]]|\[[^\[\]]*\])*)\]'
    r'\(\s*<?(?P<target>[^)\s>]+)>?(?P<title>\s+["\'(][^)]*)?\)')


def _config_readmes():
    """``configs/**/README.md`` and ``projects/**/README.md``, relative to
    the repository, sorted."""
    found = []
    for top in COPIED:
        found += glob.glob(
            osp.join(ROOT, top, '**', 'README.md'), recursive=True)
    return sorted(osp.relpath(p, ROOT) for p in found)


def _site_path(real: str) -> str:
    """Where a repository file is on the site: a config folder's or a
    project's README (or the folder itself) at its copy under
    ``docs/model_zoo/`` or ``docs/projects/``, anything else where it is."""
    if osp.isdir(real) and osp.isfile(osp.join(real, 'README.md')):
        real = osp.join(real, 'README.md')
    rel = osp.relpath(real, ROOT)
    for top, site in COPIED.items():
        if rel.startswith(top + os.sep) and rel.endswith('README.md'):
            return osp.join(site, osp.relpath(rel, top))
    return real


def rewrite_links(text: str, real_source: str, site_source: str) -> str:
    """Relative links of a page written at ``real_source`` rewritten for its
    place on the site, ``site_source``: config READMEs point at their copies,
    every other target is the same file seen from the new place."""

    def one(match):
        target = match.group('target')
        external = re.match(r'^[a-z][a-z0-9+.-]*:', target)
        if external or target.startswith(('#', '/')):
            return match.group(0)
        path, hash_, anchor = target.partition('#')
        real = osp.normpath(osp.join(osp.dirname(real_source), path))
        if not osp.exists(real):
            return match.group(0)  # tools/docs/check_links.py reports it
        site = _site_path(real)
        if osp.isdir(site):  # a folder without a README: no page to open
            return match.group('text')
        new = osp.relpath(site, osp.dirname(site_source)) + hash_ + anchor
        return (f"{match.group('bang')}[{match.group('text')}]({new}"
                f"{match.group('title') or ''})")

    out, fence = [], None
    for line in text.splitlines(keepends=True):
        stripped = line.lstrip()
        if stripped.startswith(('```', '~~~')):
            marker = stripped[:3]
            fence = None if fence == marker else (fence or marker)
            out.append(line)
            continue
        out.append(line if fence else _LINK.sub(one, line))
    return ''.join(out)


def write_model_zoo_pages() -> None:
    """Copy every config folder's README under ``docs/model_zoo/`` and
    every project's under ``docs/projects/``."""
    wanted = set()
    for rel in _config_readmes():
        real = osp.join(ROOT, rel)
        site = _site_path(real)
        wanted.add(site)
        with open(real, encoding='utf-8') as f:
            text = rewrite_links(f.read(), real, site)
        # The rendered blocks stay as rendered in the README: the copy's
        # markers are renamed so that projects/common/tools/render_results.py,
        # which reads
        # docs/**/*.md, sees no block here to fill or check.
        text = re.sub(r'<!-- (/?)(results|metafile)\b', r'<!-- \1copy of \2',
                      text)
        os.makedirs(osp.dirname(site), exist_ok=True)
        old = None
        if osp.isfile(site):
            with open(site, encoding='utf-8') as f:
                old = f.read()
        if old != text:  # unchanged copies keep Sphinx's cache valid
            with open(site, 'w', encoding='utf-8') as f:
                f.write(text)
    for site in COPIED.values():
        for path in glob.glob(osp.join(site, '**', '*.md'), recursive=True):
            if path not in wanted:
                os.remove(path)


def _source_read(app, docname, source):
    """source-read: links of the docs pages into ``configs/**/README.md``
    go to the copies; index.md's toctrees leave out the optional pages
    this checkout does not have."""
    path = app.env.doc2path(docname)
    if docname == root_doc:
        source[0] = ''.join(
            line for line in source[0].splitlines(keepends=True)
            if line.strip() not in OPTIONAL_PAGES
            or osp.isfile(osp.join(DOCS,
                                   line.strip() + '.md')))
    if not any(
            osp.commonpath([site, str(path)]) == site
            for site in COPIED.values()):
        source[0] = rewrite_links(source[0], str(path), str(path))


write_model_zoo_pages()


def setup(app):
    app.connect('source-read', _source_read)
