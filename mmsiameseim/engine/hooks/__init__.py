from .atomic_checkpoint_hook import AtomicCheckpointHook
from .online_knn_hook import OnlineKNNHook
from .preemption_checkpoint_hook import PreemptionCheckpointHook
from .save_initial_weights_hook import SaveInitialWeightsHook
from .stop_on_nonfinite_loss_hook import StopOnNonFiniteLossHook

__all__ = [
    'AtomicCheckpointHook', 'OnlineKNNHook', 'PreemptionCheckpointHook',
    'SaveInitialWeightsHook', 'StopOnNonFiniteLossHook'
]
