from .exact_accumulation import (SiameseIMDistributedDataParallel,
                                 accumulated_train_step, check_micro_batches)
from .siameseim import (MomentumTarget, SiameseIM, check_masked_encoder,
                        check_siameseim_parts)

__all__ = [
    'SiameseIM', 'SiameseIMDistributedDataParallel', 'MomentumTarget',
    'accumulated_train_step', 'check_masked_encoder', 'check_siameseim_parts',
    'check_micro_batches'
]
