import pytest
import torch
from mmpretrain.registry import MODELS

import mmsiameseim  # noqa: F401
from mmsiameseim.models.utils import batch_geometry
from tests.helpers import random_batch, tiny_siameseim_cfg


def _model(**kw):
    torch.manual_seed(0)
    model = MODELS.build(tiny_siameseim_cfg(**kw))
    model.init_weights()
    return model.train()


def test_loss_and_gradients():
    model = _model()
    views, samples = random_batch(4)
    out = model.loss(views, samples)
    assert set(out) == {'loss', 'momentum', 'alignment', 'correlation'}
    assert torch.isfinite(out['loss'])
    # the UniGrad terms, logged beside the loss, sum to it
    assert not out['alignment'].requires_grad
    torch.testing.assert_close(out['alignment'] + out['correlation'],
                               out['loss'].detach())
    assert 0 < out['correlation'] < out['alignment']
    out['loss'].backward()
    assert model.backbone.patch_embed.projection.weight.grad is None
    assert model.backbone.layers[0].attn.qkv.weight.grad is not None
    assert model.neck.pos_mlp.weight.grad is not None
    assert all(p.grad is None for p in model.target.parameters())


def test_target_starts_as_copy_and_moves_with_momentum():
    model = _model()
    online = dict(model.online().named_parameters())
    for name, p in model.target.module.named_parameters():
        torch.testing.assert_close(p, online[name])
    views, samples = random_batch(4)
    with torch.no_grad():
        model.backbone.layers[0].attn.qkv.weight.add_(1.0)
    before = model.target.module['backbone'].layers[0].attn.qkv.weight.clone()
    model.loss(views, samples, update_target=False)
    torch.testing.assert_close(
        model.target.module['backbone'].layers[0].attn.qkv.weight, before)
    m = model.target.current_momentum()
    model.loss(views, samples)
    torch.testing.assert_close(
        model.target.module['backbone'].layers[0].attn.qkv.weight,
        before + m * 1.0)


def test_cosine_momentum_schedule_from_message_hub():
    from mmengine.logging import MessageHub
    model = _model()
    hub = MessageHub.get_instance('test_cosine_momentum')
    hub.update_info('max_iters', 100)
    for it, expected in [(0, 0.005), (50, 0.0025), (100, 0.0)]:
        hub.update_info('iter', it)
        assert model.target.current_momentum() == pytest.approx(expected)
    # leave no schedule behind for other tests
    MessageHub.get_instance('after_test_cosine_momentum')


def test_missing_geometry_is_named():
    model = _model()
    views, samples = random_batch(2)
    del samples[1].crop_boxes
    with pytest.raises(KeyError, match="data sample 1 has no 'crop_boxes'"):
        model.loss(views, samples)


@pytest.mark.parametrize('counts', [(11, 9, 10, 10), (12, 10, 10, 8)])
def test_unequal_mask_counts_are_refused_naming_the_counts(counts):
    """(11, 9, 10, 10) has the total of four 10s: a reshape cannot notice,
    tokens would mix across samples."""
    model = _model()
    views, samples = random_batch(4)
    for sample, count in zip(samples, counts):
        mask = torch.zeros(16, dtype=torch.bool)
        mask[:count] = True
        sample.set_mask(mask.view(4, 4))
    with pytest.raises(ValueError) as err:
        model.loss(views, samples)
    assert str(list(counts)) in str(err.value)
    assert 'fixed_count=True' in str(err.value)


def test_backbone_keys_load_into_plain_vit():
    from mmpretrain.models import VisionTransformer
    model = _model()
    vit = VisionTransformer(
        arch=dict(
            embed_dims=32, num_layers=2, num_heads=2, feedforward_channels=64),
        img_size=32,
        patch_size=8,
        final_norm=False)
    state = {
        k[len('backbone.'):]: v
        for k, v in model.state_dict().items() if k.startswith('backbone.')
    }
    result = vit.load_state_dict(state, strict=True)
    assert not result.missing_keys and not result.unexpected_keys


def test_layernorm_ablation_and_extract_feat():
    model = _model(norm_cfg=dict(type='LN', eps=1e-6))
    views, samples = random_batch(2)
    assert torch.isfinite(model.loss(views, samples)['loss'])
    feats = model.extract_feat(views)
    assert feats.shape == (2, 17, 32)


def test_bf16_autocast_step_keeps_batchnorm_and_loss_in_fp32():
    model = _model()
    views, samples = random_batch(4)
    dtypes = []
    model.neck.projector.blocks[0].ln1.register_forward_hook(
        lambda m, i, o: dtypes.append(o.dtype))
    with torch.autocast('cpu', dtype=torch.bfloat16):
        out = model.loss(views, samples)
    assert out['loss'].dtype == torch.float32
    assert torch.isfinite(out['loss'])
    assert dtypes and all(d == torch.float32 for d in dtypes)
    out['loss'].backward()


def test_autocast_optim_wrapper_trains_in_bf16():
    from mmpretrain.registry import OPTIM_WRAPPERS
    model = _model()
    wrapper = OPTIM_WRAPPERS.build(
        dict(
            type='AutocastOptimWrapper',
            dtype='bfloat16',
            optimizer=torch.optim.AdamW(
                [p for p in model.parameters() if p.requires_grad])))
    seen = []
    model.backbone.layers[0].attn.qkv.register_forward_hook(
        lambda m, i, o: seen.append(o.dtype))
    views, samples = random_batch(4)
    with wrapper.optim_context(model):
        loss = model.loss(views, samples)['loss']
    wrapper.update_params(loss)
    assert seen[0] == torch.bfloat16


def test_patchify_follows_the_backbone_patch_order():
    from mmsiameseim.models.algorithms.siameseim import patchify
    img = torch.arange(2 * 8 * 12, dtype=torch.float32).reshape(1, 2, 8, 12)
    patches = patchify(img, 4)  # 2 x 3 grid of 4x4 patches, 2 channels
    assert patches.shape == (1, 6, 32)
    # patch (row 1, col 2) is the 5th in row-major order; its first pixel
    # (channel 0, y 4, x 8) and its channel-1 pixel come last in the vector
    assert patches[0, 5, 0] == img[0, 0, 4, 8]
    assert patches[0, 5, 1] == img[0, 1, 4, 8]
    assert patches[0, 5, -1] == img[0, 1, 7, 11]


def test_pixel_target_has_no_target_branch_and_predicts_view_b_pixels():
    from mmsiameseim.models.algorithms.siameseim import patchify
    cfg = tiny_siameseim_cfg(
        out_channels=8 * 8 * 3, norm_cfg=dict(type='LN', eps=1e-6))
    cfg['target_type'] = 'pixel'
    torch.manual_seed(0)
    model = MODELS.build(cfg)
    model.init_weights()
    assert model.target is None
    views, samples = random_batch(4)
    out = model.loss(views, samples)
    assert set(out) == {'loss', 'alignment', 'correlation'}
    geo = batch_geometry(samples, model.patch_grid, views[0].device)
    pred = model.neck(
        model.backbone(views[0], geo.mask), geo.mask, geo.offsets)
    torch.testing.assert_close(out['loss'],
                               model.head.loss(pred, patchify(views[1], 8)))
    out['loss'].backward()
    assert model.neck.pred.weight.grad is not None
    with pytest.raises(ValueError, match="'feature' or 'pixel'"):
        MODELS.build(dict(tiny_siameseim_cfg(), target_type='pixels'))


def _padded_fashion_like_batch(n=8, seed=0):
    """Samples of the Fashion-MNIST layout: a 28 x 28 image (ori_shape as
    loaded) padded to 32 x 32 before the crop, packed as the configs do."""
    import numpy as np
    from mmcv.transforms import Compose
    from mmpretrain.registry import TRANSFORMS
    pipeline = Compose([
        TRANSFORMS.build(t) for t in [
            dict(type='Pad', size=(32, 32), pad_val=0),
            dict(type='TwoViewRandomResizedCrop', size=32, scale=(0.25, 1.0)),
            dict(
                type='BlockwiseMaskGenerator',
                input_size=4,
                num_masking_patches=6,
                min_num_patches=2),
            dict(
                type='PackInputs',
                algorithm_keys=['crop_boxes', 'flips', 'crop_source_shape'],
                meta_keys=['ori_shape', 'img_shape']),
        ]
    ])
    np.random.seed(seed)
    rng = np.random.default_rng(seed)
    return [
        pipeline(
            dict(
                img=rng.integers(0, 255, (28, 28, 3), np.uint8),
                ori_shape=(28, 28)))['data_samples'] for _ in range(n)
    ]


def test_a_pad_before_the_crop_leaves_ori_shape_and_the_geometry_right():
    """The crop's frame (the padded 32 x 32 image) travels as
    crop_source_shape; ori_shape stays the loaded 28 x 28 and is not used
    for the geometry (the horizontal offset of a mirrored pair depends on
    the source width)."""
    from mmsiameseim.models.utils import crop_pair_offsets
    model = _model()
    samples = _padded_fashion_like_batch()
    assert all(s.ori_shape == (28, 28) for s in samples)
    assert all(s.crop_source_shape == (32, 32) for s in samples)
    offsets = batch_geometry(samples, model.patch_grid,
                             torch.device('cpu')).offsets
    boxes = torch.stack([torch.as_tensor(s.crop_boxes) for s in samples])
    flips = torch.stack([torch.as_tensor(s.flips) for s in samples])
    want = crop_pair_offsets(boxes, flips, torch.full((len(samples), ), 32.))
    assert bool(want.relative_flip.any())  # the width matters in the batch
    for got, ref in zip(offsets, want):
        torch.testing.assert_close(got, ref)


def test_ori_shape_is_the_fallback_and_a_sample_with_neither_is_refused():
    model = _model()
    views, samples = random_batch(4)  # crop_source_shape (64, 64)
    own_key = batch_geometry(samples, model.patch_grid,
                             torch.device('cpu')).offsets
    for s in samples:
        s.set_metainfo(dict(ori_shape=(7, 7)))  # ignored beside it
    for a, b in zip(
            own_key,
            batch_geometry(samples, model.patch_grid,
                           torch.device('cpu')).offsets):
        torch.testing.assert_close(a, b)
    for s in samples:  # as the contract checks and hand-made samples
        del s.crop_source_shape
        s.set_metainfo(dict(ori_shape=(64, 64)))
    fallback = batch_geometry(samples, model.patch_grid,
                              torch.device('cpu')).offsets
    for a, b in zip(own_key, fallback):
        torch.testing.assert_close(a, b)
    del samples[2].ori_shape
    with pytest.raises(
            KeyError,
            match='data sample 2 has neither '
            "'crop_source_shape' nor an 'ori_shape'"):
        model.loss(views, samples)


def test_a_box_outside_its_source_image_is_refused():
    """e.g. ori_shape of an image padded before the crop, 28 x 28 for
    boxes in the 32 x 32 padded frame."""
    model = _model()
    samples = _padded_fashion_like_batch()
    for s in samples:
        del s.crop_source_shape
    with pytest.raises(
            ValueError,
            match=r'does not fit in the 28x28 source '
            r"image given by 'ori_shape'"):
        batch_geometry(samples, model.patch_grid, torch.device('cpu'))


def test_a_mask_off_the_neck_grid_is_refused_naming_the_options():
    model = _model()  # 4 x 4 grid
    views, samples = random_batch(4, grid=5, num_mask=10)
    with pytest.raises(
            ValueError,
            match=r'masks are 5x5 patches but the '
            r"neck's grid_size is 4: give the mask generator's "
            r'input_size'):
        model.loss(views, samples)


def test_check_train_pipeline_names_each_option_off_the_grid():
    from mmpretrain.registry import TRANSFORMS
    model = _model()  # 32 px, patch 8: a 4 x 4 grid

    def build(crop=None, mask=None):
        crop, mask = crop or {}, mask or {}
        return [
            TRANSFORMS.build(t) for t in [
                dict(dict(type='TwoViewRandomResizedCrop', size=32), **crop),
                dict(
                    dict(
                        type='BlockwiseMaskGenerator',
                        input_size=4,
                        num_masking_patches=6,
                        min_num_patches=2), **mask),
                dict(type='PackInputs')
            ]
        ]

    model.check_train_pipeline(build())
    with pytest.raises(
            ValueError, match=r'BlockwiseMaskGenerator '
            r'input_size=\(5, 5\)'):
        model.check_train_pipeline(build(mask=dict(input_size=5)))
    with pytest.raises(
            ValueError,
            match=r'TwoViewRandomResizedCrop '
            r'size=\(40, 40\) is not the 4x4 patch grid'):
        model.check_train_pipeline(build(crop=dict(size=40)))
    with pytest.raises(ValueError, match=r'target_size=\(16, 16\)'):
        model.check_train_pipeline(build(crop=dict(target_size=16)))
    low_res = _model(target_grid_size=2)
    low_res.check_train_pipeline(build(crop=dict(target_size=16)))


@pytest.mark.parametrize('option, value, message', [
    ('predictor_depth', 0, r'neck.predictor_depth=0, must be an int >= 1 '
     r'\(with no predictor block the encoder gets no gradient\)'),
    ('predictor_depth', -1, 'neck.predictor_depth=-1, must be an int >= 1'),
    ('projector_depth', -1, 'neck.projector_depth=-1, must be an int >= 0'),
    ('num_heads', 0, 'neck.num_heads=0, must be an int >= 1'),
    ('num_heads', 5, 'neck.embed_dims=.* is not divisible by '
     'neck.num_heads=5'),
    ('mlp_ratio', 0, 'neck.mlp_ratio=0, must be > 0'),
])
def test_neck_settings_that_break_learning_are_refused_when_built(
        option, value, message):
    with pytest.raises(ValueError, match=message):
        MODELS.build(tiny_siameseim_cfg(**{option: value}))


def test_a_projector_without_blocks_still_trains_the_encoder():
    model = _model(projector_depth=0)
    views, samples = random_batch(4)
    model.loss(views, samples)['loss'].backward()
    assert model.backbone.layers[0].attn.qkv.weight.grad.abs().sum() > 0


@pytest.mark.parametrize('option, value, interval', [
    ('end_momentum', 2.0, r'\[0, 1\)'),
    ('end_momentum', 1.0, r'\[0, 1\)'),
    ('end_momentum', -0.1, r'\[0, 1\)'),
    ('base_momentum', 0.0, r'\(0, 1\)'),
    ('base_momentum', 1.5, r'\(0, 1\)'),
])
def test_momentum_outside_its_range_is_refused_when_built(
        option, value, interval):
    cfg = tiny_siameseim_cfg()
    cfg[option] = value
    with pytest.raises(
            ValueError, match=f'model.{option}={value} must be in '
            f'{interval}'):
        MODELS.build(cfg)
