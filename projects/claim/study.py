"""The paper's Table 1 and the pairs the claim study compares.

The tests are in verdicts.py; the tool side below says where the study's
results file and charts go.
"""
import os.path as osp

from projects.common.results import REPO

# The paper's Table 1 (ViT-B/16, ImageNet): the metric of ours that each
# of its columns is miniaturised by -> method -> number.
PAPER_TABLE1 = {
    'linear': ('LIN', dict(siameseim=78.0, mocov3=76.7, mae=68.0)),
    'fewshot': ('FT 1 %', dict(siameseim=65.1, mocov3=63.4, mae=51.1)),
    'dense_miou': ('ADE20k mIoU', dict(siameseim=51.1, mocov3=47.3, mae=48.1)),
}
PAIRS = (('siameseim', 'mocov3'), ('siameseim', 'mae'), ('mocov3', 'mae'))


# ---------------------------------------------------------------- tool side
# (``projects/claim/tools/claim_study.py``'s options: ``--results-dir``,
# ``--results-name``, ``--figures-dir``, ``--only``, ``--methods``)
def results_file(args):
    name = args.results_name or ('claim_holdout' if args.holdout else 'claim')
    if args.results_dir:
        folder = osp.abspath(args.results_dir)
    elif args.smoke or args.holdout:
        folder = osp.abspath(args.work_dir)
    else:
        folder = osp.join(REPO, 'docs', 'results')
    return name, folder


def figures_dir(args, results_folder, name):
    """--figures-dir; else docs/claim/figures beside the published results
    file, or WORK_DIR/figures; another results file than claim.json draws
    into a NAME subfolder."""
    if args.figures_dir:
        return osp.abspath(args.figures_dir)
    if results_folder == osp.join(REPO, 'docs', 'results'):
        folder = osp.join(REPO, 'docs', 'claim', 'figures')
    else:
        folder = osp.join(osp.abspath(args.work_dir), 'figures')
    return folder if name == 'claim' else osp.join(folder, name)
