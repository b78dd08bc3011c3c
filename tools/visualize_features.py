"""Deprecated: ``python tools/visualize_features.py`` is now ``python
tools/visualization/visualize_features.py``, with the same options; this
alias prints a note naming the new path, runs it and will be removed."""
import os.path as osp
import runpy
import sys

OLD = 'tools/visualize_features.py'
NEW = 'tools/visualization/visualize_features.py'
ROOT = osp.dirname(osp.dirname(osp.abspath(__file__)))

if __name__ == '__main__':
    print(f'{OLD} is deprecated: run {NEW} (same options)', file=sys.stderr)
    sys.argv[0] = osp.join(ROOT, NEW)
    runpy.run_path(sys.argv[0], run_name='__main__')
