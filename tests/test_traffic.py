"""calc.traffic: the load a fleet must carry and what the API bills for it. Long-prompt API tiers (docs/method.md section 8): a request whose prompt exceeds a price row's threshold is billed
entirely at the tier's prices; the monthly bill, the per-request cost and the break-even load all use it."""

import csv
import math
from urllib.parse import parse_qsl

import pytest

from calc import catalogue as cat
from calc import parse, report, traffic

try:
    from tests.reference_model import reference_report
except ImportError:  # tests/ on sys.path instead of the repository root
    from reference_model import reference_report

GEMINI = "api=gemini/gemini-2.5-pro&out_tok=1000&req_day=1000"  # 30,000 requests a month at hours=720
TIER_NOTE = "prompts above 200,000 tokens are billed at 2.5 / 15 USD per 1M on this row"


def test_long_prompt_is_billed_at_the_tier():
    r = report(GEMINI + "&in_tok=250000")
    assert r["requests_month"] == 30000
    # 30,000 x (250,000 x 2.50 + 1,000 x 15) / 1e6 = 19,200 (base prices 1.25 / 10 would give 9,675).
    assert r["api_usd_month"] == pytest.approx(19200, abs=1e-6)
    assert any(TIER_NOTE in w for w in r["warnings"])


def test_prompt_at_the_threshold_is_billed_at_the_base_prices():
    at = report(GEMINI + "&in_tok=200000")
    assert at["api_usd_month"] == pytest.approx(30000 * (200000 * 1.25 + 1000 * 10) / 1e6, abs=1e-6) == 7800
    assert not any("prompts above" in w for w in at["warnings"])
    above = report(GEMINI + "&in_tok=200001")  # one token over: the whole request at the tier
    assert above["api_usd_month"] == pytest.approx(30000 * (200001 * 2.5 + 1000 * 15) / 1e6, abs=1e-6)


def test_catalogue_loads_tiers_with_their_sources():
    apis = cat.apis()
    expected = {"gemini/gemini-2.5-pro": (200000, 2.5, 15.0),
                "claude-sonnet-4-20250514": (200000, 6.0, 22.5),
                "claude-sonnet-4-5-20250929": (200000, 6.0, 22.5)}
    tiered = {k: (a["tier_above_tok"], a["tier_api_in"], a["tier_api_out"])
              for k, a in apis.items() if a["tier_above_tok"] is not None}
    assert tiered == expected
    for key in expected:
        row = apis[key]
        assert isinstance(row["tier_above_tok"], int)
        assert "litellm" in row["tier_source"] and "above_200k_tokens" in row["tier_source"], key
        assert row["tier_read_on"] == "2026-11-30"
        assert row["tier_api_in"] > row["api_in"] and row["tier_api_out"] > row["api_out"]
    for key, row in apis.items():
        if row["tier_above_tok"] is None:
            assert row["tier_api_in"] is None and row["tier_api_out"] is None and row["tier_source"] == "", key


def test_a_link_price_keeps_the_rows_tier_and_says_so():
    r = report(GEMINI + "&in_tok=250000&api_in=1&api_out=8")
    assert r["api_usd_month"] == pytest.approx(19200, abs=1e-6)  # the tier still applies above 200k
    assert any(TIER_NOTE in w and "api_in / api_out set in the link" in w for w in r["warnings"])
    short = report(GEMINI + "&in_tok=1000&api_in=1&api_out=8")
    assert short["api_usd_month"] == pytest.approx(30000 * (1000 * 1 + 1000 * 8) / 1e6, abs=1e-9)
    assert any(TIER_NOTE in w for w in short["warnings"])


def test_one_function_prices_a_request_and_everything_uses_it():
    link = "model=llama-3.1-8b&card=h200-sxm&" + GEMINI + "&in_tok=250000"
    s = parse(link).scenario
    assert traffic.api_prices(s) == (2.5, 15.0)
    assert traffic.api_usd_per_request(s) == pytest.approx(0.64)
    assert traffic.usd_per_request(s)[0] == pytest.approx(0.64)
    assert float(traffic.api_usd_month(s, s.req_day)) == pytest.approx(0.64 * 30000)
    # Break-even (docs/method.md section 7) with c_api = 0.64 USD per request.
    cap = traffic.capacity(s)
    k, c_rep = 0.64 * s.hours / 24, s.gpus * s.usd_hr * s.hours
    assert k * cap.x_cap > c_rep
    r = max(1, math.ceil(s.upkeep / (k * cap.x_cap - c_rep)))
    expected = max((r - 1) * cap.x_cap, (r * c_rep + s.upkeep) / k)
    assert traffic.break_even_req_day(s, cap) == pytest.approx(expected, rel=1e-12)
    assert report(link)["break_even_req_day"] == pytest.approx(expected, rel=1e-12)


def test_rows_without_a_tier_bill_long_prompts_at_their_prices():
    r = report("api=gpt-4.1&in_tok=500000&out_tok=1000&req_day=1000")
    assert r["api_usd_month"] == pytest.approx(30000 * (500000 * 2.0 + 1000 * 8.0) / 1e6, abs=1e-6)
    assert not any("prompts above" in w for w in r["warnings"])


@pytest.mark.parametrize("in_tok", [1000, 200000, 250000])
def test_reference_agrees_on_the_tier(in_tok):
    link = "model=llama-3.1-8b&card=h200-sxm&" + GEMINI + f"&in_tok={in_tok}"
    assert reference_report(dict(parse_qsl(link)))["api_usd_month"] == pytest.approx(report(link)["api_usd_month"])


def _price_file(tmp_path, tier):
    path = tmp_path / "prices.csv"
    row = dict(id="gemini/x", provider="gemini", model="gemini/x", family="x", kind="closed", api_in=1.25,
               api_out=10, source="test", read_on="2026-07-24", flag="", **tier)
    with path.open("w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=cat.API_COLUMNS)
        w.writeheader()
        w.writerow(row)
    return path


def test_a_tier_given_in_part_is_a_broken_file(tmp_path):
    path = _price_file(tmp_path, dict(tier_above_tok=200000, tier_api_in=2.5))
    with pytest.raises(cat.CatalogueError, match="tier_api_out"):
        cat.load_api_prices(path)
    path = _price_file(tmp_path, dict(tier_above_tok="lots", tier_api_in=2.5, tier_api_out=15,
                                      tier_source="test", tier_read_on="2026-11-30"))
    with pytest.raises(cat.CatalogueError, match="tier_above_tok"):
        cat.load_api_prices(path)


def test_a_tier_price_outside_the_band_refuses_the_row(tmp_path):
    path = _price_file(tmp_path, dict(tier_above_tok=200000, tier_api_in=2500, tier_api_out=15,
                                      tier_source="test", tier_read_on="2026-11-30"))
    accepted, rejected = cat.load_api_prices(path)
    assert not accepted and "tier_api_in" in dict(rejected)["gemini/x"]
    good = _price_file(tmp_path, dict(tier_above_tok=200000, tier_api_in=2.5, tier_api_out=15,
                                      tier_source="test", tier_read_on="2026-11-30"))
    row = cat.load_api_prices(good)[0]["gemini/x"]
    assert (row["tier_above_tok"], row["tier_api_in"], row["tier_api_out"]) == (200000, 2.5, 15.0)


NO_FIT = {"model": "llama-3.1-405b", "weights": "bf16"}


def test_unit_costs_use_the_serving_throughput():
    s = parse("").scenario
    u = traffic.unit_costs(s)
    r = report("")
    assert u.duty == pytest.approx(r["duty_traffic"])
    assert u.rent_at_full == pytest.approx(2.5 / (3600 * u.tok_s) * 1e6)
    assert u.rent_at_duty == pytest.approx(u.rent_at_full / u.duty)
    assert u.self_host_all_in == pytest.approx(r["self_host_usd_month"] / r["tokens_out_month"] * 1e6)
    assert u.api_all_in == pytest.approx(r["api_usd_month"] / r["tokens_out_month"] * 1e6)
    nothing = traffic.unit_costs(parse(NO_FIT).scenario)
    assert nothing.duty is None and nothing.self_host_all_in is None


# ---------------------------------------------------------------- a finite benchmark run (docs/method.md 8.1)

from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402


@settings(max_examples=200, deadline=None)
@given(lengths=st.lists(st.integers(1, 500), min_size=1, max_size=300), slots=st.integers(1, 400))
def test_a_run_schedule_emits_every_token_once_and_never_exceeds_its_places(lengths, slots):
    import numpy as np
    steps = traffic.run_schedule(np.array(lengths, dtype=np.int64), slots)
    assert len(steps) == slots + 1 and steps[0] == 0  # no idle step: every request is waiting from the start
    assert int((steps * np.arange(slots + 1)).sum()) == sum(lengths)  # one token per sequence in flight per step
    # The run lasts at least as long as its longest reply, and as long as the places need for all the tokens.
    assert int(steps.sum()) >= max(max(lengths), math.ceil(sum(lengths) / slots))


def test_a_run_of_equal_replies_in_whole_waves_is_steady_full_load():
    s = parse("model=llama-3.1-8b&card=h100-sxm&out_tok=200").scenario
    B = traffic.throughput_batch(s)
    whole = parse(f"model=llama-3.1-8b&card=h100-sxm&out_tok=200&run_prompts={3 * B}").scenario
    assert traffic.run_throughput(whole) == pytest.approx(traffic.max_throughput(s)[1], rel=1e-12)
    # One request more than the waves hold leaves a last wave of one sequence: 200 steps at batch 1.
    extra = parse(f"model=llama-3.1-8b&card=h100-sxm&out_tok=200&run_prompts={3 * B + 1}").scenario
    assert traffic.run_throughput(extra) < traffic.run_throughput(whole)


@settings(max_examples=60, deadline=None)
@given(n=st.integers(1, 3000), spread=st.sampled_from(["none", "exp"]), out_max=st.sampled_from([0, 300, 1000, 5000]),
       model=st.sampled_from(["llama-3.1-8b", "llama-3.1-70b", "qwen3-30b-a3b"]),
       engine=st.sampled_from(["vllm", "sglang", "trtllm", "llamacpp"]))
def test_a_finite_run_never_beats_steady_full_load(n, spread, out_max, model, engine):
    """The steps of a run's ramp and tail hold fewer sequences than full load, and a step's time per sequence only
    falls as the batch grows, so no run delivers more than max_throughput_tok_s."""
    r = report(f"model={model}&card=h200-sxm&engine={engine}&run_prompts={n}&out_spread={spread}&out_max={out_max}")
    if r["max_throughput_tok_s"] is None:
        assert r["run_throughput_tok_s"] is None
    else:
        assert 0 < r["run_throughput_tok_s"] <= r["max_throughput_tok_s"] * (1 + 1e-12)


def test_reply_lengths_of_a_spread_keep_the_mean_and_the_cap():
    s = parse("out_tok=200&run_prompts=1000&out_spread=exp&out_max=1800").scenario
    lengths = traffic.run_lengths(s)
    assert len(lengths) == 1000 and lengths.max() <= 1800 and lengths.min() >= 1
    assert lengths.mean() == pytest.approx(200, abs=0.5)
    assert lengths.max() > 5 * 200  # the long replies a chat dataset holds: an exponential's top 1 in 1,000
    assert (traffic.run_lengths(parse("out_tok=200&run_prompts=7").scenario) == 200).all()
    assert report("")["run_throughput_tok_s"] is None  # no run: steady full load only


def test_a_benchmark_row_is_predicted_by_its_run_not_by_steady_load():
    from calc.validate import metric_key
    assert metric_key("max_throughput_tok_s", 320) == "run_throughput_tok_s"
    assert metric_key("max_throughput_tok_s", 0) == "max_throughput_tok_s"
    assert metric_key("step_ms", 320) == "step_ms"


def test_a_run_s_longest_reply_is_at_least_its_mean_and_stops_at_the_trained_context():
    from calc import ScenarioError
    with pytest.raises(ScenarioError) as refused:
        report("out_tok=194&out_max=50&run_prompts=100&out_spread=exp")
    assert refused.value.errors[0].key == "out_max" and "at least out_tok (194)" in refused.value.errors[0].reason
    # No out_max: a preset's replies stop where its trained context (131,072 for Llama 3.1 8B) leaves the prompt off.
    s = parse("model=llama-3.1-8b&in_tok=220&out_tok=20000&run_prompts=1000&out_spread=exp").scenario
    lengths = traffic.run_lengths(s)
    assert lengths.max() == 131_072 - 220 and lengths.mean() == pytest.approx(20_000, abs=1)
    custom = parse("model=custom&params_b=8&layers=32&heads=32&kv_heads=8&head_dim=128&in_tok=220&out_tok=20000"
                   "&run_prompts=1000&out_spread=exp").scenario
    assert traffic.run_lengths(custom).max() > 131_072  # a custom model's context is not known: no cap


def test_a_fleet_shares_the_upkeep_in_its_price_per_million_tokens():
    """The upkeep is one sum for all cards (SPEC section 1): at duty=auto the traffic's replicas share it, so the
    decode-only price is not above the whole bill per output token; a what-if duty prices one replica alone."""
    from calc.evaluate import report
    link = "model=llama-3.1-8b&card=l40s&req_day=2000000"
    r = report(link)
    assert r["replicas"] == r["upkeep_replicas"] == 11
    tokens = r["tok_s"] * 3600 * r["scenario"]["hours"] * r["duty_used"]
    assert r["usd_per_mtok_upkeep"] == pytest.approx(4000 / (11 * tokens) * 1e6)
    assert r["usd_per_mtok"] < r["self_host_usd_per_mtok_out"]
    # The fleet's decode tokens at this duty carry the bill's rent and its one upkeep.
    fleet_mtok = 11 * tokens / 1e6
    assert r["usd_per_mtok"] * fleet_mtok == pytest.approx(r["self_host_usd_month"])
    what_if = report(link + f"&duty={r['duty_used']}")
    assert what_if["upkeep_replicas"] == 1
    assert what_if["usd_per_mtok_upkeep"] == pytest.approx(11 * r["usd_per_mtok_upkeep"])


def test_a_large_fleet_is_told_the_flat_upkeep_leaves_things_out():
    from calc.evaluate import LARGE_FLEET_CARDS, report
    big = report("req_day=100000000")
    assert big["replicas"] * big["scenario"]["gpus"] >= LARGE_FLEET_CARDS
    assert any(w.startswith(f"a fleet of {big['replicas']:,} cards: the upkeep (4,000 USD a month) is one flat figure")
               for w in big["warnings"])
    assert not any("a fleet of" in w for w in report("")["warnings"])
    assert not any("a fleet of" in w for w in report("req_day=100000000&upkeep=0")["warnings"])
