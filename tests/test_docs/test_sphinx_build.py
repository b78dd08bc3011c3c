"""The documentation builds with Sphinx, warnings as errors: a tiny two-page
project with the site's own docs/conf.py (quick, proves the configuration loads
and MyST, anchors and autodoc work), and the whole site as ``make docs`` builds
it (slow)."""
import os
import os.path as osp
import shutil
import subprocess
import sys

import pytest

from tests.helpers import load_tool
from .helpers import DOCS, ROOT

pytest.importorskip(
    'sphinx',
    reason='make setup-full installs the docs '
    'tools (requirements/docs.txt)')


def _sphinx(src, out):
    return subprocess.run([
        sys.executable, '-m', 'sphinx', '-W', '--keep-going', '-q', '-b',
        'html',
        str(src),
        str(out)
    ],
                          capture_output=True,
                          text=True,
                          env=dict(
                              os.environ,
                              PYTHONPATH=os.pathsep.join(
                                  [ROOT,
                                   os.environ.get('PYTHONPATH', '')])))


def test_two_page_project_with_our_conf(tmp_path):
    """Two pages and a config folder's README: MyST, GitHub anchors, autodoc +
    napoleon, and the README's copy with its links rewritten."""
    src = tmp_path / 'docs'
    (src / '_static').mkdir(parents=True)
    shutil.copy(osp.join(DOCS, 'conf.py'), src / 'conf.py')
    (src / 'index.md').write_text(
        '# Tiny\n\nSee [the loss](page.md#the-unigrad-loss) and '
        '[the configs](../configs/demo/README.md).\n\n'
        '```{toctree}\n:maxdepth: 1\n\npage\nmodel_zoo/demo/README\n```\n')
    (src / 'page.md').write_text(
        '# Page\n\n## The UniGrad loss\n\n'
        '```{eval-rst}\n.. autoclass:: mmsiameseim.models.losses.'
        'UniGradLoss\n```\n')
    (tmp_path / 'configs' / 'demo' / 'smoke').mkdir(parents=True)
    (tmp_path / 'configs' / 'demo' / 'README.md').write_text(
        '# Demo configs\n\nBack to [the loss]'
        '(../../docs/page.md#the-unigrad-loss); [smoke/](smoke/).\n\n'
        '<!-- results:demo -->\n\n<!-- /results:demo -->\n')
    out = tmp_path / 'html'
    done = _sphinx(src, out)
    assert done.returncode == 0, done.stdout + done.stderr
    index = (out / 'index.html').read_text()
    assert 'href="page.html#the-unigrad-loss"' in index
    assert 'href="model_zoo/demo/README.html"' in index
    page = (out / 'page.html').read_text()
    assert 'mmsiameseim.models.losses.' in page and 'UniGradLoss' in page
    assert 'Parameters' in page  # napoleon turned "Args:" into a field list
    copy = (src / 'model_zoo' / 'demo' / 'README.md').read_text()
    assert '(../../page.md#the-unigrad-loss)' in copy
    assert '; smoke/.' in copy  # a folder without a README is no page
    # projects/common/tools/render_results.py fills the README's block, not the
    # copy's
    assert '<!-- results:' not in copy and '<!-- copy of results:' in copy
    assert 'href="../../page.html#the-unigrad-loss"' in (
        out / 'model_zoo' / 'demo' / 'README.html').read_text()


def test_a_warning_fails_the_build(tmp_path):
    src = tmp_path / 'docs'
    (src / '_static').mkdir(parents=True)
    shutil.copy(osp.join(DOCS, 'conf.py'), src / 'conf.py')
    (src / 'index.md').write_text(
        '# Tiny\n\n[broken](page.md#no-such-heading)\n\n'
        '```{toctree}\npage\n```\n')
    (src / 'page.md').write_text('# Page\n')
    done = _sphinx(src, tmp_path / 'html')
    assert done.returncode != 0
    assert 'no-such-heading' in done.stderr


@pytest.mark.slow
def test_make_docs_builds_the_site(tmp_path):
    """What ``make docs`` runs, into a temporary output folder."""
    done = _sphinx(DOCS, tmp_path / 'html')
    assert done.returncode == 0, done.stdout + done.stderr
    for page in ('index', 'get_started', 'api', 'reliability',
                 'model_zoo/pretrain/README'):
        assert (tmp_path / 'html' / f'{page}.html').is_file(), page
    assert load_tool('docs/check_links.py').main(['--root', ROOT]) == 0
