_base_ = '../siameseim_vit-base-p16_16xb256-amp-coslr-400e_in1k.py'
# Table 3, row (i): feature target, different views, colour aug,
# blockwise mask, BN in projector & decoder, mae-like loss norm, dense loss  (the default).
