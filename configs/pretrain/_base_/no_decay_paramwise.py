# The authors' weight-decay groups (timm's param_groups_weight_decay): no
# decay exactly for parameters with ndim <= 1 (norm weights, biases) or a
# name ending in '.bias'; everything else is decayed, cls token, mask token
# and the decoder position MLP included. Frozen parameters (fixed position
# embeddings, the frozen patch embedding, the momentum target) get no group:
# mmengine's constructor skips requires_grad=False parameters, as timm does.
# Shared by every SiameseIM pretraining schedule.
paramwise_cfg = dict(
    bias_decay_mult=0.0,  # any parameter named 'bias'
    flat_decay_mult=0.0,  # any 1-D parameter (norm weights)
)
