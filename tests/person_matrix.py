"""The vocabulary of the person x mistake matrix (docs/reliability.md).

The fault matrix (``tests/fault_matrix.py``) covers what machines do to a
run; this one covers what a person at a terminal does. A test that proves
one cell carries ``@pytest.mark.person_matrix(ENTRY, MISTAKE, 'what
happens')``: ENTRY is a key of the fault matrix's ``ENTRIES``, MISTAKE a key
below (both checked at collection by ``tests/conftest.py``).
"""
from tests.fault_matrix import ENTRIES  # noqa: F401 (the same entry points)

MISTAKES = {
    'typo_key': 'a misspelt key (config or `--cfg-options`)',
    'bad_value': 'a value of the wrong kind',
    'second_writer': 'two runs into one work dir at once',
    'ctrl_c': 'Ctrl-C (SIGINT)',
    'killed_launcher': 'killing the launcher (`mim train`, torchrun)',
    'disk': 'a full disk or an unwritable path',
    'syntax': 'a syntax error in a config or `_base_` file',
    'gpu_on_cpu': 'a GPU config (`--amp`, fp16) on a CPU',
    'own_folder': "one's own folder (another layout, too few images)",
    'checkout': 'running in the checkout (published files, reruns)',
    'symlink': 'symlinked images',
    'mixing': "parts mixed into another algorithm's config (MAE, SimMIM)",
}
