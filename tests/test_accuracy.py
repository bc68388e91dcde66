"""calc.accuracy: the cross-validated error band a scenario's capacity carries, and whether a published row
measured its region (engine x card family x model kind x cards per replica)."""

import pytest

from calc import parse
from calc.accuracy import MIN_BAND_ROWS, accuracy, measured_regions, model_kind, region
from calc.engines import CROSS_VALIDATED, error_band, widest_band


@pytest.mark.parametrize("model, kind", [("llama-3.1-8b", "dense"), ("gpt-oss-120b", "MoE"),
                                         ("deepseek-v3", "MLA"), ("qwen3-next-80b-a3b", "hybrid")])
def test_model_kind(model, kind):
    assert model_kind(parse(f"model={model}").scenario) == kind


def test_a_region_names_the_card_family_and_a_custom_card_has_none():
    assert region(parse("model=llama-3.1-8b&card=h100-sxm&gpus=2&weights=bf16").scenario) == (
        "vllm", "Hopper", "dense", 2, False)
    assert region(parse("model=llama-3.1-8b&card=h100-sxm&gpus=2").scenario)[4]  # int4-g128: below 8 bits
    assert region(parse("card=custom").scenario)[1] == "unknown"
    assert region(parse("card=custom&arch=TURING").scenario)[1] == "Turing"  # a custom card named by its family
    assert all(r[1] != "unknown" for r in measured_regions())


def test_a_measured_region_carries_the_full_load_band_of_its_engine():
    a = accuracy(parse("model=llama-3.1-8b&card=h100-sxm&engine=vllm&weights=bf16").scenario)
    throughput = next(b for b in error_band("vllm", CROSS_VALIDATED) if b["metric"] == "max_throughput_tok_s")
    assert a.measured and a.band_pct == throughput["p90_pct"]


def test_weights_below_8_bits_no_row_of_the_engine_unpacked_are_not_measured():
    """No vLLM row stores its weights in fewer than 8 bits: the same set-up in 4-bit weights is not measured,
    while llama.cpp's rows (4-bit GGUF files) and TensorRT-LLM's NVFP4 row on a B200 are."""
    assert not accuracy(parse("model=llama-3.1-8b&card=h100-sxm&engine=vllm&weights=int4-g128").scenario).measured
    assert accuracy(parse("model=llama-3.1-8b&card=rtx-4090&engine=llamacpp&weights=q4_0&batch=1").scenario).measured
    assert accuracy(parse("model=llama-3.1-70b&card=b200&engine=trtllm&weights=4.5&compute=fp4").scenario).measured


def test_an_unmeasured_region_carries_the_engines_widest_band():
    a = accuracy(parse("model=llama-3.1-8b&card=l4&engine=vllm").scenario)
    assert not a.measured
    assert a.band_pct == max(b["p90_pct"] for b in error_band("vllm", CROSS_VALIDATED))


def test_the_roofline_carries_its_own_widest_error_against_every_engines_rows():
    a = accuracy(parse("engine=roofline").scenario)
    assert not a.measured
    assert a.band_pct == max(b["p90_pct"] for b in error_band("roofline", CROSS_VALIDATED))
    assert a.band_pct > widest_band(CROSS_VALIDATED)["p90_pct"]  # the textbook figure is further than any engine


def test_a_band_of_few_rows_takes_the_widest_band_of_its_engines_release_families(monkeypatch):
    """A band from fewer than 10 rows is thin (its 90th percentile is about its worst row), so the bill is widened by
    the widest band of the engine's release families that rest on 10 rows or more. The current TensorRT-LLM profile
    rests on its v1.0 tables (126 rows): its band is its own."""
    import calc.accuracy
    own = next(b for b in error_band("trtllm", CROSS_VALIDATED) if b["metric"] == "max_throughput_tok_s")
    assert own["n"] >= MIN_BAND_ROWS
    link = "model=llama-3.1-70b&card=h100-sxm&gpus=2&engine=trtllm&weights=fp8&compute=fp8"
    a = accuracy(parse(link).scenario)
    assert a.measured and a.band_pct == own["p90_pct"] and a.widened_from is None
    # As when its band rested on the 5 rows of the v1.0 table it had then: the widest of its families stands in.
    real = calc.accuracy.error_band
    thin = [dict(own, n=5, p90_pct=10.0)]
    monkeypatch.setattr(calc.accuracy, "error_band",
                        lambda e, basis=CROSS_VALIDATED: thin if e == "trtllm" else real(e, basis))
    calc.accuracy._accuracy.cache_clear()  # the band is cached per engine and region: ask again with the patch
    families = [(b["p90_pct"], e) for e in ("trtllm-2025", "trtllm-2024", "trtllm-2023", "trtllm-v05")
                for b in real(e, CROSS_VALIDATED) or []
                if b["metric"] == "max_throughput_tok_s" and b["n"] >= MIN_BAND_ROWS]
    a = accuracy(parse(link).scenario)
    assert a.measured and (a.band_pct, a.widened_from) == max(families) and a.band_pct > 10.0
    monkeypatch.setattr(calc.accuracy, "error_band", real)
    calc.accuracy._accuracy.cache_clear()
    # A band of 10 rows or more is the engine's own; SGLang, with no release family beside it, takes the band of the
    # engine whose efficiencies it shares where that one is wider (the test below): its own 2 rows (25 %) are wider
    # than vLLM's 14 (22 %), so its band stays its own.
    assert accuracy(parse("model=llama-3.1-8b&card=rtx-4090&engine=llamacpp&weights=q4_0&batch=1").scenario
                    ).widened_from is None
    sglang, vllm = (next(b["p90_pct"] for b in real(e, CROSS_VALIDATED) if b["metric"] == "max_throughput_tok_s")
                    for e in ("sglang", "vllm"))
    a = accuracy(parse("model=llama-3.1-8b&card=a100-80gb&engine=sglang&weights=bf16").scenario)
    assert sglang > vllm and (a.band_pct, a.widened_from) == (sglang, None)


def test_the_pages_say_when_the_bills_band_is_a_release_familys():
    """llama.cpp Vulkan's own band rests on 9 rows: the bills use its release family's wider one, and the accuracy
    note under every page's headline says so (it quotes the engine's own band first)."""
    from calc import words
    from calc.evaluate import report
    link = "weights=q8_0&engine=llamacpp-vulkan&card=rtx-4090&model=llama-3.1-8b"
    r = report(link)
    assert r["capacity_band_from"] == "llamacpp"
    assert words.band_clause(r, parse(link).scenario) == (f"; the self-hosting bills are ranged with ±{r['capacity_band_pct']:.0f} %, the "
                                    "band of its release family llama.cpp, the widest of its families, as its own "
                                    "rests on too few rows")
    link = "engine=sglang&model=llama-3.1-8b&card=a100-80gb&weights=bf16"
    assert words.band_clause(report(link), parse(link).scenario) == ""  # its own band, the wider (test below)
    assert words.band_clause(report(""), parse("").scenario) == ""


def test_sglangs_thin_band_is_vllms_whose_efficiencies_it_shares(monkeypatch):
    """SGLang's own band rests on 2 rows; its efficiencies are vLLM's, fitted on vLLM's rows: where vLLM's band is
    the wider (as when SGLang's rows came out within 10 %), its bills are ranged with vLLM's and the pages say so;
    SGLang's own rows kept out of the fit (gpustack's, v0.5.4 and v0.5.5: a median 103 % too fast) count against
    it either way."""
    import calc.accuracy
    from calc import report, words
    link = "engine=sglang&model=llama-3.1-8b&card=a100-80gb&weights=bf16"
    r, v = report(link), report("engine=vllm&model=llama-3.1-8b&card=a100-80gb&weights=bf16")
    assert (r["error_band_kept_out_from"], v["error_band_kept_out_from"]) == ("sglang", "vllm")
    assert r["capacity_kept_out_rows"] == 11 and r["capacity_kept_out_pct"] == pytest.approx(103.45)
    real = calc.accuracy.error_band
    thin = [dict(b, p90_pct=10.0) if b["metric"] == "max_throughput_tok_s" else b
            for b in real("sglang", CROSS_VALIDATED)]
    monkeypatch.setattr(calc.accuracy, "error_band",
                        lambda e, basis=CROSS_VALIDATED: thin if e == "sglang" and basis == CROSS_VALIDATED
                        else real(e, basis))
    calc.accuracy._accuracy.cache_clear()
    try:
        r = report(link)
        assert r["capacity_band_from"] == "vllm" and r["capacity_band_pct"] == v["capacity_band_pct"] > 10.0
        assert words.band_clause(r, parse(link).scenario).endswith(
            "the band of vLLM, whose efficiencies it shares, as its own rests on too few rows")
    finally:
        monkeypatch.setattr(calc.accuracy, "error_band", real)
        calc.accuracy._accuracy.cache_clear()


#: Qwen3-30B-A3B in NVFP4 on one B200 under the current TensorRT-LLM: its region's 36 published rows (the v1.0
#: table's single-card MoE rows on the B200 and GB200) were further off out of sample than the engine's 126 rows.
MOE_FP4 = "model=qwen3-30b-a3b&card=b200&weights=nvfp4&kv=fp8&compute=fp4&gpus=1&engine=trtllm&req_day=200000"


def _region_file() -> list[dict]:
    import csv

    from calc.accuracy import REGION_ERRORS_CSV
    with REGION_ERRORS_CSV.open(newline="", encoding="utf-8") as f:  # the cross-validated regions
        return [row for row in csv.DictReader(f) if row["basis"] == CROSS_VALIDATED]


def test_a_set_up_the_rows_kept_out_measured_is_told_their_error():
    """DeepSeek-R1 on 8 H200s under vLLM's V0 engine: no row the figures were fitted to covers it, but 18 published rows
    kept out of the fit (dstack's runs, vllm-v0) measured exactly it. The note says so, with their error, which is
    the median of those rows' own errors recomputed here from their predictions; gpt-oss on one H100 under the
    current vLLM likewise quotes gpustack's rows of it."""
    import numpy as np

    from calc.accuracy import kept_out_region_band
    from calc.notes import outside_measurements
    from calc.scenario import load
    from calc.validate import kept_out_results
    link = "engine=vllm-v0&model=deepseek-v3&card=h200-sxm&gpus=8&weights=fp8"
    s = parse(link).scenario
    band = kept_out_region_band(s)
    where = ("vllm-v0", *region(s)[1:])
    errs = [(r.predicted / r.row.measured - 1) * 100 for r in kept_out_results()
            if r.predicted is not None and (r.row.engine, *region(load(r.row.link).scenario)[1:]) == where]
    assert band["metric"] == "max_throughput_tok_s" and band["n"] == len(errs) == 18
    assert band["signed_median_pct"] == pytest.approx(float(np.median(errs)), abs=0.01)
    said = outside_measurements(s)
    assert said.startswith("not measured: no row the figures were fitted to covers vLLM V0 (to v0.7) on Hopper cards "
                           "with an MLA")
    assert (f"18 published rows kept out of the fit measured set-ups like this one (vLLM V0 (to v0.7) on Hopper cards "
            f"with an MLA model on 8 cards per replica, of any model of that kind; vLLM 0.7.4.dev181+gf35f8e22, from "
            f"github.com/dstackai/benchmarks): full-load throughput came out a median {band['signed_median_pct']:.0f} % "
            "too fast") in said and said.endswith("; the bills weigh theirs")
    gptoss = outside_measurements(parse("model=gpt-oss-20b&card=h100-sxm").scenario)
    assert ("published rows kept out of the fit measured set-ups like this one (vLLM on Hopper cards with an MoE model "
            "on 1 card per replica, of any model of that kind; vLLM v0.10.2, vLLM v0.11.0, from "
            "github.com/gpustack/gpustack)") in gptoss
    assert gptoss.endswith("fewer than 10, so the bills weigh the 33 kept-out rows of the engine")
    assert kept_out_region_band(parse("").scenario) is None  # the default set-up: none of them
    # 10 or more of them, further off than the engine's kept-out rows: the bill is priced at theirs.
    from calc import report
    r = report(link + "&req_day=3000000")
    assert r["capacity_kept_out_region"] and r["capacity_kept_out_rows"] == 18
    assert r["capacity_kept_out_pct"] == band["signed_median_pct"] > r["error_band_kept_out"][0]["signed_median_pct"]
    thin = report("model=gpt-oss-20b&card=h100-sxm&req_day=3000000")  # 5 rows: said, the engine's error priced
    assert not thin["capacity_kept_out_region"]
    assert thin["capacity_kept_out_pct"] in (None, thin["error_band_kept_out"][0]["signed_median_pct"])
    # 14 kept-out cells of TensorRT-LLM v0.17's table measured Llama 3.1 70B's kind on 4 H100s, a median 4 % too
    # fast: within the capacity band (±18 %), so the bill is not priced at theirs, and the note says that instead.
    v017 = "engine=trtllm-2025&model=llama-3.1-70b&card=h100-sxm&gpus=4&weights=fp8&kv=fp8&req_day=200000"
    said = outside_measurements(parse(v017).scenario)
    assert "14 published rows kept out of the fit measured set-ups like this one" in said
    assert said.endswith("; their median lies within the capacity band the bills carry (±18 %)")
    within = report(v017)
    assert within["capacity_kept_out_pct"] is None and within["self_host_usd_month_kept_out"] is None


def test_the_region_table_is_the_cross_validated_error_of_each_regions_rows():
    """calc/data/region_errors.csv agrees with the leave-one-source-out predictions of engine_cv.csv: each region's
    rows (recomputed here from the rows' links) and the 90th percentile of their absolute error."""
    import csv

    import numpy as np

    from calc.engines import CV_CSV, MEASUREMENTS_CSV
    with CV_CSV.open(newline="", encoding="utf-8") as f:
        cv = {row["id"]: row for row in csv.DictReader(f)}
    groups: dict = {}
    with MEASUREMENTS_CSV.open(newline="", encoding="utf-8") as f:
        for row in csv.DictReader(f):
            r = region(parse(row["link"]).scenario)
            if r[1] != "unknown" and cv[row["id"]]["predicted_cv"]:
                groups.setdefault((*r, row["metric"]), []).append(row["id"])
    table = _region_file()
    assert len(table) == len(groups)
    for t in table:
        key = (t["engine"], t["card_family"], t["model_kind"], int(t["gpus"]), t["packed"] == "1", t["metric"])
        assert sorted(t["rows"].split()) == sorted(groups[key])
        errs = [abs(float(cv[i]["predicted_cv"]) / float(cv[i]["measured"]) - 1) * 100 for i in groups[key]]
        assert float(t["p90_pct"]) == pytest.approx(np.percentile(errs, 90), abs=0.01)
        assert int(t["n"]) == len(errs)


def test_a_region_whose_rows_were_further_off_carries_their_band():
    """The engine's band spreads its error over every set-up its rows measured; where 10 or more rows of the
    scenario's own region were further off (TensorRT-LLM's single-card MoE rows in NVFP4: 90th percentile 29 %
    against 21 % over all 126 rows), the bills are ranged with theirs, and the pages and the memo say whose."""
    from calc import memo, report, words
    s = parse(MOE_FP4).scenario
    a = accuracy(s)
    engine_band = next(b for b in error_band("trtllm", CROSS_VALIDATED) if b["metric"] == "max_throughput_tok_s")
    own = next(t for t in _region_file() if (t["engine"], t["card_family"], t["model_kind"], t["gpus"], t["packed"],
                                              t["metric"]) == ("trtllm", "Blackwell-SM100", "MoE", "1", "1",
                                                               "max_throughput_tok_s"))
    assert a.region == ("trtllm", "Blackwell-SM100", "MoE", 1, True)
    assert (a.band_pct, a.region_rows, a.widened_from) == (float(own["p90_pct"]), int(own["n"]), None)
    assert a.band_pct == pytest.approx(28.52, abs=0.5) and a.band_pct > engine_band["p90_pct"] + 5
    r = report(MOE_FP4)
    assert (r["capacity_band_pct"], r["capacity_band_region_rows"]) == (a.band_pct, a.region_rows)
    assert r["self_host_usd_month_low"] <= r["self_host_usd_month"] <= r["self_host_usd_month_high"]
    clause = words.band_clause(r, s)
    assert clause.startswith(f"; the self-hosting bills are ranged with ±{a.band_pct:.0f} %, the band of set-ups like "
                             f"this one: the {a.region_rows} published rows of TensorRT-LLM on Blackwell-SM100 cards with an "
                             "MoE model in weights stored below 8 bits or in scaled blocks on 1 card per replica")
    assert clause.endswith(f"wider than the ±{engine_band['p90_pct']:.0f} % of all the engine's rows")
    text = memo.memo(parse(MOE_FP4))
    assert f"At the capacity error of set-ups like this one (±{a.band_pct:.0f} %: the {a.region_rows} published rows" in text
    assert "engine's capacity error" not in text  # the band is not the engine's: no sentence calls it so


def test_a_regions_narrower_or_thinner_band_never_narrows_the_engines():
    """A region whose rows came closer (TensorRT-LLM on 8 H100s: 90th percentile 14 %) keeps the engine's wider
    band, and one of fewer than 10 rows (TensorRT-LLM v0.6 on 4 A100s: 3 rows) carries no band of its own."""
    engine_band = {e: next(b for b in error_band(e, CROSS_VALIDATED) if b["metric"] == "max_throughput_tok_s")
                   for e in ("trtllm", "trtllm-v05")}
    table = {(t["engine"], t["card_family"], t["model_kind"], int(t["gpus"]), t["packed"] == "1"): t
             for t in _region_file() if t["metric"] == "max_throughput_tok_s"}
    eight = accuracy(parse("model=llama-3.1-70b&card=h100-sxm&gpus=8&weights=fp8&kv=fp8&compute=fp8"
                           "&engine=trtllm").scenario)
    assert float(table[eight.region]["p90_pct"]) < engine_band["trtllm"]["p90_pct"]
    assert (eight.band_pct, eight.region_rows) == (engine_band["trtllm"]["p90_pct"], None)
    two = accuracy(parse("model=llama-3.1-70b&card=a100-80gb&gpus=4&weights=fp16&kv=fp16&compute=fp16"
                         "&engine=trtllm-v05").scenario)
    assert int(table[two.region]["n"]) < MIN_BAND_ROWS
    assert float(table[two.region]["p90_pct"]) > engine_band["trtllm-v05"]["p90_pct"]
    assert (two.band_pct, two.region_rows) == (engine_band["trtllm-v05"]["p90_pct"], None)


def test_a_set_up_no_row_measured_is_never_told_it_is_closer_than_a_measured_one():
    """An RTX PRO 6000 (Blackwell-SM120, a GDDR7 die) is not vouched for by the B200 and GB200 rows, so Qwen3-30B-A3B
    in NVFP4 on it under TensorRT-LLM is not measured; its band is the engine's widest, which counts the widest of the
    engine's regions (38 %), not only its all-rows band (22 %) that a measured neighbour already exceeds."""
    s = parse(MOE_FP4.replace("card=b200", "card=rtx-pro-6000")).scenario
    a = accuracy(s)
    measured = accuracy(parse(MOE_FP4).scenario)
    assert a.region[1] == "Blackwell-SM120" and not a.measured
    assert a.band_pct == measured.band_pct and a.region_rows is None
    assert a.band_pct > max(b["p90_pct"] for b in error_band("trtllm", CROSS_VALIDATED))


def test_a_set_up_said_not_to_fit_that_a_published_run_ran_says_so():
    """gpt-oss-120b on one H100 under vLLM's 2025 accounting leaves no KV cache, but gpustack ran it (v0.10.2, 2,901
    tok/s, kept out): the page's and the memo's does-not-fit verdict names that run, so the verdict reads as in
    doubt, not as impossible. A set-up that fits, or that no row ran, says nothing."""
    from calc import memo, notes
    from calc.evaluate import evaluate
    from calc.scenario import parse
    link = "model=gpt-oss-120b&card=h100-sxm&engine=vllm-2025"
    said = notes.published_run_note(parse(link).scenario)
    assert said.startswith("A published run of this set-up ran all the same: vLLM v0.10.2 measured 2,901 tok/s")
    assert "row b33620de" in said
    assert said in memo.memo(evaluate(parse(link)))
    assert notes.published_run_note(parse("").scenario) == ""  # it fits
    assert notes.published_run_note(parse("model=gpt-oss-120b&card=l4").scenario) == ""  # no row ran it

