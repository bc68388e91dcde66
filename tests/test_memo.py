"""calc.memo: the decision memo's sentences and its text (deterministic, complete, linked to where it is served)."""
import math

import pytest

from calc import evaluate, parse, words
from calc.memo import memo, verdict_sentence


def sentence(link=""):
    p = parse(link)
    return verdict_sentence(evaluate(p).decision)


def test_memo_is_deterministic_and_complete():
    p = parse("model=llama-3.1-8b&card=l40s&req_day=3000000&usd_hr=0.79&upkeep=1000")
    text = memo(p, base_url="https://calc.example.internal/")
    assert text == memo(p, base_url="https://calc.example.internal")
    assert text.startswith("# Self-host or API: Llama 3.1 8B on L40S 48 GB\n")
    for heading in ("## What would change the verdict", "## Monthly cost at 3,000,000 requests a day",
                    "## Capacity for the busiest hour", "## Monthly cost by volume", "## Inputs",
                    "## Assumptions and sources", "## Reasons to self-host that no cost figure captures", "## Reproduce"):
        assert heading in text
    assert f"<https://calc.example.internal/decision?{p.scenario.to_query()}>" in text
    assert "read 2026-07-24" in text  # the API row's date
    assert "0.79 USD per card-hour from RunPod" in text  # the card's rent source
    assert "set in the link" not in text
    assert "| 10,000,000 | 55 | 55 |" in text  # L40S: vLLM takes 90 % of the 44.52 GiB CUDA reports


def test_memo_default_base_url(monkeypatch):
    monkeypatch.delenv("CALC_BASE_URL", raising=False)
    assert "<http://localhost:8501/decision?" in memo(parse(""))
    monkeypatch.setenv("CALC_BASE_URL", "https://x.example")
    assert "<https://x.example/decision?" in memo(parse(""))


def test_sentence_on_defaults():
    assert sentence() == (
        "The API is cheaper: at 10,000 requests a day it costs 343 USD a month, while self-hosting needs "
        "1 H100 SXM 80 GB card and costs 5,800 USD a month including upkeep. At the engine's capacity error (±22 %, "
        "each source predicted by a fit without it, the engine's widest: no row the figures were fitted to measured such a set-up), "
        "self-hosting costs 5,800 USD a month at either end (the same "
        "replicas). The verdict holds across that range. On 33 published rows kept out of the fit (vLLM v0.10.2, vLLM "
        "v0.11.0, from github.com/gpustack/gpustack; Validation page), this engine's "
        "full-load throughput came out a median 28 % too fast, beyond that band; even at that error the same replicas "
        "carry the traffic (5,800 USD a month). "
        "Self-hosting first breaks even "
        "at about 326,000 requests a day and is cheaper at every volume above about 431,000. Within the capacity "
        "error (±22 %) the break-even volume is about 274,000 requests a day with the replicas at the fast end and "
        "about 536,000 requests a day at the slow end. At the median error of the published rows kept out of "
        "the fit (capacity predicted 28 % too high), it would break even at about 641,000 requests a day. The "
        "catalogue's cheapest "
        "row for this model, deepinfra at 0.1 / 0.28 USD per 1M "
        "(api=deepinfra/meta-llama/meta-llama-3.1-70b-instruct-turbo), would bill 55.20 USD a month. Priced with "
        "int4-g128 "
        "weights (4.25 bits; embeddings and LM head in bf16), an fp16 (16 bits) KV cache and 2.50 USD per card-hour, below every on-demand quote in "
        "the catalogue (2.69 to 12.29 USD, 8 quotes), under the vLLM engine profile.")


def test_a_margin_inside_the_figures_uncertainty_is_called_a_tie():
    close = sentence("req_day=380000")  # within a few tens of USD of each other: 0.3 % apart
    assert "The two differ by 0.3%, inside the 10% within which two bills count as a tie here" in close
    assert "treat it as a tie" in close
    assert "treat it as a tie" not in sentence("req_day=10000")


def test_sentence_cases():
    assert "6 replicas of 4 H100 SXM 80 GB cards (24 cards)" in sentence("gpus=4&req_day=1000000")
    # Cheaper than the preset's row, not than the catalogue's cheapest row for the model: said as such.
    cheaper_row = sentence("req_day=380000")
    assert cheaper_row.startswith("The catalogue's cheapest row for this model, deepinfra")
    assert "serve this model. At the API row priced in the link, self-hosting is cheaper" in cheaper_row
    never = sentence("model=llama-3.1-8b&api_in=0.02&api_out=0.03")
    assert "never breaks even" in never and "card rent alone" in never
    assert "not one request of 130,300 tokens fits" in sentence("in_tok=130000")  # within the context: memory
    beyond = sentence("model=llama-3.1-8b&card=l4&in_tok=200000")  # beyond it: the context, not memory
    assert beyond.startswith("A request holds 200,300 tokens") and "No bill serves such requests" in beyond
    assert "fits in the" not in beyond
    assert "to compare: self-hosting costs less than the API below about 0.34 USD per card-hour" in sentence("card=mi300x&upkeep=100")
    tipped = sentence("req_day=340000")  # past the first break-even, but a new replica tips it back
    assert tipped.startswith("The catalogue's cheapest row for this model") and "tips it back" in tipped
    assert "serve this model. At the API row priced in the link, the API is cheaper" in tipped


def test_totals_that_round_alike_get_more_digits():
    assert words.sig_pair(10100.8, 10400) == ("10,100", "10,400")
    assert words.sig_pair(5800, 343.2) == ("5,800", "340")
    assert words.sig(273892.77, 3) == "274,000" and words.sig(0.001144) == "0.0011" and words.sig(None) == "—"


def test_no_rent_is_needed_where_upkeep_alone_is_above_the_api_bill():
    """A card with no rent in the catalogue: where upkeep alone is above the API bill the answer is the API at any
    rent, and the headline says so instead of asking for one; where some rent would win, it asks for it."""
    from calc.memo import headline
    d = evaluate(parse("model=llama-3.1-8b&card=rtx-5090&req_day=100000")).decision
    assert not d.priced and d.price_to_flip is None
    assert headline(d) == "Call the API (no rent would change it)"
    assert "No rent is needed to decide" in verdict_sentence(d)
    d = evaluate(parse("model=llama-3.1-8b&card=l4&req_day=3000000&upkeep=0")).decision  # no rent, no price
    assert not d.priced and d.price_to_flip is not None
    assert headline(d) == "Enter a rent to decide"
    assert "Enter a rent per card-hour (usd_hr) to compare" in verdict_sentence(d)
    # A card with a price to buy it is answered by buying where that beats the API (no rent needed to decide).
    d = evaluate(parse("model=llama-3.1-8b&card=rtx-5090&req_day=3000000&upkeep=0")).decision
    assert not d.priced and headline(d) == "Buy the cards"
    assert verdict_sentence(d).startswith("Buying the cards is cheaper than the API")


def test_a_cheaper_api_row_for_a_stand_in_price_says_whose_price_it_is():
    """Qwen2.5 32B has no row of its own: the link prices it at Qwen2.5 72B's row, and the cheaper row the
    Decision page offers is another 72B row, which it names as the stand-in's."""
    from calc.memo import cheaper_api_callout, cheaper_api_sentence
    d = evaluate(parse("model=qwen2.5-32b&card=h100-sxm&req_day=100000")).decision
    text, api_id = cheaper_api_callout(d)
    assert "72b" in api_id and "for the stand-in model (Qwen/Qwen2.5-72B-Instruct)" in text
    assert "Neither row prices this model itself" in text
    assert "cheapest row for the stand-in model" in cheaper_api_sentence(d)
    d = evaluate(parse("model=llama-3.1-70b&card=h100-sxm&gpus=2")).decision
    assert cheaper_api_callout(d)[0].startswith("**A cheaper API for this model:**")


def test_requests_beyond_the_trained_context_get_no_cheaper_api_advice():
    """A 1M-token request is longer than Llama 3.1 70B's 131,072-token context: no API takes it, so the page and
    the memo offer no cheaper API row for it (the same link within the context does get one)."""
    from calc.memo import cheaper_api_callout, cheaper_api_sentence, headline
    d = evaluate(parse("in_tok=1000000")).decision
    assert d.cheaper_api is None and d.report["cheaper_api"] is None  # the report, page and memo alike
    assert cheaper_api_callout(d) is None and cheaper_api_sentence(d) == ""
    assert headline(d) == "No request can be served as set"
    assert "cheapest row" not in memo(parse("in_tok=1000000"))
    assert cheaper_api_callout(evaluate(parse("in_tok=100000")).decision) is not None


def test_the_break_even_volume_is_given_at_both_ends_of_the_capacity_band():
    """A break-even on a thin margin moves far with the capacity: the memo gives it at both ends of the band, and
    says so where one end never breaks even (the Decision page's tile shows the same two figures)."""
    from calc import report
    from calc.memo import volume_sentence
    r = report("")
    assert r["break_even_req_day_low"] < r["break_even_req_day"] < r["break_even_req_day_high"]
    text = volume_sentence(evaluate(parse("")).decision)
    assert (f"is about {words.sig(r['break_even_req_day_low'], 3)} requests a day with the replicas at the fast end "
            f"and about {words.sig(r['break_even_req_day_high'], 3)} requests a day at the slow end.") in text
    thin = report("out_tok=1200")
    assert thin["break_even_req_day"] > 2e6 and thin["break_even_req_day_high"] is None
    assert "it never breaks even at the slow end: the margin is too thin" in volume_sentence(
        evaluate(parse("out_tok=1200")).decision)
    assert report("card=mi325x")["break_even_req_day_low"] is None  # no rent, no break-even


def test_the_kept_out_rows_price_the_bill_where_they_flatter_beyond_the_band():
    """At 600,000 requests a day vLLM's bill is sized from its full-load throughput, which the 36 published rows
    kept out of the fit put a median 27 % too fast: the memo prices the bill at that error (replicas for 1.27 times
    the busy time), and says when it would exceed the API's."""
    from calc.evaluate import report
    r = report("req_day=600000")
    assert r["capacity_kept_out_pct"] > r["capacity_band_pct"]
    assert r["self_host_usd_month_kept_out"] > r["self_host_usd_month_high"] > r["self_host_usd_month"]
    text = sentence("req_day=600000")
    assert (f"at that error self-hosting would cost {r['self_host_usd_month_kept_out']:,.0f} USD a month, more than "
            f"the API's {r['api_usd_month']:,.0f} USD.") in text
    # An engine no kept-out row measured says nothing of them.
    assert report("engine=trtllm-2025")["capacity_kept_out_pct"] is None
    assert "kept out of the fit" not in sentence("engine=trtllm-2025")


def test_the_verdict_says_when_the_api_bill_is_another_models_price():
    stand_in = verdict_sentence(evaluate(parse("model=glm-4.5&card=h200-sxm&gpus=8&weights=fp8&req_day=300000")).decision)
    assert ("it costs 2,970 USD a month (gpt-oss-120b's price, standing in: the price list has no row for GLM-4.5)"
            in stand_in)
    own = verdict_sentence(evaluate(parse("model=llama-3.1-8b")).decision)
    assert "standing in" not in own


def test_a_light_traffic_is_told_how_many_requests_a_replica_holds():
    from calc.memo import in_flight_sentence
    assert in_flight_sentence(evaluate(parse("")).decision) == (
        "At this traffic's busiest hour a replica holds about 3.1 requests at once (Little's law), not the 71 it is "
        "sized for: with 4 in a step, a reply takes about 14.9 ms per output token.")
    assert in_flight_sentence(evaluate(parse("model=llama-3.1-8b&req_day=2000000&out_tok=1000")).decision) == ""


def test_never_breaking_even_says_where_the_fast_end_of_the_band_would():
    from calc.memo import volume_sentence
    d = evaluate(parse("model=llama-3.1-8b&card=rtx-4090&engine=llamacpp&weights=q4_k_m&req_day=2000")).decision
    assert d.break_even is None and d.report["break_even_req_day_low"] is not None
    text = volume_sentence(d)
    assert text.startswith("Self-hosting never breaks even, at any volume")
    assert (f"At the fast end of the capacity error (±{d.capacity_band_pct:.0f} %) it would break even at "
            f"about {words.sig(d.report['break_even_req_day_low'], 3)} requests a day") in text


def test_a_model_the_unnamed_vllm_release_cannot_hold_names_the_release_that_does():
    """Plain engine=vllm is charged the release family that leaves less cache; where the other one holds the model
    (gpt-oss-120b on one H100: v0.21 and later keep 3.8 GiB of cache), the headline and the verdict say so."""
    from calc.memo import headline
    d = evaluate(parse("model=gpt-oss-120b&card=h100-sxm")).decision
    assert d.verdict == "does not fit"
    assert headline(d) == "Does not fit (it does under vLLM v0.21 and later)"
    assert ("Under vLLM v0.21 and later it fits: 3.85 GiB of KV cache per card, 77 requests of 1,300 tokens at once"
            in verdict_sentence(d))
    named = evaluate(parse("model=gpt-oss-120b&card=h100-sxm&engine=vllm-0.21")).report()
    assert named["verdict"] != "does not fit"
    assert headline(evaluate(parse("model=gpt-oss-120b&card=h100-sxm&engine=vllm-2025")).decision) == "Does not fit"


def test_a_marginal_best_way_is_not_contradicted_by_the_renting_band():
    """The headline calls the cheapest way marginal (a rented mix with the API against the others); the band
    sentence, which weighs renting against the API, says that renting holds, not that 'the verdict' does."""
    from calc.memo import band_sentence, headline
    d = evaluate(parse("req_day=600000&profile=office&autoscale=1&api_in=2&api_out=2")).decision
    assert headline(d).startswith("Marginal (")
    text = verdict_sentence(d)
    assert "The verdict holds" not in text and "Renting stays cheaper than the API across that range." in band_sentence(d)
    assert "The verdict holds across that range." in band_sentence(
        evaluate(parse("card=h100-pcie&req_day=300000&api_in=2&api_out=2")).decision)  # no price to buy


def test_where_the_data_may_not_leave_no_cheaper_api_is_advertised():
    from calc.memo import cheaper_api_callout
    link = "model=llama-3.1-8b&card=l40s&req_day=2000000"
    assert cheaper_api_callout(evaluate(parse(link)).decision) is not None
    assert cheaper_api_callout(evaluate(parse(link + "&why=residency")).decision) is None


def test_a_verdict_the_kept_back_rows_would_flip_is_marginal():
    """The default set-up at 600,000 requests a day: self-hosting (18,400 USD) beats the link's API (20,592) across
    the band (to 20,200), but at the median error of the vLLM rows kept out of the fit it would cost 22,000."""
    from calc.memo import band_sentence
    r = evaluate(parse("req_day=600000")).report()
    assert r["self_host_usd_month_high"] < r["api_usd_month"] < r["self_host_usd_month_kept_out"]
    assert r["verdict_marginal"]
    d = evaluate(parse("req_day=600000")).decision
    assert "lies above that range but below the bill at the error of the published rows kept out of the fit: the " \
           "verdict is marginal." in band_sentence(d)
    # Where even the kept-back rows' error leaves self-hosting cheaper, the verdict stays firm.
    firm = evaluate(parse("req_day=600000&api_in=1&api_out=1")).report()
    assert firm["self_host_usd_month_kept_out"] < firm["api_usd_month"] and not firm["verdict_marginal"]


def test_a_self_host_verdict_resting_on_a_rent_below_the_median_quote_says_so():
    """L40S at 2M requests a day, API row typed at 0.16: self-hosting wins at the preset's 0.79 USD (the lowest of the
    catalogue's 3 on-demand quotes, 0.79, 1.09 and 1.55), and loses at their median, 1.09: 11 replicas x 1.09 x 720 h
    + 4,000 = 12,632.80 USD against the API's 12,480."""
    from calc.memo import rent_quote_sentence
    e = evaluate(parse("model=llama-3.1-8b&card=l40s&req_day=2000000&api_in=0.16&api_out=0.16"))
    r = e.report()
    assert r["rent_median_quote_usd_hr"] == 1.09
    assert r["self_host_usd_month_median_rent"] == pytest.approx(11 * 1.09 * 720 + 4000)
    assert rent_quote_sentence(e.decision).startswith("The rent, 0.79 USD per card-hour, is below the catalogue's "
                                                     "median on-demand quote for this card (1.09 USD, 3 quotes)")
    assert rent_quote_sentence(e.decision) in verdict_sentence(e.decision)
    # At the median rent itself, or where the API loses even there, nothing is said.
    assert rent_quote_sentence(evaluate(parse("model=llama-3.1-8b&card=l40s&req_day=2000000&api_in=0.16&api_out=0.16"
                                              "&usd_hr=1.09")).decision) == ""
    assert rent_quote_sentence(evaluate(parse("model=llama-3.1-8b&card=l40s&req_day=2000000&api_in=0.5&api_out=0.5")
                                        ).decision) == ""


def test_buying_as_the_answer_says_what_its_bill_leaves_out():
    from calc.memo import options_sentence
    h100 = options_sentence(evaluate(parse("req_day=2000000&api_in=2&api_out=2")).decision)
    assert h100.endswith("Buying is priced with rack space and hosting at 0 (set colo_usd for a colocation rate); "
                         "power counted for the cards, not their servers; 32 cards bought in units of 8 (buy_lot) "
                         "for the 25 in use, the 7 spare paying their capital, rack space and idle power.")
    l40s = options_sentence(evaluate(parse("model=llama-3.1-8b&card=l40s&req_day=2000000&api_in=0.5&api_out=0.5"
                                           "&colo_usd=50")).decision)
    assert "colo_usd" not in l40s and "buy_lot" not in l40s and "power counted for the cards" in l40s


def test_a_cheaper_api_row_that_only_beats_renting_says_the_answer_beats_it():
    """At a trillion requests a day on RTX 4090s buying is the answer (665 million USD a month); the cheaper API
    row (870 million) undercuts renting (2.1 billion), not buying: the callout under "Buy the cards" said "cheaper
    than self-hosting", which read as a contradiction."""
    from calc.memo import cheaper_api_callout
    d = evaluate(parse("req_day=1000000000000&model=llama-3.1-8b&card=rtx-4090")).decision
    assert d.report["recommendation"] == "own"
    text = cheaper_api_callout(d)[0]
    assert "cheaper than self-hosting" not in text
    assert ("the API is cheaper than renting the cards (2,050,045,614 USD), but not than buying the cards "
            "(664,922,546 USD), the cheapest way to serve this traffic") in text
    d = evaluate(parse("req_day=5000000&model=llama-3.1-8b&card=l40s")).decision  # the row is the answer
    assert cheaper_api_callout(d)[0].endswith("At that price the API is cheaper than self-hosting.")


def test_an_moe_checkpoint_names_its_routed_experts_format_first():
    """gpt-oss-120b's routed experts (most of its bytes) are MXFP4: "with bf16 weights (16 bits; routed experts in
    mxfp4)" read as a 16-bit model."""
    from calc.memo import checkpoint_text
    assert checkpoint_text(parse("model=gpt-oss-120b").scenario) == (
        "mxfp4 routed experts (4.25 bits) and bf16 weights elsewhere (16 bits)")
    assert checkpoint_text(parse("model=gpt-oss-120b&weights_embed=fp8").scenario) == (
        "mxfp4 routed experts (4.25 bits) and bf16 weights elsewhere (16 bits; embeddings and LM head in fp8)")
    assert checkpoint_text(parse("model=llama-3.1-70b").scenario) == (
        "int4-g128 weights (4.25 bits; embeddings and LM head in bf16)")


def test_the_volume_bullet_gives_the_break_even_at_the_kept_out_error_too():
    """At 600,000 requests a day the verdict says self-hosting would cost more than the API at the error of vLLM's
    rows kept out of the fit (+27 %); the volume bullet beside it said flatly "cheaper at every volume above about
    431,000". It gives the break-even at that error too (the report's break_even_req_day_kept_out): the break-even
    of docs/method.md section 7 with one replica's capacity divided by 1 + that error, worked out here by hand; and
    says where there is none."""
    from calc.memo import volume_sentence
    d = evaluate(parse("req_day=600000")).decision
    r, s = d.report, parse("req_day=600000").scenario
    assert r["self_host_usd_month_kept_out"] > d.api_usd_month
    k = (s.in_tok * s.api_in + s.out_tok * s.api_out) / 1e6 * s.hours / 24
    c_rep = s.gpus * s.usd_hr * (1 - s.discount) * s.hours
    x_cap = d.cap.x_cap / (1 + r["capacity_kept_out_pct"] / 100)
    rep_ = max(1, math.ceil(s.upkeep / (k * x_cap - c_rep)))
    by_hand = max((rep_ - 1) * x_cap, (rep_ * c_rep + s.upkeep) / k)
    assert r["break_even_req_day_kept_out"] == pytest.approx(by_hand, rel=1e-9)
    assert volume_sentence(d).endswith("At the median error of the published rows kept out of the fit (capacity "
                                       f"predicted {r['capacity_kept_out_pct']:.0f} % too high), it would break even "
                                       f"at about {words.sig(by_hand, 3)} requests a day.")
    never = evaluate(parse("req_day=2000000&out_tok=1200")).decision
    assert never.report["break_even_req_day_kept_out"] is None
    assert volume_sentence(never).endswith(f"(capacity predicted {r['capacity_kept_out_pct']:.0f} % too high), it would "
                                           "never break even.")
    # An engine whose kept-out rows flatter no further than its band says nothing more.
    d = evaluate(parse("req_day=2000000&engine=trtllm&weights=fp8&kv=fp8")).decision
    assert d.report["break_even_req_day_kept_out"] is None and "kept out" not in volume_sentence(d)


def test_residency_says_renting_keeps_the_data_with_the_company_and_buying_on_its_premises():
    """why=residency leaves renting and buying (SPEC section 9); a reader whose rule is "our own premises" is told
    that renting is cards rented for the company alone and what buying costs."""
    from calc.memo import REASONS, options_sentence
    assert dict(REASONS)["residency"].startswith("Data cannot go to an API provider")
    text = options_sentence(evaluate(parse("why=residency")).decision)
    assert text.startswith("Of every way to serve this traffic, the cheapest allowed is renting the cards, at 5,800 USD")
    assert ("(rented cards serve the company alone; if the data may not leave the company's own premises, buying "
            "them is the option, at 11,440 USD a month)") in text


def test_the_memo_lists_every_note_the_pages_show():
    """out_spread without run_prompts is named on every page (the report's warnings); the memo's notes left it out."""
    from calc.memo import memo
    text = memo(parse("out_spread=exp"))
    assert "- out_spread describes a benchmark run and changes nothing without run_prompts" in text


def test_without_a_rent_the_cheaper_api_callout_weighs_the_row_against_buying():
    """An RTX 5090 has no rent: at a trillion requests a day buying (654 million USD) is the answer and beats the
    cheaper row (870 million); the callout said only what the row bills."""
    from calc.memo import cheaper_api_callout, volume_sentence
    d = evaluate(parse("req_day=1000000000000&model=llama-3.1-8b&card=rtx-5090")).decision
    assert cheaper_api_callout(d)[0].endswith(
        "Buying the cards costs 653,881,110 USD a month, less than that row: it stays the cheapest way to serve "
        "this traffic.")
    # Where the cheaper row is the answer, the volume bullet says its volumes are against the link's row.
    d = evaluate(parse("req_day=2000000")).decision
    assert d.report["recommendation"] == "api-cheaper-row"
    assert volume_sentence(d).startswith("Against the API row priced in the link (68,640 USD a month), self-hosting "
                                         "first breaks even at about 326,000")


def test_the_marginal_remark_is_never_about_the_ticked_cheaper_api_row():
    """At 5,000,000 requests a day of Llama 3.1 8B on L40S cards under llama.cpp Vulkan the options table ticks the
    catalogue's cheapest API row (4,350 USD a month); the band's other answer (buying) is against the link's own row
    (35,100 USD), so the caption says the others are priced against that row, not that buying beats the tick."""
    from calc import tables
    from calc.memo import ticked_best_text
    d = evaluate(parse("req_day=5000000&model=llama-3.1-8b&card=l40s&engine=llamacpp-vulkan")).decision
    opts = tables.options_table(d.report)
    (ticked,) = opts.loc[opts["best"], "key"]
    assert ticked == "api_cheapest" and d.report["best"] == "api" and d.report["best_marginal"]
    text = ticked_best_text(d, ticked)
    assert text.startswith(" (the others are priced against the API row in the link); of those, calling the API")
    assert "(marginal: within the capacity error" not in text


def test_a_verdict_that_never_breaks_even_names_the_engine_cap_it_rests_on():
    """llama.cpp's server runs 4 slots unless told (max_seqs): on an RTX 4090 that cap, not memory, sets what a busy
    replica serves, and the 'never breaks even' sentence says so (with 64 slots it breaks even)."""
    from calc.memo import volume_sentence
    link = "engine=llamacpp&model=llama-3.1-8b&card=rtx-4090&weights=q4_k_m"
    d = evaluate(parse(link)).decision
    assert d.break_even is None
    assert ", at most 4 sequences a step, the engine's cap (max_seqs; memory would hold " in volume_sentence(d)
    assert evaluate(parse(link + "&max_seqs=64")).decision.break_even is not None
    assert "the engine's cap" not in volume_sentence(evaluate(parse("model=llama-3.1-8b&api_in=0.02&api_out=0.03"))
                                                    .decision)
