"""mmengine checkpoints resume under torch >= 2.6 with weights_only kept on,
and only because of the compatibility layer."""
import os
import subprocess
import sys
import textwrap

import pytest
import torch

SCRIPT = textwrap.dedent('''
    import os, sys
    os.environ.pop('TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD', None)
    if sys.argv[2] == 'with-layer':
        import mmsiameseim  # noqa: F401
    import torch, torch.nn as nn
    from mmengine.model import BaseModel
    from mmengine.runner import Runner

    class M(BaseModel):
        def __init__(self):
            super().__init__()
            self.l = nn.Linear(2, 1)

        def forward(self, inputs, data_samples=None, mode='loss'):
            return dict(loss=self.l(inputs).pow(2).mean())

    class DS(torch.utils.data.Dataset):
        def __len__(self):
            return 8

        def __getitem__(self, i):
            return dict(inputs=torch.randn(2))

    def run(epochs, resume):
        r = Runner(model=M(), work_dir=sys.argv[1],
                   train_dataloader=dict(dataset=DS(), batch_size=4,
                       sampler=dict(type='DefaultSampler', shuffle=True),
                       collate_fn=dict(type='default_collate')),
                   train_cfg=dict(by_epoch=True, max_epochs=epochs),
                   optim_wrapper=dict(optimizer=dict(type='SGD', lr=0.1,
                                                     momentum=0.9)),
                   default_hooks=dict(checkpoint=dict(type='CheckpointHook',
                                                      interval=1)),
                   resume=resume)
        r.train()
        return r

    first = run(2, False)
    ref = first.optim_wrapper.optimizer.state_dict()['state']
    again = run(2, True)  # resumes at the end: nothing is left to train
    got = again.optim_wrapper.optimizer.state_dict()['state']
    assert again.iter == first.iter == 4, (again.iter, first.iter)
    assert ref.keys() == got.keys() and ref
    for k in ref:
        assert torch.equal(ref[k]['momentum_buffer'],
                           got[k]['momentum_buffer'])
    print('SAME_OPTIMIZER_STATE')
    r = run(3, True)
    print('RESUMED_AT', r.iter)
''')


def _resume(tmp_path, mode):
    script = tmp_path / 'resume.py'
    script.write_text(SCRIPT)
    env = {
        k: v
        for k, v in os.environ.items()
        if k != 'TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD'
    }
    return subprocess.run(
        [sys.executable,
         str(script),
         str(tmp_path / 'work'), mode],
        capture_output=True,
        text=True,
        env=env,
        timeout=300)


def test_resume_works_with_the_layer(tmp_path):
    out = _resume(tmp_path, 'with-layer')
    assert out.returncode == 0, out.stderr[-2000:]
    assert 'SAME_OPTIMIZER_STATE' in out.stdout
    assert 'RESUMED_AT 6' in out.stdout


def test_resume_fails_without_the_layer(tmp_path):
    out = _resume(tmp_path, 'without-layer')
    assert out.returncode != 0
    assert 'Weights only load failed' in out.stderr


def test_untrusted_checkpoint_is_refused(tmp_path):
    from mmengine.runner.checkpoint import _load_checkpoint

    import mmsiameseim  # noqa: F401
    marker = tmp_path / 'PWNED'

    class Evil:

        def __reduce__(self):
            return (open, (str(marker), 'w'))

    path = tmp_path / 'evil.pth'
    torch.save({'state_dict': {}, 'meta': Evil()}, path)
    with pytest.raises(Exception, match='Weights only load failed'):
        _load_checkpoint(str(path), map_location='cpu')
    assert not marker.exists()
