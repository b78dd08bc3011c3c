_base_ = [
    '_base_/siameseim_vit-base-p16.py',
    '_base_/imagenet_two_view_masked.py',
    '_base_/adamw_coslr_400e.py',
    '_base_/runtime.py',
]

# Online kNN and an online linear probe during pretraining (OnlineKNNHook,
# OnlineLinearProbeHook), off by default: uncomment to log weighted kNN
# top-1/top-5 of the target encoder every 5000 iterations (about 20 epochs at
# batch 4096), with the 1 % ImageNet subset (12.8k images, SimCLR's
# 1percent.txt) as the bank and 10k validation images as queries; and a
# linear classifier on its detached features, one SGD step on 256 images of
# the 1 % subset every 10 iterations, scored on the same 10k images. Every
# rank encodes its share; a kNN round is cut at 5 minutes. The list repeats
# _base_/runtime.py's hooks, since it replaces theirs.
# knn_pipeline = [
#     dict(type='StrictLoadImageFromFile'),
#     dict(type='ResizeEdge', scale=256, edge='short', backend='pillow',
#          interpolation='bilinear'),
#     dict(type='CenterCrop', crop_size=224),
#     dict(type='PackInputs'),
# ]
# knn_loader = dict(batch_size=256, num_workers=8,
#                   sampler=dict(type='DefaultSampler', shuffle=False),
#                   collate_fn=dict(type='default_collate'))
# custom_hooks = [
#     dict(type='StopOnNonFiniteLossHook', interval=50),
#     dict(type='CheckpointHook', by_epoch=False, interval=500,
#          save_last=False, max_keep_ckpts=2),
#     dict(type='OnlineKNNHook', interval=5000, encoder='target',
#          max_seconds=300, precision='float16',
#          bank_dataloader=dict(
#              knn_loader,
#              dataset=dict(type='ImageNetSubset', data_root='data/imagenet/',
#                           data_prefix='train',
#                           subset_file='data/imagenet/1percent.txt',
#                           pipeline=knn_pipeline)),
#          query_dataloader=dict(
#              knn_loader,
#              dataset=dict(type='ImageNet', data_root='data/imagenet/',
#                           split='val', indices=10000,
#                           pipeline=knn_pipeline))),
#     dict(type='OnlineLinearProbeHook', train_interval=10, val_interval=5000,
#          encoder='target', precision='float16', num_classes=1000,
#          train_dataloader=dict(
#              knn_loader,
#              sampler=dict(type='DefaultSampler', shuffle=True),
#              dataset=dict(type='ImageNetSubset', data_root='data/imagenet/',
#                           data_prefix='train',
#                           subset_file='data/imagenet/1percent.txt',
#                           pipeline=knn_pipeline)),
#          val_dataloader=dict(
#              knn_loader,
#              dataset=dict(type='ImageNet', data_root='data/imagenet/',
#                           split='val', indices=10000,
#                           pipeline=knn_pipeline))),
# ]
