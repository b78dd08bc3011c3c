from .relpos_decoder_neck import RelPosDecoderNeck, SiameseIMProjector

__all__ = ['RelPosDecoderNeck', 'SiameseIMProjector']
