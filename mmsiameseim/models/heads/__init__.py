from .unigrad_head import UniGradHead

__all__ = ['UniGradHead']
