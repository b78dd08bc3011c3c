import os

import pytest
import torch

DATA = os.path.join(os.path.dirname(__file__), 'data')


@pytest.fixture(scope='session')
def parity_fixture():
    """One training step of the authors' implementation (see DESIGN §4)."""
    return torch.load(os.path.join(DATA, 'official_parity_tiny.pt'),
                      weights_only=True)


@pytest.fixture(scope='session')
def smoke_imagenet(tmp_path_factory):
    """The tiny ImageNet / A / R / Sketch / C layouts from real Fashion-MNIST
    pixels (tools/dataset_converters/make_smoke_imagenet.py)."""
    import importlib.util
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    spec = importlib.util.spec_from_file_location(
        'make_smoke_imagenet',
        os.path.join(root, 'tools', 'dataset_converters',
                     'make_smoke_imagenet.py'))
    tool = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(tool)
    out = tmp_path_factory.mktemp('smoke')
    assert tool.main(['--fashion-mnist',
                      os.path.join(root, 'data', 'fashion_mnist'),
                      '--out', str(out)]) == 0
    return out
