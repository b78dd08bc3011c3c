# `projects/demo/tools/demo.py --smoke`: every stage of the demo on tiny
# subsets
# (CI); the numbers mean nothing. 256 images = 4 iterations (the warm-up is
# one).
_base_ = ['fashionmnist_demo.py']

pretrain_epochs = 1
pretrain_overrides = dict(
    train_dataloader=dict(batch_size=64, dataset=dict(indices=256)),
    default_hooks=dict(logger=dict(interval=2)))
hook_overrides = dict(
    OnlineKNNHook=dict(
        interval=2,
        bank_dataloader=dict(dataset=dict(indices=200)),
        query_dataloader=dict(dataset=dict(indices=100))))
evaluation = dict(
    knn=dict(train_samples=400),
    linear=dict(train_samples=400, epochs=1),
    fewshot=dict(fraction=0.002),
    test_samples=300)
