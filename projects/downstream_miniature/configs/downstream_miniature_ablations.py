# Settings of
# projects/downstream_miniature/tools/collect_downstream_ablations.py: the
# held-out A/B runs behind two choices of the miniature detection configs
# (the norm in SimpleFPN; the level a RoI is read from), gathered into
# projects/downstream_miniature/results/downstream_miniature_ablations.json.
#
# Every run is one candidate of
# projects/downstream_miniature/tools/downstream_miniature.py
# --holdout (lr 1e-3, 300 iterations at batch 4, with LSJ), from the claim
# study's SiameseIM seed-0 pretraining, fit on the training images' *_fit part
# and scored on their *_holdout part, never on the validation split. A run is
# named by its study results file (`results`) and record (`key`); its folder
# (the results file's folder / key) holds the config its Runner dumped and
# its logs, from which its metrics and what it changed are read.
study = 'projects/downstream_miniature/configs/downstream_miniature.py'
task = 'coco'
metrics = [
    'coco/bbox_mAP', 'coco/bbox_mAP_50', 'coco/segm_mAP', 'coco/segm_mAP_50'
]
_key = 'coco/lr1e_3_300it/siameseim/seed{}'
_gn_seed0 = dict(
    results='work_dirs/dm_gn/downstream_miniature_holdout.json',
    key=_key.format(0))
_gn_seed1 = dict(
    results='work_dirs/dm_fs56_s1/downstream_miniature_holdout.json',
    key=_key.format(1))

# ablation -> its runs (label: what the table calls the row) and the run the
# others are compared with (`reference`)
ablations = dict(
    simplefpn_norm=dict(
        reference='gn_seed0',
        runs=dict(
            ln2d_seed0=dict(
                label="LN2d (ViTDet's)",
                results='work_dirs/dm_ln2d/downstream_miniature_holdout.json',
                key=_key.format(0)),
            gn_seed0=dict(
                label="GroupNorm (the miniature configs')", **_gn_seed0),
            gn_seed1=dict(
                label="GroupNorm (the miniature configs')", **_gn_seed1))),
    finest_scale=dict(
        reference='fs56_seed0',
        runs=dict(
            fs56_seed0=dict(
                label="56 (mmdet's; the miniature configs')", **_gn_seed0),
            fs56_seed1=dict(
                label="56 (mmdet's; the miniature configs')", **_gn_seed1),
            fs14_seed0=dict(
                label='14 (scaled with the strides)',
                results='work_dirs/dm_fs14/downstream_miniature_holdout.json',
                key=_key.format(0)),
            fs14_seed1=dict(
                label='14 (scaled with the strides)',
                results='work_dirs/dm_fs14_s1/'
                'downstream_miniature_holdout.json',
                key=_key.format(1)))),
)
