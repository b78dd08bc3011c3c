"""Train a config of this plugin with the training script of the OpenMMLab
codebase the config is written for: what ``mim train mmsiameseim CONFIG``
runs (``python tools/train.py CONFIG [ARGS]`` in a checkout).

    python tools/train.py CONFIG [--work-dir DIR] [--resume] [--amp]
        [--cfg-options KEY=VALUE ...] [--launcher none|pytorch|slurm]
        [--local-rank N]

The config's ``default_scope`` (mmpretrain for pretraining and the
classification benchmarks, mmdet or mmseg for the dense ones) names the
codebase; its own ``tools/train.py`` (from its ``.mim/`` folder, where mim
installs it) runs with these arguments, so every option of that script
works here, in any order (a launcher's ``--local-rank=N`` may come
first). The config's ``custom_imports`` import this plugin; a config of
your own may inherit the shipped ones as ``_base_ = 'mmsiameseim::PATH'``
(``PATH`` under ``configs/``). ``--cfg-options data_root=DIR`` moves every
data path of the config (each dataloader, hook and evaluator) from its
``data_root`` to ``DIR``.
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


LOCAL_RANK = ('--local-rank', '--local_rank')


def config_first(argv: list) -> list:
    """``argv`` with the config first.

    Launchers put their own arguments before the script's: ``python -m
    torch.distributed.launch`` (what ``mim train --launcher pytorch --gpus
    N`` starts) passes ``--local-rank=N`` first; the codebases' scripts
    parse it wherever it stands.
    """
    for i, arg in enumerate(argv):
        if arg.startswith('-') or (i and argv[i - 1] in LOCAL_RANK):
            continue
        return [arg] + argv[:i] + argv[i + 1:]
    return list(argv)


def data_root_moved(argv: list) -> list:
    """``argv`` (the config first) where ``--cfg-options`` sets
    ``data_root=DIR``: the config with every path under its data root moved
    to DIR (``mmsiameseim.datasets.set_data_root``: dataloaders, hooks and
    evaluators alike), written under its file name into a temporary
    folder, in place of the config; that option taken out."""
    if '--cfg-options' not in argv:
        return argv
    start = argv.index('--cfg-options') + 1
    end = start
    while end < len(argv) and not argv[end].startswith('-'):
        end += 1
    found = [a for a in argv[start:end] if a.startswith('data_root=')]
    if not found:
        return argv
    import tempfile

    from mmengine.config import Config

    from mmsiameseim.datasets.data_root import set_data_root
    data_root = found[-1].split('=', 1)[1]
    cfg = Config.fromfile(argv[0])
    old = cfg.get('data_root')
    try:
        moved = set_data_root(cfg, data_root)
    except KeyError as e:
        sys.exit(e.args[0])
    path = osp.join(
        tempfile.mkdtemp(prefix='mmsiameseim_config_'), osp.basename(argv[0]))
    cfg.dump(path)
    print(f'data_root={data_root}: {moved} path(s) of {argv[0]} under its '
          f'data_root {old} moved there (the config run: {path})')
    options = [a for a in argv[start:end] if not a.startswith('data_root=')]
    rest = argv[1:start - 1] + (['--cfg-options'] +
                                options if options else []) + argv[end:]
    return [path] + rest


def run_codebase_tool(tool: str, argv: list, usage: str) -> None:
    """Run the codebase's ``tools/TOOL`` as ``__main__`` with ``argv`` (the
    config first, wherever it stood); ``-h`` prints ``usage``.

    The plugin is imported first, so that a config may inherit the shipped
    ones as ``mmsiameseim::PATH``.
    """
    argv = config_first(argv)
    if not argv or argv[0] in ('-h', '--help') or argv[0].startswith('-'):
        print(usage)
        if not argv or argv[0] not in ('-h', '--help'):
            sys.exit(2)
        return
    import mmsiameseim  # noqa: F401
    argv = data_root_moved(argv)
    script = codebase_script(argv[0], tool)
    sys.argv = [script] + list(argv)
    runpy.run_path(script, run_name='__main__')


if __name__ == '__main__':
    run_codebase_tool('train.py', sys.argv[1:], __doc__)
