# The authors' weight-decay exclusions: no decay on norms, biases, position
# embeddings, cls and mask tokens. Shared by every SiameseIM schedule.
paramwise_cfg = dict(
    norm_decay_mult=0.0,
    bias_decay_mult=0.0,
    custom_keys={
        'pos_embed': dict(decay_mult=0.),
        'cls_token': dict(decay_mult=0.),
        'mask_token': dict(decay_mult=0.),
    })
