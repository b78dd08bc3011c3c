"""tools/evaluation/evaluate_folder.py: kNN and few-shot accuracy of a
checkpoint on a labelled folder of real photographs, equal to the evaluation
API's functions on the same embeddings; a damaged file named, not dropped
silently."""
import json
import os

import numpy as np
import pytest
import torch

from mmsiameseim.evaluation import (checkpoint_config, class_balanced_subset,
                                    embed_split, frozen_vit,
                                    logistic_regression_accuracy,
                                    weighted_knn_accuracy)
from tests.helpers import load_tool
from tests.test_datasets.image_folder_photos import make_labelled_photo_folder
from tests.test_tools.test_visualize_features import SIAMESEIM, _checkpoint


@pytest.fixture
def photos(tmp_path):
    root = tmp_path / 'photos'
    make_labelled_photo_folder(str(root), train_per_class=4)
    (root / 'val' / 'grace' / 'broken.jpg').write_bytes(b'not a jpeg')
    return root


def test_knn_and_fewshot_on_a_labelled_photo_folder(photos, tmp_path, capsys):
    ckpt = _checkpoint(tmp_path / 'sim.pth', SIAMESEIM)
    work = tmp_path / 'work'
    tool = load_tool('evaluation/evaluate_folder.py')
    results = tool.main([
        ckpt, '--data-root',
        str(photos), '--work-dir',
        str(work), '--k', '5', '--fraction', '0.5', '--folds', '2'
    ])
    printed = capsys.readouterr().out
    assert results['data']['classes'] == [
        'china', 'flower', 'grace', 'present'
    ]
    assert results['data']['images'] == {'train': 16, 'val': 8}
    assert results['data']['skipped'] == {
        'train': [],
        'val': ['grace/broken.jpg']
    }
    assert 'skipped in val (not readable images): grace/broken.jpg' in \
        printed
    assert results['fewshot']['labelled'] == 8  # half of 4 per class
    with open(work / 'results.json') as f:
        assert json.load(f)['knn'] == results['knn']
    assert '| kNN (k=5, T=0.07) |' in printed
    # the same numbers from the evaluation API on the written embeddings
    net, mean, std = frozen_vit(ckpt, checkpoint_config(ckpt).model)
    split = {}
    for s in ('train', 'val'):
        z = np.load(work / f'{s}.npz')
        again = embed_split(
            net,
            mean,
            std,
            str(photos),
            s,
            str(tmp_path / f'again_{s}.npz'),
            size=32)
        np.testing.assert_allclose(z['features'], again['features'], atol=1e-6)
        split[s] = (torch.from_numpy(again['features']),
                    torch.from_numpy(again['labels']))
    assert split['val'][1].tolist() == [0, 0, 1, 1, 2, 2, 3, 3]
    knn = weighted_knn_accuracy(*split['train'], *split['val'], 5, 0.07)
    assert results['knn'] == knn
    subset = class_balanced_subset(split['train'][1].numpy(), 0.5, 0)
    few = logistic_regression_accuracy(
        split['train'][0][subset],
        split['train'][1][subset],
        *split['val'],
        folds=2)
    assert results['fewshot']['top1'] == pytest.approx(few['top1'])


def test_bad_options_are_refused(tmp_path, capsys):
    tool = load_tool('evaluation/evaluate_folder.py')
    for args in (['--fraction', '0'], ['--fraction',
                                       '2'], ['--k', '0'], ['--folds', '1']):
        with pytest.raises(SystemExit):
            tool.parse_args(['x.pth', '--data-root', 'd', *args])
    with pytest.raises(SystemExit, match='not found'):
        tool.main([str(tmp_path / 'none.pth'), '--data-root', 'd'])
    assert not os.path.exists('work_dirs/evaluate_folder/d')


@pytest.mark.person_matrix(
    'folder_tools', 'own_folder', 'evaluate_folder.py with its defaults on a '
    'small folder (4 training images a class, --fraction 0.01): few-shot '
    'takes 2 images of each class and says so; with a single image of a '
    'class it is skipped with a note naming the class and --no-fewshot, the '
    'kNN score reported and written')
def test_defaults_adapt_to_a_small_folder(photos, tmp_path, capsys):
    ckpt = _checkpoint(tmp_path / 'sim.pth', SIAMESEIM)
    tool = load_tool('evaluation/evaluate_folder.py')
    results = tool.main(
        [ckpt, '--data-root',
         str(photos), '--work-dir',
         str(tmp_path / 'w1')])
    printed = capsys.readouterr().out
    assert results['fewshot']['labelled'] == 8  # 2 of each of 4 classes
    assert '--fraction 0.01 gives fewer than 2 images of 4 of the 4 ' \
        'classes; took 2 of each' in printed
    assert '| few-shot (8 labelled images) |' in printed
    for name in sorted(os.listdir(photos / 'train' / 'grace'))[1:]:
        os.remove(photos / 'train' / 'grace' / name)
    results = tool.main(
        [ckpt, '--data-root',
         str(photos), '--work-dir',
         str(tmp_path / 'w2')])
    printed = capsys.readouterr().out
    assert results['fewshot']['skipped'] is True
    assert 'few-shot skipped' in printed and "['grace']" in printed
    assert '--no-fewshot' in printed
    assert '| kNN (k=13, T=0.07) |' in printed  # all 13 images
    with open(tmp_path / 'w2' / 'results.json') as f:
        assert json.load(f)['knn'] == results['knn']


@pytest.mark.person_matrix(
    'folder_tools', 'own_folder', 'evaluate_folder.py whose few-shot fit '
    'fails after kNN: the kNN score is kept in the results file, and the '
    'error names --fraction and --no-fewshot')
def test_a_failing_fewshot_keeps_the_knn_score(photos, tmp_path, monkeypatch):
    from mmsiameseim.evaluation import labelled_folder

    def refuse(*args, **kwargs):
        raise ValueError('train_feats: no fit')

    monkeypatch.setattr(labelled_folder, 'logistic_regression_accuracy',
                        refuse)
    ckpt = _checkpoint(tmp_path / 'sim.pth', SIAMESEIM)
    with pytest.raises(SystemExit) as stop:
        load_tool('evaluation/evaluate_folder.py').main([
            ckpt, '--data-root',
            str(photos), '--work-dir',
            str(tmp_path / 'w')
        ])
    message = str(stop.value)
    assert 'few-shot failed: train_feats: no fit' in message
    assert 'kNN score is kept in' in message
    assert '--fraction' in message and '--no-fewshot' in message
    with open(tmp_path / 'w' / 'results.json') as f:
        assert 'top1' in json.load(f)['knn']
