"""calc.model: properties of the roofline model that must hold for any scenario (hypothesis); the SPEC's reference tables are tests/test_spec_tables.py."""

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from calc import memory, model, parse, report
from calc.scenario import KEY_TABLE, KEYS, KV_FORMATS, WEIGHT_FORMATS, slider_stops

#: Every property here tries 150 examples (the derandomised profile of tests/conftest.py, with more of them).
settings.register_profile("properties", parent=settings.get_profile("derandomised"), max_examples=150)

dense_shapes = st.fixed_dictionaries({
    "model": st.just("custom"),
    "params_b": st.floats(0.5, 500),
    "layers": st.integers(1, 128),
    "heads": st.just(64),  # a count every tensor-parallel size below divides (engines refuse the others)
    "kv_heads": st.sampled_from([1, 2, 4, 8, 16]),
    "head_dim": st.sampled_from([64, 96, 128, 256]),
    "card": st.sampled_from(["h100-sxm", "a100-80gb", "l40s", "custom"]),
    "weights": st.sampled_from(["fp16", "fp8", "int4-g128", "q4_0", "3", "5.5"]),
    "kv": st.sampled_from(["fp16", "fp8", "4", "6"]),  # vLLM holds no int4 cache by name; 4 bits as given
    "ctx": st.integers(1, 200_000),
    "attn": st.sampled_from([0, 1]),
    "gpus": st.sampled_from([1, 2, 4, 8]),
    "eff": st.floats(0.05, 1),
})


@settings(settings.get_profile("properties"))
@given(dense_shapes, st.integers(1, 4096), st.integers(1, 4096))
def test_step_time_and_throughput_never_fall_as_batch_grows(link, b1, b2):
    s = parse(link).scenario
    lo, hi = sorted((b1, b2))
    t = model.step_seconds(s, np.array([lo, hi]))
    assert t[0] <= t[1]
    assert lo / t[0] <= hi / t[1] * (1 + 1e-12)


@settings(settings.get_profile("properties"))
@given(dense_shapes, st.integers(1, 10**6), st.integers(1, 10**6), st.sampled_from([2, 4, 8, 16, 32]),
       st.sampled_from([2, 4, 8, 16, 32]))
def test_max_batch_never_rises_with_context_or_kv_bits(link, n1, n2, k1, k2):
    lo, hi = sorted((n1, n2))
    s = parse(link).scenario
    assert memory.max_batch(s, hi) <= memory.max_batch(s, lo)
    klo, khi = sorted((k1, k2))
    assert report({**link, "kv": khi})["max_batch"] <= report({**link, "kv": klo})["max_batch"]


@settings(settings.get_profile("properties"))
@given(dense_shapes, st.floats(0.01, 1), st.floats(0.01, 1))
def test_cost_never_rises_with_duty(link, d1, d2):
    lo, hi = sorted((d1, d2))
    r_lo, r_hi = report({**link, "duty": lo}), report({**link, "duty": hi})
    assert r_hi["usd_per_mtok"] <= r_lo["usd_per_mtok"]
    assert r_hi["usd_per_mtok_rent"] <= r_lo["usd_per_mtok_rent"]


@settings(settings.get_profile("properties"))
@given(dense_shapes, st.floats(0.5, 2000))
def test_break_even_is_independent_of_model_size_without_attention(link, other_params_b):
    uniform = {**link, "attn": 0, "weights_embed": link["weights"]}  # every part in one format (docs/method.md 4.1)
    a = report(uniform)["break_even_batch"]
    b = report({**uniform, "params_b": other_params_b})["break_even_batch"]
    assert np.isclose(a, b, rtol=1e-9)


moe_shapes = st.fixed_dictionaries({
    "model": st.sampled_from(["mixtral-8x7b", "deepseek-v3", "gpt-oss-120b", "gpt-oss-20b"]),
    "ctx": st.integers(1, 100_000),
    "attn": st.sampled_from([0, 1]),
    "gpus": st.sampled_from([1, 2, 4, 8]),
    "weights": st.sampled_from(["fp8", "int4", "4.25"]),
})


@settings(settings.get_profile("properties"))
@given(moe_shapes)
def test_moe_break_even_is_a_root_of_compute_equals_memory(link):
    s = parse(link).scenario
    be = model.break_even(s)
    parts = model.step_parts(s, np.array([1.0]))
    if be is None:
        assert parts.compute_s[0] <= parts.memory_s[0]
        return
    at = model.step_parts(s, be)
    assert np.isclose(at.compute_s, at.memory_s, rtol=1e-9)


@settings(settings.get_profile("properties"))
@given(st.one_of(dense_shapes, moe_shapes), st.sampled_from(["auto", "1", "7", "300"]),
       st.one_of(st.none(), st.floats(1, 500)))
def test_report_of_its_own_scenario_is_the_same_report(link, batch, tpot):
    link = {**link, "batch": batch}
    if tpot is not None:
        link["tpot_ms"] = tpot
    first = report(link)
    assert report(first["scenario"]) == first
    assert report(parse(link).scenario.to_query()) == first


_SLIDER_KEYS = [k.key for k in KEY_TABLE if k.slider is not None and k.numeric]


@st.composite
def _slider_value(draw):
    """A slider key and an accepted value of it (anywhere in the key's range, not only on a stop)."""
    key = draw(st.sampled_from(_SLIDER_KEYS))
    spec = KEYS[key]
    if spec.kind == "int":
        return key, draw(st.integers(int(spec.lo), min(int(spec.hi), 10**9)))
    return key, draw(st.floats(spec.lo, spec.hi, allow_nan=False))


@settings(settings.get_profile("properties"))
@given(_slider_value())
def test_slider_stops_keep_any_accepted_value_in_order_and_in_range(case):
    key, value = case
    stops = slider_stops(key, value)
    assert value in stops and stops == sorted(set(stops))
    assert all(KEYS[key].lo <= v <= max(KEYS[key].hi, value) for v in stops)
    assert all(type(v) is (int if KEYS[key].kind == "int" else float) for v in stops)
    # The link value a stop stands for parses back to the same number.
    assert parse({key: str(value)}).scenario.as_dict()[key] == value or parse({key: str(value)}).errors


@settings(settings.get_profile("properties"))
@given(st.sampled_from([k.key for k in KEY_TABLE if k.kind in ("weights", "kv")]), st.floats(1, 32))
def test_format_slider_orders_by_bits_and_keeps_bits_given_as_a_number(key, bits):
    stops = slider_stops(key, f"{bits:g}")
    formats = KV_FORMATS if key == "kv" else WEIGHT_FORMATS
    order = [formats.get(v, None) or float(v) for v in stops]
    assert order == sorted(order) and f"{bits:g}" in stops
