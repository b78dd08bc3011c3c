# Settings of projects/claim/tools/claim_study.py: the paper's claim in
# miniature.
# SiameseIM against mmpretrain's MAE and MoCo-v3 (configs/pretrain/peers:
# the same ViT, images, batch, optimizer and schedule), each pretrained with
# several seeds, every run scored by the demo's frozen-backbone protocol
# (kNN, linear probe, 1 % few-shot) and by the dense probe on mosaics, beside
# the floors (each run's own initial weights; raw pixels and their random
# projection). The phases: search, table, equal time, learning curve
# (projects/claim/plan.py).
_base_ = ['../../../configs/demo/fashionmnist_demo.py']

# keys of pretrain_configs (fashionmnist_demo.py), in table order
methods = ['siameseim', 'mae', 'mocov3']
# Table 1 in miniature: every method x seed at `epochs`, at the setting and
# features chosen by `search`
seeds = [0, 1, 2, 3, 4]
epochs = 1
# The search, on `holdout` held-out training images (FrozenBackboneProtocol
# holdout; never the test images), for every method alike at the table's
# budget (seed `seed`): each lr x weight_decay, scored by held-out kNN and
# few-shot of the method's own feature (`features`), the best by
# `criterion` ('knn' or 'fewshot', top-1) chosen; that run is then scored
# with every `pooled` variant (the table's pooled feature: kNN, linear
# probe, few-shot) and every `token_map` variant, and the best of each by
# the same criterion chosen. The choices are in the results file.
search = dict(
    seed=0,
    holdout=10000,
    lr=[5e-4, 1e-3, 2e-3],
    weight_decay=[0.05, 0.1],
    criterion='knn',
    pooled=[
        dict(feature='cls_token', final_norm=False),
        dict(feature='cls_token', final_norm=True),
        dict(feature='avg_featmap', final_norm=False),
        dict(feature='avg_featmap', final_norm=True)
    ],
    token_map=[
        dict(feature='featmap', final_norm=False),
        dict(feature='featmap', final_norm=True)
    ])
# each method's own feature, the one its grid is scored with: the mean of
# the patch tokens for SiameseIM (the authors' global-pool probe) and MAE,
# the cls token for MoCo-v3 (trained on it)
features = dict(siameseim='avg_featmap', mae='avg_featmap', mocov3='cls_token')
# The equal-wall-time row: every other method trains the table's epochs,
# each over the share of the training images (to 1 %) that makes them take
# `reference`'s median table wall time (from its median wall time per
# table epoch, measured in the study).
equal_time = dict(reference='siameseim')
# The kNN bank of its own (20000 random training images, drawn apart from
# the linear probe's), as every record of the study was scored: the demo's
# shared bank would be another protocol.
evaluation = dict(knn=dict(bank='own', train_samples=20000))
# the learning curve: method -> epochs. One run per method and seed of
# curve_seeds pretrains the longest, its cosine schedule ending there; the
# first seed's checkpoints of every listed epoch are scored, the other
# seeds' at `curve_key_epochs` (kNN, few-shot and the dense probe on the
# pooled feature and the token map; no linear probe), each run also at its
# initial weights (epoch 0)
curve_seeds = [0, 1, 2]
curve_key_epochs = [1, 4, 16]
curve = dict(siameseim=[1, 2, 4, 8, 16], mae=[1, 4, 16], mocov3=[1, 4, 16])
# projects.common.evaluation.PixelFloors: raw pixels and their random
# projection to projection_dim values (None: the token map's width)
pixel_floors = dict(projection_dim=None, projection_seed=0)
# the dense probe: `type` (projects.common.evaluation.DENSE_PROBES, default
# the grid-aligned MosaicDenseProbe) and its arguments. The scattered probe
# (native-size items, random positions and scales, occlusion, per-pixel
# mIoU, boundary IoU and a 50-mosaic low-shot fit) on a canvas of the
# pretraining's 32 px: a frozen probe cannot adapt the position embeddings
# that a larger canvas interpolates (projects/claim/README.md, the dense probe)
dense = dict(
    type='ScatteredMosaicProbe',
    canvas=32,
    items=2,
    scale=(0.75, 1.0),
    train_mosaics=2000,
    test_mosaics=1000,
    lowshot=50)
# no online kNN rounds during these pretrainings (only SiameseIM's config
# has the hook: its rounds would cost it wall time the peers do not pay)
hook_overrides = dict(
    OnlineKNNHook=dict(by_epoch=True, interval=10**6, before_train=False))
