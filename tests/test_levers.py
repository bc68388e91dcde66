"""The Levers page and calc.levers: every lever applied to the scenario, ranked by saving, each row a link that
opens that scenario (issue 12)."""

from urllib.parse import parse_qsl, urlsplit

import pytest

from apptest import open_app, texts
from calc import evaluate, levers, parse, report
from calc.scenario import WEIGHT_FORMATS

DEFAULT = {}
#: The memory-capped case of the issue: 70B at a 32k context on one card.
CAPPED = {"model": "llama-3.1-70b", "ctx": "32768", "gpus": "1", "in_tok": "30000", "out_tok": "1000",
          "req_day": "20000"}


def _table(params):
    return levers.lever_table(evaluate(parse(params)))


@pytest.mark.parametrize("params", [DEFAULT, CAPPED], ids=["default", "memory-capped"])
def test_levers_are_ranked_by_saving_and_each_row_is_its_scenario(params):
    t = _table(params)
    assert t.iloc[0]["lever"] == "As set" and t.iloc[0]["saving_usd_month"] == 0
    assert {"Commitment, 30% off the rent", "Prefix cache, 50% hit", "Speculative decoding, 4 drafts",
            "Engine: TensorRT-LLM", "2 cards per replica"} <= set(t["lever"])
    assert any(name.startswith("Weights in") for name in t["lever"]) and any(n.startswith("KV cache") for n in t["lever"])
    savings = t.iloc[1:]["saving_usd_month"].dropna().tolist()
    assert savings == sorted(savings, reverse=True)
    base = report(params)
    for row in t.itertuples():
        got = report(row.query)  # the row's link reproduces the row's figures
        assert got["self_host_usd_month"] == row.self_host_usd_month or (
            got["self_host_usd_month"] is None and row.self_host_usd_month != row.self_host_usd_month)
        assert got["api_usd_month"] == pytest.approx(row.api_usd_month)
        if row.saving_usd_month == row.saving_usd_month and row.saving_usd_month is not None:
            assert row.saving_usd_month == pytest.approx(base["self_host_usd_month"] - got["self_host_usd_month"])


def test_each_lever_changes_what_it_says():
    t = _table(CAPPED).set_index("lever")
    q = {name: dict(parse_qsl(t.loc[name, "query"])) for name in t.index}
    assert q["Commitment, 30% off the rent"]["discount"] == "0.3"
    assert q["Prefix cache, 50% hit"]["prefix_hit"] == "0.5"
    assert q["Speculative decoding, 4 drafts"]["spec_k"] == "4"
    assert q["2 cards per replica"]["gpus"] == "2" and q["KV cache in fp8"]["kv"] == "fp8"
    trt = q["Engine: TensorRT-LLM"]
    assert trt["engine"] == "trtllm" and trt["eff_bw"] != q["As set"]["eff_bw"]  # the engine's own profile
    # The commitment lowers only the rent; speculative decoding lowers the latency, not the bill.
    assert t.loc["Commitment, 30% off the rent", "api_usd_month"] == t.loc["As set", "api_usd_month"]
    spec = t.loc["Speculative decoding, 4 drafts"]
    assert spec["tpot_ms"] < t.loc["As set", "tpot_ms"] and spec["saving_usd_month"] == 0


def test_the_format_table_covers_every_weight_format():
    f = levers.format_table(evaluate(parse(CAPPED)))
    assert set(f["format"]) == set(WEIGHT_FORMATS) and f["bits"].is_monotonic_increasing
    assert f.set_index("format").loc["bf16", "verdict"] == "does not fit"


@pytest.mark.parametrize("params", [DEFAULT, CAPPED], ids=["default", "memory-capped"])
def test_levers_page_ranks_and_links(params):
    at = open_app(params, "pages/levers.py")
    assert not at.exception
    assert "The largest saving" in texts(at.info) or "No single lever" in texts(at.info)
    table = at.dataframe[0].value
    assert table.iloc[0]["lever"] == "As set" and len(table) >= 9
    for link in table["link"]:
        parts = urlsplit(link)
        assert parts.path == "/decision" and parts.scheme in ("http", "https")
        assert not parse(parts.query).errors
    assert len(at.dataframe) == 2 and at.get("vega_lite_chart")


def test_speculation_worked_example_of_the_method():
    """docs/method.md section 9.1: 70B 4-bit on one H100 (be ~ 74), alpha 0.7, K 4, c 0.05."""
    seed = ("engine=roofline&model=custom&params_b=70&layers=80&heads=64&kv_heads=8&head_dim=128&card=custom"
            "&mem_gib=80&bw_tbs=3.35&tflops=989&weights=4&kv=fp16&ctx=8192&attn=0&eff=0.7&overhead_gib=4"
            "&usd_hr=2.5&upkeep=0&spec_k=4")
    got = {b: round(report(f"{seed}&batch={b}")["spec_speedup"], 2) for b in (1, 14, 15, 17, 32, 74)}
    assert got == {1: 2.31, 14: 2.31, 15: 2.28, 17: 2.05, 32: 1.17, 74: 0.53}


def test_a_discount_lowers_every_rent_figure_and_the_memo_says_it_is_committed():
    from calc.memo import memo
    plain, cut = report({"discount": "0"}), report({"discount": "0.25"})
    assert cut["usd_per_mtok_rent"] == pytest.approx(plain["usd_per_mtok_rent"] * 0.75)
    assert cut["monthly_usd"] - 4000 == pytest.approx((plain["monthly_usd"] - 4000) * 0.75)
    assert cut["api_usd_month"] == plain["api_usd_month"]
    assert "paid whether the traffic comes or not" in memo(parse({"discount": "0.25"}))


def test_a_prefix_cache_bills_cached_tokens_at_the_cached_price():
    row = "deepinfra/deepseek-ai/deepseek-v3"
    from calc import catalogue
    cached = [a for a, r in catalogue.apis().items() if r.get("api_cached") is not None]
    assert cached, "the catalogue carries cached-input prices"
    api = cached[0]
    r = catalogue.apis()[api]
    base = {"api": api, "in_tok": "1000", "out_tok": "100", "req_day": "1000", "hours": "720"}
    got = report({**base, "prefix_hit": "0.4"})["api_usd_month"]
    per_req = (600 * r["api_in"] + 400 * r["api_cached"] + 100 * r["api_out"]) / 1e6
    assert got == pytest.approx(per_req * 1000 * 30)
    assert report({"api": row})["scenario"]["api_cached"] == report({"api": row})["scenario"]["api_in"]


def test_quality_rows_name_known_formats_models_and_sources():
    from calc import catalogue
    from calc.scenario import KV_FORMATS
    q = catalogue.quality()
    assert {"q4_k_m", "q8_0", "fp8", "int4-g128", "kv:fp8", "kv:int4"} <= set(q)
    for fmt, rows in q.items():
        known = KV_FORMATS if fmt.startswith("kv:") else WEIGHT_FORMATS
        assert fmt.removeprefix("kv:") in known, fmt
        for r in rows:
            assert r["model"] and r["metric"] and r["delta_text"] and r["source"].startswith("https://"), (fmt, r)
    # llama.cpp's own table, as published: Q4_K_M costs +0.1754 perplexity on Llama-3-8B.
    assert q["q4_k_m"][0]["delta"] == 0.1754 and q["q4_k_m"][0]["model"] == "Llama-3-8B"


def test_formats_without_a_published_figure_say_so():
    f = levers.format_table(evaluate(parse(DEFAULT))).set_index("format")
    assert f.loc["q4_k_m", "quality"].startswith("perplexity increase vs 16-bit: +0.1754 ppl on Llama-3-8B")
    assert f.loc["q4_k_m", "quality_model"] == "Llama-3-8B"  # its own column, so a cut sentence never hides it
    assert f["quality"].isna()["iq4_xs"]  # nothing published in the catalogue: the page shows a dash
    kv = [lv for lv in levers.levers(evaluate(parse(DEFAULT))) if lv.change.get("kv") == "fp8"]
    assert kv and "HumanEval" in kv[0].price
    prices = {lv.change["weights"]: lv.price for lv in levers.levers(evaluate(parse({"weights": "q5_k_m"})))
              if "weights" in lv.change}
    assert prices["bf16"] == "quality: none lost (16-bit is the reference)" and "OpenLLM" in prices["fp8"]
    assert "nothing published for iq4_xs" in levers._quality_text("iq4_xs", "llama-3.1-70b")
    # A figure measured on another model says so; on the scenario's own model it does not.
    assert ", another model than this one" in prices["fp8"]  # Llama 3 8B's figure, a Llama 3.1 70B scenario
    own = levers._quality_text("int4-g128", "llama-3.1-8b")
    assert "on Meta-Llama-3.1-8B-Instruct (" in own and "another model" not in own


def test_llamacpp_is_offered_only_the_weight_formats_it_loads():
    """A row or a lever in a format llama.cpp refuses would show the fallback's figures under that format's name."""
    from calc import evaluate, levers, parse, tables
    ev = evaluate(parse("engine=llamacpp&model=llama-3.1-8b&card=rtx-4090"))
    names = [lever.name for lever in levers.levers(ev)]
    assert "Weights in q8_0" in names and not any(n in names for n in ("Weights in fp8", "Weights in int4-g128"))
    formats = set(levers.format_table(ev)["format"])
    assert {"q4_k_m", "q8_0", "bf16", "mxfp4"} <= formats and not formats & {"fp8", "int8", "int4-g128"}
    fit = tables.fit_table(ev.scenario, (2048,), ["bf16", "fp8", "int4-g128", "q4_k_m"])
    assert list(fit["weights"]) == ["bf16 (16-bit)", "q8_0 (8.5-bit)", "q4_k_m (4.82-bit)"]


def test_card_levers_say_how_the_engine_splits_the_model():
    """llama.cpp gives each card whole layers: more cards add memory, not speed, and no all-reduce."""
    from calc import evaluate, levers, parse
    cpp = {lv.name: lv for lv in levers.levers(evaluate(parse("engine=llamacpp&model=llama-3.1-70b&card=rtx-4090&gpus=2")))}
    assert "whole layers split over 4 cards" in cpp["4 cards per replica"].what
    assert "all-reduce" not in cpp["4 cards per replica"].what and "tensor parallel" not in cpp["1 card per replica"].what
    vllm = {lv.name: lv for lv in levers.levers(evaluate(parse("model=llama-3.1-70b&card=h100-sxm&gpus=2")))}
    assert "tensor parallel over 4 cards" in vllm["4 cards per replica"].what


def test_a_scenario_that_does_not_run_names_the_levers_that_make_it_run():
    """70B in bf16 on one H100 does not fit: 'no lever lowers the bill' would hide the three that make it run."""
    from calc import evaluate, levers, parse
    text = levers.best_text(levers.lever_table(evaluate(parse("weights=bf16"))))
    assert text.startswith("As set, the scenario cannot be self-hosted; these levers make it run")
    assert "Weights in fp8" in text and "2 cards per replica" in text


def test_an_engine_lever_says_when_the_weights_change_with_it():
    from calc import evaluate, levers, parse
    ev = evaluate(parse("model=llama-3.1-70b&card=rtx-4090&gpus=2&engine=llamacpp&weights=q4_k_m"))
    what = {lv.name: lv.what for lv in levers.levers(ev)}
    assert what["Engine: TensorRT-LLM"].endswith("the weights in int4-g128 instead of q4_k_m, which it cannot load")
    assert what["Engine: vLLM"] == "serve with vLLM instead of llama.cpp"


def test_an_unpriced_card_is_said_to_lack_a_rent_not_to_fail_to_run():
    """A scenario that runs on a card without a rent (the L4 here) has no self-hosting bill because of the rent,
    not because nothing fits: the summary names the missing rent."""
    ev = evaluate(parse("model=qwen2.5-32b&card=l4&gpus=4&weights=bf16&engine=sglang&mem_util=0.85&ctx=8192"))
    assert ev.decision.fits and ev.scenario.usd_hr is None
    text = levers.best_text(levers.lever_table(ev))
    assert "no rent" in text and "cannot be self-hosted" not in text
    nothing = evaluate(parse("model=llama-3.1-405b&card=l4&weights=bf16&usd_hr=1"))
    assert "cannot be self-hosted" in levers.best_text(levers.lever_table(nothing))


def test_the_weight_formats_price_the_whole_checkpoint_as_the_fit_table_does():
    """An MoE whose experts ship in MXFP4 (gpt-oss-120b): the Levers page's bf16 row is the whole checkpoint in bf16,
    the Fit table's bf16 row, not bf16 attention beside MXFP4 experts; so no 16-bit row weighs less than an 8-bit one."""
    from calc import tables
    ev = evaluate(parse("model=gpt-oss-120b&card=h100-sxm&engine=vllm-2025"))
    formats = levers.format_table(ev).set_index("format")
    fit = tables.fit_table(ev.scenario, (2048,), ["bf16", "fp8"]).set_index("weights")
    assert formats.loc["bf16", "weights_gib"] == pytest.approx(fit.loc["bf16 (16-bit)", "weights_gib"], rel=1e-9)
    assert formats.loc["bf16", "weights_gib"] > formats.loc["fp8", "weights_gib"] > formats.loc["mxfp4", "weights_gib"]


def test_a_set_up_that_does_not_run_is_offered_the_fewest_cards_that_run_it_and_no_wider_format():
    """70B in bf16 on one L4 (24 GB): two or four L4s do not hold it either, eight do. The table offers eight cards, names them
    as the lever that makes it run (the L4 has no reference rent, so without usd_hr no bill), and offers no wider
    weight or cache format, which would need more memory."""
    link = {"model": "llama-3.1-70b", "card": "l4", "gpus": "1", "weights": "bf16"}
    t = _table(link)
    by = t.set_index("lever")
    assert by.loc["2 cards per replica", "verdict"] == "does not fit"
    assert by.loc["8 cards per replica", "verdict"] != "does not fit"
    assert evaluate(parse({**link, "gpus": "4"})).decision.fits is False
    assert parse({**link, "gpus": "6"}).errors  # vLLM refuses a TP size that does not divide the 64 heads
    assert not any(n in ("Weights in bf16", "Weights in fp16", "KV cache in fp16") for n in t["lever"])
    assert levers.best_text(t).endswith("this lever makes it run, though the card has no rent to price it with (enter one): 8 cards per replica.")
    priced = levers.best_text(_table({**link, "usd_hr": "0.8"}))
    assert "; this lever makes it run: 8 cards per replica (" in priced


def test_speculation_that_lengthens_the_time_per_token_says_so():
    """At the default link's busiest-hour batch the four drafts' arithmetic outweighs the reads they share: the
    lever's row is slower than as set, and its price says so first, with both figures."""
    t = _table(DEFAULT).set_index("lever")
    spec, base = t.loc["Speculative decoding, 4 drafts"], t.loc["As set"]
    assert spec["tpot_ms"] > base["tpot_ms"]
    assert spec["price"].startswith(f"slower replies at the serving batch (71: {spec['tpot_ms']:,.1f} against "
                                    f"{base['tpot_ms']:,.1f} ms per token)")
    small = _table({"batch": "1"}).set_index("lever")  # one stream a step: the drafts ride along almost free
    assert small.loc["Speculative decoding, 4 drafts", "tpot_ms"] < small.loc["As set", "tpot_ms"]
    assert not small.loc["Speculative decoding, 4 drafts", "price"].startswith("slower")


@pytest.mark.parametrize("params, limit", [
    ({"in_tok": "1000000"}, 131_072),                                   # one card cannot hold a 131k request either
    ({"in_tok": "100000", "out_tok": "200000", "card": "h200-sxm"}, 131_072),  # the reply alone is too long
    ({"model": "llama-3.1-8b", "in_tok": "200000", "ctx": "200300"}, 131_072),  # a pinned ctx is cut with them
])
def test_requests_beyond_the_trained_context_are_served_by_no_lever_but_cutting_them(params, limit):
    t = _table(params)
    assert t.iloc[0]["verdict"] == "beyond context"
    cut = t[t["lever"].str.startswith(f"Requests within {limit:,} tokens")]
    assert len(cut) == 1  # the one lever that lets any bill serve the traffic
    q = dict(parse_qsl(cut.iloc[0]["query"]))
    assert int(q["in_tok"]) + int(q["out_tok"]) == limit and int(q["ctx"] if q["ctx"] != "auto" else limit) <= limit
    assert cut.iloc[0]["verdict"] in ("api", "self-host", "tie")  # it runs (more cards where one cannot hold it)
    # Every other lever leaves the requests as long: more cards may hold them in memory, yet nothing serves them.
    assert set(t[~t.index.isin(cut.index)]["verdict"]) == {"beyond context"}
    text = levers.best_text(t)
    assert text.startswith("As set, no request can be served") and cut.iloc[0]["lever"] in text
    assert levers.best_text(_table({"in_tok": "1000"})).startswith("The largest saving")


def test_the_context_lever_cuts_the_longer_part_and_never_lengthens_the_other():
    """A 1,000-token prompt with a 200,000-token reply was offered "prompts of 65,536 tokens instead of 1,000": the
    prompt stays, and the reply is cut to what it leaves; a long prompt with a short reply keeps the reply."""
    from calc.levers import _within_context
    long_reply = _within_context(evaluate(parse("model=llama-3.1-8b&in_tok=1000&out_tok=200000")).scenario)
    assert long_reply.change == {"out_tok": 130_072} and "prompts of" not in long_reply.what
    assert "no longer sees the whole of each prompt" not in long_reply.price
    long_prompt = _within_context(evaluate(parse("model=llama-3.1-8b&in_tok=200000&out_tok=300")).scenario)
    assert long_prompt.change == {"in_tok": 130_772} and "replies of" not in long_prompt.what
    both = _within_context(evaluate(parse("model=llama-3.1-8b&in_tok=200000&out_tok=200000")).scenario)
    assert both.change == {"in_tok": 65_536, "out_tok": 65_536}


def test_speculation_is_judged_at_the_batch_a_light_traffic_fills_too():
    """At the defaults a replica is sized for 71 sequences, where the drafts slow replies; the busiest hour holds
    about 3 (Little's law), where they speed them up: the lever says both."""
    from calc import traffic
    from calc.traffic import load_prefill_seconds
    ev = evaluate(parse(""))
    cap, s = ev.capacity, ev.scenario
    held = traffic.busiest_in_flight(s, cap, ev.decision.replicas)
    lam = s.req_day * s.peak / 86400
    assert held == pytest.approx(lam * (cap.ttft_ms / 1000 + s.out_tok * cap.step_ms / 1000
                                        / (1 - lam * load_prefill_seconds(s))))
    assert 3 < held < 4 and cap.serving_batch == 71
    spec = levers.lever_table(ev).set_index("lever").loc["Speculative decoding, 4 drafts", "price"]
    assert spec.startswith("slower replies at the serving batch (71: 45.9 against 26.6 ms per token)")
    assert ("a replica holds about 3.1 requests at once, and at batch 4 the drafts make replies faster (6.5 against "
            "14.9 ms per token)") in spec
    # More traffic fills more of each replica's batch, never more than it.
    held_by_volume = [traffic.busiest_in_flight((e := evaluate(parse(f"req_day={v}"))).scenario, e.capacity,
                                                e.decision.replicas) for v in (10_000, 100_000, 1_000_000)]
    assert held_by_volume[0] < held_by_volume[1] <= 67 and held_by_volume[2] <= 67
    # Replies that take a replica's whole time: the serving batch is full, and no second clause.
    full = evaluate(parse("model=llama-3.1-8b&req_day=2000000&out_tok=1000"))
    assert traffic.busiest_in_flight(full.scenario, full.capacity, full.decision.replicas) == \
        full.capacity.serving_batch
    price = levers.lever_table(full).set_index("lever").loc["Speculative decoding, 4 drafts", "price"]
    assert "holds about" not in price


def test_speculation_is_weighed_at_the_batch_the_traffic_is_served_at():
    """tpot_ms=5 holds the serving batch to 1 (14.3 ms a token): the speculation lever's time per token is the
    drafted step at that batch (6.2 ms, faster), not at the scenario's batch 71 (it read 'slower replies at the
    serving batch (1: 42.0 against 14.3 ms)')."""
    from calc import evaluate, model, parse
    from calc.levers import lever_table
    ev = evaluate(parse("tpot_ms=5"))
    assert ev.capacity.serving_batch == 1
    table = lever_table(ev)
    plain = table.iloc[0]["tpot_ms"]
    drafted = table[table["lever"].str.startswith("Speculative decoding")].iloc[0]
    s4 = parse("tpot_ms=5&spec_k=4").scenario
    assert drafted["tpot_ms"] == pytest.approx(float(model.speculative(s4, 1, ev.capacity.n).tpot_s) * 1e3)
    assert drafted["tpot_ms"] < plain == pytest.approx(ev.capacity.step_ms * 1)
    assert "slower replies" not in drafted["price"]


def test_a_weights_lever_on_an_moe_checkpoint_says_its_experts_change_too():
    """gpt-oss-120b stores its routed experts in mxfp4: the 'Weights in fp8' lever's link raises them to fp8 too,
    which its description left out."""
    from calc import evaluate, levers, parse
    found = {lv.name: lv.what for lv in levers.levers(evaluate(parse("model=gpt-oss-120b&engine=vllm-0.21")))}
    assert found["Weights in fp8"] == "weights bf16 (16 bits) → fp8 (8 bits) and routed experts mxfp4 → fp8"
    dense = {lv.name: lv.what for lv in levers.levers(evaluate(parse("")))}
    assert dense["Weights in fp8"] == "weights int4-g128 (4.25 bits) → fp8 (8 bits)"


def test_the_format_tables_sequences_that_fit_follow_the_traffic_as_its_bills_do():
    """Under a what-if ctx the bills follow the traffic's requests (SPEC section 10): the sequences that fit beside
    them are counted at a request's tokens too, not at the what-if context (which gave 3 beside a bill sized
    for a serving batch of 321)."""
    link = "model=llama-3.1-8b&card=h100-sxm&ctx=131072&in_tok=1000&out_tok=300"
    ev = evaluate(parse(link))
    table = levers.format_table(ev).set_index("format")
    own = evaluate(parse(f"{link}&weights=bf16"))
    assert table.loc["bf16", "max_batch"] == own.capacity.max_batch
    assert own.capacity.max_batch > 10 * own.flat["max_batch"]  # the what-if context holds far fewer
