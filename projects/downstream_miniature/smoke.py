"""The miniature downstream study's smoke run (``projects/
downstream_miniature/tools/downstream_miniature.py --smoke``): the study's
fingerprint
(``projects.common.fingerprints``)."""
import os.path as osp

from mmengine.config import Config

from projects.downstream_miniature import layouts


def smoke_settings(study: Config,
                   root: str,
                   fashion_mnist: str,
                   build: bool = True) -> None:
    """Make ``study`` its smoke run.

    The backbones and seeds of ``study.smoke``, every task fine-tuned for
    ``smoke.iters`` iterations with ``smoke.options`` on miniature datasets
    of ``smoke.num_train`` / ``smoke.num_val`` images built under ``root``
    (``root/data/miniature``, the folder the runs start from), with no
    held-out search. ``build=False`` leaves the datasets unbuilt (a dry run
    only prints the commands).
    """
    smoke = study.smoke
    if build:
        layouts.make_miniature_datasets(
            fashion_mnist,
            osp.join(root, 'data', 'miniature'),
            num_train=smoke.num_train,
            num_val=smoke.num_val)
    study.backbones = {n: study.backbones[n] for n in smoke.backbones}
    study.seeds = list(smoke.seeds)
    study.schedules = {
        t: dict(smoke=dict(iters=smoke.iters))
        for t in study.tasks
    }
    study.chosen_schedules = {t: 'smoke' for t in study.tasks}
    study.search.backbones = list(smoke.backbones)
    study.run_root = root
    study.extra_options = list(smoke.options)
