"""The demo's accuracy chart: every row's kNN, linear probe and few-shot,
and the raw pixels through the same three as hatched grey bars."""
import matplotlib

matplotlib.use('Agg')
from matplotlib.figure import Figure  # noqa: E402

from projects.common.visualization import plot_accuracy_chart  # noqa: E402


def test_the_pixels_are_bars_of_all_three_metrics(tmp_path, monkeypatch):
    drawn = []
    save = Figure.savefig
    monkeypatch.setattr(
        Figure, 'savefig',
        lambda fig, *a, **k: drawn.append(fig) or save(fig, *a, **k))
    results = {
        'siameseim': dict(knn=75.0, linear=76.0, fewshot=67.0),
        'siameseim initial weights': dict(knn=68.0, linear=72.0, fewshot=53.0)
    }
    pixels = dict(knn=81.7, linear=78.8, fewshot=78.9, dim=784)
    path = tmp_path / 'accuracy.png'
    plot_accuracy_chart(results, pixels, str(path))
    assert path.stat().st_size > 10_000
    ax = drawn[0].axes[0]
    hatched = [p.get_height() for p in ax.patches if p.get_hatch() == '//']
    assert hatched == [81.7, 78.8, 78.9]
    assert len(ax.patches) == 9  # three groups of three bars
    labels = [t.get_text() for t in ax.get_legend().get_texts()]
    assert labels == [
        'siameseim', 'siameseim initial weights', 'raw pixels (784 values)'
    ]
    assert not ax.lines  # no kNN-only line any more
