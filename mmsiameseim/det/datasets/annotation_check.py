"""What is wrong with one COCO / LVIS annotation, and the policy that counts
the wrong ones of a file: named, dropped, and refused above a fraction."""
import logging
import math
from typing import Dict, List, Optional, Sequence

from mmengine.logging import print_log

#: Bad annotations named in the stopping error or the warning.
SHOWN = 50
#: How far (pixels) a box may reach past its image's border (rounding).
BORDER_TOLERANCE = 1.0


def _numbers(values) -> bool:
    return isinstance(values, (list, tuple)) and all(
        isinstance(v, (int,
                       float)) and not isinstance(v, bool) and math.isfinite(v)
        for v in values)


def polygon_problem(polygon, index: int) -> Optional[str]:
    """What is wrong with one polygon ``[x1, y1, x2, y2, ...]``, or None."""
    if not _numbers(polygon) or len(polygon) % 2 or len(polygon) < 6:
        size = len(polygon) if isinstance(polygon, (list, tuple)) else '?'
        return (f'polygon {index} has {size} coordinates; a polygon is 3 or '
                'more x, y pairs of finite numbers')
    xs, ys = polygon[0::2], polygon[1::2]
    twice_area = sum(xs[i] * ys[i - 1] - xs[i - 1] * ys[i]
                     for i in range(len(xs)))
    if twice_area == 0:
        return f'polygon {index} encloses no area (its points are collinear)'
    return None


def mask_problem(segmentation, width: int, height: int) -> Optional[str]:
    """What is wrong with an annotation's ``segmentation`` (polygons or RLE),
    or None."""
    if not segmentation:
        return 'it has no segmentation (an empty mask)'
    if isinstance(segmentation, dict):  # RLE
        size = segmentation.get('size')
        if list(size or ()) != [height, width]:
            return (f'its RLE mask has size {size}, but the image is '
                    f'[{height}, {width}] (height, width)')
        return None
    if not isinstance(segmentation, list):
        return f'its segmentation is a {type(segmentation).__name__}'
    problems = [polygon_problem(p, i) for i, p in enumerate(segmentation)]
    problems = [p for p in problems if p]
    return '; '.join(problems) if problems else None


def annotation_problem(ann: dict, img: dict, cat_ids,
                       with_mask: bool) -> Optional[str]:
    """What is wrong with one annotation of image ``img``, or None.

    Wrong: a category id missing from the file's categories; a box that is
    not 4 finite numbers, thinner than 1 pixel, lying outside the image or
    reaching more than :data:`BORDER_TOLERANCE` pixels past its border; an
    area that is not positive; with ``with_mask``, a missing or empty
    segmentation, a polygon of fewer than 3 points or no area, or an RLE
    mask of another size than the image.
    """
    if ann.get('category_id') not in cat_ids:
        return (f'category_id {ann.get("category_id")!r} is not one of the '
                "file's categories")
    bbox = ann.get('bbox')
    if not _numbers(bbox) or len(bbox) != 4:
        return f'bbox {bbox!r} is not 4 finite numbers [x, y, width, height]'
    x, y, w, h = bbox
    W, H = img['width'], img['height']
    if w < 1 or h < 1:
        return f'bbox {bbox} is degenerate (width or height below 1 pixel)'
    if x >= W or y >= H or x + w <= 0 or y + h <= 0:
        return f'bbox {bbox} lies outside its {W} x {H} image'
    t = BORDER_TOLERANCE
    if x < -t or y < -t or x + w > W + t or y + h > H + t:
        return (f'bbox {bbox} reaches past its {W} x {H} image (to x '
                f'{x + w:g}, y {y + h:g}); COCO boxes are [x, y, width, '
                'height], not corners')
    if not ann.get('area', 1) > 0:
        return f'area {ann.get("area")!r} is not positive'
    if with_mask:
        problem = mask_problem(ann.get('segmentation'), W, H)
        if problem:
            return problem
    return None


class AnnotationChecks:
    """Count the bad annotations of one file and apply the policy: above
    ``max_fraction`` of all annotations the dataset is refused, naming them;
    otherwise a WARNING names them and gives the count.

    Args:
        owner (str): The dataset's name, for messages.
        ann_file (str): The annotation file, for messages.
        max_fraction (float): The bad share that refuses the file.
        option (str): The option in a config, as ``--cfg-options`` writes
            it (``train_dataloader.dataset.max_bad_annotation_fraction``),
            for messages.
        test_mode (bool): The dataset is evaluated (the metric reads the
            file itself and still counts the dropped annotations).
    """

    def __init__(self, owner: str, ann_file: str, max_fraction: float,
                 option: str, test_mode: bool) -> None:
        self.owner, self.ann_file = owner, ann_file
        self.max_fraction, self.option = max_fraction, option
        self.test_mode = test_mode
        self.started = False  # the file-wide checks ran
        self.total = 0
        self.bad: List[str] = []

    def orphans(self, anns: Dict[int, dict], imgs: Dict[int, dict]) -> None:
        """Record the annotations whose image is not in the file."""
        self.total = len(anns)
        for ann in anns.values():
            if ann.get('image_id') not in imgs:
                self.bad.append(f'annotation id {ann.get("id")}: image_id '
                                f'{ann.get("image_id")!r} is not one of the '
                                "file's images")

    def keep(self, anns: Sequence[dict], img: dict, cat_ids,
             with_mask: bool) -> List[dict]:
        """The good annotations of one image; the bad ones are recorded."""
        good = []
        for ann in anns:
            problem = (None if ann.get('ignore') else annotation_problem(
                ann, img, cat_ids, with_mask))
            if problem:
                self.bad.append(
                    f'image {img.get("file_name", img.get("coco_url"))} (id '
                    f'{img.get("id")}), annotation id {ann.get("id")}: '
                    f'{problem}')
            else:
                good.append(ann)
        return good

    def finish(self) -> None:
        """Refuse or warn (nothing when every annotation is good)."""
        if not self.bad:
            return
        n, total = len(self.bad), self.total
        names = '\n'.join(f'  {m}' for m in self.bad[:SHOWN])
        if n > SHOWN:
            names += f'\n  ... and {n - SHOWN} more'
        head = (f'{self.owner}: {n} of the {total} annotations in '
                f'{self.ann_file} are bad')
        if n > self.max_fraction * total:
            raise ValueError(
                f'{head}: more than {self.option}={self.max_fraction} of '
                'them. Fix the annotations, or accept dropping them with '
                f'--cfg-options {self.option}=F (a fraction in [0, 1]):\n'
                f'{names}')
        metric = (' The metric reads the file itself and still counts them '
                  'as objects to find.' if self.test_mode else '')
        print_log(
            f'{head} and dropped ({self.option}={self.max_fraction} '
            f'allows {int(self.max_fraction * total)}).{metric}\n{names}',
            logger='current',
            level=logging.WARNING)
