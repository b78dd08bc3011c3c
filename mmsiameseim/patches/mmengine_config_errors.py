"""Config syntax errors that name their file (mmengine 0.10.7).

``Config.fromfile`` first asks ``Config._is_lazy_import`` whether a file is
a lazy-import config, which parses the file's text without its name: a
syntax error in a config or in any ``_base_`` file is reported as
``File "<unknown>", line 6``. Once this package is imported (the plugin's
tools and Python API import it before they read a config), that error
names the file, line and column. mmpretrain's ``tools/train.py`` (``mim
train``) reads the config before any plugin is imported, so there the
message stays mmengine's (docs/reliability.md says how to get the file).
"""
from mmengine.config import Config

_is_lazy_import = Config._is_lazy_import


def _is_lazy_import_naming_the_file(filename: str) -> bool:
    try:
        return _is_lazy_import(filename)
    except SyntaxError as error:
        if error.filename not in (None, '<unknown>'):
            raise
        where = f'{filename}, line {error.lineno}'
        if error.offset:
            where += f', column {error.offset}'
        raise SyntaxError(
            f'config {where}: {error.msg}',
            (filename, error.lineno, error.offset, error.text)) from None


if not getattr(Config._is_lazy_import, 'names_the_file', False):
    _is_lazy_import_naming_the_file.names_the_file = True
    Config._is_lazy_import = staticmethod(_is_lazy_import_naming_the_file)
