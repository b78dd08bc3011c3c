"""The detection configs at the demo's size (miniature/ and smoke/: patch
4, not 16) tell the anchors and the RoI extractors the strides SimpleFPN's
levels really have, image size / level size.

With ViT-B/16's strides (4 to 64) kept, anchors would lie 4x off their features
and RoIs be read from the wrong place, silently.
"""
import glob
import os

import pytest
import torch

from tests.test_det.helpers import ROOT, build_detector

CONFIGS = sorted(
    p for folder in ('miniature', 'smoke') for p in glob.glob(
        os.path.join(ROOT, 'configs', 'benchmarks', 'mmdet', folder, '*.py')))


@pytest.mark.parametrize(
    'config', CONFIGS, ids=[os.path.basename(c) for c in CONFIGS])
def test_anchor_and_roi_strides_are_the_pyramids(config):
    cfg, model = build_detector(config)
    size = cfg.model.backbone.img_size
    with torch.no_grad():
        levels = model.neck(model.backbone(torch.zeros(1, 3, size, size)))
    strides = [size // level.shape[-1] for level in levels]
    assert strides == [1, 2, 4, 8, 16]
    assert [s[0] for s in model.rpn_head.prior_generator.strides] == strides
    for extractor in (model.roi_head.bbox_roi_extractor,
                      model.roi_head.mask_roi_extractor):
        assert list(extractor.featmap_strides) == strides[:4]
