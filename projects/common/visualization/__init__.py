from projects.common.visualization.curves import (plot_accuracy_chart,
                                                  plot_training_curves,
                                                  read_scalar_records,
                                                  read_scalars)
from projects.common.visualization.knn_curve import (plot_knn_curve,
                                                     read_knn_scalars)
from projects.common.visualization.two_view_sample import draw_two_view_sample

__all__ = [
    'draw_two_view_sample', 'plot_accuracy_chart', 'plot_training_curves',
    'read_scalar_records', 'read_scalars', 'plot_knn_curve', 'read_knn_scalars'
]
