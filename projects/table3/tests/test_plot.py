import pytest
from matplotlib.figure import Figure

from projects.table3 import plot_table3

RESULTS = {
    'a': dict(knn=63.3, linear=67.3),
    'i': dict(knn=68.0, linear=70.4),
}
PAPER = {'a': dict(lin=62.3), 'i': dict(lin=76.8)}


@pytest.fixture
def drawn(monkeypatch):
    """The figures plot_table3 saves, kept open for inspection."""
    figures = []
    save = Figure.savefig

    def keep(fig, path, **kwargs):
        figures.append(fig)
        return save(fig, path, **kwargs)

    monkeypatch.setattr(Figure, 'savefig', keep)
    return figures


def dashed(ax):
    return {(line.get_label(), line.get_ydata()[0])
            for line in ax.get_lines() if line.get_linestyle() == '--'}


def test_the_floor_is_drawn_across_the_rows(tmp_path, drawn):
    floor = ('i', dict(knn=65.95, linear=68.35, fewshot=53.25))
    plot_table3(RESULTS, PAPER, str(tmp_path / 't3.png'), 'title', floor)
    ours = drawn[0].axes[0]
    assert dashed(ours) == {
        ('kNN, (i) at its initial weights', 65.95),
        ('linear probe, (i) at its initial weights', 68.35),
    }
    assert (tmp_path / 't3.png').stat().st_size > 0


def test_without_a_floor_no_line_and_a_long_title_is_wrapped(tmp_path, drawn):
    title = 'miniature: ' + 'a long settings sentence ' * 8
    plot_table3(RESULTS, PAPER, str(tmp_path / 't3.png'), title)
    ours = drawn[0].axes[0]
    assert dashed(ours) == set()
    lines = ours.get_title().split('\n')
    assert len(lines) > 1 and max(map(len, lines)) <= 80
    assert ' '.join(lines) == title.strip()
