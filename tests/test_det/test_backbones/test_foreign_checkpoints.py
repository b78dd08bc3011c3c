"""A fine-tuned checkpoint of another downstream backbone as the pretraining
one: the tensors the backbone has no place for are named at WARNING, and
refused when dropping them changes what the backbone computes."""
import pytest
import torch

from tests.helpers import logged_warnings
from tests.test_det.helpers import tiny_vit


def _seg_mae(**kwargs):
    """mmseg's MAE backbone (SiameseIMMAE) of tiny_vit's sizes."""
    from mmseg.registry import MODELS

    import mmsiameseim.seg  # noqa: F401
    cfg = dict(
        type='SiameseIMMAE',
        img_size=(32, 32),
        patch_size=4,
        embed_dims=32,
        num_layers=4,
        num_heads=4,
        mlp_ratio=2,
        init_values=1.0,
        out_indices=[3],
        norm_cfg=dict(type='LN', eps=1e-6))
    cfg.update(kwargs)
    return MODELS.build(cfg)


def _save(backbone, path, **changes):
    torch.manual_seed(0)
    state = {
        'backbone.' + k: v.clone()
        for k, v in backbone.state_dict().items()
    }
    state.update(changes)
    state['decode_head.conv_seg.weight'] = torch.zeros(3, 32, 1, 1)
    torch.save({'meta': {}, 'state_dict': state}, path)
    return str(path)


def _vitdet(path, **init):
    return tiny_vit(
        img_size=32,
        init_cfg=dict(
            type='Pretrained', checkpoint=path, prefix='backbone.', **init))


def test_an_mmseg_checkpoint_at_layer_scale_one_loads_naming_what_it_drops(
        tmp_path):
    path = _save(_seg_mae(), tmp_path / 'upernet.pth')
    vit = _vitdet(path)
    with logged_warnings() as warned:
        vit.init_weights()
    assert len(warned) == 1
    assert 'ViTDetViT drops' in warned[0] and 'cls_token' in warned[0]
    assert 'layers.0.gamma_1' in warned[0]
    assert 'another function' not in warned[0]


@pytest.mark.person_matrix(
    'detection', 'other_checkpoint', 'an mmseg UperNet checkpoint (layer '
    'scale not 1) is refused by ViTDet naming the tensors it would drop and '
    'allow_dropped=True; with it, it loads and the WARNING says the '
    'backbone computes another function')
def test_an_mmseg_fine_tune_with_layer_scale_is_refused_unless_allowed(
        tmp_path):
    gamma = torch.full((32, ), 0.3)
    path = _save(_seg_mae(), tmp_path / 'upernet.pth',
                 **{'backbone.layers.2.gamma_2': gamma})
    vit = _vitdet(path)
    with pytest.raises(ValueError) as e:
        vit.init_weights()
    text = str(e.value)
    assert path in text and 'refusing to initialise ViTDetViT' in text
    assert 'layers.2.gamma_2 (layer scale, not all 1 (0.3 to 0.3))' in text
    assert 'layers.0.gamma_1' not in text  # at 1: harmless
    assert 'model.backbone.init_cfg.allow_dropped=True' in text

    vit = _vitdet(path, allow_dropped=True)
    with logged_warnings() as warned:
        vit.init_weights()
    assert 'the backbone computes another function' in warned[0]
    assert 'layers.2.gamma_2' in warned[0]


@pytest.mark.person_matrix(
    'segmentation', 'other_checkpoint', 'a ViTDet checkpoint (trained '
    'relative position tables) is refused by the UperNet backbone, naming '
    'the tables it would drop')
def test_a_vitdet_fine_tune_is_refused_by_the_mmseg_backbone(tmp_path):
    vit = tiny_vit(img_size=32)
    with torch.no_grad():
        vit.layers[1].attn.rel_pos_h.normal_()
    state = {'backbone.' + k: v for k, v in vit.state_dict().items()}
    state['backbone.cls_token'] = torch.zeros(1, 1, 32)
    path = str(tmp_path / 'vitdet.pth')
    torch.save({'meta': {}, 'state_dict': state}, path)
    mae = _seg_mae(
        init_cfg=dict(type='Pretrained', checkpoint=path, prefix='backbone.'))
    with pytest.raises(ValueError) as e:
        mae.init_weights()
    text = str(e.value)
    assert 'refusing to initialise mmseg MAE' in text
    assert 'layers.1.attn.rel_pos_h (relative position table, not zero' in \
        text
    assert 'layers.0.attn.rel_pos_h' not in text  # zero: harmless
