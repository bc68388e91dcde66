"""What users see of the engine profiles: the picker, the accuracy beside every speed and cost, the ideal beside
the engine on the Speed page, and the Validation page."""

import pytest

from apptest import open_app, texts
from calc import engines

PAGES = ["pages/decision.py", "pages/fit.py", "pages/speed.py", "pages/cost.py", "pages/validation.py"]


@pytest.mark.parametrize("page", PAGES)
def test_every_page_says_how_close_its_figures_are_to_measurements(page):
    at = open_app({}, page)
    assert not at.exception
    assert "within about" in texts(at.caption) and "of published vLLM measurements" in texts(at.caption)


def test_the_engine_picker_is_keyed_by_engine_and_brings_the_profile():
    at = open_app({}, "pages/speed.py")
    assert at.selectbox(key="engine").value == "vllm"
    at.selectbox(key="engine").set_value("roofline").run()
    assert not at.exception
    assert at.query_params["engine"] == "roofline" and at.query_params["step_us"] == "0"
    assert "real engines were measured this far from it" in texts(at.caption)


def test_choosing_llamacpp_in_the_sidebar_brings_a_weight_format_it_loads():
    at = open_app({}, "pages/fit.py")
    assert at.query_params["weights"] == "int4-g128"
    at.selectbox(key="engine").set_value("llamacpp").run()
    assert not at.exception
    assert at.query_params["engine"] == "llamacpp" and at.query_params["weights"] == "q4_k_m"
    assert at.session_state["weights"] == "q4_k_m"  # the widget shows the format in use
    # The format the user had is said to have moved, not switched silently (until the next change), and not as a
    # refused value: the user typed none, and the verdict does not rest on a default.
    said = texts(at.info)
    assert "weights moved from int4-g128 to q4_k_m" in said and "llama.cpp cannot load int4-g128 weights" in said
    assert "int4-g128" not in texts(at.error)
    at.select_slider(key="kv").set_value("int8").run()
    assert "cannot load int4-g128" not in texts(at.info) + texts(at.error)


def test_a_card_the_chosen_engine_does_not_run_on_says_the_engine_fell_back():
    at = open_app({"engine": "trtllm"}, "pages/decision.py")
    at.selectbox(key="card").set_value("mi300x").run()
    assert not at.exception
    assert at.query_params["engine"] == "vllm"
    assert "TensorRT-LLM does not run on Instinct MI300X" in texts(at.error)
    at.run()  # still said on the next run, until another input changes
    assert "TensorRT-LLM does not run on Instinct MI300X" in texts(at.error)
    at.selectbox(key="engine").set_value("sglang").run()
    assert "TensorRT-LLM does not run" not in texts(at.error)
    at.selectbox(key="card").set_value("h100-sxm").run()
    at.selectbox(key="engine").set_value("trtllm").run()
    at.selectbox(key="card").set_value("mi300x").run()
    assert "TensorRT-LLM does not run on Instinct MI300X" in texts(at.error)
    at.checkbox(key="cuda_graphs").uncheck().run()  # any other input: the page no longer says it
    assert "TensorRT-LLM does not run" not in texts(at.error)


def test_the_speed_page_draws_the_ideal_beside_the_engine():
    at = open_app({"engine": "trtllm"}, "pages/speed.py")
    assert not at.exception
    charts = at.get("vega_lite_chart")
    assert charts and "physical limit" in charts[0].proto.spec
    # The textbook roofline (70 % of every peak) is no ideal either: the limit is drawn beside it too.
    textbook = open_app({"engine": "roofline"}, "pages/speed.py")
    assert "physical limit" in textbook.get("vega_lite_chart")[0].proto.spec


def test_the_validation_page_shows_both_tables_and_every_row():
    at = open_app({}, "pages/validation.py")
    assert not at.exception
    assert len(at.dataframe) == 6
    cv, regions, inside, kept, kept_rows, rows = (x.value for x in at.dataframe)
    # By set-up: the regions of 10 rows or more, the single-card NVFP4 MoE rows of TensorRT-LLM widest, their band
    # the one the bills of such a scenario use.
    widest = regions.iloc[0]
    assert (widest["engine"], widest["card_family"], widest["model_kind"], widest["n"]) == ("trtllm", "Blackwell-SM100",
                                                                                           "MoE", 36)
    assert widest["p90_pct"] > widest["engine_p90_pct"] + 5 and widest["bills_use"] == "this region's"
    assert (regions["n"] >= 10).all() and set(regions["bills_use"]) == {"this region's", "the engine's"}
    assert len(rows) == 422 and {"predicted_cv", "error_cv_pct", "version"} <= set(rows.columns)
    # The rows kept out of the fit, each under the profile whose figures predicted it: gpustack's vLLM 0.10/0.11
    # rows (vllm-2025, every figure vLLM's) under vllm, whose full-load throughput they put a median +28 % too fast;
    # the V0 engine's runs (vllm-v0, host times of its own) under their own, a median +149 %.
    assert len(kept_rows) == 553 and "vllm-2025" not in set(kept_rows["engine"])
    vllm = kept.set_index(["engine", "metric"]).loc[("vllm", "full-load throughput")]
    assert vllm["n"] == 33 and vllm["signed_median_pct"] > 25
    v0 = kept.set_index(["engine", "metric"]).loc[("vllm-v0", "full-load throughput")]
    assert v0["n"] == 67 and v0["signed_median_pct"] > vllm["signed_median_pct"]
    # The other cells of TensorRT-LLM v0.17's table, whose 28 cells are fitted: their error, under trtllm-2025.
    v017 = kept.set_index(["engine", "metric"]).loc[("trtllm-2025", "full-load throughput")]
    assert v017["n"] == 310 and 5 < v017["median_pct"] < 15
    # A row without a prediction, or in doubt, says why: gpt-oss-120b on one H100 does not fit as vllm-2025
    # allocates memory (gpustack's five runs of it); Llama 2 70B on a 48 GB M3 Max does not fit Metal's working set
    # (the Mac paged); Qwen3-32B's weights fit one H100 but not one 32,000-token request beside them.
    why = kept_rows.set_index("id")["why"]
    doubt = ["b33620de", "b33f8626", "50fbd09f", "bac92353", "e32db1a4"]
    assert all(why[d].startswith("the set-up does not fit in memory") for d in doubt)
    assert why["292e7845"].startswith("not one request of the link's length fits the KV cache")
    assert (why.drop([*doubt, "292e7845"]) == "").all()
    assert set(cv["engine"]) == set(inside["engine"]) and "signed_median_pct" in cv.columns
    # Every row is signed as the tables are: + where the prediction flatters self-hosting. A step predicted 15 %
    # too long (c506f9b2: 9.56 ms against 8.29 measured) is -15 %, not +15 %.
    step = rows.set_index("id").loc["c506f9b2"]
    assert step["predicted_cv"] > step["measured"] and step["error_cv_pct"] < -10
    headings = " ".join(h.value for h in at.subheader)
    assert "Cross-validated" in headings and "In sample" in headings and "Kept out of the fit" in headings
    at.radio(key="validation_basis").set_value("in sample").run()
    assert not at.exception


def test_choosing_another_engine_brings_its_own_efficiencies_not_the_links_eff():
    from calc.engines import profile
    at = open_app({}, "pages/speed.py")
    at.selectbox(key="engine").set_value("trtllm").run()
    trt = profile("trtllm")
    assert not at.exception and at.query_params["engine"] == "trtllm"
    for key in ("eff_bw", "eff_kv", "eff_flops", "step_us"):
        assert float(at.query_params[key]) == pytest.approx(trt[key]), key


def test_an_engine_cap_below_memory_is_named_not_memory():
    """llama.cpp schedules 4 sequences; an RTX 4090 holds 19 of Llama 3.1 8B at 8,192 tokens: the flag names the
    engine's cap, not memory."""
    at = open_app({"model": "llama-3.1-8b", "card": "rtx-4090", "engine": "llamacpp", "weights": "q4_k_m",
                   "ctx": "8192"}, "pages/fit.py")
    flag = texts(at.warning)
    assert "The engine caps the batch before compute does" in flag and "at most 4 sequences per step" in flag
    assert "memory holds 19 at 8,192 tokens" in flag and "Memory caps the batch" not in flag


def test_a_model_that_ships_its_own_formats_takes_them_away_when_left():
    at = open_app({}, "pages/decision.py")
    at.selectbox(key="model").set_value("gpt-oss-120b").run()
    assert at.query_params["weights_experts"] == "mxfp4"
    at.selectbox(key="model").set_value("llama-3.1-70b").run()
    assert not at.exception
    assert at.query_params["weights"] == "int4-g128" and at.query_params["weights_experts"] == "int4-g128"


def test_a_link_that_leaves_the_weights_to_llamacpp_says_which_counterpart_it_took_until_the_next_change():
    at = open_app({"engine": "llamacpp-vulkan"}, "pages/decision.py")
    assert not at.exception and at.query_params["weights"] == "q4_k_m"
    said = texts(at.info)
    assert "weights are priced as q4_k_m, the GGUF counterpart of int4-g128" in said, said
    assert "q4_k_m" not in texts(at.error)
    at.select_slider(key="kv").set_value("int8").run()
    assert "GGUF counterpart" not in texts(at.info)


@pytest.mark.parametrize("engine", ["llamacpp-vulkan", "trtllm-2024"])
def test_the_validation_page_lists_the_scenarios_engine_rows_first(engine):
    at = open_app({"engine": engine}, "pages/validation.py")
    assert not at.exception
    rows = at.dataframe[-1].value  # every row, after the three summaries and the kept-out rows
    measured = engines.figures_of(engine)  # trtllm-2024 is quoted against trtllm's rows
    n = int((rows["engine"] == measured).sum())
    assert n > 0 and (rows["engine"].iloc[:n] == measured).all()
    assert "the scenario's engine, come first" in texts(at.caption)


TURING_CARD = dict(model="llama-3.1-8b", card="custom", mem_gib="8", bw_tbs="0.448", tflops="59.7", arch="unknown",
                   weights="q4_k_m", engine="llamacpp-vulkan", batch="1")


def test_naming_a_custom_cards_family_in_the_sidebar_brings_its_share_and_says_so():
    """Card family → Turing brings the family's eff_card into the figures and the link (it was kept at 1 while the
    link's eff, always in an app's link, switched the share off); Ada takes it away, Turing brings it back; the
    page's notes say why the step is slower."""
    share = engines.family_share("turing", "llamacpp-vulkan")
    at = open_app(TURING_CARD, "pages/speed.py")
    assert at.query_params["eff_card"] == "1" and not at.selectbox(key="arch").disabled
    at.selectbox(key="arch").select("turing").run()
    assert not at.exception and float(at.query_params["eff_card"]) == share
    assert f"read at {share:g} of the engine's bandwidth figures (eff_card: the share the 2 rows on Turing cards " \
           "measured under llama.cpp Vulkan" in texts(at.caption)
    at.selectbox(key="arch").select("ada").run()
    assert at.query_params["eff_card"] == "1"
    at.selectbox(key="arch").select("turing").run()
    assert float(at.query_params["eff_card"]) == share


def test_a_preset_cards_family_is_shown_not_chosen():
    at = open_app({"card": "l40s"}, "pages/speed.py")
    box = at.selectbox(key="arch")
    assert box.disabled and box.value == "ada" and at.query_params["arch"] == "ada"


def test_every_profile_with_published_rows_has_its_own_colour_on_the_validation_charts():
    """The charts colour engines from pages/validation.py's COLOURS and drop the others from the legend: vllm-v0,
    fitted since it got host times of its own, was missing, its points nameless. Every profile with a fitted or
    kept-out row has a colour, and no two share one."""
    import ast
    import csv
    from pathlib import Path

    root = Path(__file__).resolve().parent.parent
    tree = ast.parse((root / "pages" / "validation.py").read_text(encoding="utf-8"))
    (colours,) = [ast.literal_eval(node.value) for node in tree.body if isinstance(node, ast.Assign)
                  and any(getattr(t, "id", "") == "COLOURS" for t in node.targets)]
    with (root / "calc" / "data" / "engine_errors.csv").open(newline="", encoding="utf-8") as f:
        with_rows = {r["engine"] for r in csv.DictReader(f) if r["engine"] != "roofline"}
    assert with_rows <= set(colours), sorted(with_rows - set(colours))
    assert len(set(colours.values())) == len(colours)
