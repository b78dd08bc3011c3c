"""Every shipped mmdet and mmseg config (smoke and own-folder ones included)
has a documented `mim test` command whose config and options load into real
test settings (the own-folder segmentation configs had none)."""
import glob
import os

import pytest
from mmengine.config import Config

from tests.test_docs.helpers import ROOT, documented_commands, parse_command

PAGES = [os.path.join(ROOT, 'docs', 'benchmarks.md')] + sorted(
    glob.glob(
        os.path.join(ROOT, 'configs', 'benchmarks', 'mm*', '**', 'README.md'),
        recursive=True))
CONFIGS = sorted(
    os.path.relpath(p, ROOT) for pattern in ('mmdet', 'mmseg')
    for p in glob.glob(
        os.path.join(ROOT, 'configs', 'benchmarks', pattern, '**', '*.py'),
        recursive=True) if '_base_' not in p)


def documented_test_commands():
    found = {}
    for page in PAGES:
        for tokens in documented_commands(page, start='mim test '):
            command = parse_command(tokens)
            found.setdefault(command['config'], []).append(command)
    return found


COMMANDS = documented_test_commands()


@pytest.mark.person_matrix(
    'segmentation', 'test_command', 'every shipped mmdet / mmseg config '
    'has a documented `mim test` command whose options load into real test '
    'settings')
@pytest.mark.parametrize('config', CONFIGS)
def test_every_downstream_config_has_a_documented_test_command(config):
    assert config in COMMANDS, f'no `mim test ... {config}` in {PAGES}'
    for command in COMMANDS[config]:
        assert command['checkpoint'], command
        cfg = Config.fromfile(os.path.join(ROOT, config))
        cfg.merge_from_dict(command['options'])
        for key in ('test_dataloader', 'test_evaluator', 'test_cfg'):
            assert cfg.get(key), (config, key)
        assert cfg.test_dataloader.dataset.pipeline
