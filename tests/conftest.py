import os

import pytest
import torch

DATA = os.path.join(os.path.dirname(__file__), 'data')


@pytest.fixture(scope='session')
def parity_fixture():
    """One training step of the authors' implementation (see DESIGN §4)."""
    return torch.load(os.path.join(DATA, 'official_parity_tiny.pt'),
                      weights_only=True)
