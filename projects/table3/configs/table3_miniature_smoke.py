# `projects/table3/tools/ablation_table3.py --smoke`: every stage on tiny
# subsets (CI);
# the numbers mean nothing.
_base_ = ['table3_miniature.py']

pretrain_overrides = dict(
    train_dataloader=dict(batch_size=64, dataset=dict(indices=128)),
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
