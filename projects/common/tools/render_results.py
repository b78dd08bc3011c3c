"""Fill the results and model-zoo tables of the markdown from their sources.

    python projects/common/tools/render_results.py [--check] [--root DIR]

Rewrites every ``<!-- results:NAME -->`` ... ``<!-- /results:NAME -->``
block of README.md, docs/**/*.md, configs/**/README.md and
projects/**/README.md from the results file NAME.json (in its home,
``projects.common.results.RESULTS_HOMES``; with a provenance footer, which
says when a study's smoke fingerprint notes a change since its results
were taken: ``projects/common/tools/record_fingerprint.py``) and every
``<!-- metafile:PATH -->`` ... ``<!-- /metafile -->`` block from that
``metafile.yml`` (``projects.common.docs_render``).

``--check`` writes nothing and exits 1 listing each block that differs from
what it would render, each block without a results file and each unknown
NAME. Without it, the blocks are rewritten and the problems listed (exit 1
when there are any).
"""
import argparse
import os.path as osp
import sys

ROOT = osp.dirname(
    osp.dirname(osp.dirname(osp.dirname(osp.abspath(__file__)))))


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument(
        '--check',
        action='store_true',
        help='write nothing; exit 1 when a block is out of '
        'date or cannot be rendered')
    parser.add_argument(
        '--root',
        default=ROOT,
        help='repository root holding the markdown, '
        'the results files and the metafiles (default: this '
        'repository; git history is always this one\'s)')
    args = parser.parse_args(argv)
    from projects.common.docs_render import check, render
    if args.check:
        problems = check(osp.abspath(args.root))
        for p in problems:
            print(p)
        print(f'{len(problems)} block(s) out of date or unrenderable'
              if problems else 'every block agrees with its source')
        return 1 if problems else 0
    changed, problems = render(osp.abspath(args.root))
    for md, blocks in changed.items():
        print(f'{md}: rewrote {", ".join(blocks)}')
    for p in problems:
        print(p)
    if not changed and not problems:
        print('every block already agrees with its source')
    return 1 if problems else 0


if __name__ == '__main__':
    sys.exit(main())
