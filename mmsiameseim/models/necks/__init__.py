from .relpos_decoder_neck import (RelPosDecoderNeck, SiameseIMProjector,
                                  TokenBatchNorm)

__all__ = ['RelPosDecoderNeck', 'SiameseIMProjector', 'TokenBatchNorm']
