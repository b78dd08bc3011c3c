"""The dense probe a study's ``dense`` config names: ``type`` picks the
class (default the grid-aligned :class:`MosaicDenseProbe`), the other keys
are its arguments."""
from typing import Optional

from projects.common.evaluation.mosaic_probe import MosaicDenseProbe
from projects.common.evaluation.protocol import FrozenBackboneProtocol
from projects.common.evaluation.scattered_mosaic_probe import \
    ScatteredMosaicProbe

DENSE_PROBES = dict(
    MosaicDenseProbe=MosaicDenseProbe,
    ScatteredMosaicProbe=ScatteredMosaicProbe)


def build_dense_probe(protocol: FrozenBackboneProtocol,
                      cfg: Optional[dict]) -> MosaicDenseProbe:
    """The probe of ``cfg`` (e.g. ``dense=dict(type='ScatteredMosaicProbe',
    train_mosaics=1000)``) on ``protocol``.

    Raises:
        ValueError: ``type`` names no dense probe (the message lists them).
    """
    cfg = dict(cfg or {})
    kind = cfg.pop('type', 'MosaicDenseProbe')
    if kind not in DENSE_PROBES:
        raise ValueError(f'dense.type={kind!r} is no dense probe: choose one '
                         f'of {sorted(DENSE_PROBES)}')
    return DENSE_PROBES[kind].from_cfg(protocol, cfg)
