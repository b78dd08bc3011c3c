import pytest
from mmengine.registry import DefaultScope


@pytest.fixture(autouse=True)
def restore_default_scope():
    """mmdet's Runner and init_default_scope('mmdet') make 'mmdet' the
    current default scope for the rest of the process; drop the scopes a
    test created so later (mmpretrain) tests build from their own
    registries."""
    before = set(DefaultScope._instance_dict)
    yield
    for name in set(DefaultScope._instance_dict) - before:
        del DefaultScope._instance_dict[name]
