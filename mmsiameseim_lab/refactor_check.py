"""Whether a reorganisation changed any number: two commits side by side.

At each commit (a git worktree of it, its own code first on PYTHONPATH):

* the smoke demo (``tools/demo.py --smoke``): every score of its results
  file and every training loss its pretraining logged (and, not compared,
  how many lines it printed);
* the parity fixture: the loss, the prediction's norm and the online
  gradient's norm of the model built from the authors' weights on the
  fixture's batch (tests/data/official_parity_tiny.pt).

``tools/check_refactor.py`` writes the results file ``refactor_check.json``
(docs/code_layout.md renders it): the numbers of both commits and whether
each is bit-identical.
"""
import glob
import json
import os
import os.path as osp
import subprocess
import sys
from typing import Dict

from .results import REPO

PARITY_SCRIPT = r'''
import json, sys, torch
from mmsiameseim.apis import build_from_official
from tests.helpers import fixture_samples
fx = torch.load(sys.argv[1], weights_only=False)
cfg = fx['config']
model = build_from_official(fx['official_state_dict'],
                            num_heads=cfg['num_heads'],
                            decoder_num_heads=cfg['decoder_num_heads'])
out = {}
model.neck.register_forward_hook(lambda m, i, o: out.setdefault('pred', o))
inp = fx['inputs']
loss = model.loss([inp['view_a'].clone(), inp['view_b'].clone()],
                  fixture_samples(fx), update_target=False)['loss']
loss.backward()
grad = torch.cat([p.grad.reshape(-1) for p in model.parameters()
                  if p.grad is not None])
print(json.dumps(dict(loss=float(loss), pred_norm=float(out['pred'].norm()),
                      grad_norm=float(grad.norm()))))
'''


def worktree(rev: str, folder: str) -> str:
    """A detached worktree of ``rev`` at ``folder`` (reused when there),
    with the checkout's data folder linked in; the commit's full hash."""
    if not osp.isdir(folder):
        subprocess.run([
            'git', '-C', REPO, 'worktree', 'add', '-q', '--detach', folder, rev
        ],
                       check=True)
        os.symlink(osp.join(REPO, 'data'), osp.join(folder, 'data'))
    return subprocess.run(['git', '-C', folder, 'rev-parse', 'HEAD'],
                          check=True,
                          capture_output=True,
                          text=True).stdout.strip()


def _run(tree: str, argv: list) -> tuple:
    """``argv`` run by this Python in ``tree``: its stdout and stderr."""
    env = dict(os.environ, PYTHONPATH=tree)
    out = subprocess.run(
        [sys.executable] + argv,
        cwd=tree,
        env=env,
        capture_output=True,
        text=True)
    if out.returncode:
        raise RuntimeError(f'{" ".join(argv)} failed in {tree}:\n'
                           f'{(out.stdout + out.stderr)[-3000:]}')
    return out.stdout, out.stderr


def smoke_demo_numbers(tree: str, work_dir: str) -> Dict[str, object]:
    """The scores of every row of the smoke demo run at ``tree`` and the
    training losses its pretraining logged."""
    stdout, stderr = _run(tree,
                          ['tools/demo.py', '--smoke', '--work-dir', work_dir])
    with open(osp.join(work_dir, 'console.txt'), 'w') as f:
        f.write(stdout + stderr)
    with open(osp.join(work_dir, 'demo.json')) as f:
        rows = json.load(f)['data']['rows']
    scores = {
        r['method']: {
            k: r[k]
            for k in ('knn', 'linear', 'fewshot')
        }
        for r in rows
    }
    losses = []
    for path in sorted(
            glob.glob(
                osp.join(work_dir, 'siameseim', '*', 'vis_data',
                         'scalars.json'))):
        with open(path) as f:
            losses += [
                json.loads(line)['loss'] for line in f if '"loss"' in line
            ]
    return dict(
        scores=scores,
        losses=losses,
        console_lines=len((stdout + stderr).splitlines()))


def parity_numbers(tree: str) -> Dict[str, float]:
    """Loss, prediction norm and online gradient norm on the parity fixture
    with the code at ``tree``."""
    fixture = osp.join(tree, 'tests', 'data', 'official_parity_tiny.pt')
    return json.loads(
        _run(tree, ['-c', PARITY_SCRIPT, fixture])[0].splitlines()[-1])


def compare(before: str, after: str, folder: str) -> dict:
    """Both commits' numbers (worktrees and work dirs under ``folder``) and
    whether each kind is bit-identical."""
    sides = {}
    for label, rev in (('before', before), ('after', after)):
        tree = osp.join(folder, label)
        commit = worktree(rev, tree)
        sides[label] = dict(
            commit=commit,
            smoke_demo=smoke_demo_numbers(tree,
                                          osp.join(folder, f'{label}_demo')),
            parity=parity_numbers(tree))
    a, b = sides['before'], sides['after']
    return dict(
        **sides,
        identical=dict(
            smoke_demo_scores=a['smoke_demo']['scores'] == b['smoke_demo']
            ['scores'],
            smoke_demo_losses=a['smoke_demo']['losses'] == b['smoke_demo']
            ['losses'],
            parity=a['parity'] == b['parity']))
