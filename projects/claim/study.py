"""The paper's Table 1 and the pairs the claim study compares.

The tests are in verdicts.py; the tool side below says where the study's
results file and charts go.
"""
import os.path as osp

from projects.common.results import RESULTS_HOMES, results_home

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
        return name, osp.abspath(args.results_dir)
    if args.smoke or args.holdout:
        return name, osp.abspath(args.work_dir)
    try:
        return name, results_home(name)
    except KeyError as e:
        raise SystemExit(f'--results-name {name}: {e.args[0]}; or give '
                         '--results-dir') from None


def figures_dir(args, results_folder, name):
    """--figures-dir; else the ``figures`` folder of the project of a
    published results file (beside its ``results``), or WORK_DIR/figures,
    where another results file than claim.json draws into a NAME
    subfolder."""
    if args.figures_dir:
        return osp.abspath(args.figures_dir)
    published = name.split(':')[0] in RESULTS_HOMES and \
        results_folder == results_home(name)
    if published:
        return osp.join(osp.dirname(results_folder), 'figures')
    folder = osp.join(osp.abspath(args.work_dir), 'figures')
    return folder if name == 'claim' else osp.join(folder, name)
