"""calc.notes: what a scenario overrides of its presets, names for people, and the warnings a valid scenario
still deserves."""

import pytest

from calc import notes, parse


@pytest.mark.parametrize("link, model, card", [
    ("", [], []),
    ("model=llama-3.1-8b&layers=40&hidden=8192", ["layers", "hidden"], []),
    ("mem_gib=40", [], ["mem_gib"]),                 # CUDA's total follows the typed memory: not named
    ("torch_gib=70", [], ["torch_gib"]),
    ("compute=fp8&tflops=1000", [], ["tflops"]),     # the peak at the compute precision in use
    ("card=custom&model=custom", [], []),            # custom entries have no preset to differ from
    ("usd_hr=9&power_w=1&upkeep=1", [], []),         # prices are not the card's shape
])
def test_modified_preset_keys(link, model, card):
    assert notes.modified_preset_keys(parse(link).scenario) == {"model": model, "card": card}


def test_a_modified_preset_says_so_in_its_name():
    assert notes.display_name(parse("model=llama-3.1-8b&layers=40").scenario) == "Llama 3.1 8B (modified)"
    assert notes.display_name(parse("model=llama-3.1-8b").scenario) == "Llama 3.1 8B"
    assert notes.display_name(parse("card=custom").scenario, "card") == "custom card"


def test_a_custom_model_is_told_whose_api_row_stands_in():
    said = notes.api_stand_in(parse("model=custom").scenario)
    assert "stands in for this custom model" in said and "Llama 3.1 70B's row" in said
    assert notes.api_stand_in(parse("model=llama-3.1-8b").scenario) == ""
    # A custom model of 7 B parameters is compared with an 8B model's API row, not the default 70B model's.
    small = parse("model=custom&params_b=7").scenario
    assert small.api == "together_ai/meta-llama/meta-llama-3.1-8b-instruct-turbo"
    assert "Llama 3.1 8B's row" in notes.api_stand_in(small) and "its 7 B active parameters" in notes.api_stand_in(small)


def test_a_context_beyond_the_models_window_is_warned():
    warnings = notes.scenario_warnings(parse("model=llama-3.1-8b&ctx=500000").scenario)
    assert "ctx 500,000 is beyond Llama 3.1 8B's trained context of 131,072 tokens" in warnings


def test_a_what_if_context_gives_the_traffics_figure_beside_it():
    (said,) = notes.what_if(parse("ctx=8192").scenario, 0.2)
    assert said.startswith(notes.WHAT_IF) and "8,192 tokens" in said and "1,300 (prompt + output)" in said
    assert notes.what_if(parse("").scenario, 0.2) == []


def test_a_checkpoint_in_several_formats_names_its_parts():
    assert notes.checkpoint_parts(parse("model=gpt-oss-120b").scenario) == "routed experts in mxfp4, the rest in bf16"
    assert notes.checkpoint_parts(parse("model=llama-3.1-8b&weights=fp8").scenario) is None


def test_a_region_no_row_measured_says_not_measured_with_the_band():
    said = notes.outside_measurements(parse("model=llama-3.1-8b&card=l4&engine=vllm").scenario)
    assert said.startswith("not measured: no row the figures were fitted to covers vLLM on Ada cards") and "±22 %" in said
    assert notes.outside_measurements(parse("engine=roofline").scenario) == ""


def test_a_month_shorter_than_28_days_points_to_the_profile_and_autoscaling():
    (said,) = [w for w in notes.scenario_warnings(parse("hours=300").scenario) if w.startswith("hours=")]
    assert "scales the traffic too" in said and "profile" in said and "autoscale=1" in said
    assert not any(w.startswith("hours=") for w in notes.scenario_warnings(parse("hours=672").scenario))


def test_a_batch_cap_only_just_below_the_knee_is_said_to_be_close_to_the_roofline():
    from calc.notes import NEAR_KNEE_SHARE, cap_just_below_knee
    assert cap_just_below_knee(85, 85.26)  # the defaults: memory holds 85, compute binds at 85.26
    assert not cap_just_below_knee(78, 28320) and not cap_just_below_knee(48, None)
    assert not cap_just_below_knee(90, 85.26)  # at or past the knee: no flag at all
    assert cap_just_below_knee(95, 100) and not cap_just_below_knee(94, 100) and NEAR_KNEE_SHARE == 0.05


def test_a_vllm_scenario_says_which_release_accounting_sized_the_cache():
    """The gpt-oss-120b printout of vLLM 0.11 (1.71 GiB) is the 2025 accounting's: a link naming no release is
    charged it (it leaves less) and says what v0.21 and later leave; a named release quotes the other."""
    from calc import load
    from calc.notes import scenario_warnings
    link = "model=gpt-oss-120b&card=h100-sxm&ctx=131072&mem_util=0.95&max_batched_tokens=1024&engine="
    note = [w for w in scenario_warnings(load(link + "vllm").scenario) if "vLLM" in w and "release" in w]
    assert len(note) == 1 and "names no vLLM release" in note[0]
    assert "2025 releases (v0.10 to v0.14) allocate it" in note[0] and "1.94 GiB per card" in note[0]
    assert "v0.21 and later leave 7.81 GiB per card" in note[0] and "MXFP4" in note[0]
    new = [w for w in scenario_warnings(load(link + "vllm-0.21").scenario) if "2025 releases" in w]
    assert len(new) == 1 and "leave 1.94 GiB per card for the KV cache, against 7.81 GiB per card here" in new[0] and "engine=vllm-2025" in new[0]
    old = [w for w in scenario_warnings(load(link + "vllm-2025").scenario) if "v0.21 and later" in w]
    assert len(old) == 1 and "leave 7.81 GiB per card for the KV cache, against 1.94 GiB per card here" in old[0] and "engine=vllm-0.21" in old[0]
    # Where the two accountings agree within 10 %, nothing is said.
    assert not [w for w in scenario_warnings(load("model=llama-3.1-8b&card=l40s").scenario) if "release" in w]


def test_llamacpp_says_when_the_cells_it_is_told_would_not_start():
    from calc import load
    from calc.notes import scenario_warnings
    s = load("engine=llamacpp&model=llama-3.1-70b&card=rtx-4090&gpus=2&weights=q4_k_m&ctx=8192").scenario
    note = [w for w in scenario_warnings(s) if "would not start" in w]
    assert len(note) == 1 and "32,768 cells (4 slots of 8,192 tokens)" in note[0] and "--fit" in note[0]
    fits = load("engine=llamacpp&model=llama-3.1-70b&card=rtx-4090&gpus=2&weights=q4_k_m&ctx=8192&max_seqs=1").scenario
    assert not [w for w in scenario_warnings(fits) if "would not start" in w]


def test_a_tensorrt_llm_2025_scenario_quotes_the_1x_accounting_where_it_holds_less():
    """The v0.17 to v0.21 profile keeps a fitted reserve and says what the current release's profiling run leaves;
    the current release (engine=trtllm) allocates exactly that, and needs no such note."""
    from calc import load, report
    from calc.notes import scenario_warnings
    s = load("engine=trtllm-2025&model=llama-3.1-70b&card=h200-sxm&weights=fp8").scenario
    note = [w for w in scenario_warnings(s) if "TensorRT-LLM 1.x" in w]
    assert len(note) == 1 and "62.22 GiB per card" in note[0] and "70.69" in note[0]
    current = "engine=trtllm&model=llama-3.1-70b&card=h200-sxm&weights=fp8"
    assert report(current)["kv_cache_gib_per_card"] == pytest.approx(62.22, abs=0.005)
    assert not [w for w in scenario_warnings(load(current).scenario) if "1.x" in w]
    assert not [w for w in scenario_warnings(load("model=llama-3.1-70b&card=h200-sxm").scenario) if "1.x" in w]


def test_a_vulkan_scenario_on_quantized_weights_gives_the_step_without_integer_dot_kernels():
    from calc import engines, model
    link = "model=llama-3.1-8b&card=rtx-4090&engine=llamacpp-vulkan&weights=q4_k_m&batch=1"
    s = parse(link).scenario
    (note,) = [w for w in notes.scenario_warnings(s) if "integer dot" in w]
    old = parse(link.replace("llamacpp-vulkan", "llamacpp-vulkan-2025")).scenario
    # the figure quoted is the older builds' batch-1 step, the profile that dequantizes in the shader
    assert old.eff_dequant == engines.profile("llamacpp-vulkan-2025")["eff_dequant"] < s.eff_dequant
    assert (f"{float(model.step_seconds(s, 1)) * 1e3:,.2f} ms a step at batch 1; the 2025 builds before them took "
            f"{float(model.step_seconds(old, 1)) * 1e3:,.2f}") in note
    # Q8_0 (8.5 bits: int8 blocks with their own scales) is a legacy quant the older builds dequantized too
    q8 = parse(link.replace("q4_k_m", "q8_0")).scenario
    assert [w for w in notes.scenario_warnings(q8) if "integer dot" in w]
    # ... unless the link reads Q8_0 as stored (dequant_q8=0, an old printed link): then both builds' steps are one
    stored = parse(link.replace("q4_k_m", "q8_0") + "&dequant_q8=0").scenario
    assert not [w for w in notes.scenario_warnings(stored) if "integer dot" in w]
    for other in ("engine=llamacpp-vulkan&weights=fp16", "engine=llamacpp-vulkan-2025&weights=q4_k_m",
                  "engine=llamacpp&weights=q4_k_m"):
        t = parse(f"model=llama-3.1-8b&card=rtx-4090&{other}").scenario
        assert not [w for w in notes.scenario_warnings(t) if "integer dot" in w]


@pytest.mark.parametrize("link, says", [
    ("usd_hr=0&upkeep=0", "counts nothing at all, as upkeep is 0 too"),
    ("usd_hr=0", "counts only the upkeep"),
    ("api_in=0&api_out=0", "the API bill is nothing, so self-hosting can never be cheaper"),
])
def test_a_bill_of_nothing_is_said(link, says):
    """Zero prices are accepted (cards already paid for, a free tier) but a bill of nothing is what a forgotten
    field looks like: the scenario says so, and a priced scenario says nothing of it."""
    assert any(says in w for w in notes.scenario_warnings(parse(link).scenario))
    assert not any("0 USD per" in w for w in notes.scenario_warnings(parse("").scenario))
    assert not any("0 USD per" in w for w in notes.scenario_warnings(parse("api_in=0").scenario))


def test_a_peak_factor_the_profile_replaces_is_said_and_autoscaling_without_a_profile_too():
    flat = parse("profile=flat&peak=3")
    assert flat.scenario.peak == 1
    assert any(w.startswith("peak=3 is replaced by the day's profile (flat)") and "the figures use 1" in w
               for w in flat.warnings)
    # The peak the profile gives, or no peak at all, says nothing.
    assert not [w for w in parse("profile=flat&peak=1").warnings + parse("profile=office").warnings
                if "replaced by the day's profile" in w]
    alone = notes.scenario_warnings(parse("autoscale=1").scenario)
    assert any(w.startswith("autoscale=1 has nothing to follow") for w in alone)
    assert not [w for w in notes.scenario_warnings(parse("autoscale=1&profile=office").scenario)
                if "autoscale" in w]


def test_a_replica_beyond_its_cards_fast_link_and_nvfp4_on_other_vendors_are_said():
    def said(link: str, words: str) -> bool:
        return any(words in w for w in notes.scenario_warnings(parse(link).scenario))
    assert said("model=llama-3.1-405b&card=h100-sxm&weights=fp8&gpus=16", "gpus=16 spans more than one scale-up "
                "domain of 8 H100 SXM 80 GB cards")
    assert not said("model=llama-3.1-405b&card=h100-sxm&weights=fp8&gpus=8", "scale-up domain")
    assert not said("model=llama-3.1-405b&card=gb200&weights=fp8&gpus=16", "scale-up domain")  # NVL72
    assert said("model=llama-3.1-70b&card=h100-nvl&gpus=4", "domain of 2 H100 NVL 94 GB cards")
    # A link that sets the speed of the link it crosses has said what it knows.
    assert not said("model=llama-3.1-405b&card=h100-sxm&weights=fp8&gpus=16&link_gbs=50", "scale-up domain")
    assert said("model=llama-3.1-8b&card=mi300x&weights=nvfp4", "weights in nvfp4 on Instinct MI300X 192 GB: NVFP4 "
                "is NVIDIA's format")
    assert not said("model=llama-3.1-8b&card=b200&weights=nvfp4", "NVFP4 is NVIDIA's format")


def test_a_consumer_card_is_named_on_every_page_and_in_the_memo():
    """A bill on GeForce cards (the answer 'Buy the cards' at a trillion requests a day on RTX 4090s) said nothing
    of the driver's licence beside it; only the card plan did. Every page's notes and the memo now say it."""
    from calc.memo import memo
    from calc.notes import scenario_warnings
    said = scenario_warnings(parse("card=rtx-4090&model=llama-3.1-8b").scenario)
    assert any(w.startswith("GeForce RTX 4090 24 GB is a consumer card: NVIDIA's licence for the GeForce driver "
                            "excludes datacenter deployment") for w in said)
    assert "is a consumer card" in memo(parse("card=rtx-5090&model=llama-3.1-8b&req_day=300000"))
    assert not any("consumer card" in w for w in scenario_warnings(parse("card=l40s").scenario))


@pytest.mark.parametrize("engine", ["trtllm-2024", "vllm-0.21", "vllm-2025"])
def test_a_release_that_shares_its_speed_figures_is_measured_by_their_rows(engine):
    """trtllm-2024, vllm-0.21 and vllm-2025 have no rows of their own: they carry trtllm's or vllm's figures and
    band, so the "not measured" note of those rows' scope is theirs too (it was missing, beside a verdict quoting
    the widest band)."""
    from calc.notes import outside_measurements
    base = "trtllm" if engine.startswith("trtllm") else "vllm"
    mine = outside_measurements(parse(f"engine={engine}&card=h100-sxm").scenario)
    assert mine.startswith("not measured: no row the figures were fitted to covers")
    assert mine == outside_measurements(parse(f"engine={base}&card=h100-sxm").scenario)


def test_an_fp8_scenario_says_what_its_decode_arithmetic_keeps():
    """vLLM's FP8 decode steps reach about the BF16 rate (eff_fp8, fitted on its FP8 rows under load): a scenario
    at compute=fp8 says so, in shares of the FP8 peak, and why; one that sets the share says it is the link's, and
    that it prices above what the profile measured; an engine that keeps the FP8 peak (TensorRT-LLM) and a BF16
    scenario say nothing of it."""
    from calc import engines
    p = engines.profile("vllm")
    fp8 = "model=qwen3-8b&card=h100-sxm&weights=fp8&compute=fp8"
    said = [w for w in notes.scenario_warnings(parse(fp8).scenario) if "eff_" in w]
    assert said == [f"compute=fp8: a decode step's arithmetic reaches {p['eff_flops'] * p['eff_fp8']:.0%} of the FP8 "
                    f"peak (eff_flops {p['eff_flops']:g} times eff_fp8 {p['eff_fp8']:g}), about what the same step "
                    "reaches at BF16: in the FP8 runs the profile's figures were fitted on, FP8 saved the time to read "
                    f"the weights and little arithmetic; a prefill reaches {p['eff_prefill']:.0%} of it (eff_prefill)"]
    set_ = notes.scenario_warnings(parse(fp8 + "&eff_fp8=0.7").scenario)
    assert any("times eff_fp8 0.7, set in the link); a prefill" in w for w in set_)
    assert any(w.startswith(f"eff_fp8=0.7: the link prices the arithmetic at FP8 above the share the vLLM profile "
                            f"measured ({p['eff_fp8']:g}), so the step and the bill are optimistic") for w in set_)
    for other in (fp8 + "&engine=trtllm", "model=qwen3-8b&card=h100-sxm&weights=bf16"):
        assert not any("eff_fp8" in w for w in notes.scenario_warnings(parse(other).scenario))


def test_a_link_that_gives_the_arithmetic_share_and_not_its_fp8_share_is_told_what_the_profile_charges():
    """A link that gives eff_flops (or eff) and not eff_fp8 prices FP8 decode at the link's share of the FP8 peak, and
    its prefill at eff_flops (so that a link printed before those figures existed keeps its numbers): the notes say
    both, with the profile's figures, whether the figures came from the link's eff_flops or were printed into it (as
    the app's rewritten link does); a refused eff_fp8 falls back to the profile's share, not to that 1."""
    from calc import engines
    p = engines.profile("vllm")
    fp8 = "model=qwen3-8b&card=h100-sxm&weights=fp8&compute=fp8&eff_flops=0.4157"
    for link in (fp8, parse(fp8).scenario.to_query()):
        s = parse(link).scenario
        assert s.eff_fp8 == 1.0 and s.eff_prefill == 0.4157
        said = notes.scenario_warnings(s)
        assert any(w.startswith(f"eff_fp8=1: the link prices the arithmetic at FP8 above the share the vLLM profile "
                                f"measured ({p['eff_fp8']:g}), so the step and the bill are optimistic; add "
                                f"eff_fp8={p['eff_fp8']:g} for the profile's") for w in said), link
        assert any(w.startswith(f"eff_prefill=0.4157: the link prices a prefill's arithmetic at 0.4157 of the peak "
                                f"where the profile measured {p['eff_prefill']:g} (conservative") for w in said)
    assert not any(w.startswith("eff_fp8=") for w in notes.scenario_warnings(
        parse(fp8 + f"&eff_fp8={p['eff_fp8']}").scenario))
    refused = parse(fp8 + "&eff=0.7&eff_fp8=2")
    assert [e.key for e in refused.errors] == ["eff_fp8"] and refused.scenario.eff_fp8 == p["eff_fp8"]
    assert parse(fp8 + "&eff_prefill=abc").scenario.eff_prefill == p["eff_prefill"]
