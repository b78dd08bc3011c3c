"""Deprecated: ``python tools/preflight.py`` is now ``python
tools/analysis_tools/preflight.py``, with the same options; this alias
prints a note naming the new path, runs it and will be removed."""
import os.path as osp
import runpy
import sys

OLD, NEW = 'tools/preflight.py', 'tools/analysis_tools/preflight.py'
ROOT = osp.dirname(osp.dirname(osp.abspath(__file__)))

if __name__ == '__main__':
    print(f'{OLD} is deprecated: run {NEW} (same options)', file=sys.stderr)
    sys.argv[0] = osp.join(ROOT, NEW)
    runpy.run_path(sys.argv[0], run_name='__main__')
