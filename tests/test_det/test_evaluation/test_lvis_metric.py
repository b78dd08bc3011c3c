import numpy as np
import pytest

from mmsiameseim.det.evaluation import numpy_aliases_for_lvis


def test_aliases_exist_only_inside_and_are_removed_after_errors():
    assert not hasattr(np, 'float')
    with numpy_aliases_for_lvis():
        assert np.float is float and np.int is int
        assert np.zeros(2).astype(np.float).dtype == np.float64
    assert not hasattr(np, 'float') and not hasattr(np, 'int')
    with pytest.raises(RuntimeError):
        with numpy_aliases_for_lvis():
            raise RuntimeError('boom')
    assert not hasattr(np, 'float')
