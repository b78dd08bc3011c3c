# `projects/claim/tools/claim_study.py --smoke`: every stage of the claim study
# on
# tiny subsets (CI); the numbers mean nothing. Two methods, two seeds (so the
# seed spread and the tests are computed), a search of two learning rates
# and two features of each kind, a two-point curve with two seeds; the
# subsets of fashionmnist_demo_smoke.py.
_base_ = ['claim_study.py']

methods = ['siameseim', 'mae']
seeds = [0, 1]
search = dict(
    _delete_=True,
    seed=0,
    holdout=300,
    lr=[5e-4, 1e-3],
    weight_decay=[0.05],
    criterion='knn',
    pooled=[
        dict(feature='cls_token', final_norm=False),
        dict(feature='avg_featmap', final_norm=False)
    ],
    token_map=[
        dict(feature='featmap', final_norm=False),
        dict(feature='featmap', final_norm=True)
    ])
# mae's equal-time share fixed: the smoke's timings would pick it otherwise,
# and its records (its fingerprint) would change from run to run
equal_time = dict(images_share=dict(mae=0.5))
curve_seeds = [0, 1]
curve_key_epochs = [2]
curve = dict(_delete_=True, siameseim=[1, 2])
dense = dict(train_mosaics=40, test_mosaics=20, lowshot=10, max_iter=20)
pretrain_overrides = dict(
    train_dataloader=dict(batch_size=64, dataset=dict(indices=256)),
    default_hooks=dict(logger=dict(interval=2)))
evaluation = dict(
    knn=dict(train_samples=400),
    linear=dict(train_samples=400, epochs=1),
    fewshot=dict(fraction=0.002),
    test_samples=300)
