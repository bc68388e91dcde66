"""Hostile input, fuzzed: links, command lines and config.json files (the app's query string: tests/test_fuzz_app.py).

Whatever arrives, the calculator must answer with figures or with errors that name a link key:
never a traceback, never NaN or infinity in the JSON, never an exception box in the app.

Bugs these tests once found keep a named regression test at the end of this file.
"""

from __future__ import annotations

import contextlib
import copy
import io
import json
import re
import resource
import subprocess
import sys
from pathlib import Path
from urllib.parse import quote, urlencode

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from apptest import open_app, texts
from calc import KEYS, FieldError, Scenario, ScenarioError, build, catalogue, parse, report
from calc.__main__ import main
from calc.hf_config import HFConfigError, from_hf_config_json
from calc.scenario import LINK, LINK_ACCEPTED

ROOT = Path(__file__).resolve().parent.parent
STREAMLIT_EMBED_KEYS = {"embed", "embed_options"}
APP = str(ROOT / "app.py")
HF_FIXTURES = sorted((ROOT / "tests" / "fixtures" / "hf").glob("*.json"))

# Any numpy overflow is a failure: every accepted value must keep the arithmetic finite.
pytestmark = [pytest.mark.filterwarnings("error::RuntimeWarning")]

FUZZ = dict(deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                                  HealthCheck.filter_too_much])

# ---------------------------------------------------------------- strategies

WORDS = [
    "", " ", "  \t", "auto", "AUTO", " Auto ", "custom", "CUSTOM", "none", "None", "null", "true", "false",
    "nan", "NaN", "-nan", "+nan", "inf", "-inf", "+inf", "Infinity", "-Infinity", "infinity", "1e309", "-1e309",
    "1e-309", "5e-324", "4.9e-324", "1e-300", "1e-200", "1e308", "1.7976931348623157e308", "-0", "-0.0", "+0",
    "0", "00", "0.0", "0e0", "1", "01", "1.0", "1.", ".5", "+1", "1e3", "1E-3", "0x10", "0b1", "0o7", "1_000",
    "1,000", "1 000", "1/2", "2**64", "18446744073709551617", "9" * 400, "-1", "-5", "-0.001", "0.0001",
    "0.005", "0.9999999999999999", "1.0000000000000002", "32.0000001", "4.25", "4,25",
    # Unicode digits and look-alikes: Arabic-Indic, fullwidth, mathematical bold, Roman numeral, vulgar fraction.
    "١٢٣", "١", "١٦", "٤", "１２", "𝟠", "Ⅻ", "½", "²", "٣٫٥",
    # Encodings and markup.
    "%00", "%", "%%", "%zz", "%FF", "%C3%A9", "%2526", "%26ctx%3D5", "%3Cscript%3E", "\x00", "\t1\n", "\u202e1",
    "\ufeff1", "\ud800", "<script>alert(1)</script>", "'\"", "${ctx}", "{{ctx}}", "../../etc/passwd",
    "javascript:alert(1)", "![x](http://127.0.0.1:9/x.png)", "[a](b)", "**bold**", "`code`", "a&b=c", "#frag",
    "fp8", "fp32", "int4-g128", "q4_0", "int3", "bf16", "fp4",
]
PRESET_IDS = sorted({*catalogue.models(), *catalogue.cards(), *catalogue.apis()})
ODD_KEYS = ["", " ", " ctx", "ctx ", "CTX", "Ctx", "c%74x", "ctx%00", "ctx\x00", "ctx[]", "ctx.x", "<script>",
            "__proto__", "constructor", "v", "page", "_loaded", "_errors", "_parsed", "embed_b\u200b", "ｃｔｘ",
            "ctx=1", "?ctx"]

known_keys = st.sampled_from(list(KEYS))
keys = st.one_of(known_keys, known_keys, known_keys, st.sampled_from(ODD_KEYS), st.text(max_size=20))

numbers = st.one_of(
    st.integers(-(10**30), 10**30).map(str),
    st.integers(0, 2**20).map(str),
    st.floats(allow_nan=True, allow_infinity=True).map(repr),
    st.floats(allow_nan=False, allow_infinity=False).map(lambda x: f"{x:.17g}"),
    st.floats(min_value=0, max_value=2.0).map(str),
    st.decimals(allow_nan=True, allow_infinity=True).map(str),
)
unicode_digits = st.text(alphabet=st.characters(categories=["Nd"]), min_size=1, max_size=8)
long_text = st.builds(lambda s, n: s * n, st.text(min_size=1, max_size=6), st.integers(50, 3000))
plain = st.one_of(st.sampled_from(WORDS), st.sampled_from(PRESET_IDS), numbers, numbers, unicode_digits,
                  st.text(max_size=40), long_text)


def pct(v: str, times: int = 1) -> str:
    """Percent-encode (lone surrogates included, as their UTF-8-ish bytes)."""
    for _ in range(times):
        v = quote(v.encode("utf-8", "surrogatepass"), safe="")
    return v


values = st.one_of(plain, plain, plain.map(pct), plain.map(lambda v: pct(v, 2)))

FRONTS = ["", "?", "??", " ", "https://calc.example/fit?", "http://[::1]:8501/cost?", "/speed?", "https://h/?#",
          "calc.example/decision?", "https://u:p@h:99999/%zz?"]


@st.composite
def query_links(draw) -> str:
    """A query string or whole URL: repeated and unknown keys, odd separators, fragments, raw or encoded."""
    pairs = draw(st.lists(st.tuples(keys, values), max_size=12))
    if draw(st.booleans()):
        body = urlencode(pairs, errors="surrogatepass")
    else:
        sep = draw(st.sampled_from(["&", "&", "&", ";", "&&", "&amp;"]))
        body = sep.join(k if draw(st.integers(0, 9)) == 0 else f"{k}={v}" for k, v in pairs)
    frag = draw(st.sampled_from(["", "", "#", "#top", "#ctx=1", "#" + draw(st.text(max_size=10))]))
    return draw(st.sampled_from(FRONTS)) + body + frag


mapping_values = st.one_of(
    values, st.integers(-(10**20), 10**20), st.floats(allow_nan=True, allow_infinity=True), st.booleans(),
    st.none(), st.lists(values, max_size=3), st.just(float("nan")), st.just(-0.0), st.just(1e-320))
mapping_links = st.dictionaries(keys, mapping_values, max_size=10)
links = st.one_of(query_links(), query_links(), mapping_links, st.none(), st.text(max_size=200), long_text)

# ---------------------------------------------------------------- shared checks


def check_field_error(err: FieldError) -> None:
    assert isinstance(err, FieldError)
    if err.key == LINK:  # the link as a whole is too large to read
        assert err.message.startswith("link=") and LINK_ACCEPTED in err.message, err.message
        return
    assert err.key in KEYS, err
    assert err.message.startswith(f"{err.key}="), err.message
    assert f"{err.key} takes {KEYS[err.key].accepted}" in err.message, err.message


def parse_checked(link):
    """parse(link), checked for every property the fuzz tests demand."""
    parsed = parse(link)
    for err in parsed.errors:
        check_field_error(err)
    assert len({e.key for e in parsed.errors}) == len(parsed.errors), "a key rejected twice"
    s = parsed.scenario
    assert Scenario.model_validate(s.model_dump()) == s
    # The scenario is a complete link: written out and read back it is the same scenario, with no error.
    again = parse(s.to_query())
    assert not again.errors, [e.message for e in again.errors]
    assert again.scenario == s
    return parsed


def reject_constant(name):
    raise AssertionError(f"{name} in the JSON output")


# ---------------------------------------------------------------- calc.parse and calc.build


@pytest.mark.slow
@settings(max_examples=3000, **FUZZ)
@given(links)
@example("ctx=-5&duty=abc&<script>=1&model=%00")
@example("https://calc.example/fit?ctx=2048&ctx=4096#ctx=1")
@example({"ctx": float("nan"), "duty": float("inf"), "eff": -0.0, "gpus": True, "batch": [1, 2], "tpot_ms": None})
@example("model=custom&params_b=100000&active_b=100000&layers=10000&heads=100000&kv_heads=100000"
         "&head_dim=100000&ctx=100000000&card=custom&mem_gib=100000&gpus=64&batch=1000000")
@example("model=custom&experts=100000&experts_active=99999&params_b=100000&active_b=0.000001")
@example("req_day=1e12&in_tok=10000000&out_tok=10000000&peak=1000&tpot_ms=0.000001&hours=0.001&duty=0.000001")
def test_parse_never_raises_and_the_report_is_strict_json(link):
    parsed = parse_checked(link)
    text = json.dumps(build(parsed), allow_nan=False)
    back = json.loads(text, parse_constant=reject_constant)
    assert back["scenario"] == json.loads(json.dumps(parsed.scenario.as_dict()))
    assert all(isinstance(w, str) for w in back["warnings"])


# ---------------------------------------------------------------- the command line, in process

LINE = re.compile(r"error: (\w+)=")


def run_main(argv):
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = main(argv)
        except SystemExit as exc:  # argparse usage errors
            code = exc.code
    return code, out.getvalue(), err.getvalue()


def check_cli_output(code, out, err):
    if code == 0:
        assert err == ""
        json.loads(out, parse_constant=reject_constant)
    else:
        assert code == 2, (code, err)
        assert out == ""
        lines = err.splitlines()
        assert lines
        for line in lines:
            m = LINE.match(line)
            assert m and (m.group(1) in KEYS or m.group(1) == LINK), line
            assert f"{m.group(1)} takes" in line, line


@pytest.mark.slow
@settings(max_examples=2000, **FUZZ)
@given(st.one_of(query_links(), st.text(max_size=200), long_text))
@example("ctx=-5&duty=abc&<script>=1&model=%00")
@example("-ctx=5")
@example("--")
def test_command_line_exits_0_with_json_or_2_naming_keys(link):
    argv = ["--", link] if link.startswith("-") else [link]
    code, out, err = run_main(argv)
    check_cli_output(code, out, err)


# ---------------------------------------------------------------- the command line, as a process


def run_cli(*args, limit_memory=False, timeout=60):
    def cap():  # 2 GiB of address space: a runaway read fails fast instead of eating the machine
        resource.setrlimit(resource.RLIMIT_AS, (2 << 30, 2 << 30))
    return subprocess.run([sys.executable, "-m", "calc", *args], capture_output=True, timeout=timeout, cwd=ROOT,
                          preexec_fn=cap if limit_memory else None)


@pytest.mark.parametrize("args", [
    ["ctx=-5&duty=abc&<script>=1&model=%00"],
    [b"ctx=\xff&\xfe=1&model=\xc3"],                       # bytes that are not UTF-8
    ["https://calc.example/fit?ctx=2048&ctx=4096#ctx=1"],
    ["ctx=" + "9" * 100_000],                              # close to the kernel's limit for one argument
    ["\u202e" + "x=1&" * 200 + "ctx=١٢٣&duty=1e309&eff=nan&hours=-0"],
    ["-5"],
], ids=["hostile-link", "not-utf8", "url-fragment", "huge-number", "rtl-many-keys-unicode", "dash-number"])
def test_command_line_process_on_nasty_args(args):
    out = run_cli(*args)
    assert b"Traceback" not in out.stderr, out.stderr.decode(errors="replace")
    check_cli_output(out.returncode, out.stdout.decode(), out.stderr.decode(errors="surrogateescape"))


def test_command_line_refuses_an_oversized_config_file(tmp_path):
    big = tmp_path / "config.json"
    big.write_text('{"pad": "' + "x" * 2_000_000 + '"}')
    out = run_cli("--hf-config", str(big), limit_memory=True)
    assert out.returncode == 2 and b"Traceback" not in out.stderr
    assert b"allowed" in out.stderr


# ---------------------------------------------------------------- the app (AppTest)


def app_errors_named(at) -> set[str]:
    """Check every error box the app shows; return the link keys named as rejected."""
    named: set[str] = set()
    for box in at.error:
        text = texts([box])  # as a reader sees it: Markdown escapes removed
        if text.startswith("Some values could not be used"):
            bullets = [line for line in text.splitlines() if line.startswith("- ")]
            assert bullets, text
            for line in bullets:
                # Each bullet opens with the field's name as the sidebar shows it, then its link key.
                m = re.match(r"- \*\*([^*]+)\*\*: (\w+)=", line)
                assert m and m.group(2) in KEYS and f"{m.group(2)} takes" in line, line
                assert m.group(1) == KEYS[m.group(2)].label, line
                named.add(m.group(2))
        elif "is not accepted" in text:
            m = re.match(r"(\w+)=", text)
            assert m and m.group(1) in KEYS and f"{m.group(1)} takes" in text, text
            named.add(m.group(1))
        else:  # figures, not input: the weights or the cache do not fit
            assert "Traceback" not in text and "Error" not in text, text
    return named


short_values = st.one_of(st.sampled_from(WORDS), st.sampled_from(PRESET_IDS), numbers, unicode_digits,
                         st.text(max_size=30), st.builds(lambda s, n: s * n, st.text(min_size=1, max_size=4),
                                                         st.integers(10, 500)))


def no_surrogates(v: str) -> str:
    """A browser's address bar carries UTF-8: lone surrogates cannot reach the app (AppTest cannot send them)."""
    return v.encode("utf-8", "replace").decode("utf-8")


#: The app's query strings and the check of what the app then shows (used by tests/test_fuzz_app.py).
app_params = st.dictionaries(keys.map(no_surrogates), short_values.map(no_surrogates), max_size=10)


def check_app(at, params):
    assert not at.exception, [e.value for e in at.exception]
    named = app_errors_named(at)
    parsed = parse(params)
    # Every value calc rejects is named in the app, too.
    assert {e.key for e in parsed.errors} <= named, ({e.key for e in parsed.errors}, named)
    # Streamlit keeps its own embed-mode keys (?embed=true) in the address bar; every other key is ours.
    link = {k: v for k, v in dict(at.query_params).items() if k.lower() not in STREAMLIT_EMBED_KEYS}
    assert set(link) <= set(KEYS)
    # The address bar holds calc's own complete link for this input, each rejected key still as it was given
    # (so the link shows what was asked for, not a silent default; a value refused by a rule beside the others
    # too, until an input changes); read again, it is rejected the same way.
    expected = parsed.scenario.to_params()
    given = {k: v[-1] if isinstance(v, list) else v for k, v in params.items()}
    expected.update({e.key: str(given[e.key]) for e in parsed.errors if e.key in given and not e.rule})
    # A rule's refusal is kept too where the link, read again, is refused on the same keys with the same figures.
    by_rule = {e.key: str(given[e.key]) for e in parsed.errors if e.key in given and e.rule}
    if by_rule:
        again = parse({**expected, **by_rule})
        if again.scenario == parsed.scenario and {e.key for e in again.errors} <= {e.key for e in parsed.errors}:
            expected.update(by_rule)
    assert link == expected
    again = parse(link)
    assert {e.key for e in again.errors} <= {e.key for e in parsed.errors}, [e.message for e in again.errors]


HOSTILE_CONFIGS = [
    "", "   ", "{", "[]", "1", '"config"', "null", "true", "NaN", '{"hidden_size": NaN}',
    '{"hidden_size": Infinity}', '{"hidden_size": -Infinity}', '{"hidden_size": 1e400}',
    '{"num_hidden_layers": 1' + "0" * 5000 + "}", "[" * 100_000 + "]" * 100_000, '{"a":' * 25 + "1" + "}" * 25,
    '{"a": 1, "a": 2}', '{"pad": "' + "x" * 1_000_001 + '"}', "\x00{}", '{"text_config": []}',
    '{"num_hidden_layers": true, "hidden_size": 4096, "num_attention_heads": 32, "vocab_size": 1000}',
]


# ---------------------------------------------------------------- config.json


def hf_checked(text):
    """from_hf_config_json either returns link keys calc can read, or raises HFConfigError: nothing else."""
    try:
        shape = from_hf_config_json(text)
    except HFConfigError as exc:
        assert str(exc).startswith(f"{exc.field}: ")
        return None
    assert shape["model"] == "custom"
    parsed = parse(shape)  # it may be out of the link's ranges, but parsing never raises
    for err in parsed.errors:
        check_field_error(err)
    return shape


@pytest.mark.parametrize("text", HOSTILE_CONFIGS, ids=[f"hostile-{i}" for i in range(len(HOSTILE_CONFIGS))])
def test_config_json_hostile_documents_raise_only_hf_config_error(text):
    with pytest.raises(HFConfigError):
        from_hf_config_json(text)
    with pytest.raises(HFConfigError):
        from_hf_config_json(text.encode("utf-8", errors="surrogatepass"))


@pytest.mark.parametrize("blob", [b"\xff\xfe{\x00}\x00", b"\x89PNG\r\n\x1a\n", b"\xc3\x28",
                                  b"{\"a\": \"\xed\xa0\x80\"}", b"\xef\xbb\xbf[]", bytes(range(256)), b" " * 1_000_001],
                         ids=["utf16", "png", "bad-utf8", "surrogate-utf8", "bom-array", "all-bytes", "oversized"])
def test_config_json_binary_raises_only_hf_config_error(blob):
    with pytest.raises(HFConfigError):
        from_hf_config_json(blob)


@pytest.mark.parametrize("thing", [None, 1, 1.5, {}, [], object()], ids=lambda t: type(t).__name__)
def test_config_json_of_a_non_text_raises_hf_config_error(thing):
    with pytest.raises(HFConfigError):
        from_hf_config_json(thing)


json_values = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(-(10**25), 10**25), st.floats(), st.text(max_size=10)),
    lambda inner: st.one_of(st.lists(inner, max_size=5), st.dictionaries(st.text(max_size=8), inner, max_size=5)),
    max_leaves=30)


@pytest.mark.slow
@settings(max_examples=600, **FUZZ)
@given(st.one_of(json_values.map(lambda v: json.dumps(v, allow_nan=True)), st.binary(max_size=300),
                 st.text(max_size=300)))
def test_config_json_random_documents(text):
    hf_checked(text)


FIELDS = ["num_hidden_layers", "hidden_size", "num_attention_heads", "num_key_value_heads", "head_dim", "vocab_size",
          "intermediate_size", "moe_intermediate_size", "num_local_experts", "n_routed_experts", "num_experts",
          "num_experts_per_tok", "n_shared_experts", "sliding_window", "layer_types", "tie_word_embeddings",
          "text_config", "kv_lora_rank", "q_lora_rank", "qk_rope_head_dim", "qk_nope_head_dim", "v_head_dim",
          "model_type", "architectures", "attention_bias", "first_k_dense_replace", "mlp_only_layers",
          "decoder_sparse_step", "attention_chunk_size", "use_sliding_window", "max_window_layers"]
# sampled_from hands every example the very same object: the lists and dicts among these values are
# copied on each draw, or one example's edits would leak into the next (and into the value itself).
odd_json = st.one_of(
    st.sampled_from([0, -1, 1, 2, 3, 7, 1.5, 4096.0, 1e300, 10**30, 2**63, -(2**63), True, False, None, "", "4096",
                     [], {}, [1, 2], ["full_attention"], ["sliding_attention"] * 3, {"hidden_size": 0}])
    .map(copy.deepcopy),
    st.integers(-10, 10**7), json_values)
SHARED_VALUE = {"hidden_size": 0}


@pytest.mark.slow
@settings(max_examples=800, **FUZZ)
@given(st.sampled_from(HF_FIXTURES), st.lists(st.tuples(st.sampled_from(FIELDS), odd_json), min_size=1, max_size=4),
       st.booleans())
# One object given twice, once as text_config and once as a field inside it: edited in place, it would contain itself.
@example(HF_FIXTURES[0], [("text_config", SHARED_VALUE), ("num_hidden_layers", SHARED_VALUE)], False)
def test_config_json_mutated_real_configs(path, changes, as_bytes):
    config = json.loads(path.read_text())
    for field, value in changes:
        target = config["text_config"] if isinstance(config.get("text_config"), dict) and field != "text_config" \
            else config
        target[field] = copy.deepcopy(value)  # drawn values are never edited: the config gets its own copy
    text = json.dumps(config, allow_nan=True)
    hf_checked(text.encode() if as_bytes else text)


# ---------------------------------------------------------------- regressions (bugs once found here)


@pytest.mark.parametrize("link", ["&" * 1000, "a=1&" * 1000, "ctx=4096" + "&" * 1000])
def test_bug_b1_a_query_string_of_many_fields_parses(link):
    # Over 1,000 fields the app's server ignores the whole query: parse names the link, never raises.
    parsed = parse(link)
    assert [e.key for e in parsed.errors] == ["link"]


def test_bug_b1_command_line_many_fields():
    # 1,001 fields: more than the app's server reads, so the command line refuses the link as a whole.
    out = run_cli("a=1&" * 1000)
    assert out.returncode == 2, (out.returncode, out.stderr)
    check_cli_output(out.returncode, out.stdout.decode(), out.stderr.decode())
    assert out.stderr.decode().startswith("error: link=")


TINY = ["bw_tbs=5e-324", "tflops=1e-301", "eff=1e-304", "duty=5e-324", "hours=1e-300", "card=custom&bw_tbs=1e-304"]


@pytest.mark.parametrize("link", TINY)
def test_bug_b2_tiny_values_give_a_strict_report_or_a_named_error(link):
    tiny_key = link.rsplit("&", 1)[-1].split("=")[0]
    try:
        r = report(link)
    except ScenarioError as exc:  # acceptable when it names the tiny value's key
        assert tiny_key in [e.key for e in exc.errors], exc.errors
        for err in exc.errors:
            check_field_error(err)
        return
    json.dumps(r, allow_nan=False)


@pytest.mark.parametrize("link", ["bw_tbs=5e-324", "hours=1e-300"])
def test_bug_b2_command_line_tiny_values(link):
    # Both are below their key's range (bw_tbs from 0.001, hours from 1): exit 2 naming the key.
    out = run_cli(link)
    assert b"Traceback" not in out.stderr
    assert out.returncode == 2, (out.returncode, out.stderr)
    check_cli_output(out.returncode, out.stdout.decode(), out.stderr.decode())
    assert out.stderr.decode().startswith(f"error: {link.split('=')[0]}=")


def test_bug_b3_command_line_config_file_is_read_with_a_limit():
    out = run_cli("--hf-config", "/dev/zero", limit_memory=True, timeout=120)
    assert out.returncode == 2 and b"Traceback" not in out.stderr


@pytest.mark.parametrize("key, value", [("duty", "0.005"), ("hours", "0.5"), ("bw_tbs", "0.0005"),
                                        ("req_day", "0.5"), ("eff", "0.005")])
def test_bug_b4_app_keeps_a_valid_link_value_or_names_it(key, value):
    at = open_app({key: value})
    assert at.query_params[key] == value or f"{key}=" in texts(at.error)


def test_bug_b5_config_import_out_of_link_range_is_named():
    config = json.loads((ROOT / "tests" / "fixtures" / "hf" / "llama-3.1-8b.json").read_text())
    config["sliding_window"] = 500_000_000
    at = open_app({})
    at.text_area(key="_hf_text").input(json.dumps(config))
    next(b for b in at.button if b.label == "Use this config").click().run()
    assert not at.exception
    assert at.query_params["window"] == "500000000" or any("window" in str(e.value) for e in at.error)


def test_bug_b6_derived_hidden_stays_a_valid_link():
    parsed = parse("model=custom&heads=1024&head_dim=1024")
    again = parse(parsed.scenario.to_query())
    assert not parsed.errors and not again.errors
    assert again.scenario == parsed.scenario
