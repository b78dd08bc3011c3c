# Mask R-CNN with the ViTDet backbone (Li et al., 2022): plain ViT-B/16,
# window attention (14) with global attention in blocks 2, 5, 8, 11,
# decomposed relative position bias, stochastic depth 0.1; SimpleFPN, and
# RPN / RoI heads with LayerNorm as in ViTDet (2-conv RPN, 4conv1fc box head,
# LN in the box and mask head convolutions).
_base_ = 'mmdet::_base_/models/mask-rcnn_r50_fpn.py'

custom_imports = dict(imports=['mmsiameseim.det'], allow_failed_imports=False)

norm_cfg = dict(type='LN2d', eps=1e-6, requires_grad=True)

model = dict(
    data_preprocessor=dict(
        # LSJ: every training batch is padded to exactly 1024 x 1024.
        batch_augments=[
            dict(type='BatchFixedSizePad', size=(1024, 1024), pad_mask=True)
        ]),
    backbone=dict(
        _delete_=True,
        type='ViTDetViT',
        arch=dict(
            embed_dims=768,
            num_layers=12,
            num_heads=12,
            feedforward_channels=3072),
        img_size=1024,
        patch_size=16,
        in_channels=3,
        pretrain_img_size=224,
        window_size=14,
        global_attn_indexes=(2, 5, 8, 11),
        drop_path_rate=0.1,
        init_cfg=dict(type='Pretrained', checkpoint='', prefix='backbone.')),
    neck=dict(
        _delete_=True,
        type='SimpleFPN',
        backbone_channel=768,
        in_channels=[192, 384, 768, 768],
        out_channels=256,
        num_outs=5,
        norm_cfg=norm_cfg),
    rpn_head=dict(num_convs=2),
    roi_head=dict(
        bbox_head=dict(
            type='Shared4Conv1FCBBoxHead',
            conv_out_channels=256,
            norm_cfg=norm_cfg),
        mask_head=dict(norm_cfg=norm_cfg)))
