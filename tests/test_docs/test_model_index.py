"""The model zoo in OpenMMLab's shape: every model config is in a metafile,
every metafile is imported by the root model-index.yml, every metafile entry
names an existing config, and each folder's README renders its metafile's
table."""
import glob
import os.path as osp

import pytest
import yaml

from tests.helpers import ROOT

# Folders of configs that are no models: inheritance bases, and the demo
# tools' settings (configs/demo/README.md: "not model configs").
NOT_MODELS = ('_base_', osp.join('configs', 'demo'))
METAFILES = sorted(
    osp.relpath(p, ROOT) for p in glob.glob(
        osp.join(ROOT, 'configs', '**', 'metafile.yml'), recursive=True))


def _load(path):
    with open(osp.join(ROOT, path)) as f:
        return yaml.safe_load(f)


def _models():
    return [(m, model) for m in METAFILES for model in _load(m)['Models']]


def test_model_index_imports_every_metafile_and_nothing_else():
    index = _load('model-index.yml')
    imported = index['Import']
    assert len(imported) == len(set(imported))
    assert sorted(imported) == METAFILES


def test_every_model_config_is_in_a_metafile():
    listed = {model['Config'] for _, model in _models()}
    configs = {
        osp.relpath(p, ROOT)
        for p in glob.glob(
            osp.join(ROOT, 'configs', '**', '*.py'), recursive=True)
    }
    models = {
        c
        for c in configs if not any(
            part in NOT_MODELS for part in (osp.dirname(c), *c.split(osp.sep)))
    }
    assert models - listed == set(), 'configs missing from every metafile'


@pytest.mark.parametrize('metafile', METAFILES)
def test_every_entry_names_an_existing_config_and_a_known_collection(metafile):
    collections = {
        c['Name']
        for m in METAFILES
        for c in _load(m).get('Collections') or []
    }
    for model in _load(metafile)['Models']:
        assert osp.isfile(osp.join(ROOT, model['Config'])), model['Config']
        assert model['In Collection'] in collections, model['Name']
        converted = model.get('Converted From')
        if converted:  # the authors' release, and how it becomes ours
            assert converted['Weights'].startswith(
                'https://github.com/OpenGVLab/Siamese-Image-Modeling/'
                'releases/download/')
            tool = model['Metadata']['Converter'].split()[1]
            assert osp.isfile(osp.join(ROOT, tool)), tool


@pytest.mark.parametrize('metafile', METAFILES)
def test_each_folder_readme_renders_its_metafile(metafile):
    readme = osp.join(ROOT, osp.dirname(metafile), 'README.md')
    with open(readme) as f:
        text = f.read()
    assert f'<!-- metafile:{metafile} -->' in text
    for model in _load(metafile)['Models']:
        assert f'[{model["Name"]}]({osp.basename(model["Config"])})' in text
