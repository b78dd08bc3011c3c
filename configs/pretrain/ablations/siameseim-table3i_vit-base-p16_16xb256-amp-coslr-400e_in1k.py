_base_ = '../siameseim_vit-base-p16_16xb256-amp-coslr-400e_in1k.py'
# Table 3, row (i): the override (mmsiameseim_lab.table3.apply_table3_row
# applies it to this base and to the Fashion-MNIST miniature); the
# settings below are what it sets here, written out for `mim train`
# (tests/test_configs/test_table3_ablations.py checks they agree).
table3_row = dict(
    target='feature',
    views='different',
    colour=True,
    mask='blockwise',
    norm='BN',
    loss_norm='mae-like',
    loss='dense')
# the default config: the override changes nothing here
