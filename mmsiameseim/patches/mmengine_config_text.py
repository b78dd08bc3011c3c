"""A config's text formatted once per content (mmengine 0.10.7).

``Config.pretty_text`` formats the whole config with yapf at every call, and
the Runner calls it when it logs the config, when it dumps it and at every
checkpoint it saves (the text goes into the checkpoint's meta): 1-2 s each
for a pretraining config on a CPU, several times a run. yapf's output
depends only on its input text and style, so it is kept for the last
inputs: the same config is formatted once, to the same text. Can go when
mmengine keeps the formatted text itself.
"""
import functools

from mmengine.config import config as config_module

_format_code = config_module.FormatCode


@functools.lru_cache(maxsize=16)
def _formatted(text: str, style: tuple) -> tuple:
    return _format_code(text, style_config=dict(style))


def _format_code_once(text: str, style_config=None, **kwargs):
    if kwargs or not isinstance(style_config, dict):
        return _format_code(text, style_config=style_config, **kwargs)
    return _formatted(text, tuple(sorted(style_config.items())))


config_module.FormatCode = _format_code_once
