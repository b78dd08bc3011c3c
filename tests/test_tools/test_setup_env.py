"""tools/setup_env.sh and the Makefile: the demo needs only the pretraining
stage; the tests (what CI runs) always bring up the full stack."""
import os
import shutil
import subprocess

import pytest

ROOT = os.path.dirname(
    os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SCRIPT = os.path.join(ROOT, 'tools', 'setup_env.sh')


def _dry_run(target):
    out = subprocess.run(['make', '-n', target],
                         cwd=ROOT,
                         capture_output=True,
                         text=True)
    assert out.returncode == 0, out.stderr
    return [
        line for line in out.stdout.splitlines()
        if 'tools/setup_env.sh' in line
    ]


@pytest.mark.skipif(shutil.which('make') is None, reason='no make')
def test_make_stages():
    assert _dry_run('demo') == ['bash tools/setup_env.sh']
    for target in ('test', 'test-slow', 'setup-full'):
        assert _dry_run(target) == ['bash tools/setup_env.sh --full'], target


def test_unknown_option_is_named():
    out = subprocess.run(['bash', SCRIPT, '--ful'],
                         capture_output=True,
                         text=True)
    assert out.returncode == 2
    assert "unknown option '--ful'" in out.stderr


def test_check_without_venv_creates_nothing(tmp_path):
    """--check only verifies: in a clone without .venv it says what to run
    and names the failed step."""
    shutil.copytree(
        os.path.join(ROOT, 'requirements'), tmp_path / 'requirements')
    (tmp_path / 'tools').mkdir()
    shutil.copy(SCRIPT, tmp_path / 'tools')
    out = subprocess.run(
        ['bash', str(tmp_path / 'tools' / 'setup_env.sh'), '--check'],
        capture_output=True,
        text=True)
    assert out.returncode != 0
    assert "run 'bash tools/setup_env.sh' first" in out.stderr
    assert 'FAILED at step: virtual environment in .venv' in out.stderr
    assert not (tmp_path / '.venv').exists()
