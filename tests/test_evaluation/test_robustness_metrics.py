"""ClassSubsetAccuracy and ImageNetCorruptionError on hand-made scores."""
import pytest
import torch

from mmsiameseim.evaluation import ClassSubsetAccuracy, ImageNetCorruptionError


def sample(scores, label, **meta):
    scores = torch.tensor(scores, dtype=torch.float)
    return dict(
        pred_score=scores,
        pred_label=scores.argmax().view(1),
        gt_label=torch.tensor([label]),
        **meta)


def test_subset_accuracy_takes_the_argmax_over_the_subset_only():
    metric = ClassSubsetAccuracy()
    metric.dataset_meta = dict(class_subset=[1, 3])
    # class 0 wins over all 4 classes but is outside the subset
    metric.process(
        None,
        [
            sample([9, 2, 0, 1], 1),  # subset argmax 1: right
            sample([9, 1, 0, 2], 1),  # subset argmax 3: wrong
            sample([0, 1, 0, 5], 3)
        ])  # right
    res = metric.evaluate(3)
    assert res['subset_accuracy/top1'] == pytest.approx(200 / 3)
    assert res['subset_accuracy/num_classes'] == 2


def test_subset_accuracy_explicit_subset_and_errors():
    metric = ClassSubsetAccuracy(class_subset=[0, 2])
    metric.process(None, [sample([1, 9, 2], 2)])
    assert metric.evaluate(1)['subset_accuracy/top1'] == 100
    with pytest.raises(KeyError, match='class_subset'):
        ClassSubsetAccuracy().process(None, [sample([1, 2], 0)])
    bad = ClassSubsetAccuracy(class_subset=[0, 5])
    with pytest.raises(ValueError, match='out of range'):
        bad.process(None, [sample([1, 2], 0)])


def test_mce_is_the_mean_of_alexnet_normalised_errors():
    alexnet = dict(noise=0.8, blur=0.5)
    metric = ImageNetCorruptionError(alexnet_errors=alexnet, severities=(1, 2))
    right, wrong = [5, 0], [0, 5]
    samples = [
        # noise: severity 1 all right, severity 2 half wrong -> error 0.25
        sample(right, 0, corruption='noise', severity=1),
        sample(right, 0, corruption='noise', severity=2),
        sample(wrong, 0, corruption='noise', severity=2),
        # blur: error 1.0 at severity 1, 0.0 at 2 -> 0.5
        sample(wrong, 0, corruption='blur', severity=1),
        sample(right, 0, corruption='blur', severity=2),
    ]
    metric.process(None, samples)
    res = metric.evaluate(len(samples))
    ce_noise, ce_blur = 0.25 / 0.8, 0.5 / 0.5
    assert res['imagenet_c/CE/noise'] == pytest.approx(100 * ce_noise)
    assert res['imagenet_c/CE/blur'] == pytest.approx(100 * ce_blur)
    assert res['imagenet_c/error/noise'] == pytest.approx(25)
    mce = (ce_noise + ce_blur) / 2
    assert res['imagenet_c/mCE'] == pytest.approx(100 * mce)
    assert res['imagenet_c/1-mCE'] == pytest.approx(100 * (1 - mce))
    assert res['imagenet_c/top1'] == pytest.approx(60)


def test_mce_refuses_incomplete_or_unlabelled_input():
    metric = ImageNetCorruptionError(alexnet_errors=dict(noise=0.8))
    with pytest.raises(KeyError, match="'corruption'"):
        metric.process(None, [sample([1, 0], 0)])
    metric.process(None, [sample([1, 0], 0, corruption='noise', severity=1)])
    with pytest.raises(ValueError, match='no samples'):
        metric.evaluate(1)
    other = ImageNetCorruptionError(
        alexnet_errors=dict(noise=0.8), severities=(1, ))
    other.process(None, [sample([1, 0], 0, corruption='fog', severity=1)])
    with pytest.raises(KeyError, match='fog'):
        other.evaluate(1)
