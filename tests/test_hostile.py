"""Hostile and odd input, by kind: what a link or a config.json can make the calculator say.

Each test covers a whole kind of input, not one case:
- any override of a preset's figures gives a report or an error named on a key the link gave;
- text from a user is rendered inert (no link, emphasis, icon or entity) and bounded in length;
- values echoed from a config.json are bounded and carry no terminal escape sequence;
- a link too large for the app's server is refused by the command line and named on the page.
"""

from __future__ import annotations

import contextlib
import io
import json
import re

import pytest

from apptest import open_app, texts
from calc import ScenarioError, build, catalogue, parse, report
from calc.__main__ import main
from calc.hf_config import HFConfigError, from_hf_config_json
from calc.scenario import CARD_FIGURES, MAX_LINK_CHARS, MAX_LINK_FIELDS, MODEL_FIGURES

# ---------------------------------------------------------------- 1. preset overrides never raise

#: A spread of values for every shape key: small, typical and extreme, inside and outside each rule.
INT_SPREAD = (0, 1, 2, 3, 5, 7, 8, 64, 257, 100_000)
FLOAT_SPREAD = (1e-6, 0.1, 0.5, 1, 3, 7.5, 70, 1000, 1e5)
SHAPE_KEYS = (*MODEL_FIGURES, *CARD_FIGURES, "gpus")
FLOAT_KEYS = {"params_b", "active_b", "embed_b", "mem_gib", "bw_tbs", "tflops"}


def _answer(link: dict) -> None:
    """A report, or a ScenarioError whose every error names a key the link gave; the lenient parse the app
    uses gives a scenario the report can be built from, with its errors named on given keys too."""
    try:
        report(link)
    except ScenarioError as exc:
        assert exc.errors
        for err in exc.errors:
            assert err.key in link, (link, err.message)
            assert err.message.startswith(f"{err.key}="), err.message
    parsed = parse(link)
    assert {e.key for e in parsed.errors} <= set(link), (link, parsed.errors)
    out = build(parsed)
    assert out["scenario"]["model"] == link["model"] or "model" in {e.key for e in parsed.errors}


@pytest.mark.slow  # a sweep: every preset x every shape key x a spread of values
@pytest.mark.parametrize("model", sorted(catalogue.models()))
def test_every_preset_with_every_shape_override_gives_a_report_or_a_named_error(model):
    for key in SHAPE_KEYS:
        for value in (FLOAT_SPREAD if key in FLOAT_KEYS else INT_SPREAD):
            _answer({"model": model, key: value})


@pytest.mark.slow  # a sweep: every MoE preset x 90 expert counts
@pytest.mark.parametrize("model", sorted(m for m, row in catalogue.models().items() if row["experts"]))
def test_every_moe_preset_with_any_expert_counts_gives_a_report_or_a_named_error(model):
    for experts in (0, 1, 2, 3, 5, 8, 16, 64, 128, 256):
        for active in (0, 1, 2, 3, 4, 8, 9, 127, 255):
            _answer({"model": model, "experts": experts, "experts_active": active})


@pytest.mark.parametrize("link, key", [
    ("model=mixtral-8x7b&experts_active=3", "experts_active"),
    ("model=gpt-oss-20b&experts=5", "experts"),
])
def test_the_reported_overrides_name_the_key_given(link, key):
    with pytest.raises(ScenarioError) as caught:
        report(link)
    assert [e.key for e in caught.value.errors] == [key]
    assert "dense part" in caught.value.errors[0].message
    parsed = parse(link)
    assert [e.key for e in parsed.errors] == [key]
    preset = catalogue.models()[parsed.scenario.model]
    assert getattr(parsed.scenario, key) == preset[key]  # the key falls back to the preset's figure
    err, out = io.StringIO(), io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(out):
        assert main([link]) == 2
    assert err.getvalue().startswith(f"error: {key}=") and "Traceback" not in err.getvalue()


def test_the_reported_override_keeps_the_app_working():
    at = open_app({"model": "mixtral-8x7b", "experts_active": "3"}, "pages/decision.py")
    assert not at.exception
    shown = " ".join(str(e.value) for e in at.error)
    assert "experts\\_active" in shown or "experts_active" in shown
    assert at.session_state["experts_active"] == catalogue.models()["mixtral-8x7b"]["experts_active"]


# ---------------------------------------------------------------- 2. user text rendered inert

HOSTILE_TEXT = [
    "a WWW.evil-compute.example/x", "www.evil.example", "Www.Evil.example", "wWw.x.y/z",
    "http://evil.example", "HTTPS://EVIL.EXAMPLE/x", "mailto:a@b.example", "someone@evil.example",
    "__bold__ and _em_ and **strong** and ~~gone~~", ":material/home: :rocket: :red[colour]",
    "&lt;script&gt; &amp; &#60;", "[x](http://e.example) ![i](http://e.example/i.png)", "<b>x</b>",
    "# heading", "1. list", "- item", "> quote", "`code`", "$x^2$", "|a|b|", "\\*", "x" * 5000,
]


def _rendered_text(markdown: str) -> str:
    """What a reader sees of escaped Markdown text: backslash escapes and zero-width spaces removed."""
    return re.sub(r"\\(.)", r"\1", markdown).replace("\u200b", "")


@pytest.mark.parametrize("text", HOSTILE_TEXT)
def test_plain_markdown_escapes_everything_a_renderer_acts_on(text):
    from pages._ui import plain
    out = plain(text)
    assert len(out) < 3 * 1000 + 10  # bounded, escapes included
    # Every ASCII punctuation character is escaped, so no emphasis, link, image, entity, list or heading.
    assert not re.search(r"[!-/:-@\[-`{-~]", re.sub(r"\\[!-/:-@\[-`{-~]", "", out)), out
    # What renderers link or replace after escapes are read is split by a zero-width space.
    unescaped = re.sub(r"\\(.)", r"\1", out)
    assert not re.search(r"(?i)www\.|://|@\w|:material/|:[a-z_]+:|:red\[", unescaped), unescaped
    # The reader still sees the text as typed (cut at the bound).
    seen = _rendered_text(out)
    typed = " ".join(text.split())
    assert seen.rstrip("…") == typed[:1000]


def test_hostile_values_in_a_link_are_shown_escaped_in_the_app():
    link = {"compute": "a WWW.evil-compute.example/x", "duty": "__x__ :material/home: &lt;",
            "WWW.evil.example/k": "1"}
    at = open_app(link, "pages/fit.py")
    assert not at.exception
    boxes = [str(e.value) for e in at.error] + [str(c.value) for c in at.caption]
    joined = texts(at.error)
    assert "compute=" in joined and "duty=" in joined
    for box in boxes:
        unescaped = re.sub(r"\\(.)", r"\1", box)
        assert not re.search(r"(?i)www\.|:material/", unescaped), box


# ---------------------------------------------------------------- 3 and 4. config.json echoes bounded and inert

BASE_CONFIG = {"model_type": "llama", "num_hidden_layers": 2, "hidden_size": 64, "num_attention_heads": 4,
               "num_key_value_heads": 4, "intermediate_size": 128, "vocab_size": 100,
               "tie_word_embeddings": False}
ESC = "\x1b[32m all checks passed \x1b[0m"


def _config_with(**fields) -> bytes:
    return json.dumps({**BASE_CONFIG, **fields}).encode()


HUGE_CONFIGS = {
    "tie_word_embeddings": _config_with(tie_word_embeddings="y" * 999_000),
    "num_hidden_layers": _config_with(num_hidden_layers="9" * 400_000),
    "hidden_size": b'{"model_type": "llama", "hidden_size": ' + b"9" * 4000 + b"}",
    "layer_types": _config_with(layer_types=["z" * 300_000, "full_attention"]),
    "num_attention_heads": _config_with(num_attention_heads=[1] * 5000),
    "model_type": _config_with(model_type={"k": "v" * 500_000}),
    "escapes": _config_with(layer_types=[ESC, "full_attention"]),
    "duplicate": f"{{{json.dumps(ESC * 3)}: 1, {json.dumps(ESC * 3)}: 2}}".encode(),
    "duplicate_long": f"{{{json.dumps('k' * 200_000)}: 1, {json.dumps('k' * 200_000)}: 2}}".encode(),
}


@pytest.mark.parametrize("name", sorted(HUGE_CONFIGS))
def test_config_errors_are_short_and_carry_no_control_character(name):
    with pytest.raises(HFConfigError) as caught:
        from_hf_config_json(HUGE_CONFIGS[name])
    message = str(caught.value)
    assert len(message) <= 500, (len(message), message[:200])
    assert not any(ord(ch) < 32 or ord(ch) == 127 for ch in message), repr(message)


@pytest.mark.parametrize("name", sorted(HUGE_CONFIGS))
def test_the_command_line_echoes_config_errors_short_and_quoted(name, tmp_path):
    path = tmp_path / "config.json"
    path.write_bytes(HUGE_CONFIGS[name])
    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        assert main(["--hf-config", str(path)]) == 2
    text = err.getvalue()
    assert len(text) <= 500 + len(str(path)) + 20, text[:300]
    assert "\x1b" not in text
    if name.startswith("duplicate") or name == "escapes":
        assert "\\x1b" in text or "k" * 40 in text  # the name is quoted with its escapes visible


def test_link_values_with_escape_sequences_are_quoted_on_the_command_line():
    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        assert main([f"ctx={ESC}"]) == 2
    assert "\x1b" not in err.getvalue() and "\\x1b" in err.getvalue()
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main([f"{ESC}=1"]) == 0
    assert "\x1b" not in out.getvalue()


# ---------------------------------------------------------------- 5. links the server would ignore


@pytest.mark.parametrize("link", [
    "&".join(["ctx=4096"] * (MAX_LINK_FIELDS + 1)),
    "model=llama-3.1-8b&ctx=" + "1" * MAX_LINK_CHARS,
])
def test_a_link_the_server_drops_is_refused_by_the_command_line_and_named_by_parse(link):
    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        assert main([link]) == 2
    assert err.getvalue().startswith("error: link=") and "at most 1,000 fields" in err.getvalue()
    assert len(err.getvalue()) < 600
    parsed = parse(link)
    assert [e.key for e in parsed.errors] == ["link"]
    assert parsed.scenario == parse(None).scenario  # defaults, as the app's server would give


def test_links_at_the_limits_are_read():
    at_fields = "&".join(["ctx=4096"] * MAX_LINK_FIELDS)
    assert parse(at_fields).scenario.ctx == 4096 and not parse(at_fields).errors
    padded = "ctx=4096&pad=" + "x" * (MAX_LINK_CHARS - len("ctx=4096&pad="))
    assert len(padded) == MAX_LINK_CHARS
    assert parse(padded).scenario.ctx == 4096 and not parse(padded).errors


def test_a_batch_above_the_engines_cap_is_warned_about():
    """A batch the engine would not schedule (above max_seqs) is named, as a batch above memory is."""
    from calc import report
    r = report("model=llama-3.1-8b&card=h200-sxm&batch=100&max_seqs=1")
    assert any("exceeds the engine's cap of 1 sequence per step" in w for w in r["warnings"])


def test_negative_zero_is_zero():
    from calc import report
    r = report("usd_hr=-0&upkeep=-0")
    assert str(r["monthly_usd"]) == "0.0" and str(r["scenario"]["usd_hr"]) == "0.0"
    assert "-0" not in report("usd_hr=-0&upkeep=-0&discount=-0")["scenario"].__repr__()
