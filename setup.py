"""Packaging (metadata in setup.cfg): the wheel is the plugin, the
``mmsiameseim`` package, with what ``mim`` needs beside it.

OpenMMLab packages ship their configs, model index and command-line tools
inside the package, under ``<package>/.mim/``, which is where ``mim train
mmsiameseim CONFIG`` (and ``mim test``, ``mim search``) look for them. That
folder is not in the repository: a build copies :data:`MIM_FILES` into the
wheel's ``mmsiameseim/.mim/``; an editable install links them into
``mmsiameseim/.mim/`` of the checkout instead (git ignores that folder).
The studies (``projects/``) and the tests stay out of the wheel.
"""
import os
import os.path as osp
import shutil
from setuptools import setup
from setuptools.command.build_py import build_py
from setuptools.command.develop import develop

ROOT = osp.dirname(osp.abspath(__file__))
# What ``mmsiameseim/.mim/`` holds: the configs and their model index, and
# the tools that need nothing but the installed package (train and test,
# which mim runs, their dist and slurm launchers, the model converters and the
# evaluation of a checkpoint or
# a folder: kNN, few-shot, embeddings), and the documentation's Markdown
# pages, which error messages name (mmsiameseim.docs_page).
MIM_FILES = ('configs', 'model-index.yml', 'tools/train.py', 'tools/test.py',
             'tools/dist_train.sh', 'tools/dist_test.sh',
             'tools/slurm_train.sh', 'tools/slurm_test.sh',
             'tools/model_converters', 'tools/evaluation', 'docs')


def put_mim_files(mim: str, link: bool) -> None:
    """:data:`MIM_FILES` into the folder ``mim``: linked or copied."""
    for name in MIM_FILES:
        src = osp.join(ROOT, name)
        if not osp.exists(src):
            raise FileNotFoundError(
                f'setup.py MIM_FILES: {name} is not in {ROOT}')
        _put(src, osp.join(mim, name), link)


def _not_shipped(folder: str, names: list) -> list:
    """What a copied folder leaves out: caches, and of the docs all but
    the Markdown pages (not the built site and its generated copies of
    the READMEs, results or figures)."""
    docs = osp.join(ROOT, 'docs')
    out = [n for n in names if n == '__pycache__' or n.endswith('.pyc')]
    if folder == docs:
        out += [n for n in names if n in ('model_zoo', 'projects')]
    if folder == docs or folder.startswith(docs + os.sep):
        out += [
            n for n in names if n == '_build' or (
                not n.endswith('.md') and not osp.isdir(osp.join(folder, n)))
        ]
    return out


def _put(src: str, dst: str, link: bool) -> None:
    if osp.lexists(dst):
        if osp.isdir(dst) and not osp.islink(dst):
            shutil.rmtree(dst)
        else:
            os.remove(dst)
    os.makedirs(osp.dirname(dst), exist_ok=True)
    if link:
        os.symlink(osp.relpath(src, osp.dirname(dst)), dst)
    elif osp.isdir(src):
        shutil.copytree(src, dst, ignore=_not_shipped)
    else:
        shutil.copyfile(src, dst)


class BuildPyWithMim(build_py):
    """``build_py`` that also puts :data:`MIM_FILES` under
    ``mmsiameseim/.mim/``: copies in the build, links in the checkout for an
    editable install (PEP 660)."""

    def run(self) -> None:
        super().run()
        if getattr(self, 'editable_mode', False):
            put_mim_files(osp.join(ROOT, 'mmsiameseim', '.mim'), link=True)
        else:
            put_mim_files(
                osp.join(self.build_lib, 'mmsiameseim', '.mim'), link=False)


class DevelopWithMim(develop):
    """The legacy editable install (``setup.py develop``), with the links."""

    def run(self) -> None:
        super().run()
        put_mim_files(osp.join(ROOT, 'mmsiameseim', '.mim'), link=True)


setup(cmdclass=dict(build_py=BuildPyWithMim, develop=DevelopWithMim))
