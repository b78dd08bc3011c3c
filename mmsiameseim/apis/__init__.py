from .build import build_from_official, siameseim_cfg_from_official_arch
from .convert import to_mmpretrain_backbone, to_timm_vit
from .export import (model_card, timm_files, transformers_files,
                     vit_architecture, write_export)
from .official import (convert_official_state_dict, infer_official_arch,
                       load_official_state_dict)

__all__ = [
    'build_from_official', 'siameseim_cfg_from_official_arch',
    'convert_official_state_dict', 'infer_official_arch',
    'load_official_state_dict', 'to_mmpretrain_backbone', 'to_timm_vit',
    'timm_files', 'transformers_files', 'write_export', 'model_card',
    'vit_architecture'
]
