from ..heads.unigrad_head import UniGradLoss

__all__ = ['UniGradLoss']
