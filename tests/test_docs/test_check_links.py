"""tools/docs/check_links.py: the repository's markdown links resolve, and a
broken link or anchor is found."""
import os

import pytest

from tests.helpers import load_tool
from .helpers import ROOT

check_links = load_tool('docs/check_links.py')


def test_repository_links_resolve(capsys):
    assert check_links.main(['--root', ROOT]) == 0, capsys.readouterr().out


def _tree(tmp_path, readme):
    (tmp_path / 'docs' / 'sub').mkdir(parents=True)
    (tmp_path / 'configs' / 'a').mkdir(parents=True)
    (tmp_path / 'docs' / 'page.md').write_text(
        '# Page\n\n## A `code` heading: yes!\n\n## Twice\n\n## Twice\n')
    (tmp_path / 'configs' / 'a' / 'README.md'
     ).write_text('# Config A\n\n[back](../../docs/page.md#twice-1)\n')
    (tmp_path / 'README.md').write_text(readme)
    return str(tmp_path)


GOOD = ('# Title\n\n'
        '[page](docs/page.md) [anchor](docs/page.md#a-code-heading-yes) '
        '[self](#title) [dir](configs/a) [dir anchor](configs/a#config-a) '
        '[ext](https://example.com/x?y=1#z) [mail](mailto:a@b.org)\n\n'
        '```bash\n[not a link](nowhere.md)\n```\n'
        '`[not a link either](nowhere.md)`\n\n'
        '[ref]: docs/page.md#twice\n')


def test_a_clean_tree_passes(tmp_path):
    problems, count = check_links.check(_tree(tmp_path, GOOD))
    assert problems == []
    assert count == 9


@pytest.mark.parametrize('link, problem', [
    ('docs/missing.md', 'docs/missing.md does not exist'),
    ('docs/page.md#no-such-heading', 'no heading or id #no-such-heading'),
    ('#nowhere', 'no heading or id #nowhere in README.md'),
    ('configs/a#twice', 'no heading or id #twice in configs/a/README.md'),
    ('http://', 'has no host'),
    ('ftp://example.com/x', "scheme 'ftp'"),
    ('/etc/passwd', 'absolute path'),
    ('../outside.md', 'points outside the repository'),
])
def test_a_broken_link_is_named(tmp_path, capsys, link, problem):
    root = _tree(tmp_path, GOOD + f'\nSee [this]({link}).\n')
    assert check_links.main(['--root', root]) == 1
    out = capsys.readouterr().out
    assert f'README.md:12: {link}: {problem}' in out, out


def test_docs_pages_and_config_readmes_are_checked(tmp_path):
    root = _tree(tmp_path, GOOD)
    with open(os.path.join(root, 'docs', 'sub', 'deep.md'), 'w') as f:
        f.write('# Deep\n\n![figure](../figure.png)\n')
    with open(os.path.join(root, 'configs', 'a', 'README.md'), 'a') as f:
        f.write('[gone](../../docs/page.md#gone)\n')
    problems, _ = check_links.check(root)
    assert [p.split(': ', 1)[0] for p in problems
            ] == ['configs/a/README.md:4', 'docs/sub/deep.md:3']


def test_generated_pages_are_not_checked(tmp_path):
    root = _tree(tmp_path, GOOD)
    for folder in ('_build', 'model_zoo'):
        os.makedirs(os.path.join(root, 'docs', folder))
        with open(os.path.join(root, 'docs', folder, 'x.md'), 'w') as f:
            f.write('[broken](nowhere.md)\n')
    assert check_links.check(root)[0] == []


def test_html_links_are_checked(tmp_path):
    root = _tree(
        tmp_path, GOOD + '\n<a href="https://exa mple.com">x</a> '
        '<img src="docs/figure.png">\n')
    problems, _ = check_links.check(root)
    assert problems == [
        'README.md:12: https://exa mple.com: has white space',
        'README.md:12: docs/figure.png: docs/figure.png does not exist'
    ]
