import torch

from mmsiameseim.evaluation import cached_features


def test_features_are_extracted_once_per_key(tmp_path, capsys):
    calls = []

    def extract():
        calls.append(1)
        return torch.randn(5, 3), torch.arange(5)

    key = dict(checkpoint='a.pth', model=dict(type='VisionTransformer'))
    first = cached_features(str(tmp_path), 'train', key, extract)
    again = cached_features(str(tmp_path), 'train', dict(key), extract)
    assert len(calls) == 1
    torch.testing.assert_close(again[0], first[0])
    assert torch.equal(again[1], first[1])
    out = capsys.readouterr().out
    assert 'cached the train features in' in out
    assert 'loaded cached features of 5 train images from' in out
    # other weights, or no cache folder: extracted again
    cached_features(
        str(tmp_path), 'train', dict(key, checkpoint='b.pth'), extract)
    cached_features(None, 'train', key, extract)
    assert len(calls) == 3
    assert sorted(p.suffix for p in tmp_path.iterdir()) == ['.npz', '.npz']
