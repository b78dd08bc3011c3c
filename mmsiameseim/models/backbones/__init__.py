from .siameseim_vit import (SiameseIMViT, drop_zero_drop_paths,
                            fp32_attention_under_cpu_autocast, run_blocks,
                            set_activation_checkpointing,
                            use_fp32_attention_under_cpu_autocast)

__all__ = [
    'SiameseIMViT', 'run_blocks', 'set_activation_checkpointing',
    'fp32_attention_under_cpu_autocast',
    'use_fp32_attention_under_cpu_autocast', 'drop_zero_drop_paths'
]
