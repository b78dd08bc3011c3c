"""The patch that formats a config's text once per content: the same text
as mmengine's, yapf run once for the same config."""
from mmengine.config import Config
from mmengine.config import config as config_module

import mmsiameseim  # noqa: F401
from mmsiameseim.patches import mmengine_config_text
from tests.helpers import TINY_SIAMESEIM_CONFIG


def test_the_same_config_is_formatted_once_to_the_same_text(monkeypatch):
    calls = []
    yapf = mmengine_config_text._format_code

    def counting(text, style_config=None):
        calls.append(text)
        return yapf(text, style_config=style_config)

    mmengine_config_text._formatted.cache_clear()
    monkeypatch.setattr(mmengine_config_text, '_format_code', counting)
    cfg = Config.fromfile(TINY_SIAMESEIM_CONFIG)
    first = cfg.pretty_text
    assert cfg.pretty_text == first and len(calls) == 1
    cfg.merge_from_dict({'model.neck.num_heads': 4})
    assert cfg.pretty_text != first and len(calls) == 2
    # mmengine's own formatting gives the same text
    monkeypatch.setattr(config_module, 'FormatCode', yapf)
    assert Config.fromfile(TINY_SIAMESEIM_CONFIG).pretty_text == first
    mmengine_config_text._formatted.cache_clear()
