"""Configs that inherit the shipped ones as ``mmsiameseim::CONFIG``
(mmengine 0.10.7).

mmengine resolves ``_base_ = 'PACKAGE::PATH'`` only for the packages of its
own table (``MODULE2PACKAGE``: mmpretrain, mmdet, ...), finds a package's
configs under ``<distribution location>/<package>/.mim/configs``, and gives
every dict of such a base the registry scope ``PACKAGE``. This adds the
plugin to the table and, for ``mmsiameseim::`` paths alone, reads the
configs from the imported package's folder (an editable install keeps its
distribution record in site-packages but its code, and its
``.mim/configs`` links, in the checkout; from the wheel both are one
folder) and gives them no scope of their own: the plugin registers into
mmpretrain's, mmdet's and mmseg's registries, and each shipped config
names its library in ``default_scope``. Can go when mmengine lets a
package register itself.
"""
import os.path as osp

from mmengine.config import Config
from mmengine.config.utils import MODULE2PACKAGE

PREFIX = 'mmsiameseim::'
CONFIGS = osp.join(
    osp.dirname(osp.dirname(osp.abspath(__file__))), '.mim', 'configs')

_get_cfg_path = Config._get_cfg_path


def _get_cfg_path_of_the_plugin(cfg_path: str, filename: str):
    if not cfg_path.startswith(PREFIX):
        return _get_cfg_path(cfg_path, filename)
    path = osp.join(CONFIGS, cfg_path[len(PREFIX):])
    if not osp.isfile(path):
        raise FileNotFoundError(
            f'{cfg_path} (in {filename}): no such config among the shipped '
            f'ones ({CONFIGS}); the path is relative to the configs folder, '
            "e.g. 'mmsiameseim::pretrain/siameseim_vit-base-p16_16xb256-amp-"
            "coslr-400e_in1k.py'")
    return path, None


MODULE2PACKAGE.setdefault('mmsiameseim', 'mmsiameseim')
Config._get_cfg_path = staticmethod(_get_cfg_path_of_the_plugin)
