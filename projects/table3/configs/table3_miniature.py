# Settings of projects/table3/tools/ablation_table3.py: every Table 3 row's
# switches
# (read off its config in configs/pretrain/ablations) applied to the demo's
# SiameseIM config, the same budget and seed for each row, evaluated like the
# demo.
_base_ = ['../../../configs/demo/fashionmnist_demo.py']

row_config_dir = 'configs/pretrain/ablations'
seed = 0
pretrain_epochs = 1
pretrain_overrides = dict(train_dataloader=dict(dataset=dict(indices=16000)))
evaluation = dict(
    knn=dict(train_samples=10000), linear=dict(train_samples=10000, epochs=2))
