from .siameseim import (MomentumTarget, SiameseIM,
                        SiameseIMDistributedDataParallel, check_masked_encoder,
                        check_micro_batches, check_siameseim_parts)

__all__ = [
    'SiameseIM', 'SiameseIMDistributedDataParallel', 'MomentumTarget',
    'check_masked_encoder', 'check_siameseim_parts', 'check_micro_batches'
]
