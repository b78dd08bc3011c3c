"""Test a checkpoint on a config of this plugin with the test script of the
OpenMMLab codebase the config is written for: what ``mim test mmsiameseim
CONFIG --checkpoint CKPT`` runs (``python tools/test.py CONFIG CKPT
[ARGS]`` in a checkout; see ``tools/train.py``).
"""
import sys

from train import run_codebase_tool

if __name__ == '__main__':
    run_codebase_tool('test.py', sys.argv[1:], __doc__)
