from .stop_on_nonfinite_loss_hook import StopOnNonFiniteLossHook

__all__ = ['StopOnNonFiniteLossHook']
