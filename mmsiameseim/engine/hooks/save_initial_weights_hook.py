import os.path as osp

from mmengine.dist import master_only
from mmengine.hooks import Hook
from mmengine.model import is_model_wrapper
from mmengine.runner.checkpoint import save_checkpoint, weights_to_cpu
from mmpretrain.registry import HOOKS

from ...atomic_io import commit, partial_name


@HOOKS.register_module()
class SaveInitialWeightsHook(Hook):
    """Save the model as training starts: after ``init_weights`` (and any
    ``load_from``), before the first step.

    These are the run's own initial weights, the honest floor for what
    pretraining adds (projects/demo/tools/demo.py evaluates them). Written
    once, to
    ``{work_dir}/{filename}`` as ``{'state_dict': ..., 'meta': ...}``, so it
    loads like any checkpoint of the run (under a temporary name, renamed
    when complete, so a kill never leaves half of it under that name). A
    resumed run keeps the file of its first start; resuming a run that never
    wrote it is an error, since its initial weights are gone.

    Args:
        filename (str): File name in the work dir.
            Defaults to 'initial_weights.pth'.
    """

    priority = 'VERY_HIGH'

    def __init__(self, filename: str = 'initial_weights.pth') -> None:
        self.filename = filename

    @master_only
    def before_train(self, runner) -> None:
        path = osp.join(runner.work_dir, self.filename)
        if runner.iter > 0:
            if not osp.exists(path):
                raise FileNotFoundError(
                    f'SaveInitialWeightsHook: resumed at iteration '
                    f'{runner.iter}, but {path} was not written when the '
                    'run started; its initial weights cannot be recovered')
            return
        model = runner.model.module if is_model_wrapper(runner.model) \
            else runner.model
        partial = partial_name(path)
        save_checkpoint(
            dict(
                state_dict=weights_to_cpu(model.state_dict()),
                meta=dict(iter=0, epoch=0, seed=runner.seed)), partial)
        commit(partial, path)
