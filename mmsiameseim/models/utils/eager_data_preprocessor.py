import torch
from mmpretrain.models.utils import SelfSupDataPreprocessor
from mmpretrain.registry import MODELS


@MODELS.register_module()
class EagerSelfSupDataPreprocessor(SelfSupDataPreprocessor):
    """``SelfSupDataPreprocessor`` that ``torch.compile`` leaves out of its
    graphs.

    mmengine's ``compile`` option compiles the whole ``train_step``, data
    preprocessing included. The batch's data samples carry per-sample
    Python and numpy values (crop boxes, flips, source sizes) that Dynamo
    cannot trace: moving a numpy field to the device fails inside the
    trace. This preprocessor runs eagerly (one graph break per step, before
    the model) and does exactly what ``SelfSupDataPreprocessor`` does, with
    the same arguments.
    """

    @torch.compiler.disable
    def forward(self, data: dict, training: bool = False) -> dict:
        return super().forward(data, training)
