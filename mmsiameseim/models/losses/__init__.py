from .unigrad_loss import UniGradLoss

__all__ = ['UniGradLoss']
