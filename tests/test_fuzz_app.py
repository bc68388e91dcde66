"""Hostile input, fuzzed, in the app: any query string opens every page without an exception box, and a hostile config.json is refused by name (AppTest; the links, command lines and config files themselves are fuzzed in tests/test_fuzz.py)."""

from __future__ import annotations

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from apptest import open_app
from test_fuzz import FUZZ, HOSTILE_CONFIGS, app_params, check_app  # the fuzzing strategies and checks


@pytest.mark.slow
@pytest.mark.timeout(900)  # a whole app run per example: minutes on a loaded 2-core machine, not a hang
@settings(max_examples=200, **FUZZ)
@given(app_params)
@example({"ctx": "-5", "duty": "abc", "<script>": "1", "model": "\x00"})
@example({"model": "custom", "kv_heads": "999", "heads": "1", "experts": "1", "window_layers": "99999"})
@example({"card": "l4", "compute": "fp4", "usd_hr": "", "tpot_ms": "", "batch": "AUTO", "weights": "١٦"})
def test_app_survives_any_query_string(params):
    check_app(open_app(params), params)


@pytest.mark.slow
@settings(max_examples=24, **FUZZ)
@given(app_params, st.sampled_from(["pages/fit.py", "pages/speed.py", "pages/cost.py", "pages/catalogue.py"]))
def test_app_pages_survive_any_query_string(params, page):
    check_app(open_app(params, page), params)


@pytest.mark.slow  # one AppTest run per document
@pytest.mark.parametrize("text", HOSTILE_CONFIGS[:8] + HOSTILE_CONFIGS[12:14] + HOSTILE_CONFIGS[16:17])
def test_app_config_import_refuses_hostile_text(text):
    at = open_app({})
    before = dict(at.query_params)
    at.text_area(key="_hf_text").input(text)
    next(b for b in at.button if b.label == "Use this config").click().run()
    assert not at.exception
    assert any("config" in str(e.value) for e in at.error)
    assert dict(at.query_params) == before  # nothing was imported
