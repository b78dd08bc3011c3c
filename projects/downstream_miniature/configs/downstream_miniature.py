# Settings of projects/downstream_miniature/tools/downstream_miniature.py:
# Table 2 in miniature.
# Each backbone is fine-tuned by the miniature configs (the shipped ViTDet
# Mask R-CNN and UperNet configs at the demo's size) with each seed, on the
# data of projects/downstream_miniature/tools/make_miniature_downstream.py;
# each
# pretrained backbone is compared with its own initial weights (`baseline`)
# by a Welch t-test over the seeds, Holm-corrected over every comparison.

# task -> the miniature config, the metrics of the table (keys of the
# config's evaluator), for --init-parts the option naming the checkpoint's
# weights that keep the backbone's own initialisation (`keep_init` of
# ViTDetViT's and SiameseIMMAE's init_cfg) and, for --holdout, the options
# that fit on *_fit and evaluate on *_holdout (the schedule is chosen
# there, never on the validation split).
tasks = dict(
    coco=dict(
        config='configs/benchmarks/mmdet/miniature/mask-rcnn_vitdet-tiny-p4-'
        'siameseim-pre_1xb4-300it_miniature-coco-128.py',
        metrics=['coco/bbox_mAP', 'coco/segm_mAP'],
        keep_init='model.backbone.init_cfg.keep_init',
        holdout_options={
            'train_dataloader.dataset.ann_file':
            'annotations/instances_train2017_fit.json',
            'val_dataloader.dataset.ann_file':
            'annotations/instances_train2017_holdout.json',
            'val_dataloader.dataset.data_prefix.img':
            'train2017/',
            'val_evaluator.ann_file':
            'data/miniature/coco/annotations/instances_train2017_holdout.json',
        }),
    lvis=dict(
        config='configs/benchmarks/mmdet/miniature/mask-rcnn_vitdet-tiny-p4-'
        'siameseim-pre_1xb4-300it_miniature-lvis-v1-128.py',
        metrics=[
            'lvis/bbox_AP', 'lvis/bbox_APr', 'lvis/segm_AP', 'lvis/segm_APr'
        ],
        keep_init='model.backbone.init_cfg.keep_init',
        holdout_options={
            'train_dataloader.dataset.dataset.ann_file':
            'annotations/lvis_v1_train_fit.json',
            'val_dataloader.dataset.ann_file':
            'annotations/lvis_v1_train_holdout.json',
            'val_evaluator.ann_file':
            'data/miniature/lvis_v1/annotations/lvis_v1_train_holdout.json',
        }),
    ade20k=dict(
        config='configs/benchmarks/mmseg/miniature/upernet_vit-tiny-p4-'
        'siameseim-pre_1xb8-600it_miniature-ade20k-128x128.py',
        metrics=['mIoU'],
        keep_init='model.backbone.init_cfg.keep_init',
        holdout_options={
            'train_dataloader.dataset.ann_file':
            'fit.txt',
            'val_dataloader.dataset.ann_file':
            'holdout.txt',
            'val_dataloader.dataset.data_prefix.img_path':
            'images/training',
            'val_dataloader.dataset.data_prefix.seg_map_path':
            'annotations/training',
        }),
)

# backbone -> its checkpoint (None: the ViT at its random initialisation),
# or the claim study's run it comes from (`claim_run`: a method of the
# claim study; `initial`: that run's own initial weights, else its last
# epoch), and the backbone it is judged against. The claim study
# (projects/claim/tools/claim_study.py: the demo's SiameseIM and mmpretrain's
# MAE
# and MoCo-v3 at the same budget) names its runs by the lr and weight decay
# its search chose: they are read from its results file (`claim.results`),
# the run of seed `claim.seed` found under `claim.work_dir`.
claim = dict(
    results='projects/claim/results/claim.json',
    work_dir='work_dirs/claim',
    seed=0)
backbones = dict(
    siameseim=dict(claim_run='siameseim', baseline='siameseim_init'),
    siameseim_init=dict(claim_run='siameseim', initial=True),
    mae=dict(claim_run='mae', baseline='mae_init'),
    mae_init=dict(claim_run='mae', initial=True),
    mocov3=dict(claim_run='mocov3', baseline='mocov3_init'),
    mocov3_init=dict(claim_run='mocov3', initial=True),
    random=dict(checkpoint=None),
)
seeds = [0, 1, 2]

# task -> candidate schedules, name -> what each changes in the task's
# config (`iters`: the number of iterations, the schedule's shape kept;
# `batch`: images per iteration; `lr`: the learning rate; {}: the config's
# own; see projects.downstream_miniature.study.schedule_options). Each task's
# candidates are sized so that a fine-tune with its evaluation ends within
# `budget_minutes` on the slowest 2-core machine measured (the per-task
# timings below; search and table must run on the same kind of machine)
# and differ in their learning rate. `--holdout` fine-tunes
# each on `search.backbones` with seed `search.seed` (fit on *_fit, scored
# on *_holdout) and chooses, per task, the best on the task's first metric
# among those that ended within the budget; the table reads that choice
# from `search.results`, the search's results file. Choosing on the
# pretrained backbone favours schedules that suit it rather than its
# initial weights (the table's gains are then upper bounds): the search's
# backbones are listed in its results file.
schedules = dict(
    # 200 iterations at batch 4: on the slowest machine measured (3.2-3.3 s
    # an iteration) about 11 minutes of training, 2 of evaluating the 300
    # held-out images and 3 of the 500 validation images. The config's own
    # 300 iterations took 17-19 minutes with their held-out evaluation
    # there (projects/downstream_miniature/README.md). At lr 1e-3 the detector
    # fits 4 training
    # images in 300 iterations (tests/test_det/test_miniature_finetune.py).
    coco=dict(
        lr5e_4_200it=dict(iters=200, lr=5e-4),
        lr1e_3_200it=dict(iters=200, lr=1e-3),
        lr2e_3_200it=dict(iters=200, lr=2e-3)),
    # LVIS: COCO's model and batch, so COCO's length (at its config's lr
    # 2e-4, at 5e-4 and at 1e-3): 13.4-14.2 minutes each with the held-out
    # evaluation on the slowest machine, and the chosen one 13.7-13.9 in the
    # table with the 500 validation images
    lvis=dict(
        it200=dict(iters=200),
        lr5e_4_200it=dict(iters=200, lr=5e-4),
        lr1e_3_200it=dict(iters=200, lr=1e-3)),
    # ADE20k: 5.8-6.1 s an iteration at batch 8 on the same machine, 75 s to
    # evaluate the 300 held-out images (about 2 minutes for the 500
    # validation images): 100 iterations fit the budget, the shipped 600
    # would take about an hour
    ade20k=dict(
        it100=dict(iters=100),
        lr4e_4_100it=dict(iters=100, lr=4e-4),
        lr1e_3_100it=dict(iters=100, lr=1e-3)),
)
search = dict(
    backbones=['siameseim'],
    seed=0,
    results='projects/downstream_miniature/results/'
    'downstream_miniature_holdout.json')
# a fine-tune (training and its evaluation) should end within this
budget_minutes = 15

# --lengths: how long a fine-tune must be for pretraining to show, beside
# the table and outside its budget; the randomly initialised ViT too, since
# at the table's length it scores level with or above the checkpoints. Each
# of `backbones` is fine-tuned by
# `task`'s config with each of `schedules` (as `schedules` above) and each
# of `seeds`, fit on the training images' *_fit part and scored on their
# *_holdout part (never the validation split), into
# downstream_miniature_lengths.json. 800 iterations at batch 4 see 3 200
# images, a little over one pass over the 2 700 of *_fit: about 45 minutes a
# run with its held-out evaluation on the slowest machine measured (3.2-3.3
# s an iteration), 26-27 minutes on an Intel Xeon with native bf16.
lengths = dict(
    task='coco',
    backbones=['siameseim', 'siameseim_init', 'random'],
    seeds=[0],
    schedules=dict(
        lr5e_4_200it=dict(iters=200, lr=5e-4),
        lr5e_4_800it=dict(iters=800, lr=5e-4)),
)

# --init-parts: which part of a checkpoint's initialisation puts it below
# the randomly initialised ViT on the ADE20k layout (every checkpoint's
# mIoU in the table is under half the random ViT's). Each variant is
# `backbone` with the checkpoint's weights named by `keep_init` (fnmatch
# patterns of the backbone's keys) left at mmseg's own MAE initialisation
# instead (a zero position table; truncated normal 0.02 linear layers; the
# patch projection's kaiming initialisation), fine-tuned with the table's
# schedule for the task (the one its held-out search chose) and each of
# `seeds`, fit on *_fit and scored on *_holdout (never the validation
# split), into downstream_miniature_init_parts.json, work dirs under
# WORK_DIR/init_parts. The two ends are the checkpoint whole and the random
# ViT. Each of the three parts alone lifts the initial weights only part of
# the way, so the position table and the patch projection are also swapped
# together; SiameseIM's pretrained checkpoint with the same parts swapped
# asks whether its pretrained blocks show once those parts are mmseg's:
# a variant's `baseline` (another variant) is what the block tests it
# against (Welch over the seeds, Holm over the block's comparisons). A
# variant's own `seeds` replace the section's: the pair whose two-seed
# difference was a lead (+3.35 mIoU, Holm p 0.19) has five a side.
init_parts = dict(
    task='ade20k',
    seeds=[0, 1],
    schedules=dict(lr1e_3_100it=dict(iters=100, lr=1e-3)),
    variants=dict(
        siameseim_init=dict(backbone='siameseim_init'),
        siameseim_init_own_pos_embed=dict(
            backbone='siameseim_init',
            keep_init=['pos_embed'],
            seeds=[0, 1, 2, 3, 4]),
        siameseim_init_own_patch_embed=dict(
            backbone='siameseim_init', keep_init=['patch_embed.*']),
        siameseim_init_own_blocks=dict(
            backbone='siameseim_init', keep_init=['layers.*']),
        random=dict(backbone='random'),
        siameseim_own_pos_embed=dict(
            backbone='siameseim',
            keep_init=['pos_embed'],
            seeds=[0, 1, 2, 3, 4],
            baseline='siameseim_init_own_pos_embed'),
        siameseim_init_own_pos_patch=dict(
            backbone='siameseim_init',
            keep_init=['pos_embed', 'patch_embed.*']),
        siameseim_own_pos_patch=dict(
            backbone='siameseim',
            keep_init=['pos_embed', 'patch_embed.*'],
            baseline='siameseim_init_own_pos_patch'),
    ),
)

# --init-parts init_parts_coco: the same question on the COCO layout, into
# downstream_miniature_init_parts_coco.json (work dirs under
# WORK_DIR/init_parts_coco). On ADE20k, leaving the position table at the
# model's own initialisation let SiameseIM's pretraining show (+3.9 mIoU
# over its initial weights alike, Holm p 0.004); ViTDetViT's own table is a
# truncated normal of standard deviation 0.02, not mmseg's zero. The whole
# checkpoints (pretrained against initial weights) and the same pair with
# `pos_embed` left at ViTDetViT's own initialisation, fine-tuned with the
# schedule that COCO's held-out search chose, three seeds each (planned
# before any run; 7-9 minutes a run on an Intel Xeon with native bf16).
init_parts_coco = dict(
    task='coco',
    seeds=[0, 1, 2],
    schedules=dict(lr5e_4_200it=dict(iters=200, lr=5e-4)),
    variants=dict(
        siameseim_init_own_pos_embed=dict(
            backbone='siameseim_init', keep_init=['pos_embed']),
        siameseim_own_pos_embed=dict(
            backbone='siameseim',
            keep_init=['pos_embed'],
            baseline='siameseim_init_own_pos_embed'),
        siameseim_init=dict(backbone='siameseim_init'),
        siameseim=dict(backbone='siameseim', baseline='siameseim_init'),
    ),
)

# --smoke, the study's smoke fingerprint (projects/common/fingerprints.py):
# these backbones and seeds fine-tuned by every task's config for `iters`
# iterations with `options`, on miniature datasets of `num_train` /
# `num_val` images built in the work dir (300 is about the fewest training
# images that hold LVIS's three frequency groups), without a search.
smoke = dict(
    backbones=['random'],
    seeds=[0],
    iters=2,
    num_train=300,
    num_val=8,
    options=['default_hooks.logger.interval=1'])
