"""The documentation site's structure: every toctree entry is a page, every
page is in a toctree, the API reference covers every registered class."""
import fnmatch
import glob
import importlib
import os.path as osp
import re

from .helpers import DOCS, registered_classes, toctree_entries

# Written by other parts of the project; docs/conf.py leaves an absent one
# out of the toctree (see OPTIONAL_PAGES there).
OPTIONAL_PAGES = {'preflight', 'data_pipeline'}


def _excluded() -> list:
    """docs/conf.py's ``exclude_patterns``: files in docs/ that are no page
    (pypi.md, the package's long description)."""
    with open(osp.join(DOCS, 'conf.py'), encoding='utf-8') as f:
        listed = re.search(r'^exclude_patterns = \[([^]]*)\]', f.read(), re.M)
    return re.findall(r"'([^']+)'", listed.group(1))


def _pages():
    """Docnames of the committed pages (no build output, no generated copies
    of the config folders' and projects' READMEs, no results, nothing
    conf.py excludes)."""
    names, excluded = set(), _excluded()
    for path in glob.glob(osp.join(DOCS, '**', '*.md'), recursive=True):
        rel = osp.relpath(path, DOCS)
        if any(fnmatch.fnmatch(rel, p) for p in excluded):
            continue
        if not rel.startswith(('_build', 'model_zoo', 'projects', 'results')):
            names.add(rel[:-3])
    return names


def _toctrees():
    for name in sorted(_pages()):
        with open(osp.join(DOCS, name + '.md'), encoding='utf-8') as f:
            for entries, glob_ in toctree_entries(f.read()):
                yield name, entries, glob_


def test_optional_pages_match_conf():
    with open(osp.join(DOCS, 'conf.py'), encoding='utf-8') as f:
        conf = f.read()
    listed = re.search(r'OPTIONAL_PAGES = \(([^)]*)\)', conf).group(1)
    assert set(re.findall(r"'([^']+)'", listed)) == OPTIONAL_PAGES


def test_every_toctree_entry_exists():
    pages = _pages()
    for name, entries, glob_ in _toctrees():
        base = osp.dirname(name)
        for entry in entries:
            target = osp.normpath(osp.join(base, entry))
            if glob_ and re.search(r'[*?\[]', entry):
                continue  # patterns; the model-zoo ones are checked below
            if target in OPTIONAL_PAGES:
                continue
            copied = {'model_zoo/': 'configs', 'projects/': 'projects'}
            top = next((k for k in copied if target.startswith(k)), None)
            if top:  # copies of configs/ and projects/ READMEs
                readme = osp.join(
                    osp.dirname(DOCS), copied[top], target[len(top):] + '.md')
                assert osp.isfile(readme), f'{name}.md lists {entry}'
                continue
            assert target in pages, f'{name}.md lists {entry}: no such page'


def test_every_page_is_in_a_toctree():
    listed, patterns = {'index'}, []
    for name, entries, glob_ in _toctrees():
        for entry in entries:
            target = osp.normpath(osp.join(osp.dirname(name), entry))
            if glob_ and re.search(r'[*?\[]', entry):
                patterns.append(target)
            else:
                listed.add(target)
    orphans = sorted(p for p in _pages() - listed
                     if not any(fnmatch.fnmatch(p, pat) for pat in patterns))
    assert not orphans, f'pages in no toctree of docs/index.md: {orphans}'


def test_every_config_readme_is_a_page():
    """docs/conf.py copies configs/**/README.md to docs/model_zoo/; the index's
    glob patterns must reach every copy."""
    root = osp.dirname(DOCS)
    readmes = glob.glob(
        osp.join(root, 'configs', '**', 'README.md'), recursive=True)
    assert readmes
    patterns = [
        e for _, entries, g in _toctrees() for e in entries
        if g and e.startswith('model_zoo/')
    ]
    for readme in readmes:
        copy = 'model_zoo/' + osp.relpath(readme, osp.join(root, 'configs'))
        copy = copy[:-3]
        assert any(
            fnmatch.fnmatch(copy, p.replace('**', '*'))
            for p in patterns), copy


def test_api_reference_documents_every_registered_class():
    with open(osp.join(DOCS, 'api.md'), encoding='utf-8') as f:
        modules = re.findall(r'^\.\. automodule:: (\S+)', f.read(), re.M)
    documented = set()
    for name in modules:
        if name.startswith(('mmsiameseim.det', 'mmsiameseim.seg')):
            continue  # need mmcv's ops; built by `make docs`
        documented.update(getattr(importlib.import_module(name), '__all__'))
    missing = sorted({cls.__name__
                      for _, _, cls in registered_classes()} - documented)
    assert not missing, f'registered but not in docs/api.md: {missing}'
