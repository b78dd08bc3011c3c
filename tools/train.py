"""Train a config of this plugin with the training script of the OpenMMLab
codebase the config is written for: what ``mim train mmsiameseim CONFIG``
runs (``python tools/train.py CONFIG [ARGS]`` in a checkout).

    python tools/train.py CONFIG [--work-dir DIR] [--resume] [--amp]
        [--cfg-options KEY=VALUE ...] [--launcher none|pytorch|slurm]

The config's ``default_scope`` (mmpretrain for pretraining and the
classification benchmarks, mmdet or mmseg for the dense ones) names the
codebase; its own ``tools/train.py`` (from its ``.mim/`` folder, where mim
installs it) runs with these arguments, so every option of that script
works here. The config's ``custom_imports`` import this plugin.
"""
import importlib.util
import os.path as osp
import runpy
import sys

CODEBASES = ('mmpretrain', 'mmdet', 'mmseg')


def codebase_script(config: str, tool: str) -> str:
    """The path of ``tools/TOOL`` of the codebase that ``config`` is
    written for; an error names the config and what is missing."""
    from mmengine.config import Config
    scope = Config.fromfile(config).get('default_scope') or 'mmpretrain'
    if scope not in CODEBASES:
        sys.exit(f'{config}: default_scope {scope!r} is none of {CODEBASES}')
    spec = importlib.util.find_spec(scope)
    if spec is None or spec.origin is None:
        sys.exit(f'{config} is an {scope} config, and {scope} is not '
                 f'installed: mim install {scope}')
    package = osp.dirname(spec.origin)
    for script in (osp.join(package, '.mim', 'tools', tool),
                   osp.join(osp.dirname(package), 'tools', tool)):
        if osp.isfile(script):
            return script
    sys.exit(f'{scope} at {package} has no tools/{tool} (neither in its '
             '.mim/ folder nor beside it): reinstall it with mim install')


def run_codebase_tool(tool: str, argv: list, usage: str) -> None:
    """Run the codebase's ``tools/TOOL`` as ``__main__`` with ``argv`` (the
    config first); ``-h`` prints ``usage``."""
    if not argv or argv[0] in ('-h', '--help'):
        print(usage)
        if not argv:
            sys.exit(2)
        return
    script = codebase_script(argv[0], tool)
    sys.argv = [script] + list(argv)
    runpy.run_path(script, run_name='__main__')


if __name__ == '__main__':
    run_codebase_tool('train.py', sys.argv[1:], __doc__)
