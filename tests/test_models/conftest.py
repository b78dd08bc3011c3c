import itertools

import pytest
from mmengine.logging import MessageHub

_COUNT = itertools.count()


@pytest.fixture(autouse=True)
def fresh_message_hub():
    """Each model test starts with a message hub of its own, without the
    iteration and schedule length of a run an earlier test in the same
    process finished (``MomentumTarget`` reads its momentum from the current
    hub: a finished run's would give 0, whichever test ran before in a
    pytest-xdist worker)."""
    name = f'model-test-{next(_COUNT)}'
    hub = MessageHub.get_instance(name)
    yield hub
    MessageHub._instance_dict.pop(name, None)
