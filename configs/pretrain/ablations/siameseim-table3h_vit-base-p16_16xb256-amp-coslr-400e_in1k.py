_base_ = '../siameseim_vit-base-p16_16xb256-amp-coslr-400e_in1k.py'
# Table 3, row (h): feature target, different views, colour aug,
# blockwise mask, BN in projector & decoder, moco-like loss norm, dense loss.
model = dict(
    head=dict(loss=dict(target_norm='moco-like')))
