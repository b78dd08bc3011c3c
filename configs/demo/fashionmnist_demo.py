# Settings of projects/demo/tools/demo.py: SiameseIM pretraining on
# Fashion-MNIST
# (CPU) and the frozen-backbone evaluation of every run. The report's text is
# written from these numbers. Paths are relative to the repository root.

# `--compare` names (any config of configs/pretrain/mix by file name, or a
# config path, works too)
pretrain_configs = {
    'siameseim':
    'configs/pretrain/'
    'siameseim_vit-tiny-p4_1xb64-bf16-coslr-1e_fashionmnist.py',
    'mae':
    'configs/pretrain/peers/'
    'mae_vit-tiny-p4_1xb64-bf16-coslr-1e_fashionmnist.py',
    'mocov3':
    'configs/pretrain/peers/'
    'mocov3_vit-tiny-p4_1xb64-bf16-coslr-1e_fashionmnist.py',
    # the efficient target option (view b at 16 px: 16 target tokens)
    'siameseim-target16':
    'configs/pretrain/'
    'siameseim-target16_vit-tiny-p4_1xb64-bf16-coslr-1e_fashionmnist.py',
}
mix_dir = 'configs/pretrain/mix'
# Every pretraining: its config's epochs (None) or these; the dicts below
# are merged into each pretraining config and into its hooks of that type.
pretrain_epochs = None
pretrain_overrides = dict()
# the kNN curve starts at the initial weights
hook_overrides = dict(OnlineKNNHook=dict(before_train=True))
# projects.common.evaluation.FrozenBackboneProtocol
evaluation = dict(
    probe_config='configs/benchmarks/mmpretrain/'
    'vit-tiny-p4_linear-probe-10e_fashionmnist.py',
    # bank='probe': the kNN bank is the linear probe's training images,
    # whose unflipped features the cached probe extracts anyway (one
    # encoding of them serves both)
    knn=dict(k=20, temperature=0.07, bank='probe'),
    # engine='cached': the probe trains on frozen features extracted once
    # (both flips of each training image); 'runner': through mmengine's
    # Runner, the backbone again in every epoch
    linear=dict(train_samples=20000, epochs=3, engine='cached'),
    fewshot=dict(fraction=0.01, folds=3),
    test_samples=None)
# Rows beside SiameseIM: its own initial weights (the floor: the same run
# before its first step) and raw pixels through the same kNN, linear probe
# and few-shot (projects.common.evaluation.PixelFloors: no centring, as the
# features). reference_init=True adds a ViT of the same architecture with
# mmpretrain's own initialisation (not this run's start): a third encoding
# of every evaluation image, about a third of the evaluation's time.
reference_init = False
