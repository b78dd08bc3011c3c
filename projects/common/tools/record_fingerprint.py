"""Record the smoke fingerprint of published results files at this code.

    python projects/common/tools/record_fingerprint.py NAME [NAME ...] | --all
        [--against-results-commit | --changed TEXT] [--results-dir DIR]

A study's results file (NAME.json in its project's results/ folder) is
current while its fingerprint, its study run at smoke size with fixed seeds
(``projects.common.fingerprints``), is the one recorded with it; CI
recomputes it (projects/common/tests/test_fingerprints.py). This command runs
the fingerprint at the checked-out code and stores it in
projects/common/results/fingerprints.json:

* right after a study wrote its results at this commit: recorded as the
  results' own;
* for results taken at an earlier commit, ``--against-results-commit``
  runs the fingerprint at that commit too (its files, ``git archive``):
  the same numbers record it as current, others record it with a note that
  the numbers may differ, which the published block shows (as do results
  taken with uncommitted code changes: their code is not in the history);
* ``--changed TEXT`` records it with TEXT as that note (what changed since
  the results were taken), when the study is not retaken yet.

A fingerprint is exact on the kind of CPU it is computed on
(``projects.common.fingerprints.cpu_kind``); recorded for the same results
on another kind, it is kept beside the first one (``other_cpus``).

Then ``python projects/common/tools/render_results.py`` renders the blocks.
Exit status 1
when a results file was left unrecorded.
"""
import argparse
import os.path as osp
import sys
import tempfile

ROOT = osp.dirname(
    osp.dirname(osp.dirname(osp.dirname(osp.abspath(__file__)))))


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('names', nargs='*', help='results files (no .json)')
    parser.add_argument(
        '--all', action='store_true', help='every study results file')
    how = parser.add_mutually_exclusive_group()
    how.add_argument(
        '--against-results-commit',
        action='store_true',
        help='compare with the fingerprint at the results file\'s commit')
    how.add_argument(
        '--changed', help='what changed since the results were taken')
    parser.add_argument('--results-dir', default=None)
    return parser.parse_args(argv)


def record_one(name, args, head, here, old_trees, tmp) -> bool:
    """Record the fingerprint of results file ``name`` (see above); False
    when it is left unrecorded.

    ``here`` and ``old_trees`` keep the units
    already run at this code and at earlier commits.
    """
    from projects.common import fingerprints as fp
    from projects.common.results import read_results
    meta = read_results(name, args.results_dir)['meta']
    taken, dirty = meta.get('commit'), fp.uncommitted_code(meta)
    if taken != head and not (args.changed or args.against_results_commit):
        print(f'{name}: its results were taken at {str(taken)[:7]}, not at '
              f'{head[:7]}: pass --against-results-commit or --changed TEXT')
        return False
    now = fp.compute([name], ROOT, here)[name]
    changed, evidence = args.changed, 'recorded at the commit of the results'
    if taken != head and changed is None and dirty:
        # the results' code is not in the history: no fingerprint to compare
        changed = (f'taken at {taken[:7]} with uncommitted changes to '
                   f'{len(dirty)} files, whose smoke fingerprint is unknown')
    elif taken != head and changed is None:
        if taken not in old_trees:
            old_trees[taken] = (fp.export_tree(taken, osp.join(tmp,
                                                               taken)), {})
        tree, cache = old_trees[taken]
        diff = fp.differences(fp.compute([name], tree, cache)[name], now)
        for line in diff:
            print(f'{name}: {line}')
        evidence = f'the same fingerprint at {taken[:7]} and {head[:7]}'
        if diff:
            changed = (f'its smoke fingerprint at {head[:7]} differs from '
                       f'the one at {taken[:7]} ({len(diff)} numbers)')
    fp.record(
        name,
        now,
        changed,
        args.results_dir,
        evidence=None if changed else evidence)
    print(f'{name}: recorded'
          f'{" as current" if changed is None else ": " + changed}')
    return True


def main(argv=None) -> int:
    args = parse_args(argv)
    from projects.common import fingerprints as fp
    from projects.common.results import git_output
    names = sorted(fp.STUDIES) if args.all else args.names
    unknown = [n for n in names if n not in fp.STUDIES]
    if not names or unknown:
        sys.exit(f'name studies to record (--all, or some of '
                 f'{sorted(fp.STUDIES)}); not a study: {unknown}')
    head = git_output('rev-parse', 'HEAD')
    here, old_trees, left = {}, {}, []
    with tempfile.TemporaryDirectory(prefix='fingerprint_trees_') as tmp:
        for name in names:
            try:
                done = record_one(name, args, head, here, old_trees, tmp)
            except RuntimeError as e:  # a smoke run that failed
                print(f'{name}: not recorded: {e}')
                done = False
            if not done:
                left.append(name)
    if left:
        print(f'left unrecorded: {", ".join(left)}')
    return 1 if left else 0


if __name__ == '__main__':
    sys.exit(main())
