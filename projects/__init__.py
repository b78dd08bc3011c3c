"""The studies built on the mmsiameseim plugin, OpenMMLab's ``projects/``
folder: one folder per study with its README, code, command lines
(``tools/``) and tests (``tests/``); what they share in ``common``.

Projects import the plugin; the plugin (``import mmsiameseim``, what every
config's ``custom_imports`` runs) never imports a project, and no project
is in the wheel. In a checkout the venv's path holds the repository's root
(tools/setup_env.sh), so ``import projects.claim`` works from any folder.
"""
