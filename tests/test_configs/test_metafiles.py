"""Every config folder's metafile lists exactly the configs in it."""
import glob
import os

import pytest
import yaml

ROOT = os.path.dirname(
    os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
METAFILES = sorted(
    glob.glob(
        os.path.join(ROOT, 'configs', '**', 'metafile.yml'), recursive=True))


def test_every_config_folder_with_configs_has_a_metafile_and_readme():
    assert METAFILES
    folders = {os.path.dirname(m) for m in METAFILES}
    for folder in folders:
        assert os.path.isfile(os.path.join(folder, 'README.md')), folder


@pytest.mark.parametrize(
    'metafile', METAFILES, ids=lambda p: os.path.relpath(p, ROOT))
def test_metafile_lists_exactly_the_folders_configs(metafile):
    with open(metafile) as f:
        meta = yaml.safe_load(f)
    names = [m['Name'] for m in meta['Models']]
    assert len(names) == len(set(names)), 'duplicate model names'
    listed = {m['Config'] for m in meta['Models']}
    for model in meta['Models']:
        config = model['Config']
        assert os.path.basename(config) == model['Name'] + '.py', config
        assert os.path.isfile(os.path.join(ROOT, config)), config
    folder = os.path.relpath(os.path.dirname(metafile), ROOT)
    present = {
        os.path.join(folder, os.path.basename(p))
        for p in glob.glob(os.path.join(ROOT, folder, '*.py'))
    }
    assert present - listed == set(), 'configs missing from the metafile'
