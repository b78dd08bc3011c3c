import json
import os

import pytest
import torch
from mmengine.registry import DefaultScope

DATA = os.path.join(os.path.dirname(__file__), 'data')
_SCOPES_AT_START = set(DefaultScope._instance_dict)


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config, items):
    """Check every ``fault_matrix`` marker against the vocabulary of
    ``tests/fault_matrix.py``; with ``FAULT_MATRIX_JSON=PATH`` set, also
    write the cells (entry, fault, behaviour, test id) to PATH."""
    from tests.fault_matrix import ENTRIES, FAULTS
    cells = []
    for item in items:
        for mark in item.iter_markers('fault_matrix'):
            if (len(mark.args) != 3 or mark.args[0] not in ENTRIES
                    or mark.args[1] not in FAULTS):
                raise pytest.UsageError(
                    f'{item.nodeid}: fault_matrix(entry, fault, behaviour) '
                    f'needs an entry of {sorted(ENTRIES)} and a fault of '
                    f'{sorted(FAULTS)}, got {mark.args}')
            cells.append(dict(zip(('entry', 'fault', 'behaviour'),
                                  mark.args), test=item.nodeid))
    out = os.environ.get('FAULT_MATRIX_JSON')
    if out:
        with open(out, 'w') as f:
            json.dump(cells, f, indent=1)


@pytest.fixture(autouse=True)
def restore_default_scope():
    """A Runner or ``init_default_scope`` makes its scope (mmpretrain, mmdet,
    mmseg) the current default scope for the rest of the process, and
    registries then build from that scope's registry. After each test, drop
    every scope made since the session started (by the test or by a module
    or session fixture) so that each test builds from its own library's
    registries."""
    yield
    for name in set(DefaultScope._instance_dict) - _SCOPES_AT_START:
        del DefaultScope._instance_dict[name]


@pytest.fixture(scope='session')
def parity_fixture():
    """One training step of the authors' implementation (see DESIGN §4)."""
    return torch.load(os.path.join(DATA, 'official_parity_tiny.pt'),
                      weights_only=True)


@pytest.fixture(scope='session')
def smoke_imagenet(tmp_path_factory):
    """The tiny ImageNet / A / R / Sketch / C layouts from real Fashion-MNIST
    pixels (tools/dataset_converters/make_smoke_imagenet.py)."""
    from tests.helpers import load_tool
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    tool = load_tool('dataset_converters/make_smoke_imagenet.py')
    out = tmp_path_factory.mktemp('smoke')
    assert tool.main(['--fashion-mnist',
                      os.path.join(root, 'data', 'fashion_mnist'),
                      '--out', str(out)]) == 0
    return out
