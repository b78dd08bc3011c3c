"""The README a newcomer reads in five minutes (issue 27)."""
import os.path as osp
import re

from .helpers import ROOT, registered_classes

README = osp.join(ROOT, 'README.md')


def _text():
    with open(README, encoding='utf-8') as f:
        return f.read()


def test_readme_is_short():
    lines = _text().splitlines()
    assert len(lines) <= 250, (
        f'README.md has {len(lines)} lines; at most 250: move the rest into '
        'docs/')


def test_readme_sections_in_a_newcomers_order():
    text = _text()
    order = [
        '![', '## The two commands', '<!-- results:demo -->', '## Components',
        '## Documentation'
    ]
    where = [text.find(mark) for mark in order]
    assert -1 not in where, dict(zip(order, where))
    assert where == sorted(where), dict(zip(order, where))
    for command in ('make setup', 'make demo', 'make test'):
        assert command in text[where[1]:where[2]], command


def test_readme_figures_exist():
    images = re.findall(r'!\[[^\]]*\]\(([^)\s]+)\)', _text())
    assert 'docs/_static/method.png' in images
    for image in images:
        assert osp.isfile(osp.join(ROOT, image)), image


def test_components_table_names_every_registered_class():
    text = _text()
    table = text[text.index('## Components'):text.index('## Documentation')]
    missing = sorted({
        name
        for _, name, _ in registered_classes() if f'`{name}`' not in table
    })
    assert not missing, (f'registered but not in the README components '
                         f'table: {missing}')
