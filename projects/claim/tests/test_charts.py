import os

from projects.claim.charts import curve_points, plot_learning_curve


def _curve(method, seed, epochs, knn):
    return dict(
        method=method,
        seed=seed,
        epochs=epochs,
        curve=True,
        knn=knn,
        dense_miou=20.0 + epochs)


def test_the_curve_holds_each_runs_initial_weights_and_the_seed_means():
    records = [_curve('mae', 0, e, 60.0 + e) for e in (0, 1, 4, 16)]
    records += [_curve('mae', 1, e, 62.0 + e) for e in (0, 4)]
    # a table record and another method's are not mae's curve
    records += [
        dict(_curve('mae', 2, 1, 99.0), curve=False),
        _curve('mocov3', 0, 1, 10.0)
    ]
    data = dict(records=records)
    assert curve_points(data, 'mae', 'knn') == [(0, 61.0, 2), (1, 61.0, 1),
                                                (4, 65.0, 2), (16, 76.0, 1)]
    # a score a record does not hold is left out, not read as zero
    assert curve_points(data, 'mae', 'token_map_knn') == []


def test_the_learning_curve_chart_draws_a_partial_curve(tmp_path):
    records = [_curve('mae', 0, e, 60.0 + e) for e in (0, 1, 4, 16)]
    data = dict(
        records=records,
        methods=['siameseim', 'mae', 'mocov3'],
        raw_pixels=dict(knn=81.7, dense_miou=11.3),
        pixel_floors=dict(projection=dict(knn=81.8)))
    path = str(tmp_path / 'curve.png')
    plot_learning_curve(data, path)
    assert os.path.getsize(path) > 10_000
