"""``projects/`` as OpenMMLab lays out research built on a codebase: one
folder per study with its README, its command lines in ``tools/`` (each
within 200 lines), its tests in ``tests/`` and its results files in
``results/``; the plugin never imports a project."""
import ast
import glob
import os
import os.path as osp

from tests.helpers import ROOT

PROJECTS = osp.join(ROOT, 'projects')


def _folders():
    return sorted(
        name for name in os.listdir(PROJECTS)
        if osp.isdir(osp.join(PROJECTS, name)) and name != '__pycache__')


def test_every_project_has_its_readme_tests_and_an_index_entry():
    with open(osp.join(PROJECTS, 'README.md'), encoding='utf-8') as f:
        index = f.read()
    for name in _folders():
        folder = osp.join(PROJECTS, name)
        assert osp.isfile(osp.join(folder, 'README.md')), name
        assert glob.glob(osp.join(folder, 'tests', 'test_*.py')), name
        assert f'({name}/README.md)' in index, name


def test_every_project_tool_is_within_200_lines():
    tools = glob.glob(osp.join(PROJECTS, '*', 'tools', '*.py'))
    assert tools
    for path in tools:
        with open(path, encoding='utf-8') as f:
            assert len(f.read().splitlines()) <= 200, path


def test_every_results_file_is_in_its_projects_results_folder():
    """Each results file lives where RESULTS_HOMES says (a project's
    ``results/``; the plugin's test runs in docs/results), and nothing in
    those folders is a results file without a home."""
    from projects.common.results import RESULTS_HOMES, results_path
    for name, home in RESULTS_HOMES.items():
        assert home == 'docs/results' or (
            home.startswith('projects/') and home.endswith('/results') and
            osp.isfile(osp.join(ROOT, osp.dirname(home), 'README.md'))), (name,
                                                                          home)
        assert osp.isfile(results_path(name)), (name, home)
    found = glob.glob(osp.join(PROJECTS, '*', 'results', '*.json')) + \
        glob.glob(osp.join(ROOT, 'docs', 'results', '*.json'))
    homeless = sorted(
        osp.relpath(path, ROOT) for path in found
        if osp.basename(path)[:-5] not in RESULTS_HOMES
        or results_path(osp.basename(path)[:-5]) != path)
    assert homeless == []


def _imported_modules(path):
    with open(path, encoding='utf-8') as f:
        tree = ast.parse(f.read(), path)
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0:
            yield node.module or ''


def test_the_plugin_never_imports_a_project():
    sources = glob.glob(
        osp.join(ROOT, 'mmsiameseim', '**', '*.py'), recursive=True)
    assert sources
    wrong = [(osp.relpath(path, ROOT), module) for path in sources
             for module in _imported_modules(path)
             if module.split('.')[0] == 'projects']
    assert wrong == []
