"""The demo's published table: its rows and the whole demo's wall time,
split into the pretrainings and the evaluation."""
import pytest

from projects.demo.tables import demo_table


def _results(rows, wall_s=600.0):
    return dict(
        meta={},
        data=dict(
            rows=rows,
            pixels=dict(knn=81.73, linear=78.81, fewshot=78.9, dim=784),
            wall_s=wall_s,
            smoke=False))


def _row(method, pretrain_wall_s=None, images_per_s=None):
    return dict(
        method=method,
        knn=75.0,
        linear=76.0,
        fewshot=67.0,
        pretrain_wall_s=pretrain_wall_s,
        images_per_s=images_per_s)


def test_the_wall_time_is_split_into_pretraining_and_evaluation():
    text = demo_table(
        _results([
            _row('siameseim', 300.0, 200.0),
            _row('mae', 120.0, 400.0),
            _row('siameseim initial weights')
        ]))
    assert '| siameseim | 75.00 | 76.00 | 67.00 | 5.0 min | 200 |' in text
    assert '| siameseim initial weights | 75.00 | 76.00 | 67.00 | - | - |' \
        in text
    # raw pixels through the same three metrics
    assert '| raw pixels (784 values) | 81.73 | 78.81 | 78.90 | - | - |' \
        in text
    assert 'Whole demo: 10.0 min: pretraining 7.0 min, evaluation, ' \
        'report and start-up 3.0 min (180 s).' in text


def test_a_demo_without_pretraining_times_states_the_whole_only():
    text = demo_table(_results([_row('siameseim initial weights')], 90.0))
    assert text.endswith('Whole demo: 1.5 min.')


def test_results_with_the_pixels_kNN_alone_are_refused():
    """Results from before the pixels went through the whole protocol:
    their one mean-centred kNN is not the features' floor."""
    old = _results([_row('siameseim', 300.0, 200.0)])
    del old['data']['pixels']
    old['data']['pixel_knn'] = 84.21
    with pytest.raises(ValueError, match='rerun projects/demo/tools/demo.py'):
        demo_table(old)
