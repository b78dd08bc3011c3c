"""The projects' tests share the plugin's fixtures (tests/conftest.py: the
default scope restored after each test, the parity fixture, the stand-in
ImageNet). The markers (``studies``) and the results files of a test run
come from tests/conftest.py's hooks, which `make test-studies` loads by
collecting tests/ beside projects/."""
from tests.conftest import (parity_fixture, restore_default_scope,  # noqa
                            smoke_imagenet)
