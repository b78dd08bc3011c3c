from .atomic_checkpoint_hook import AtomicCheckpointHook
from .class_count_check_hook import ClassCountCheckHook
from .frozen_feature_hook import FrozenFeatureHook
from .online_knn_hook import OnlineKNNHook
from .online_linear_probe_hook import OnlineLinearProbeHook
from .preemption_checkpoint_hook import PreemptionCheckpointHook
from .save_initial_weights_hook import SaveInitialWeightsHook
from .stop_on_nonfinite_loss_hook import StopOnNonFiniteLossHook

__all__ = [
    'AtomicCheckpointHook', 'ClassCountCheckHook', 'FrozenFeatureHook',
    'OnlineKNNHook', 'OnlineLinearProbeHook', 'PreemptionCheckpointHook',
    'SaveInitialWeightsHook', 'StopOnNonFiniteLossHook'
]
