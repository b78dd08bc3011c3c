# Settings of tools/studies/claim_study.py: the paper's claim in miniature.
# SiameseIM against mmpretrain's MAE and MoCo-v3 (configs/pretrain/peers:
# the same ViT, images, batch, optimizer and schedule), each pretrained with
# several seeds, every run scored by the demo's frozen-backbone protocol
# (kNN, linear probe, 1 % few-shot) and by the dense probe on mosaics, beside
# the floors (each run's own initial weights; raw pixels). Then a learning
# curve: kNN and the dense probe after more epochs.
_base_ = ['fashionmnist_demo.py']

# keys of pretrain_configs (fashionmnist_demo.py), in table order
methods = ['siameseim', 'mae', 'mocov3']
# Table 1 in miniature: every method x seed at `epochs`
seeds = [0, 1, 2]
epochs = 1
# the learning curve: method -> epochs. One run per method (seed
# curve_seed) pretrains the longest, its cosine schedule ending there, and
# its checkpoints of these epochs are scored (kNN, few-shot and the dense
# probe; no linear probe)
curve_seed = 0
curve = dict(siameseim=[1, 2, 4, 8, 16], mae=[1, 4, 16], mocov3=[1, 4, 16])
# The frozen feature of each method (FrozenBackboneProtocol feature), as
# chosen on 10 000 held-out training images (tools/studies/claim_study.py
# --holdout 10000, docs/claim.md): the mean of the patch tokens for
# SiameseIM (the authors' global-pool probe) and MAE, the cls token for
# MoCo-v3 (trained on it).
features = dict(siameseim='avg_featmap', mae='avg_featmap', mocov3='cls_token')
# mmsiameseim_lab.evaluation.MosaicDenseProbe
dense = dict(train_mosaics=4000, test_mosaics=2000, l2=1e-4, threshold=32)
# no online kNN rounds during these pretrainings (only SiameseIM's config
# has the hook: its rounds would cost it wall time the peers do not pay)
hook_overrides = dict(
    OnlineKNNHook=dict(by_epoch=True, interval=10**6, before_train=False))
