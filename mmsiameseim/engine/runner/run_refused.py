"""The error of a run or resume refused before its first step."""
from ...docs_page import docs_page

#: the page a refusal about resuming or overwriting points the user at
RESUME_DOCS = docs_page('pretraining/resume_and_preemption.md')


class RunRefused(RuntimeError):
    """A run or resume that would lose or mix up the user's training state,
    refused before its first step (the work dir is left as it was)."""
