from .curves import plot_accuracy_chart, plot_training_curves, read_scalars
from .two_view_sample import draw_two_view_sample

__all__ = [
    'draw_two_view_sample', 'plot_accuracy_chart', 'plot_training_curves',
    'read_scalars'
]
