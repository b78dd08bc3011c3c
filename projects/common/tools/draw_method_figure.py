"""Draw the method figure of the README and the documentation.

SiameseIM (Tao et al., CVPR 2023, Fig. 2) as a diagram: two crops of one
image; the online branch encodes the visible patches of the masked view a
and its decoder predicts the dense features of view b at their relative
positions; the target branch (a moving average of the online one) encodes
view b; a dense UniGrad loss compares the two. Drawn with matplotlib from
shapes only (no data needed)::

    python projects/common/tools/draw_method_figure.py [--out
    docs/_static/method.png]
"""
import argparse
import sys

from projects.common.visualization.method_figure import OUT, draw


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('--out', default=OUT, help=f'PNG (default {OUT})')
    args = parser.parse_args(argv)
    print(draw(args.out))
    return 0


if __name__ == '__main__':
    sys.exit(main())
