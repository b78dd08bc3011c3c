"""The vocabulary of the person x mistake matrix (docs/reliability.md).

The fault matrix (``tests/fault_matrix.py``) covers what machines do to a
run; this one covers what a person at a terminal does. A test that proves
one cell carries ``@pytest.mark.person_matrix(ENTRY, MISTAKE, 'what
happens')``: ENTRY is a key of the fault matrix's ``ENTRIES``, MISTAKE a key
below (both checked at collection by ``conftest.py``).
"""
from tests.fault_matrix import ENTRIES  # noqa: F401 (the same entry points)

MISTAKES = {
    'typo_key':
    'a misspelt key (config or `--cfg-options`)',
    'bad_value':
    'a value of the wrong kind',
    'second_writer':
    'two runs into one work dir at once',
    'ctrl_c':
    'Ctrl-C (SIGINT)',
    'killed_launcher':
    'killing the launcher (`mim train`, torchrun)',
    'disk':
    'a full disk or an unwritable path',
    'syntax':
    'a syntax error in a config or `_base_` file',
    'gpu_on_cpu':
    'a GPU config (`--amp`, fp16) on a CPU',
    'own_folder':
    "one's own folder (another layout, too few images)",
    'checkout':
    'running in the checkout (published files, reruns)',
    'symlink':
    'symlinked images',
    'num_classes':
    "a class count that is not the data's",
    'bad_annotations':
    'annotations outside their image, unknown, degenerate',
    'mask_mismatch':
    'a mask that does not fit its image',
    'other_checkpoint':
    "another task's fine-tune as the pretraining one",
    'aspect_ratio':
    "images of another shape than the recipe's square",
    'test_command':
    '`mim test` of a shipped config, as documented',
    'micro_batches': ('exact accumulation (`model.micro_batches`) on any '
                      "batch, an epoch's ragged last one included"),
    'recipe': ("following a documented recipe (another library's loading "
               'and preprocessing)'),
    'existing_output':
    'an output folder that already exists',
    'console': ('reading the console (the result among log lines, false '
                'warnings)'),
    'mixing':
    "parts mixed into another algorithm's config (MAE, SimMIM)",
}
