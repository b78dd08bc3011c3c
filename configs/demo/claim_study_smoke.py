# `tools/studies/claim_study.py --smoke`: every stage of the claim study on
# tiny subsets (CI); the numbers mean nothing. Two methods, two seeds (so the
# seed spread is computed), a two-point curve; the subsets of
# fashionmnist_demo_smoke.py.
_base_ = ['claim_study.py']

methods = ['siameseim', 'mae']
seeds = [0, 1]
curve = dict(_delete_=True, siameseim=[1, 2])
dense = dict(train_mosaics=40, test_mosaics=20, max_iter=20)
pretrain_overrides = dict(
    train_dataloader=dict(batch_size=64, dataset=dict(indices=256)),
    default_hooks=dict(logger=dict(interval=2)))
evaluation = dict(
    knn=dict(train_samples=400),
    linear=dict(train_samples=400, epochs=1),
    fewshot=dict(fraction=0.002),
    test_samples=300)
