"""Engine profiles (docs/method.md section 8): the link keys, the throughput under full load, the physical limit every engine
stays under, and the calibration's error on the published measurements."""

from __future__ import annotations

import csv
import importlib.util
import math
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, assume, example, given, settings

from calc import catalogue, engines, load, memory, model, parse, report, traffic
from calc.engines import ENGINES, FIGURES, ROOFLINE
from calc.scenario import ScenarioError
from calc.validate import flattering_pct, read_measurements

try:
    from tests.test_reference_agreement import scenarios
except ImportError:  # tests/ on sys.path instead of the repository root
    from test_reference_agreement import scenarios

ROOT = Path(__file__).resolve().parent.parent
#: The physical limit of docs/method.md section 8: the roofline at every peak, no reserve.
LIMIT = {"engine": "roofline", "eff": "1", "overhead_gib": "0"}
#: Keys a scenario may carry that set the engine's figures: dropped before comparing engines.
ENGINE_KEYS = {"engine", "eff", *FIGURES}


# ---------------------------------------------------------------- link keys and profiles


def test_default_engine_is_vllm_with_its_fitted_figures():
    r = report("")
    assert r["engine"] == "vllm" and r["scenario"]["engine"] == "vllm"
    prof = dict(engines.profile("vllm"))
    assert prof["max_seqs"] is None and prof["overhead_gib"] is None
    prof["max_seqs"] = 1024  # vLLM's default max_num_seqs on an H100 (engines.default_max_seqs)
    for f in FIGURES:
        assert r["scenario"][f] == prof[f]
        assert r["engine_profile"][f]["value"] == prof[f] and r["engine_profile"][f]["from"] == "profile"


def test_roofline_is_the_spec_model():
    r = report("engine=roofline")
    assert {f: r["scenario"][f] for f in FIGURES} == dict(ROOFLINE)
    assert r["scenario"]["eff"] == 0.7


@pytest.mark.parametrize("engine", ENGINES)
def test_printed_scenario_is_a_complete_link(engine):
    # bf16, which every engine loads: a default the engine runs in another type carries a note the link it prints
    # (which names the type) does not need.
    r = report(f"engine={engine}&model=llama-3.1-8b&card=l40s&gpus=2&weights=bf16")
    again = report(r["scenario"])
    assert again == r


def test_eff_sets_the_three_efficiencies_unless_they_are_given():
    r = report("engine=trtllm&eff=0.5&eff_kv=0.9")
    s = r["scenario"]
    assert (s["eff_bw"], s["eff_kv"], s["eff_flops"]) == (0.5, 0.9, 0.5)
    assert r["engine_profile"]["eff_bw"]["from"] == "link"
    assert r["engine_profile"]["eff_kv"]["from"] == "link"
    assert r["engine_profile"]["step_us"]["from"] == "profile"
    assert s["step_us"] == engines.profile("trtllm")["step_us"]


def test_overhead_and_other_figures_override_the_profile():
    s = report("engine=llamacpp&overhead_gib=1.5&max_seqs=7&mem_util=0.8")["scenario"]
    assert (s["overhead_gib"], s["max_seqs"], s["mem_util"]) == (1.5, 7, 0.8)


@pytest.mark.parametrize("link, key", [("engine=tgi", "engine"), ("eff_bw=0", "eff_bw"), ("eff_kv=1.2", "eff_kv"),
                                       ("eff_flops=-1", "eff_flops"), ("step_us=-5", "step_us"),
                                       ("mem_util=1.01", "mem_util"), ("max_seqs=0", "max_seqs"),
                                       ("max_seqs=65537", "max_seqs"), ("max_seqs=2.5", "max_seqs"),
                                       ("tok_us=-1", "tok_us"), ("eff_link=0", "eff_link")])
def test_out_of_range_figures_name_their_key(link, key):
    from calc import ScenarioError
    with pytest.raises(ScenarioError) as info:
        report(link)
    assert [e.key for e in info.value.errors] == [key]


def test_max_seqs_accepts_the_whole_range():
    assert report("max_seqs=1")["scenario"]["max_seqs"] == 1
    assert report("max_seqs=65536")["scenario"]["max_seqs"] == 65536


def test_max_seqs_caps_auto_batch_serving_and_throughput_batch():
    base = "engine=roofline&model=llama-3.1-8b&card=h200-sxm&weights=fp8&kv=fp8&in_tok=128&out_tok=128"
    free = report(base)
    capped = report(base + "&max_seqs=3")
    assert free["batch"] > 3 and free["serving_batch"] > 3 and free["throughput_batch"] > 3
    assert capped["batch"] == capped["serving_batch"] == capped["throughput_batch"] == 3


def test_step_us_is_added_to_every_step_and_once_to_ttft():
    base = "engine=roofline&batch=8"
    a, b = report(base), report(base + "&step_us=1500")
    assert b["step_ms"] == pytest.approx(a["step_ms"] + 1.5, rel=1e-12)
    assert b["ttft_ms"] == pytest.approx(a["ttft_ms"] + 1.5, rel=1e-12)


def test_mem_util_shrinks_free_memory():
    a, b = report("engine=roofline"), report("engine=roofline&mem_util=0.9")
    assert a["free_gib"] - b["free_gib"] == pytest.approx(0.1 * a["scenario"]["mem_gib"], rel=1e-9)


def test_error_band_is_cross_validated_per_engine():
    band = report("engine=trtllm")["error_band"]
    assert [b["metric"] for b in band] == ["max_throughput_tok_s"] and band[0]["n"] == 126
    assert report("engine=trtllm-2025")["error_band"][0]["n"] == 28
    assert all(b["basis"] == "leave-one-source-out" for e in ENGINES for b in (report(f"engine={e}")["error_band"] or []))
    assert {b["metric"] for b in report("engine=vllm")["error_band"]} == {"step_ms", "max_throughput_tok_s"}
    # The cross-validated band is never narrower than the in-sample error of the same rows.
    for e in ENGINES:
        inside = {b["metric"]: b for b in engines.error_band(e, engines.IN_SAMPLE) or []}
        for b in engines.error_band(e) or []:
            assert b["n"] == inside[b["metric"]]["n"]
            if e != "roofline":
                assert b["median_pct"] >= inside[b["metric"]]["median_pct"] - 1.0, (e, b)


# ---------------------------------------------------------------- throughput under full load


def test_max_throughput_counts_prefill_and_memory():
    short = report("engine=vllm&model=llama-3.1-8b&in_tok=100&out_tok=500")
    long_prompt = report("engine=vllm&model=llama-3.1-8b&in_tok=8000&out_tok=500")
    assert long_prompt["max_throughput_tok_s"] < short["max_throughput_tok_s"]
    assert long_prompt["throughput_batch"] <= short["throughput_batch"]
    nothing = report("engine=vllm&model=llama-3.1-405b&weights=bf16")
    assert nothing["max_throughput_tok_s"] is None and nothing["throughput_batch"] is None


@pytest.mark.parametrize("engine", ["vllm", "sglang", "trtllm", "llamacpp"])
def test_replicas_rest_on_the_throughput_model(engine):
    """Busy seconds per request are out_tok over the engine's throughput at the serving batch; where that batch is
    the full-load batch (memory caps it first), the replicas carry exactly max_throughput_tok_s each."""
    weights = "q8_0" if engine == "llamacpp" else "fp8"  # llama.cpp loads GGUF types only
    r = report(f"engine={engine}&model=llama-3.1-70b&weights={weights}&gpus=2&in_tok=2000&out_tok=500&req_day=200000")
    s = load(r["scenario"]).scenario
    assert r["serving_batch"] == r["throughput_batch"]
    s_req = traffic.capacity(s).s_req
    assert s_req == pytest.approx(s.out_tok / r["max_throughput_tok_s"], rel=1e-12)
    assert r["busy_fraction"] == pytest.approx(r["requests_month"] * s_req / (s.hours * 3600), rel=1e-12)


def test_roofline_keeps_section_6_sizing():
    r = report("engine=roofline&req_day=50000")
    s = load(r["scenario"]).scenario
    tok_s = r["serving_batch"] / (traffic.capacity(s).step_ms / 1e3)
    s_req = s.out_tok / tok_s + traffic.prefill_seconds(s)
    assert traffic.capacity(s).s_req == pytest.approx(s_req, rel=1e-12)


def _without_engine(params: dict) -> dict:
    return {k: v for k, v in params.items() if k not in ENGINE_KEYS}


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(scenarios())
@example(params={"weights_attn": 1, "tflops": 20.0, "gpus": 2})  # llama.cpp Vulkan's knee is at 2, the limit's at 1
@example(params={"model": "gpt-oss-120b"})  # llama.cpp holds its input table on the host: more cache on the card
def test_no_engine_beats_the_physical_limit(params):
    """``engine=roofline&eff=1&overhead_gib=0`` bounds every engine's decode speed and full-load throughput on the
    same scenario: every profile's figures only slow a step down or take memory away."""
    base = _without_engine(params)
    assume(not parse({**base, **LIMIT}).errors)  # a set-up nothing runs (compute narrower than the weights)
    limit = report({**base, **LIMIT})
    # At the limit's batch: each profile's own default batch sits at its own knee, and a step of two
    # sequences yields more tokens than a step of one.
    base["batch"] = str(limit["batch"])
    # A layer-splitting engine copies no KV head and all-reduces nothing, where tensor parallel (the limit's) does:
    # on several cards it may hold more sequences and talk less, but never reads or computes faster than the limit
    # with a free interconnect.
    free_link = report({**base, **LIMIT, "link_gbs": "100000", "link_us": "0"})
    for engine in ENGINES:
        if parse({**base, "engine": engine}).errors:
            continue  # the engine refuses the shape (its tensor-parallel rule)
        r = report({**base, "engine": engine})
        several = int(base.get("gpus", 1)) > 1
        if engines.base(engine) == "llamacpp":
            # llama.cpp loads its own (GGUF) formats: its limit is taken with the same weights. It keeps the
            # input-embedding table in host memory, so the card holds that much more cache; over several cards it
            # splits whole layers (a free interconnect bounds it).
            s = parse({**base, "engine": engine}).scenario
            same = {**base, **LIMIT, **{k: getattr(s, k) for k in
                                        ("weights", "weights_experts", "weights_attn", "weights_embed")}}
            bound = report({**same, "link_gbs": "100000", "link_us": "0"} if several else same)
            if not several:
                room = bound["free_gib"] * 2**30 + memory.input_table_bytes(s)
                assert r["max_batch"] <= max(0, int(room // float(model.cache_bytes(s, s.ctx))))
        else:
            bound = free_link if engines.splits_layers(engine) and several else limit
            assert r["max_batch"] <= limit["max_batch"]
        assert r["tok_s"] <= bound["tok_s"] * (1 + 1e-9), engine
        if r["max_throughput_tok_s"] is not None and bound["max_throughput_tok_s"] is not None:
            assert r["max_throughput_tok_s"] <= bound["max_throughput_tok_s"] * (1 + 1e-9), engine


# ---------------------------------------------------------------- calibration and validation


def test_profiles_are_physically_plausible():
    for engine, prof in engines.profiles().items():
        assert all(0 < prof[k] <= 1 for k in ("eff_bw", "eff_kv", "eff_flops", "mem_util", "eff_link",
                                              "eff_dequant")), engine
        assert min(prof["step_us"], prof["tok_us"], prof["layer_us"], prof["eager_us"]) >= 0, engine
        # vLLM, SGLang and current TensorRT-LLM work their reserve out from the launch settings (calc/memory.py)
        assert (prof["overhead_gib"] is None) == (engine in engines.MODELLED_RESERVE), engine
        assert prof["overhead_gib"] is None or prof["overhead_gib"] >= 0, engine
        # A fixed cost of kernel launches: at most a few hundred microseconds per layer.
        assert prof["layer_us"] <= 500, engine
        assert prof["max_seqs"] is None or prof["max_seqs"] >= 1, engine
    rows = engines.figure_rows()
    assert all(rows[e][f]["source"] for e in ENGINES for f in FIGURES)
    # A release family shares its engine's efficiencies and keeps its own host times.
    for old, new in (("trtllm-2023", "trtllm"), ("trtllm-v05", "trtllm"), ("llamacpp-2024", "llamacpp")):
        assert engines.profile(old)["eff_bw"] == engines.profile(new)["eff_bw"]
    # TensorRT-LLM v0.5-v0.6 is v0.7's runtime with the older decode attention kernel, and nothing else.
    v05, v07 = engines.profile("trtllm-v05"), engines.profile("trtllm-2023")
    assert {f for f in FIGURES if v05[f] != v07[f]} == {"kv_reread"}
    assert (v05["kv_reread"], v07["kv_reread"]) == (1.0, 0.0)
    assert all(engines.profile(e)["kv_reread"] == 0 for e in ENGINES if e != "trtllm-v05")
    # llama.cpp's builds share their time per layer and the launches that CUDA graphs save (eager_us): the builds
    # of before May 2024 capture none, so their layers pay both; the other engines are not measured without graphs.
    old, new = engines.profile("llamacpp-2024"), engines.profile("llamacpp")
    assert (old["layer_us"], old["eager_us"]) == (new["layer_us"], new["eager_us"])
    assert 0 < new["eager_us"] <= 500
    assert all(engines.profile(e)["eager_us"] == 0 for e in ENGINES if engines.base(e) != "llamacpp"
               or e == "llamacpp-vulkan")


def _calibrate_module():
    spec = importlib.util.spec_from_file_location("calibrate", ROOT / "scripts" / "calibrate.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("calibrate", module)  # dataclasses look their module up while the class is made
    spec.loader.exec_module(module)
    return module


def test_calibration_reruns_to_the_stored_figures():
    cal = _calibrate_module()
    rows = [r for r in read_measurements() if r.engine in cal.FITTED]
    fast = cal.FastRows(rows)
    fixed, notes = cal.fixed_figures(rows)
    plan, vals = cal.fit(fast, fixed)
    table = cal.build_table(fast, plan, vals, notes, "calc/data/measurements.csv")
    stored = engines.figure_rows()
    for engine in ENGINES:
        for f in FIGURES:
            value, basis, _ = table[engine][f]
            assert stored[engine][f]["basis"] == basis, (engine, f)
            want = stored[engine][f]["value"]
            assert (value is None and want is None) or math.isclose(value, want, rel_tol=1e-3, abs_tol=1e-3), \
                (engine, f, value, want)


@pytest.mark.parametrize("extra", ["&eff_flops=0.5", "&eff=0.6", "&step_us=100", "&eff_flops=0.5&eff_prefill=0.8"])
def test_the_calibration_prices_a_row_as_the_report_does_when_its_link_sets_a_figure(extra):
    """scripts/calibrate.py's fast copy of the model takes a figure the row's link sets, and the figures the scenario
    derives from it (eff_prefill and eff_fp4 from eff_flops or eff, expert_us from step_us), as calc.report does."""
    import dataclasses

    import numpy as np

    from calc.validate import evaluate
    cal = _calibrate_module()
    rows = [dataclasses.replace(r, link=r.link + extra) for r in read_measurements() if r.engine in cal.FITTED]
    rows = [r for r in rows if "compute=fp4" in r.link or "experts=" in r.link or "model=llama-4" in r.link
            or "qwen3-30b" in r.link][:12] + rows[::25]
    fast = cal.FastRows(rows)
    f = {k: np.array([np.nan if engines.profile(e)[k] is None else engines.profile(e)[k] for e in fast.engine])
         for k in FIGURES}
    quick = fast.predict(f)
    slow = np.array([r.predicted if r.predicted is not None else np.nan for r in evaluate(rows)])
    assert np.isfinite(slow).sum() >= 10
    np.testing.assert_allclose(quick, slow, rtol=1e-9)


@pytest.mark.parametrize("link, said", [
    # Inside the fitted rows; gpustack's kept-out vLLM v0.11.0 runs of dense models on one H100 are quoted.
    ("model=qwen3-8b&card=h100-sxm&weights=fp8", ["7 published rows kept out of the fit measured set-ups like this one",
                                                  "vLLM v0.11.0, from github.com/gpustack/gpustack"]),
    ("model=mistral-7b-v0.3", ["this scenario's model lies outside them",
                               "none of its rows stores weights below 8 bits or in scaled blocks, as this scenario's "
                                   "int4-g128 does"]),
    ("engine=trtllm&weights=fp8", ["the engine's rows measure full-load throughput only"]),
    ("engine=llamacpp&model=llama-3.1-8b&card=rtx-4090&weights=q4_k_m", []),
    ("engine=roofline", []),
])
def test_a_scenario_outside_the_measured_rows_says_so(link, said):
    from calc import notes
    text = notes.outside_measurements(load(link).scenario)
    assert all(part in text for part in said), text
    assert (text == "") == (not said), text


@pytest.mark.parametrize("model, gpus, times", [
    ("llama-3.1-70b", 1, 8.0),   # 64 query heads over 8 KV heads
    ("llama-3.1-70b", 4, 8.0),   # 16 query heads over 2 KV heads per card
    ("llama-3.1-70b", 16, 4.0),  # 4 query heads over the one KV head each card holds (a copy)
    ("custom&params_b=13&active_b=13&layers=40&heads=40&kv_heads=40&head_dim=128&hidden=5120", 1, 1.0),  # no GQA
])
def test_kv_reread_reads_each_kv_head_once_per_query_head(model, gpus, times):
    """docs/method.md section 8: a decode kernel with one block per query head reads (H/g)/ceil(Hkv/g) times the
    KV cache a step would read once; the cache held, and so the batch that fits, do not change."""
    link = f"model={model}&card=h200-sxm&weights=fp8&kv=fp8&gpus={gpus}&batch=32&ctx=4096&engine=trtllm-2023"
    once, again = report(link), report(link + "&kv_reread=1")
    assert again["kv_read_gib_per_step"] == pytest.approx(times * once["kv_read_gib_per_step"], rel=1e-12)
    assert again["max_batch"] == once["max_batch"]
    half = report(link + "&kv_reread=0.5")
    assert half["kv_read_gib_per_step"] == pytest.approx((1 + (times - 1) / 2) * once["kv_read_gib_per_step"])
    assert (again["step_ms"] > once["step_ms"]) == (times > 1)


#: A scenario printed for engine=trtllm-2023 before the v0.5 rows moved to their own profile (the fit of the
#: v0.5-to-v0.7 family pinned in it), and what it then computed.
OLD_TRTLLM_2023 = (
    "model=llama-3.1-70b&card=h200-sxm&weights=fp8&kv=fp8&gpus=2&in_tok=128&out_tok=2048&engine=trtllm-2023"
    "&eff_bw=0.5597&eff_kv=0.8611&eff_flops=0.5329&step_us=0.0&mem_util=1.0&max_seqs=2048&tok_us=80.2"
    "&eff_link=0.4393&layer_us=0.0&eff_dequant=1.0&overhead_gib=4.0&eff=0.7")


def test_an_old_printed_link_keeps_its_numbers():
    """docs/calibration.md section 7: a printed scenario pins every figure; the figure added since (kv_reread) is 0
    for the profile it names, so its numbers stand."""
    r = report(OLD_TRTLLM_2023)
    assert r["max_throughput_tok_s"] == pytest.approx(4169.269521652082, rel=1e-12)
    assert r["step_ms"] == pytest.approx(21.241922472299454, rel=1e-12)
    assert r["monthly_usd"] == pytest.approx(9169.6, rel=1e-12)
    v05 = report(OLD_TRTLLM_2023.replace("engine=trtllm-2023", "engine=trtllm-v05"))
    assert v05["max_throughput_tok_s"] < r["max_throughput_tok_s"]  # the same figures, eight reads of the cache


#: A TensorRT-LLM v0.5 scenario as the app printed it before ``overlap`` existed (commit 5a552b7): every figure then
#: pinned, eff_flops among them, no overlap.
OLD_TRTLLM_V05 = (
    "model=llama-3.1-70b&params_b=70.554&active_b=70.554&layers=80&heads=64&kv_heads=8&head_dim=128&hidden=8192"
    "&experts=0&experts_active=0&kv_latent=0&window=0&window_layers=0&embed_b=1.050673152&vocab=128256"
    "&linear_layers=0&state_kib=0&state_layers=0&card=h200-sxm&mem_gib=140.4013671875&torch_gib=139.7186279296875"
    "&bw_tbs=4.8&tflops=1979&gpus=2&compute=fp8&link_gbs=450&arch=hopper&link_us=10&weights=fp8&weights_experts=fp8"
    "&weights_attn=fp8&weights_embed=fp8&layers_full=0&kv=fp8&ctx=auto&batch=auto&eff=0.7&overhead_gib=4&usd_hr=3.59"
    "&duty=auto&upkeep=4000&hours=720&attn=1&req_day=10000&in_tok=128&out_tok=2048&peak=3"
    "&api=together_ai%2Fmeta-llama%2Fmeta-llama-3.1-70b-instruct-turbo&api_in=0.88&api_out=0.88&engine=trtllm-v05"
    "&eff_bw=0.5101&eff_kv=0.9624&eff_card=1&eff_flops=0.4741&eff_prefill=0.6481&step_us=1132.5&mem_util=1"
    "&max_seqs=2048&tok_us=20.1&eff_link=0.5255&layer_us=0&layer_ghz=0&eager_us=0&eff_dequant=1&kv_reread=1"
    "&eff_fp4=0.5052&eff_fp8=1&expert_us=9.6&max_batched_tokens=8192&dequant_q8=1&cuda_graphs=1&split=layer"
    "&flash_attn=1&spec_k=0&spec_alpha=0.7&spec_c=0.05&prefix_hit=0&api_cached=0.88&discount=0")


def test_partial_overlap_prices_the_static_batch_releases_and_spares_old_links():
    """docs/method.md section 8 (overlap): TensorRT-LLM v0.5 to v0.9 hide part of a step's shorter time under the
    longer (one fitted figure for both families), every other profile the roofline's max; a link printed before the
    figure existed carries eff_flops, beside which overlap is 1, so its numbers stand (4,427 tok/s then)."""
    from calc import model
    from calc.engines import profile
    old = report(OLD_TRTLLM_V05)
    assert parse(OLD_TRTLLM_V05).scenario.overlap == 1.0
    assert old["max_throughput_tok_s"] == pytest.approx(4427.351104921388, rel=1e-12)
    assert old["step_ms"] == pytest.approx(212.8773609622094, rel=1e-12)
    o = profile("trtllm-v05")["overlap"]
    assert 0.3 < o < 0.8 and profile("trtllm-2023")["overlap"] == o
    assert all(profile(e)["overlap"] == 1.0 for e in ("trtllm", "trtllm-2025", "trtllm-2024", "vllm", "sglang",
                                                      "llamacpp", "roofline"))
    bare = "engine=trtllm-v05&model=llama-3.1-70b&card=h200-sxm&gpus=2&weights=fp8&kv=fp8&compute=fp8&batch=192"
    s = parse(bare).scenario
    p = model.step_parts(s, 192)
    longer, shorter = max(p.memory_s, p.compute_s), min(p.memory_s, p.compute_s)
    assert float(p.step_s) == pytest.approx(float(longer + (1 - o) * shorter + p.comm_s + p.fixed_s), rel=1e-12)
    # The link's own overlap wins; 1 gives the roofline's max.
    full = model.step_parts(parse(bare + "&overlap=1").scenario, 192)
    assert float(full.step_s) == pytest.approx(float(longer + p.comm_s + p.fixed_s), rel=1e-12)
    assert parse(bare + "&eff_flops=0.5").scenario.overlap == 1.0
    assert parse(bare + "&eff_flops=0.5&overlap=0.3").scenario.overlap == 0.3


#: A llama.cpp Vulkan 2025 scenario on Q8_0 weights as the app printed it before the loss on packed weights reached
#: Q8_0's scaled 8-bit blocks (commit 8ba8474): every figure pinned, no dequant_q8.
OLD_VULKAN_2025_Q8 = (
    "model=llama-3.1-8b&params_b=8.03&active_b=8.03&layers=32&heads=32&kv_heads=8&head_dim=128&hidden=409"
    "6&experts=0&experts_active=0&kv_latent=0&window=0&window_layers=0&embed_b=0.525336576&vocab=128256&l"
    "inear_layers=0&state_kib=0&state_layers=0&card=rtx-4090&mem_gib=23.98828125&torch_gib=23.64288330078"
    "125&bw_tbs=1.008&tflops=165.2&gpus=1&compute=bf16&link_gbs=32&clock_ghz=2.52&link_us=10&weights=q8_0"
    "&weights_experts=q8_0&weights_attn=q8_0&weights_embed=q8_0&layers_full=0&kv=fp16&ctx=auto&batch=1&ef"
    "f=0.7&usd_hr=0.34&duty=auto&upkeep=4000&hours=720&attn=1&req_day=10000&in_tok=1000&out_tok=300&peak="
    "3&api=together_ai%2Fmeta-llama%2Fmeta-llama-3.1-8b-instruct-turbo&api_in=0.18&api_out=0.18&engine=ll"
    "amacpp-vulkan-2025&eff_bw=0.8689&eff_kv=0.8689&eff_flops=0.7&eff_prefill=0.7&step_us=0&mem_util=1&ma"
    "x_seqs=4&tok_us=0&eff_link=0.5186&layer_us=40.9&layer_ghz=2&eager_us=0&eff_dequant=0.6264&kv_reread="
    "0&eff_fp4=1&expert_us=0&max_batched_tokens=512&cuda_graphs=1&flash_attn=0&spec_k=0&spec_alpha=0.7&sp"
    "ec_c=0.05&prefix_hit=0&api_cached=0.18&discount=0&card_usd=1599&server_frac=0.4&years=4&wacc=0.08&re"
    "sidual=0.1&power_w=450&idle_frac=0.25&pue=1.4&usd_kwh=0.12&colo_usd=0&autoscale=0&min_replicas=1&lab"
    "_n=4096&lab_group=128&lab_outliers=0.000244140625&lab_scale=20&run_prompts=0&out_spread=none&out_max"
    "=0"
)


def test_an_old_printed_q8_0_link_keeps_its_numbers():
    """docs/calibration.md section 7: the link gives eff_dequant and not dequant_q8, so its Q8_0 blocks are read at
    the full bandwidth share, as when it was printed (10.337 ms then); the same link printed now says dequant_q8=1
    and reads them at eff_dequant, as the profile does."""
    old = parse(OLD_VULKAN_2025_Q8).scenario
    assert old.dequant_q8 == 0 and report(OLD_VULKAN_2025_Q8)["step_ms"] == pytest.approx(10.337225711399377,
                                                                                          rel=1e-12)
    now = report(OLD_VULKAN_2025_Q8 + "&dequant_q8=1")["step_ms"]
    fresh = parse("model=llama-3.1-8b&card=rtx-4090&engine=llamacpp-vulkan-2025&weights=q8_0&batch=1").scenario
    assert fresh.dequant_q8 == 1 and fresh.to_params()["dequant_q8"] == "1"
    assert now > 1.3 * 10.337225711399377  # Q8_0 now read at the 2025 builds' 0.62 of the bandwidth share


def test_prefill_has_its_own_share_of_the_peak():
    """docs/method.md section 8: eff_prefill prices a prompt's arithmetic (the TTFT and the prefill under load),
    eff_flops a decode step's. TensorRT-LLM's rows and vLLM's (prompts of 128 to 20,000 tokens) fit the two apart,
    a prefill reaching the larger share; llama.cpp's batch-1 rows cannot, so its prefill takes eff_flops; a link that
    gives eff_flops (else eff) sets the prefill's share too, so a printed link of before keeps its numbers."""
    trt, vllm, cpp = engines.profile("trtllm"), engines.profile("vllm"), engines.profile("llamacpp")
    assert trt["eff_prefill"] > trt["eff_flops"] and vllm["eff_prefill"] > vllm["eff_flops"]
    assert cpp["eff_prefill"] == cpp["eff_flops"]
    link = "model=llama-3.1-70b&card=h100-sxm&gpus=2&weights=fp8&kv=fp8&in_tok=8192&out_tok=256&engine=trtllm"
    assert parse(link).scenario.eff_prefill == trt["eff_prefill"]
    assert parse(link + "&eff_flops=0.5").scenario.eff_prefill == 0.5
    assert parse(link + "&eff=0.6").scenario.eff_prefill == 0.6
    assert parse(link + "&eff=0.6&eff_flops=0.5&eff_prefill=0.9").scenario.eff_prefill == 0.9
    # An 8,192-token prompt on two H100s is arithmetic-bound: its TTFT falls with eff_prefill, the step does not move.
    slow, fast = report(link + "&eff_prefill=0.3"), report(link + "&eff_prefill=0.6")
    assert fast["step_ms"] == slow["step_ms"] and fast["ttft_ms"] < 0.6 * slow["ttft_ms"]
    assert fast["max_throughput_tok_s"] > slow["max_throughput_tok_s"]
    # Pinning eff_prefill to eff_flops gives the one-share model the profile had before.
    same = report(link + f"&eff_prefill={trt['eff_flops']}")
    assert same["ttft_ms"] > report(link)["ttft_ms"]


def test_a_decode_step_at_fp8_keeps_its_share_of_the_arithmetic_and_a_prefill_the_fp8_peak():
    """docs/method.md section 8: eff_fp8 scales a decode step's arithmetic at compute=fp8 (vLLM's FP8 GEMMs of one
    row per sequence reach about the BF16 rate: silybench's FP8 run saved the weights' read and nothing more at every
    batch), not a prefill's; TensorRT-LLM's and llama.cpp's take 1; a link that gives eff_flops or eff takes 1 too,
    so a printed link of before keeps its numbers."""
    vllm = engines.profile("vllm")
    assert 0.3 < vllm["eff_fp8"] < 0.8 and engines.profile("sglang")["eff_fp8"] == vllm["eff_fp8"]
    assert engines.profile("trtllm")["eff_fp8"] == engines.profile("llamacpp")["eff_fp8"] == 1.0
    link = "model=qwen3-8b&card=h100-sxm&weights=fp8&compute=fp8&kv=bf16&batch=512&ctx=192&in_tok=128&out_tok=128"
    assert parse(link).scenario.eff_fp8 == vllm["eff_fp8"]
    assert parse(link + "&eff_flops=0.5").scenario.eff_fp8 == parse(link + "&eff=0.6").scenario.eff_fp8 == 1.0
    # At batch 512 the FP8 step is arithmetic-bound: it slows by 1/eff_fp8 where the arithmetic binds; the TTFT
    # (a prefill) does not move; at BF16 the figure counts for nothing.
    one, own = report(link + "&eff_fp8=1"), report(link)
    assert own["step_ms"] > one["step_ms"] and own["ttft_ms"] == one["ttft_ms"]
    bf16 = link.replace("compute=fp8", "compute=bf16")
    assert report(bf16 + "&eff_fp8=0.2")["step_ms"] == report(bf16 + "&eff_fp8=1")["step_ms"]
    parts = model.step_parts(parse(link).scenario, 512, 192)
    flat = model.step_parts(parse(link + "&eff_fp8=1").scenario, 512, 192)
    assert float(parts.compute_s) == pytest.approx(float(flat.compute_s) / vllm["eff_fp8"], rel=1e-9)


def test_a_llamacpp_build_without_cuda_graphs_pays_its_launches_per_layer():
    """docs/method.md section 8: without CUDA graphs every layer adds eager_us (a current llama.cpp build on a card
    older than Ampere; the builds of before May 2024 by default); an engine no row measures without graphs keeps
    its step."""
    link = "model=llama-3.1-8b&card=rtx-4090&weights=q4_0&batch=1&ctx=256&engine=llamacpp"
    graphs, eager = report(link), report(link + "&cuda_graphs=0")
    prof = engines.profile("llamacpp")
    assert eager["step_ms"] - graphs["step_ms"] == pytest.approx(32 * prof["eager_us"] / 1e3, rel=1e-9)
    old = parse(link.replace("engine=llamacpp", "engine=llamacpp-2024")).scenario
    assert old.cuda_graphs == 0
    # The old builds are the current ones without graphs, but for their own loss on sub-8-bit weights and the KV
    # cache's share of the bandwidth (tied to the weights' there), which a 256-token context hardly reads.
    old_prof = engines.profile("llamacpp-2024")
    assert old_prof["eff_dequant"] < prof["eff_dequant"]
    assert report(link.replace("engine=llamacpp", "engine=llamacpp-2024"))["step_ms"] == pytest.approx(
        report(link + f"&cuda_graphs=0&eff_dequant={old_prof['eff_dequant']}")["step_ms"], rel=1e-3)
    vllm = "model=llama-3.1-8b&card=h100-sxm&weights=bf16&batch=1&ctx=256&engine=vllm"
    assert report(vllm + "&cuda_graphs=0")["step_ms"] == report(vllm)["step_ms"]


def test_llamacpp_decodes_several_sequences_without_a_cuda_graph():
    """llama.cpp's CUDA backend captures a graph for a one-token step only (docs/method.md section 3.4): at batch 4
    every layer pays its launches, at batch 1 not; its Vulkan build and vLLM are unaffected; a link that pins
    layer_us alone (a printed link of before eager_us) keeps its numbers."""
    link = "model=llama-3.1-8b&card=rtx-4090&weights=q4_0&ctx=256&engine=llamacpp"
    prof = engines.profile("llamacpp")
    one, four = report(link + "&batch=1"), report(link + "&batch=4")
    no_launch = report(link + "&batch=4&eager_us=0")
    assert four["step_ms"] - no_launch["step_ms"] == pytest.approx(32 * prof["eager_us"] / 1e3, rel=1e-9)
    assert report(link + "&batch=1&eager_us=0")["step_ms"] == one["step_ms"]
    pinned = report(link + f"&batch=4&layer_us={prof['layer_us']}")
    assert pinned["step_ms"] == no_launch["step_ms"]
    vulkan = link.replace("engine=llamacpp", "engine=llamacpp-vulkan")
    assert report(vulkan + "&batch=4&eager_us=50")["step_ms"] == report(vulkan + "&batch=4&eager_us=0")["step_ms"]


def test_llamacpp_loads_gguf_types_only_and_prices_a_default_it_cannot_load_as_its_gguf_counterpart():
    """docs/method.md section 5: llama.cpp reads GGUF files, so int4-g128 (the default), int8 and fp8 are not its
    formats: a link that names one is refused with the counterpart named; a link that names none is priced in the
    counterpart and says so; mxfp4 and nvfp4 are GGUF types."""
    p = parse("engine=llamacpp")
    assert p.scenario.weights == "q4_k_m" and not p.errors
    assert any("GGUF counterpart of int4-g128" in w for w in p.warnings)
    refused = parse("engine=llamacpp&weights=fp8")
    assert [e.key for e in refused.errors] == ["weights"] and "q8_0" in refused.errors[0].reason
    assert refused.scenario.engine == "llamacpp"
    assert not parse("engine=llamacpp&weights=nvfp4").errors and not parse("engine=llamacpp&weights=bf16").errors
    # A shipped FP8 checkpoint becomes one GGUF conversion: q8_0 throughout, no part kept at 16 bits.
    s = parse("model=llama-3.1-405b-fp8&gpus=8&engine=llamacpp").scenario
    assert (s.weights, s.weights_attn, s.weights_embed, s.layers_full) == ("q8_0", "q8_0", "q8_0", 0)
    assert parse("engine=vllm").scenario.weights == "int4-g128"


@pytest.mark.parametrize("link, key", [
    ("engine=trtllm&weights=fp8&weights_experts=q4_k_m&model=mixtral-8x7b", "weights_experts"),
    ("engine=trtllm&weights=fp8&weights_attn=q4_k_m", "weights_attn"),
    ("engine=llamacpp&weights=q4_k_m&weights_embed=int4-g128", "weights_embed"),
])
def test_a_part_in_a_format_the_engine_cannot_load_is_refused_by_its_key(link, key):
    """Each part of the checkpoint must load in the engine, not the main format alone."""
    from calc import parse
    parsed = parse(link)
    assert key in {e.key for e in parsed.errors}, parsed.errors
    assert parse("engine=llamacpp&model=gpt-oss-120b").errors == ()  # a preset's own parts load by design


# ------------------------------------------------------------------ set-ups that exist (docs/method.md section 5)

@pytest.mark.parametrize("link, key", [
    ("compute=fp4&card=b200&weights=bf16", "compute"),  # FP4 arithmetic on a 16-bit checkpoint: 4x the peak it reaches
    ("compute=fp8&card=h100-sxm&weights=bf16", "compute"),
    ("compute=fp4&card=b200&weights=fp8", "compute"),
    ("engine=trtllm&card=h100-sxm&weights=nvfp4", "weights"),  # NVFP4 GEMMs need Blackwell's FP4 units
    ("engine=trtllm&card=a100-80gb&weights=fp8", "weights"),  # FP8 GEMMs need Ada, Hopper or Blackwell
    ("engine=trtllm&card=a100-80gb&model=mixtral-8x7b&weights=bf16&weights_experts=fp8&gpus=2", "weights_experts"),
    ("kv=int4", "kv"), ("engine=sglang&kv=int8", "kv"), ("engine=trtllm&kv=int4", "kv"),
    ("engine=llamacpp&kv=fp8", "kv"), ("engine=trtllm&card=a100-80gb&kv=fp8", "kv"),
])
def test_a_set_up_no_engine_runs_is_refused_by_its_key(link, key):
    with pytest.raises(ScenarioError) as exc:
        report(link)
    assert [e.key for e in exc.value.errors] == [key]


@pytest.mark.parametrize("link", [
    "model=gpt-oss-120b&compute=fp8&card=h100-sxm",  # MXFP4 experts at FP8 beside 16-bit attention
    "compute=fp4&card=b200&weights=nvfp4", "compute=fp8&card=h100-sxm&weights=int4-g128",  # W4A8
    "weights=fp32&card=h100-sxm", "engine=vllm&card=a100-80gb&weights=fp8",  # vLLM's Marlin reads FP8 on Ampere
    "engine=trtllm&card=b200&weights=nvfp4&compute=fp4", "engine=trtllm&card=l40s&weights=fp8",
    "engine=trtllm&card=custom&weights=nvfp4",  # a custom card's units are not known
    "engine=trtllm&kv=int8", "engine=trtllm&card=a100-80gb&kv=int8", "engine=llamacpp&kv=int4", "engine=llamacpp&kv=int8", "kv=4.5", "engine=roofline&kv=int4",
])
def test_set_ups_the_engines_run_are_accepted(link):
    assert report(link)["scenario"]


def test_an_engine_chosen_that_cannot_hold_the_cache_or_load_the_weights_says_which_it_set_aside():
    from calc.scenario import set_aside_by_change, with_change
    params = load("engine=vllm&weights=int4-g128&kv=fp8").scenario.to_params()
    changed = with_change(params, "engine", "llamacpp")
    assert "kv" not in changed and changed["weights"] == "q4_k_m"  # the GGUF counterpart of int4-g128
    said = {e.key: e.message for e in set_aside_by_change(params, "engine", "llamacpp")}
    assert set(said) == {"weights", "kv"}
    assert "llama.cpp cannot load int4-g128 weights" in said["weights"]
    assert "llama.cpp cannot hold its KV cache in fp8" in said["kv"]
    assert set_aside_by_change(params, "engine", "sglang") == []
    assert load(changed).scenario.kv == "fp16"


@pytest.mark.parametrize("max_batch, max_seqs, be, binds", [
    (404, 256, None, "max_seqs"), (404, 256, 300.0, "max_seqs"), (404, 256, 200.0, "compute"),
    (100, 256, 300.0, "memory"), (100, None, None, "memory"), (400, None, 300.0, "compute"),
])
def test_what_stops_the_batch_first(max_batch, max_seqs, be, binds):
    from calc import notes
    assert notes.batch_cap(max_batch, max_seqs, be) == binds


def test_llamacpp_takes_the_gguf_counterpart_its_message_names_and_a_card_says_which_compute_it_set_aside():
    from calc.scenario import set_aside_by_change, with_change
    params = load("weights=fp8").scenario.to_params()
    assert load(with_change(params, "engine", "llamacpp")).scenario.weights == "q8_0"
    assert "counterpart of fp8 is q8_0" in set_aside_by_change(params, "engine", "llamacpp")[0].message
    fp8 = load("compute=fp8&weights=fp8").scenario.to_params()
    said = set_aside_by_change(fp8, "card", "a100-80gb")
    assert [e.key for e in said] == ["compute"] and "A100 80GB SXM has no fp8 units" in said[0].message
    assert set_aside_by_change(fp8, "card", "h200-sxm") == []


def test_a_cache_given_in_bits_says_the_engine_holds_no_such_format():
    assert any("kv=4 is a cache format of the link's own" in w for w in report("kv=4")["warnings"])
    assert not any("cache format of the link's own" in w for w in report("kv=fp8")["warnings"])
    assert not any("cache format of the link's own" in w for w in report("engine=roofline&kv=4")["warnings"])


def test_vulkan_time_per_layer_follows_the_card_clock():
    """docs/method.md section 3.4: llama.cpp's Vulkan backend states layer_us at layer_ghz; a card of known boost
    clock takes layer_us x layer_ghz / clock_ghz per layer, a card of unknown clock the stated time; the other
    engines' time per layer does not follow the clock; a link that pins layer_us alone (printed before layer_ghz)
    keeps its numbers."""
    link = "model=llama-3.1-8b&card=rtx-4090&weights=q4_0&ctx=64&batch=1&engine=llamacpp-vulkan"
    prof = engines.profile("llamacpp-vulkan")
    clock = catalogue.cards()["rtx-4090"]["clock_ghz"]
    assert prof["layer_ghz"] > 0 and clock > 0
    base = report(link)
    no_layer = report(link + "&layer_us=0")
    assert base["step_ms"] - no_layer["step_ms"] == pytest.approx(
        32 * prof["layer_us"] * prof["layer_ghz"] / clock / 1e3, rel=1e-9)
    slower = report(link + f"&clock_ghz={clock / 2!r}")
    assert slower["step_ms"] - no_layer["step_ms"] == pytest.approx(
        2 * (base["step_ms"] - no_layer["step_ms"]), rel=1e-9)
    # a printed link of before: its own layer_us, no layer_ghz, so the stated time whatever the clock
    pinned = report(link + f"&layer_us={prof['layer_us']}")
    assert pinned["step_ms"] - no_layer["step_ms"] == pytest.approx(32 * prof["layer_us"] / 1e3, rel=1e-9)
    # a custom card of unknown clock: the stated time
    custom = report(link.replace("card=rtx-4090", "card=custom&mem_gib=24&bw_tbs=1.008&tflops=165"))
    custom_none = report(link.replace("card=rtx-4090", "card=custom&mem_gib=24&bw_tbs=1.008&tflops=165")
                         + "&layer_us=0")
    assert custom["step_ms"] - custom_none["step_ms"] == pytest.approx(32 * prof["layer_us"] / 1e3, rel=1e-9)
    # the CUDA build's time per layer does not follow the clock
    cuda = link.replace("engine=llamacpp-vulkan", "engine=llamacpp")
    assert report(cuda + "&clock_ghz=1")["step_ms"] == report(cuda)["step_ms"]


# --------------------------------------------------------------------------- card families (eff_card)

RTX_2070 = ("model=custom&params_b=4.02&active_b=4.02&layers=36&heads=32&kv_heads=8&head_dim=128&hidden=2560&embed_b=0"
            "&card=custom&mem_gib=8&bw_tbs=0.448&tflops=59.7&link_gbs=16&clock_ghz=1.62&weights=5.06&kv=fp16&gpus=1"
            "&batch=1&ctx=64&engine=llamacpp-vulkan-2025")


def test_card_families_cover_every_preset_and_only_turing_has_a_share_of_its_own():
    """docs/calibration.md section 3: the families the profiles are fitted on take 1 (basis reference); Turing's share
    is fitted on its two rows, below 1 and inside the fit's bounds."""
    fams = engines.card_families()
    assert set(engines.card_arch().values()) <= set(fams)
    assert fams["Turing"]["engines"] == ("llamacpp-vulkan", "llamacpp-vulkan-2025")
    assert {f for f, row in fams.items() if row["basis"] != "reference"} == {"Turing"}
    assert all(row["eff_card"] == 1.0 for f, row in fams.items() if row["basis"] == "reference")
    turing = fams["Turing"]
    assert turing["basis"] == "fitted" and 0.3 < turing["eff_card"] < 1
    assert "bf0e54b0" in turing["source"] and "d4d2f4a0" in turing["source"]
    assert engines.family_name("TURING") == "Turing" and engines.family_name("unknown") is None
    assert engines.family_share("turing", "llamacpp-vulkan-2025") == turing["eff_card"]
    assert engines.family_share(None, "llamacpp-vulkan") == 1.0
    assert engines.family_share("turing", "llamacpp") == 1.0  # no CUDA row on a Turing card measured a loss


def test_a_custom_card_named_turing_reads_at_the_familys_share_of_the_bandwidth():
    """docs/method.md section 3.1: both bandwidth figures times eff_card; the weights of the step are read at
    eff_bw * eff_card * eff_dequant, so the step's memory time grows by 1 / eff_card and the fixed time does not."""
    share = engines.family_share("turing", "llamacpp-vulkan-2025")
    plain, turing = parse(RTX_2070).scenario, parse(RTX_2070 + "&arch=turing").scenario
    assert plain.arch == "unknown" and plain.eff_card == 1.0
    assert turing.arch == "turing" and turing.eff_card == share
    fixed_ms = float(model.fixed_step_seconds(plain, 1)) * 1e3
    grown = (report(RTX_2070 + "&arch=turing")["step_ms"] - fixed_ms) / (report(RTX_2070)["step_ms"] - fixed_ms)
    assert grown == pytest.approx(1 / share, rel=1e-9)
    # The printed scenario pins the family and its share: refitting the share later keeps this link's numbers.
    printed = turing.to_params()
    assert printed["arch"] == "turing" and float(printed["eff_card"]) == share
    assert report(RTX_2070 + f"&arch=turing&eff_card={share / 2!r}")["step_ms"] > report(
        RTX_2070 + "&arch=turing")["step_ms"]


@pytest.mark.parametrize("link", ["card=h100-sxm", "card=rtx-4090&engine=llamacpp-vulkan", "card=custom",
                                  "card=custom&arch=turing&engine=roofline", "card=custom&arch=turing&eff=0.6",
                                  "card=custom&arch=turing&engine=llamacpp", "card=custom&arch=turing"])
def test_the_families_the_profiles_were_fitted_on_the_roofline_and_a_links_own_eff_take_no_share(link):
    """A preset card of a reference family, a custom card of unknown family, the roofline (0.7 of every card by
    definition) and an engine no row on a Turing card measured (llama.cpp's CUDA builds, vLLM, with or without its
    own eff) read eff_card = 1; under llama.cpp's Vulkan builds a link's own eff is multiplied by the share, as the
    profile's figures are (in the app every key is in the link)."""
    assert parse(link).scenario.eff_card == 1.0
    vulkan = parse("card=custom&arch=turing&engine=llamacpp-vulkan&eff=0.6").scenario
    assert vulkan.eff_card == engines.family_share("turing", "llamacpp-vulkan") and vulkan.eff_bw == 0.6


def test_a_preset_card_keeps_its_own_family():
    """arch names a custom card's family: a link naming another for a preset card is refused by name, the same
    family in any case is accepted, and an unknown family is refused with the accepted list."""
    assert parse("card=h100-sxm&arch=HOPPER").scenario.arch == "hopper"
    with pytest.raises(ScenarioError, match=r"arch='turing' is not accepted beside the other inputs .*Hopper card"):
        load("card=h100-sxm&arch=turing")
    with pytest.raises(ScenarioError, match=r"arch='volta' is not accepted: arch takes one of hopper, .*turing, unknown"):
        load("card=custom&arch=volta")
    assert parse("card=rtx-5090").scenario.arch == "blackwell-sm120"


def test_the_turing_rows_are_met_once_their_family_is_named():
    """The two Turing rows (docs/calibration.md section 3) name arch=turing; cross-validated, each is predicted by a
    share fitted on the other alone and both Vulkan families meet the capacity issue's bounds."""
    rows = {r.id: r for r in read_measurements()}
    assert all("arch=turing" in rows[i].link for i in ("bf0e54b0", "d4d2f4a0"))
    for e in ("llamacpp-vulkan", "llamacpp-vulkan-2025"):
        (band,) = engines.error_band(e)
        assert band["median_pct"] <= 12 and band["max_pct"] <= 40 and abs(band["signed_median_pct"]) <= 10
    with (engines.DATA_DIR / "engine_cv.csv").open(newline="", encoding="utf-8") as f:
        cv = {r["id"]: r for r in csv.DictReader(f)}
    for i in ("bf0e54b0", "d4d2f4a0"):  # step_ms rows: too fast is a predicted step shorter than measured
        error_pct = (float(cv[i]["predicted_cv"]) / float(cv[i]["measured"]) - 1) * 100
        assert flattering_pct("step_ms", error_pct) <= 30


def test_a_custom_card_named_by_its_family_is_refused_by_releases_that_predate_it():
    """engines.RELEASE_PREDATES reads a custom card's arch as it reads a preset's family."""
    with pytest.raises(ScenarioError, match="does not run on a custom Blackwell-SM100 card: its releases predate"):
        load("card=custom&arch=blackwell-sm100&engine=trtllm-v05")
    assert parse("card=custom&arch=hopper&engine=trtllm-v05").scenario.engine == "trtllm-v05"


@pytest.mark.parametrize("card", ["b200", "gb200", "rtx-5090"])
def test_vllms_v0_releases_refuse_the_blackwell_cards_they_predate(card):
    """v0.5 to v0.7 shipped CUDA 12.4 wheels (12.8, the first with Blackwell kernels, came with v0.9.0): a V0 link on
    a Blackwell card is refused, naming the engine and the current release, where it was priced without a word."""
    p = parse(f"engine=vllm-v0&card={card}")
    (err,) = [e for e in p.errors if e.key == "engine"]
    assert "its releases predate the card" in err.message and "v0.9.0" in err.message
    assert "engine=vllm is the current one" in err.message
    assert not parse(f"engine=vllm&card={card}").errors  # the current release runs there
    assert not parse("engine=vllm-v0&card=h100-sxm").errors


def test_a_release_family_refuses_a_format_shipped_after_it():
    """docs/method.md section 5: MXFP4 checkpoints came with gpt-oss (2025-08-05); the families whose last release
    predates it refuse weights=mxfp4 (naming weights), and gpt-oss's own MXFP4 experts (naming the engine); the
    current releases load both."""
    from calc.engines import FORMAT_PREDATES
    old = FORMAT_PREDATES["mxfp4"][0]
    assert set(old) == {"vllm-v0", "trtllm-v05", "trtllm-2023", "trtllm-2024", "trtllm-2025", "llamacpp-2024"}
    for engine in old:
        given = parse(f"engine={engine}&model=llama-3.1-8b&card=h100-sxm&weights=mxfp4")
        assert [e.key for e in given.errors] == ["weights"] and "gpt-oss (2025-08-05)" in given.errors[0].message
        preset = parse(f"engine={engine}&model=gpt-oss-20b&card=h100-sxm")
        assert [e.key for e in preset.errors] == ["engine"]
        assert "this checkpoint's mxfp4 weights (weights_experts)" in preset.errors[0].message
    for engine in ("vllm", "vllm-2025", "sglang", "trtllm", "llamacpp"):
        assert not parse(f"engine={engine}&model=gpt-oss-20b&card=h100-sxm").errors
    # The Fit page's formats table and the Levers page's leave it out under such a family.
    from calc import evaluate, levers, tables
    s = parse("engine=trtllm-2025&model=llama-3.1-8b&card=h100-sxm").scenario
    assert "mxfp4" not in set(tables.fit_table(s, formats=["16", "mxfp4", "fp8"])["weights"])
    assert "mxfp4" not in set(levers.format_table(evaluate(parse(s.to_query())))["format"])
