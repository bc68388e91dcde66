"""Cross-check of ``calc.report`` against the independent reference in ``reference_model``.

The reference is itself checked against the tables of docs/worked-examples.md first (under ``engine=roofline``, where they
hold); then random valid scenarios (every key of docs/method.md, under every engine profile) must give
the same report from both.
"""

from __future__ import annotations

import itertools
import math
from urllib.parse import parse_qsl

import pytest
from hypothesis import HealthCheck, assume, currently_in_test_context, example, given, settings
from hypothesis import strategies as st

from calc import catalogue
from calc import report as calc_report
from calc.scenario import ScenarioError

try:
    from tests.reference_model import ENGINES, KV_BITS, WEIGHT_BITS, reference_report
except ImportError:  # tests/ on sys.path instead of the repository root
    from reference_model import ENGINES, KV_BITS, WEIGHT_BITS, reference_report

SEED = (
    "engine=roofline&model=custom&params_b=70&layers=80&heads=64&kv_heads=8&head_dim=128&card=custom&mem_gib=80"
    "&bw_tbs=3.35&tflops=989&weights=4&kv=fp16&ctx=8192&attn=0&batch=17&duty=0.3&eff=0.7"
    "&overhead_gib=4&usd_hr=2.5&upkeep=0"
)


def q(query: str, **over) -> dict:
    """A query string as a mapping, with overrides."""
    p = dict(kv.split("=", 1) for kv in query.split("&"))
    p.update({k: str(v) for k, v in over.items()})
    return p


# ------------------------------------------------------------------------------------------
# The reference against docs/worked-examples.md.
# ------------------------------------------------------------------------------------------

def test_seed_case():
    r = reference_report(q(SEED))
    assert round(r["step_ms"], 2) == 14.93
    assert round(r["usd_per_mtok_rent"], 2) == 2.03
    assert r["max_batch"] == 17
    assert r["batch"] == 17 and r["fits"] is True
    assert r["monthly_usd"] == pytest.approx(1800)
    assert r["comm_ms"] == 0


@pytest.mark.parametrize(
    "mem_bw_tf, be16, be4",
    [((80, 3.35, 989), 295, 74), ((80, 2.04, 312), 153, 38), ((48, 0.864, 362), 419, 105)],
)
def test_break_even_table(mem_bw_tf, be16, be4):
    mem, bw, tf = mem_bw_tf
    for bits, want in ((16, be16), (4, be4)):
        r = reference_report(q(SEED, mem_gib=mem, bw_tbs=bw, tflops=tf, weights=bits))
        assert round(r["break_even_batch"]) == want


def test_kv_table():
    r = reference_report(q(SEED))
    assert r["kv_bytes_per_token"] == 320 * 1024
    assert round(r["kv_gib_per_sequence"], 2) == 2.50
    fits = {16: (0, 0, 0), 8: (17, 4, 1), 4: (69, 17, 4)}
    for bits, want in fits.items():
        got = tuple(reference_report(q(SEED, weights=bits, ctx=c))["max_batch"] for c in (2048, 8192, 32768))
        assert got == want, bits
    assert reference_report(q(SEED, weights=16))["fits"] is False


def test_batch_table():
    batches = (1, 4, 16, 17, 64, 74, 256)
    step = (14.93, 14.93, 14.93, 14.93, 14.93, 14.96, 51.77)
    tok = (67, 268, 1072, 1139, 4288, 4945, 4945)
    usd = (10.365, 2.591, 0.648, 0.610, 0.162, 0.140, 0.140)
    for b, s, t, u in zip(batches, step, tok, usd, strict=True):
        r = reference_report(q(SEED, batch=b, duty=1))
        assert round(r["step_ms"], 2) == s, b
        assert round(r["tok_s"]) == t, b
        assert round(r["usd_per_mtok_rent"], 3) == u, b


def test_duty_table():
    table = {1: (103.65, 34.55, 17.27, 10.36), 17: (6.10, 2.03, 1.02, 0.61), 74: (1.40, 0.47, 0.23, 0.14)}
    for b, row in table.items():
        for duty, want in zip((0.1, 0.3, 0.6, 1.0), row, strict=True):
            r = reference_report(q(SEED, batch=b, duty=duty))
            assert abs(r["usd_per_mtok_rent"] - want) <= 0.005 + 1e-9, (b, duty)
    assert reference_report(q(SEED))["monthly_usd"] == pytest.approx(1800)


@pytest.mark.parametrize(
    "wbits, kvbits, batch, total, fits",
    [(16, 16, 16, 30.9, False), (8, 16, 16, 23.5, True), (4, 16, 16, 19.7, True),
     (4, 8, 16, 11.7, True), (4, 8, 32, 19.7, True)],
)
def test_8b_on_24gib_table(wbits, kvbits, batch, total, fits):
    r = reference_report(q(
        SEED, params_b=8, layers=32, kv_heads=8, heads=32, mem_gib=24, overhead_gib=0, ctx=8192,
        weights=wbits, kv=kvbits, batch=batch,
    ))
    assert round(r["weights_gib"] + batch * r["kv_gib_per_sequence"], 1) == total
    assert (r["max_batch"] >= batch) is fits


def test_single_stream_floor():
    for bits, ms in ((16, 8.0), (4, 2.0)):
        r = reference_report(q(SEED, params_b=8, layers=32, bw_tbs=2, eff=1, batch=1, weights=bits))
        assert r["step_ms"] == pytest.approx(ms)


#: Links that break a consistency rule of docs/method.md sections 2-5, with the key the error must name.
RULE_BREAKS = [
    ({"kv_heads": 99}, "kv_heads"), ({"window": 10, "window_layers": 81}, "window_layers"),
    ({"experts": 8, "experts_active": 8, "active_b": 20}, "experts_active"),
    ({"embed_b": 70}, "embed_b"), ({"active_b": 71}, "active_b"),
    ({"experts": 8, "experts_active": 2, "active_b": 10, "embed_b": 5}, "active_b"),
]


@pytest.mark.parametrize(
    "over, key",
    [*RULE_BREAKS,
     ({"batch": 0}, "batch"), ({"eff": 1.5}, "eff"), ({"weights": 33}, "weights"),
     ({"kv": "int3"}, "kv"), ({"attn": 2}, "attn"), ({"gpus": "two"}, "gpus"),
     ({"duty": 0}, "duty"), ({"peak": 0.5}, "peak"), ({"out_tok": 0}, "out_tok"),
     ({"tpot_ms": 0}, "tpot_ms"), ({"experts": 1}, "experts"), ({"compute": "fp2"}, "compute")],
)
def test_reference_rejects(over, key):
    with pytest.raises(ValueError, match=key):
        reference_report(q(SEED, **over))


def test_reference_rejects_missing_precision():
    peaks = catalogue.cards()["a100-80gb"]["peaks"]
    assert peaks["fp8"] is None
    with pytest.raises(ValueError, match="compute"):
        reference_report({"card": "a100-80gb", "compute": "fp8"})


def test_reference_section_6_basics():
    r = reference_report(q(SEED, req_day=10000, in_tok=1000, out_tok=300, tpot_ms=0.01))
    assert r["serving_batch"] == 1 and r["meets_tpot"] is False
    big = reference_report({"model": "llama-3.1-405b", "weights": "bf16", "gpus": 1})
    assert big["verdict"] == "does not fit" and big["replicas"] is None
    assert big["break_even_req_day"] is None and big["self_host_usd_month"] is None


# ------------------------------------------------------------------------------------------
# Random scenarios.
# ------------------------------------------------------------------------------------------

def _floats(lo, hi):
    return st.floats(lo, hi, allow_nan=False, allow_infinity=False, allow_subnormal=False)


BITS = st.one_of(st.integers(1, 32), _floats(1, 32))
SIZES = st.one_of(st.integers(1, 4096), st.integers(4096, 262144))


def _keep_a_holdable_shape(p: dict, models) -> None:
    """Widen or narrow ``hidden`` so the drawn shape can hold its parameters (docs/method.md section 1: 1e-4 to
    1e7 hidden^2 a layer); every other drawn figure stays."""
    custom = p.get("model") == "custom"
    b = models["llama-3.1-70b" if custom else p.get("model", "llama-3.1-70b")]
    P = float(p.get("params_b", b["params_b"]))
    Pa = float(p.get("active_b", P if custom or not b["experts"] else b["active_b"]))
    Pe = float(p.get("embed_b", 0.0 if custom else b["embed_b"]))
    L = int(p.get("layers", b["layers"]))
    if custom:
        hid = int(p.get("hidden", int(p.get("heads", p.get("kv_heads", b["kv_heads"]))) * int(p.get("head_dim", b["head_dim"]))))
    else:
        hid = int(p.get("hidden", b["hidden"]))
    if (P - Pe) * 1e9 / (L * hid ** 2) > 1e7:
        p["hidden"] = math.ceil(math.sqrt((P - Pe) * 1e9 / (L * 1e7))) + 1
    elif (Pa - Pe) * 1e9 / (L * hid ** 2) < 1e-4:
        p["hidden"] = max(1, math.floor(math.sqrt((Pa - Pe) * 1e9 / (L * 1e-4))) - 1)


@st.composite
def scenarios(draw):
    models, cards, apis = catalogue.models(), catalogue.cards(), catalogue.apis()
    p: dict = {}
    maybe = lambda: draw(st.booleans())  # noqa: E731  include an optional key?

    # --- model ---------------------------------------------------------------------------
    kind = draw(st.sampled_from(["default", "preset", "preset", "preset", "dense", "moe", "mla", "window", "all"]))
    if kind in ("default", "preset"):
        mid = "llama-3.1-70b"
        if kind == "preset":
            mid = p["model"] = draw(st.sampled_from(sorted(models)))
        b = models[mid]
        L, H, Hkv = b["layers"], b["heads"], b["kv_heads"]
        P, Pa, Pe, E, k = b["params_b"], b["active_b"], b["embed_b"], b["experts"], b["experts_active"]
        if not E:
            Pa = P
            if maybe():
                P = Pa = p["params_b"] = draw(_floats(Pe + 0.05, 1000))
        if maybe():
            L = p["layers"] = draw(st.integers(max(1, b["window_layers"] + b["linear_layers"]), 160))
        if maybe():
            H = p["heads"] = Hkv * draw(st.integers(1, max(1, 256 // Hkv)))
        if maybe():
            Hkv = p["kv_heads"] = draw(st.sampled_from([d for d in range(1, H + 1) if H % d == 0]))
        if maybe():
            p["head_dim"] = draw(st.sampled_from([32, 64, 96, 128, 192, 256]))
        if maybe():
            p["hidden"] = draw(st.integers(64, 20000))
        if maybe():
            dense_part = P if not E else P - (P - Pa) / (1 - k / E)
            p["embed_b"] = draw(_floats(0, 0.98)) * min(0.9 * Pa, dense_part)  # D - Pe > 0
        if maybe() and b["window"]:
            p["window"] = draw(SIZES)
        if maybe():
            p["window_layers"] = draw(st.integers(0, L - b["linear_layers"]))
            if not b["window"] and maybe():
                p["window"] = draw(SIZES)
        if maybe() and b["kv_latent"]:
            p["kv_latent"] = draw(st.integers(16, 2048))
    else:
        p["model"] = "custom"
        P = p["params_b"] = draw(_floats(0.05, 1000))
        L = draw(st.integers(1, 128))
        if maybe() or kind in ("window", "all"):
            p["layers"] = L
        else:
            L = models["llama-3.1-70b"]["layers"]
        Hkv = p["kv_heads"] = draw(st.integers(1, 32))
        if maybe():
            p["heads"] = Hkv * draw(st.integers(1, 8))
        if maybe():
            p["head_dim"] = draw(st.sampled_from([32, 64, 80, 96, 128, 256]))
        if maybe():
            p["hidden"] = draw(st.integers(64, 20000))
        pe = draw(_floats(0, 0.3)) * P if maybe() else 0.0
        if pe:
            p["embed_b"] = pe
        if kind in ("moe", "all"):
            E = p["experts"] = draw(st.integers(2, 256))
            k = p["experts_active"] = draw(st.integers(1, E - 1))
            M = draw(_floats(0, 0.98)) * (P - pe)  # keeps D - Pe >= 0
            p["active_b"] = P - M * (1 - k / E)
        elif maybe():
            p["active_b"] = min(P, pe + draw(_floats(0.02, 1)) * (P - pe))  # (rounding can pass P by an ulp)
        if kind in ("mla", "all"):
            p["kv_latent"] = draw(st.integers(16, 2048))
        if kind in ("window", "all"):
            p["window"] = draw(SIZES)
            p["window_layers"] = draw(st.integers(0, L))

    _keep_a_holdable_shape(p, models)

    # --- the parts of section 2.1 and the linear attention of section 2.3 -------------------
    layers_now = int(p.get("layers", models[p.get("model", "llama-3.1-70b")]["layers"]
                         if p.get("model") != "custom" else L))
    if maybe():
        p["vocab"] = draw(st.integers(1000, 300000))
    if maybe():
        preset = models.get(p.get("model", "llama-3.1-70b"), {})
        windowed = int(p.get("window_layers", preset.get("window_layers", 0))) \
            if float(p.get("window", preset.get("window", 0)) or 0) else 0
        p["linear_layers"] = draw(st.integers(0, max(0, layers_now - windowed)))
        if maybe():
            p["state_kib"] = draw(_floats(1, 8192))
        if maybe():  # a state beside attention in some layers too (Falcon-H1: every layer)
            p["state_layers"] = draw(st.integers(p["linear_layers"], max(p["linear_layers"], layers_now)))
    if maybe():
        p["layers_full"] = draw(st.integers(0, layers_now))
    for key in ("weights_attn", "weights_embed"):
        if maybe():
            p[key] = draw(st.sampled_from(sorted(WEIGHT_BITS)) if maybe() else BITS)

    # --- card ----------------------------------------------------------------------------
    ckind = draw(st.sampled_from(["default", "preset", "preset", "custom"]))
    cid = "h100-sxm"
    if ckind == "preset":
        cid = p["card"] = draw(st.sampled_from(sorted(cards)))
    elif ckind == "custom":
        p["card"] = "custom"
    peaks = cards[cid]["peaks"]
    have = [c for c in ("bf16", "fp16", "fp8", "int8", "fp4") if peaks.get(c) is not None]
    if maybe() or peaks.get("bf16") is None:
        p["compute"] = draw(st.sampled_from(have))
    for key, strat in (
        ("mem_gib", _floats(4, 300)), ("bw_tbs", _floats(0.05, 10)), ("tflops", _floats(5, 5000)),
        ("usd_hr", _floats(0, 20)), ("link_gbs", _floats(1, 1800)), ("link_us", _floats(0, 50)),
        ("clock_ghz", _floats(0.5, 4)),
    ):
        if maybe():
            p[key] = draw(strat)
    if ckind == "custom" and maybe():  # a custom card named by its family: that family's eff_card
        p["arch"] = draw(st.sampled_from(["turing", "hopper", "unknown"]))
    if maybe():
        p["eff_card"] = draw(_floats(0.3, 1))
    if maybe():  # several cards: KV heads copied when gpus does not divide kv_heads, or exceeds it
        p["gpus"] = draw(st.sampled_from([1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 64]))

    # --- run settings --------------------------------------------------------------------
    if maybe():
        p["weights"] = draw(st.sampled_from(sorted(WEIGHT_BITS)) if maybe() else BITS)
    if maybe():
        p["weights_experts"] = draw(st.sampled_from(sorted(WEIGHT_BITS)) if maybe() else BITS)
    if maybe():
        p["kv"] = draw(st.sampled_from(sorted(KV_BITS)) if maybe() else BITS)
    if maybe():
        p["ctx"] = "auto" if maybe() else draw(SIZES)
    if maybe():
        p["batch"] = "auto" if maybe() else draw(st.integers(1, 1024))
    if maybe():
        p["attn"] = draw(st.sampled_from([0, 1]))
    for key, strat in (
        ("eff", _floats(0.05, 1)), ("overhead_gib", _floats(0, 16)), ("duty", _floats(0.01, 1)),
        ("upkeep", _floats(0, 20000)), ("hours", _floats(1, 744)),
    ):
        if maybe():
            p[key] = draw(strat)

    # --- traffic -------------------------------------------------------------------------
    if maybe():
        p["req_day"] = draw(st.one_of(_floats(10, 1e4), _floats(1e4, 1e7)))
    if maybe():
        p["in_tok"] = draw(st.integers(0, 32768))
    if maybe():
        p["out_tok"] = draw(st.integers(1, 8192))
    if maybe():
        p["peak"] = draw(_floats(1, 10))
    if maybe():
        p["tpot_ms"] = 0.01 if maybe() else draw(_floats(0.5, 500))
    if maybe():
        p["api"] = draw(st.sampled_from(sorted(apis)))
    for key in ("api_in", "api_out"):
        if maybe():
            p[key] = draw(_floats(0, 100))

    # --- engine (docs/method.md section 8) -----------------------------------------------------------
    if maybe():
        p["engine"] = draw(st.sampled_from(ENGINES))
    for key, strat in (
        ("eff_bw", _floats(0.05, 1)), ("eff_kv", _floats(0.05, 1)), ("eff_flops", _floats(0.05, 1)),
        ("step_us", _floats(0, 5000)), ("mem_util", _floats(0.5, 1)), ("tok_us", _floats(0, 50)),
        ("eff_link", _floats(0.05, 1)), ("layer_us", _floats(0, 300)), ("eff_dequant", _floats(0.3, 1)),
        ("kv_reread", _floats(0, 1)), ("eager_us", _floats(0, 300)), ("eff_fp4", _floats(0.1, 1)),
        ("eff_fp8", _floats(0.1, 1)), ("expert_us", _floats(0, 50)), ("eff_prefill", _floats(0.05, 1)), ("layer_ghz", _floats(0, 4)),
        ("overlap", _floats(0, 1)),
    ):
        if draw(st.integers(0, 3)) == 0:
            p[key] = draw(strat)
    if draw(st.integers(0, 3)) == 0:
        p["max_seqs"] = draw(st.integers(1, 65536))
    # --- the engine's memory (docs/method.md section 8.2) -----------------------------------------
    if maybe():
        p["max_batched_tokens"] = draw(st.integers(1, 65536))
    if maybe():
        p["cuda_graphs"] = draw(st.sampled_from([0, 1]))
    if maybe():
        p["flash_attn"] = draw(st.sampled_from([0, 1]))
    if maybe() and "mem_gib" in p:
        p["torch_gib"] = draw(_floats(0.5, 1)) * float(p["mem_gib"])

    # --- owning, the day's profile, mixing (SPEC section 9) -------------------------------------
    for key, strat in (
        ("card_usd", _floats(100, 100000)), ("server_frac", _floats(0, 2)), ("years", _floats(0.5, 10)),
        ("wacc", _floats(0, 0.3)), ("residual", _floats(0, 0.9)), ("power_w", _floats(50, 2000)),
        ("idle_frac", _floats(0, 1)), ("pue", _floats(1, 3)), ("usd_kwh", _floats(0, 1)), ("colo_usd", _floats(0, 500)),
    ):
        if draw(st.integers(0, 3)) == 0:
            p[key] = draw(strat)
    if maybe():
        p["profile"] = draw(st.sampled_from(["flat", "office", "evening"])) if maybe() else \
            ",".join(repr(x) for x in draw(st.lists(_floats(0, 10), min_size=24, max_size=24).filter(any)))
        if maybe():
            p["autoscale"] = draw(st.sampled_from([0, 1]))
        if maybe():
            p["min_replicas"] = draw(st.integers(0, 5))
    if draw(st.integers(0, 5)) == 0:
        p["why"] = "residency"
    if draw(st.integers(0, 3)) == 0:  # a finite benchmark run (docs/method.md section 8.1)
        p["run_prompts"] = draw(st.integers(0, 300))
        if maybe():
            p["out_spread"] = draw(st.sampled_from(["none", "exp"]))
        if maybe():
            p["out_max"] = draw(st.integers(0, 4096))  # below out_tok: both refuse it, naming out_max

    # --- levers (SPEC section 8) -----------------------------------------------------------------
    if maybe():
        p["spec_k"] = draw(st.integers(0, 16))
    for key, strat in (
        ("spec_alpha", _floats(0, 0.999)), ("spec_c", _floats(0, 2)), ("prefix_hit", _floats(0, 1)),
        ("api_cached", _floats(0, 50)), ("discount", _floats(0, 0.99)),
    ):
        if draw(st.integers(0, 2)) == 0:
            p[key] = draw(strat)

    if draw(st.booleans()):  # the same scenario as link text
        p = {k: v if isinstance(v, str) else repr(v) for k, v in p.items()}
    return p


# ------------------------------------------------------------------------------------------
# Comparison.
# ------------------------------------------------------------------------------------------

def _same(want, got) -> bool:
    if isinstance(want, dict):  # the reference's keys (calc may say more, e.g. a figure's basis)
        return isinstance(got, dict) and all(k in got and _same(v, got[k]) for k, v in want.items())
    if isinstance(want, list):
        return isinstance(got, list) and len(want) == len(got) and all(_same(a, b) for a, b in zip(want, got, strict=False))
    if want is None or got is None or isinstance(want, (bool, str)) or isinstance(got, (bool, str)):
        return type(want) is type(got) and want == got
    if isinstance(want, int) and isinstance(got, int):
        return want == got
    return math.isclose(want, got, rel_tol=1e-6, abs_tol=1e-12)


def _as_number(key, value):
    table = WEIGHT_BITS if key in ("weights", "weights_experts", "weights_attn", "weights_embed") \
        else KV_BITS if key == "kv" else {}
    if isinstance(value, str) and value.strip().lower() in table:
        return table[value.strip().lower()]
    try:
        return float(value)
    except (TypeError, ValueError):
        return value


def _scenario_same(key, given, got, scenario) -> bool:
    if key == "profile" and "," in str(given):  # 24 weights: the same numbers, however written
        return [float(x) for x in str(given).split(",")] == [float(x) for x in str(got).split(",")]
    if key == "peak" and scenario.get("profile"):
        return True  # SPEC section 9: a profile's shape replaces the peak key
    if key == "window_layers" and float(scenario.get("window") or 0) == 0:
        return True  # without a window the layer count has no effect; calc may print 0 for it
    if key in ("batch", "ctx", "duty") and str(given).strip().lower() == "auto":
        return got == "auto"
    if key == "engine":
        return str(given).strip() == got
    a, b = _as_number(key, given), _as_number(key, got)
    if isinstance(a, float) and isinstance(b, float):
        return math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-12)
    return str(a).strip() == str(b).strip()


#: The reference model prices every fleet size from none to the replicas one by one (SPEC section 9's mixed
#: fleet), so a scenario of millions of replicas (a many-expert MoE prefilled in chunks of a few tokens, say) would
#: take it minutes: such draws are left out, the closed forms they exercise are drawn at every other size.
MAX_REFERENCE_REPLICAS = 100_000


def assert_agrees(params):
    try:
        first = calc_report(params)
    except ScenarioError:
        first = None
    if first is not None and (first.get("replicas") or 0) > MAX_REFERENCE_REPLICAS:
        assert currently_in_test_context(), "a hand-written example must stay within MAX_REFERENCE_REPLICAS"
        assume(False)
    try:
        ref = reference_report(params)
    except ValueError as refused:
        # The reference refuses the scenario (an engine's tensor-parallel rule): calc must refuse it too,
        # naming the same key.
        key = str(refused).split(":")[0]
        with pytest.raises(ScenarioError) as exc:
            calc_report(params)
        assert key in {e.key for e in exc.value.errors}, (refused, exc.value.errors)
        return
    got = first if first is not None else calc_report(params)
    diffs = [
        f"{key}: reference {want!r} != calc {got.get(key, '<missing>')!r}"
        for key, want in ref.items()
        if key not in ("scenario", "warnings") and (key not in got or not _same(want, got[key]))
    ]
    scen = got.get("scenario", {})
    diffs += [
        f"scenario[{key}]: given {value!r} != calc {scen.get(key, '<missing>')!r}"
        for key, value in params.items()
        if key not in scen or not _scenario_same(key, value, scen[key], scen)
    ]
    assert isinstance(got.get("warnings"), list)
    assert not diffs, "\n".join(diffs)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(scenarios())
@example(q(SEED))
@example({"model": "llama-3.1-405b", "weights": "bf16", "gpus": "1", "req_day": "10"})
@example({"model": "deepseek-v3", "gpus": "8", "card": "h200-sxm", "tpot_ms": "0.01", "req_day": "1e7"})
@example({"model": "gpt-oss-120b", "kv": "fp8", "weights": "4.25", "batch": "auto", "in_tok": "0"})
@example({"model": "mixtral-8x7b", "gpus": "2", "link_gbs": "32", "link_us": "0", "tpot_ms": "30"})
# A region whose own rows' band is wider than the engine's (docs/calibration.md section 6).
@example({"model": "qwen3-30b-a3b", "card": "b200", "weights": "nvfp4", "kv": "fp8", "compute": "fp4",
          "engine": "trtllm", "req_day": "200000"})
def test_reference_agreement(params):
    assert_agrees(params)


@pytest.mark.parametrize("engine", ENGINES)
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(params=scenarios())
def test_reference_agreement_under_every_engine(engine, params):
    """docs/method.md section 8 under each profile's own figures (and whatever figures the link overrides)."""
    assert_agrees({**params, "engine": engine})


@st.composite
def every_figure(draw):
    """Every profile figure given in the link: the report must follow docs/method.md section 8 with exactly these figures,
    whatever the engine named."""
    return {"engine": draw(st.sampled_from(ENGINES)), "eff_bw": repr(draw(_floats(0.05, 1))),
            "eff_kv": repr(draw(_floats(0.05, 1))), "eff_flops": repr(draw(_floats(0.05, 1))),
            "step_us": repr(draw(_floats(0, 10000))), "mem_util": repr(draw(_floats(0.3, 1))),
            "max_seqs": str(draw(st.integers(1, 4096))), "overhead_gib": repr(draw(_floats(0, 8))),
            "tok_us": repr(draw(_floats(0, 100))), "eff_link": repr(draw(_floats(0.05, 1))),
            "layer_us": repr(draw(_floats(0, 300))), "eff_dequant": repr(draw(_floats(0.3, 1))),
            "kv_reread": repr(draw(_floats(0, 1))), "eager_us": repr(draw(_floats(0, 300))),
            "eff_fp4": repr(draw(_floats(0.1, 1))), "eff_fp8": repr(draw(_floats(0.1, 1))),
            "expert_us": repr(draw(_floats(0, 50))),
            "eff_prefill": repr(draw(_floats(0.05, 1))), "cuda_graphs": str(draw(st.integers(0, 1))),
            "layer_ghz": repr(draw(_floats(0, 4))), "clock_ghz": repr(draw(_floats(0.5, 4))),
            "overlap": repr(draw(_floats(0, 1)))}


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(scenarios(), every_figure())
@example(q(SEED), {"engine": "vllm", "eff_bw": "0.7", "eff_kv": "0.7", "eff_flops": "0.7", "step_us": "0",
                   "mem_util": "1", "max_seqs": "65536", "overhead_gib": "4", "tok_us": "0", "eff_link": "1",
                   "layer_us": "0", "eff_dequant": "1", "kv_reread": "0", "eager_us": "0", "eff_fp4": "1",
                   "eff_fp8": "1", "expert_us": "0", "eff_prefill": "0.7", "cuda_graphs": "1", "layer_ghz": "0", "clock_ghz": "2",
                   "overlap": "1"})
def test_reference_agreement_every_figure_in_the_link(params, figures):
    from calc.engines import profile
    assert_agrees({**params, **figures})
    try:
        r = calc_report({**params, **figures})
    except ScenarioError:
        return  # refused by both (an engine's tensor-parallel rule)
    own = profile(figures["engine"])
    assert all(v["from"] == ("profile" if v["value"] == own[k] else "link") for k, v in r["engine_profile"].items()
               if k != "max_seqs" or own[k] is not None)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(scenarios(), st.sampled_from([2, 3, 5, 12, 16, 32, 64]))
@example({"model": "llama-3.1-70b", "kv_heads": "8"}, 16)
@example({"model": "deepseek-v3", "card": "h200-sxm"}, 8)
def test_reference_agreement_on_several_cards(params, gpus):
    """docs/method.md sections 2-5 on multi-card replicas: gpus that do not divide kv_heads, gpus above kv_heads, MLA.
    Engines that split heads refuse a size that does not divide them (both must refuse); the roofline and
    llama.cpp take any size and copy KV heads."""
    assert_agrees({**params, "gpus": gpus})
    assert_agrees({**params, "gpus": gpus, "engine": "roofline"})
    assert_agrees({**params, "gpus": gpus, "engine": "llamacpp"})


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(scenarios(), st.sampled_from([1, 2, 3, 6, 8]), st.sampled_from([None, "1.41", "2.52"]))
@example({"model": "llama-3.1-70b", "card": "rtx-4090", "weights": "q4_0"}, 6, None)
def test_reference_agreement_row_split(params, gpus, clock):
    """docs/method.md section 5: llama.cpp's row split (the 2023-2024 builds), every matrix read by all the cards at
    once, the whole cache on the main card, the hand-overs of every layer at the card's clock; refused elsewhere."""
    params = {k: v for k, v in params.items() if k not in ("clock_ghz", "overhead_gib")}
    row = {**params, "gpus": str(gpus), "engine": "llamacpp-2024", "split": "row",
           **({"clock_ghz": clock} if clock else {})}
    assert_agrees(row)
    assert_agrees({**row, "engine": "llamacpp"})  # refused by both: the current builds split by layers


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(16, 2048), st.integers(1, 64), st.sampled_from([2, 4, 8, 16]), st.integers(1, 1 << 17))
def test_reference_agreement_mla_on_several_cards(latent, heads, gpus, ctx):
    assert_agrees({"model": "custom", "params_b": "30", "heads": str(heads), "kv_heads": str(heads),
                   "kv_latent": str(latent), "gpus": str(gpus), "ctx": str(ctx)})


@pytest.mark.parametrize(
    "over, key",
    [*RULE_BREAKS,
     ({"batch": 0}, "batch"), ({"weights": 33}, "weights"), ({"tpot_ms": 0}, "tpot_ms"),
     ({"card": "a100-80gb", "compute": "fp8"}, "compute")],
)
def test_both_reject(over, key):
    params = q(SEED, **over)
    with pytest.raises(ValueError, match=key):
        reference_report(params)
    with pytest.raises(ValueError) as info:
        calc_report(params)
    keys = [e.key for e in getattr(info.value, "errors", [])]
    assert key in keys, keys


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(scenarios(), st.integers(0, 16), _floats(0, 0.999), _floats(0, 2), _floats(0, 1), _floats(0, 0.99))
@example(q(SEED), 4, 0.7, 0.05, 0.5, 0.3)
@example({"model": "mixtral-8x7b", "batch": "64"}, 3, 0.9, 0.1, 1.0, 0.0)
def test_reference_agreement_every_lever(params, k, alpha, c, hit, discount):
    """SPEC section 8 exactly: speculative decoding, the prefix cache on both sides and the rent discount."""
    assert_agrees({**params, "spec_k": str(k), "spec_alpha": repr(alpha), "spec_c": repr(c),
                   "prefix_hit": repr(hit), "discount": repr(discount)})


def test_levers_at_their_defaults_change_nothing():
    base, off = calc_report(q(SEED)), calc_report(q(SEED, spec_k=0, prefix_hit=0, discount=0))
    assert off == base and base["spec_tok_s"] == base["tok_s"] and base["spec_speedup"] == 1


def test_speculation_gains_at_batch_1_and_fades_as_the_batch_fills():
    gains = [calc_report(q(SEED, spec_k=4, batch=b, eff=0.7))["spec_speedup"] for b in (1, 4, 16, 64, 256)]
    assert gains[0] > 2 and all(a >= b for a, b in itertools.pairwise(gains)) and gains[-1] < 1.05


def test_unknown_key_is_a_warning():
    params = q(SEED, colour="blue")
    assert_agrees({k: v for k, v in params.items() if k != "colour"})
    got = calc_report(params)
    assert any("colour" in w for w in got["warnings"])


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(params=scenarios(), engine=st.sampled_from(["llamacpp", "llamacpp-2024", "llamacpp-vulkan",
                                                       "llamacpp-vulkan-2025"]),
       slots=st.integers(1, 16), ubatch=st.sampled_from([32, 512, 2048]), fa=st.integers(0, 1),
       ctx=st.integers(1, 200_000))
@example(params={"model": "llama-3.1-8b", "card": "rtx-4090"}, engine="llamacpp-2024", slots=4, ubatch=512, fa=0,
         ctx=32768)
# Found by this test: at the band's fast end 10 replicas on H100s bought by the baseboard of 8, where 8 owned
# replicas beside the API bill least (a size between the traffic's bends, the baseboard filled).
@example(params={"model": "gemma-2-27b", "tflops": "44.0", "clock_ghz": "1.0", "upkeep": "0.0", "in_tok": "30660",
                 "out_tok": "4431", "eff_bw": "1.0", "eff_kv": "1.0", "step_us": "0.0", "layer_us": "0.0",
                 "kv_reread": "0.0", "eff_fp4": "1.0", "layer_ghz": "0.0", "idle_frac": "0.0", "profile": "flat",
                 "spec_alpha": "0.0"}, engine="llamacpp", slots=1, ubatch=32, fa=0, ctx=1)
def test_reference_agreement_llamacpp_memory(params, engine, slots, ubatch, fa, ctx):
    """docs/method.md section 8.2: llama.cpp's cells, compute buffers and the room beside them, whatever the slots,
    the physical batch, flash attention and the context."""
    params = {k: v for k, v in params.items() if k not in ("overhead_gib", "max_seqs", "max_batched_tokens", "ctx")}
    assert_agrees({**params, "engine": engine, "max_seqs": str(slots), "max_batched_tokens": str(ubatch),
                   "flash_attn": str(fa), "ctx": str(ctx)})


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(scenarios(), st.sampled_from(["8", "16", "32", "36", "48", "64", "192"]),
       st.sampled_from(["llamacpp", "llamacpp-2024"]))
def test_reference_agreement_on_a_mac(params, mem, engine):
    """docs/method.md section 8.2: a Mac's GPU (arch=apple) holds Metal's working set of its unified memory."""
    params = {k: v for k, v in params.items() if k not in ("card", "mem_gib", "torch_gib", "arch", "overhead_gib")}
    assert_agrees({**params, "card": "custom", "mem_gib": mem, "bw_tbs": "0.4", "tflops": "16.4", "arch": "apple",
                   "engine": engine})


def test_reference_agreement_on_a_custom_card_named_by_its_family():
    """A custom Turing card under llama.cpp Vulkan: its family's eff_card and its measured region (the two Turing
    rows' region, docs/calibration.md section 6) agree with the reference model."""
    assert_agrees(dict(parse_qsl(
        "model=custom&params_b=4.02&active_b=4.02&layers=36&heads=32&kv_heads=8&head_dim=128&hidden=2560&embed_b=0"
        "&card=custom&mem_gib=8&bw_tbs=0.448&tflops=59.7&link_gbs=16&clock_ghz=1.62&arch=turing&weights=5.06&kv=fp16"
        "&gpus=1&batch=1&ctx=64&engine=llamacpp-vulkan-2025")))
