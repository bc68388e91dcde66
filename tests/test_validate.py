"""calc.validate: the engine profiles against published measurements, in sample and cross-validated by source (each source predicted by profiles fitted without it)."""

from __future__ import annotations

import csv
import subprocess
import sys
from pathlib import Path

import pytest

from calc.validate import (
    cross_validated_results,
    evaluate,
    kept_out_results,
    number_text,
    read_measurements,
    summarise,
)

ROOT = Path(__file__).resolve().parent.parent


MEASURED = read_measurements()


RESULTS = evaluate(MEASURED)


SUMMARY = {(s["engine"], s["metric"]): s for s in summarise(RESULTS)}


CV = {(s["engine"], s["metric"]): s for s in summarise(cross_validated_results(MEASURED))}


#: Targets of the capacity issue on the cross-validated figures of every engine and metric with at least 3 rows:
#: median |error| <= 12 %, worst <= 40 %, signed median within +-10 %, no row more than 30 % too fast.
#: These are the engine x metric groups that meet them today; the others are listed in docs/calibration.md
#: section 5 with the reason, and tested to stay no worse than they are.
#: vLLM's full-load throughput joined them once the V0 engine's two rows (SGLang's benchmark of v0.6.0) were priced
#: by vllm-v0's own host times rather than the current release's: 12 rows from two sources, median 10.6 %, worst
#: 22 % (it was 12.0 % and +31.5 %, v0.6.0's Llama 3.1 70B on 4 H100s; docs/calibration.md section 5).
#: TensorRT-LLM's v0.5 and v0.6 rows joined them once the static-batch releases hid only part of a step's shorter
#: time (memory or arithmetic) under the longer (overlap 0.56, fitted on their 144 rows): 45 rows, median 11.9 %, worst
#: 32.5 % too slow, most flattering +26 % (was +34.4 %, the v0.5 launch blog's Llama 2 70B on 2 H200s). The Vulkan
#: builds before the integer-dot kernels have met them since the Turing share (eff_card) and layer_ghz.
MEETS_TARGETS = {("vllm", "step_ms"), ("vllm", "max_throughput_tok_s"), ("llamacpp", "step_ms"),
                 ("llamacpp-2024", "step_ms"), ("trtllm-2025", "max_throughput_tok_s"), ("llamacpp-vulkan", "step_ms"),
                 ("trtllm-v05", "max_throughput_tok_s"), ("llamacpp-vulkan-2025", "step_ms")}


NO_WORSE_THAN = {  # group: (median, worst, |signed median|, most flattering), per cent, as of this fit
    # The current release's 126 rows are one document at one commit (the v1.0 performance overview): left out, it is
    # predicted with FP4 arithmetic at its prior (no gain over FP8) and within 31 % but for four rows, all single-card
    # MoE runs on a GB200, which that table measures at 0.61 to 1.09 times the same run on a B200 (the same chip):
    # Llama 4 Scout at 1000/1000 67 % fast, Qwen3-30B-A3B at 1000/1000, 1000/2000 and 500/2000 47-56 % fast
    # (docs/calibration.md section 5).
    # Median 9.1 % and signed -3.8 % since vLLM's FP8 and long-prompt rows (silybench) joined the fit of the figures
    # every engine shares (eff_fp4, expert_us); 8.6 % and -2.9 % since the 2023 releases' partial overlap (their
    # shares of the peaks are the current release's).
    ("trtllm", "max_throughput_tok_s"): (8.7, 65.0, 3.0, 65.0),
    # v0.7 to v0.9: the v0.7a blog's Llama 2 70B on one H200 at 128/2048 and 128/4096 (batch 192 and 96, near the
    # card's memory) runs 1.4 to 1.7 times the step the v0.8 and v0.9 tables give the same model on the same card.
    # With eff_prefill the worst is 63 % (66 % before), the 90th percentile 15 % (18 %), the median 6.3 % (5.3 %);
    # 6.6 % since the v1.0 table's GB200 MoE rows joined the figures these releases share (tok_us, the shares). With
    # a step that hides only part of its shorter time (overlap 0.56) the worst is 44 % (the 192-sequence run, its
    # memory and arithmetic times within 20 % of each other) and the median 5.0 %.
    ("trtllm-2023", "max_throughput_tok_s"): (5.1, 44.5, 2.3, 44.5),
}


def test_every_row_is_predicted():
    assert len(MEASURED) == 422
    assert len({r.id for r in MEASURED}) == len(MEASURED)
    assert all(r.predicted is not None and r.predicted > 0 for r in RESULTS)
    assert all(r.predicted is not None for r in cross_validated_results(MEASURED))


def test_every_row_names_its_engine_version_and_its_link_the_profile():
    for r in MEASURED:
        assert r.version, r.id
        assert f"engine={r.engine}" in r.link, r.id


@pytest.mark.parametrize("group", sorted(g for g in CV if CV[g]["n"] >= 3), ids=lambda g: "-".join(g))
def test_cross_validated_error_targets(group):
    s = CV[group]
    if group in MEETS_TARGETS:
        assert s["median_pct"] <= 12 and s["max_pct"] <= 40 and abs(s["signed_median_pct"]) <= 10, s
        assert s["most_flattering_pct"] <= 30, s
    else:
        median, worst, signed, flattering = NO_WORSE_THAN[group]
        assert s["median_pct"] <= median and s["max_pct"] <= worst, s
        assert abs(s["signed_median_pct"]) <= signed and s["most_flattering_pct"] <= flattering, s


def test_engine_errors_csv_is_the_validation_of_the_fitted_figures():
    with open(ROOT / "calc" / "data" / "engine_errors.csv", newline="") as f:
        stored = {(r["engine"], r["metric"], r["basis"]): r for r in csv.DictReader(f)}
    for basis, table in (("in-sample", SUMMARY), ("leave-one-source-out", CV)):
        for (engine, metric), s in table.items():
            row = stored[(engine, metric, basis)]
            assert int(row["n"]) == s["n"] and row["rows"].split() == s["rows"]
            for col in ("signed_median_pct", "median_pct", "p90_pct", "max_pct"):
                assert float(row[col]) == pytest.approx(s[col], abs=0.006), (engine, metric, basis, col)
    # The rows kept out of the fit, predicted by the shipped figures, each under the profile that predicted it.
    kept = {(s["engine"], s["metric"]): s for s in summarise(kept_out_results())}
    assert {k for k in stored if k[2] == "kept-out"} == {(e, m, "kept-out") for e, m in kept}
    for (engine, metric), s in kept.items():
        row = stored[(engine, metric, "kept-out")]
        assert int(row["n"]) == s["n"] and row["rows"].split() == s["rows"]
        for col in ("signed_median_pct", "median_pct", "p90_pct", "max_pct"):
            assert float(row[col]) == pytest.approx(s[col], abs=0.006), (engine, metric, "kept-out", col)
    roofline = {(s["engine"], s["metric"]): s for s in summarise(evaluate(MEASURED, engine="roofline"), False)}
    for (_, metric), s in roofline.items():
        assert float(stored[("roofline", metric, "in-sample")]["median_pct"]) == pytest.approx(s["median_pct"],
                                                                                              abs=0.006)


def test_validate_command_line():
    out = subprocess.run([sys.executable, "-m", "calc", "--validate"], capture_output=True, text=True, timeout=120,
                         cwd=ROOT)
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert sum(1 for line in lines if line[:8] in {r.id for r in MEASURED}) == 422
    # Each row names the release it measured (its version, else its source), so the rows of one build can be found.
    assert "  vLLM v0.30.0  " in next(line for line in lines if line.startswith("c7a62c8a"))
    assert any(line.startswith("trtllm") and "max_throughput_tok_s" in line and "%" in line for line in lines)
    assert any(line.startswith("In-sample") for line in lines)
    assert any(line.startswith("Cross-validated (leave-one-source-out)") for line in lines)
    # The regions of 10 rows or more, and which band the bills of each use.
    at = next(i for i, line in enumerate(lines) if line.startswith("By measured region"))
    region = lines[at + 2].split()
    assert region[:6] == ["trtllm", "Blackwell-SM100", "MoE", "1", "packed", "max_throughput_tok_s"]
    assert region[6] == "36" and lines[at + 2].endswith("the region's")
    missing = subprocess.run([sys.executable, "-m", "calc", "--validate", "no/such.csv"], capture_output=True,
                             text=True, timeout=60, cwd=ROOT)
    assert missing.returncode == 2 and "cannot read no/such.csv" in missing.stderr


@pytest.mark.parametrize(("engine", "text", "family"), [
    ("trtllm", "NVIDIA/TensorRT-LLM docs/source/blogs/H200launch.md @1555478c (TensorRT-LLM v0.5.0, TensorRT 9.1.0.4)",
     "trtllm-v05"),
    ("trtllm", "perf-overview.md @258c7540 (TRT-LLM v0.17 table; in-flight batching)", "trtllm-2025"),
    ("trtllm", "perf-overview.md @00f37686 (v1.0 table; PyTorch backend)", "trtllm"),
    ("trtllm", "TensorRT-LLM v0.14.0", "trtllm-2024"),
    ("trtllm", "TensorRT-LLM v0.10.0", None),  # between the families: no profile claims it
    ("llamacpp", "README.md @00dd2bde (llama.cpp; snapshots Dec 2023; LLaMA-3 tables May 2024)", "llamacpp-2024"),
    ("llamacpp", "llama.cpp builds 7293-7474, Dec 2025, -DGGML_VULKAN=1", "llamacpp-vulkan"),
    ("llamacpp", "llama.cpp build 5298 (141a908a, May 2025), Vulkan backend (NVIDIA driver)", "llamacpp-vulkan-2025"),
    ("llamacpp", "PR #14903 comment (2025-08-17): master, Vulkan backend without coopmat", "llamacpp-vulkan-2025"),
    ("llamacpp", "llama.cpp b5800, Vulkan", "llamacpp-vulkan-2025"),
    ("llamacpp", "llama.cpp master of 2025-09-30, Vulkan", "llamacpp-vulkan"),
    ("llamacpp", "llama.cpp build 5298 (May 2025), CUDA", "llamacpp"),
    ("llamacpp", "ggml-org/llama.cpp PR #17505, build b7150", "llamacpp"),
    ("llamacpp", "llama.cpp b2450 (March 2024)", "llamacpp-2024"),
    ("vllm", "(vLLM v0.30.0, GCP a3-highgpu-1g H100 80GB)", "vllm-0.21"),
    ("vllm", "vLLM 0.11.0", "vllm-2025"),
    ("vllm", "(SGLang v0.3.0 vs vLLM v0.6.0 with --num-scheduler-steps 10)", "vllm-v0"),
    ("vllm", "vLLM 0.6.3.post2.dev308+gb489fc3c (V0 engine)", "vllm-v0"),
    ("vllm", "vLLM v0.5.4", "vllm-v0"),
    ("vllm", "vLLM v0.8.5", None),
    ("sglang", "(SGLang v0.3.0 vs vLLM v0.6.0)", None),
])
def test_release_family_reads_the_release_a_source_names(engine, text, family):
    from calc.engines import release_family
    assert release_family(engine, text) == family


def test_each_profile_names_the_backend_its_releases_name():
    from calc.engines import ENGINES, backend_of
    assert {e: backend_of(e) for e in ENGINES if backend_of(e)} == {
        "llamacpp-vulkan": "vulkan", "llamacpp-vulkan-2025": "vulkan"}


def test_a_users_row_on_an_older_release_is_predicted_by_that_release_family(tmp_path):
    from calc.evaluate import report
    from calc.validate import Measurement, priced_as
    # Llama 2 70B on two H200s at 128/2048 (H200launch.md): v0.5 read the cache once per query head.
    link = ("model=custom&params_b=68.977&active_b=68.977&layers=80&heads=64&kv_heads=8&head_dim=128&hidden=8192"
            "&embed_b=0.262&card=h200-sxm&weights=fp8&kv=fp8&compute=fp8&gpus=2&batch=auto&max_seqs=512&in_tok=128"
            "&out_tok=2048&engine=trtllm")
    row = Measurement("r1", "trtllm", "max_throughput_tok_s", 3308.0, link,
                      "NVIDIA/TensorRT-LLM docs/source/blogs/H200launch.md @1555478c (TensorRT-LLM v0.5.0)")
    moved, family = priced_as(row)
    assert family == "trtllm-v05" and moved.endswith("engine=trtllm-v05")
    assert priced_as(Measurement("r2", "trtllm", "max_throughput_tok_s", 1.0, link, "no release named")) == (link, None)
    metal = Measurement("r3", "llamacpp", "step_ms", 10.0, "model=llama-3.1-8b&card=custom&mem_gib=64&bw_tbs=0.4"
                        "&tflops=27&weights=q4_0&batch=1&ctx=512&engine=llamacpp", "llama.cpp b7000 on Metal")
    assert priced_as(metal)[0].endswith("cuda_graphs=0&arch=apple")
    # The current Vulkan build's id stands for its backend's releases: a row of a 2025 build before the integer-dot
    # kernels is predicted by that family, and a text that names no backend does not move it to the CUDA builds.
    vk = "model=llama-3.1-8b&card=rtx-4090&weights=q4_0&batch=1&ctx=64&engine=llamacpp-vulkan"
    old = Measurement("r4", "llamacpp-vulkan", "step_ms", 10.0, vk, "llama.cpp build 5298 (May 2025), Vulkan")
    assert priced_as(old) == (vk.replace("llamacpp-vulkan", "llamacpp-vulkan-2025"), "llamacpp-vulkan-2025")
    assert priced_as(Measurement("r5", "llamacpp-vulkan", "step_ms", 10.0, vk, "llama.cpp b7000")) == (vk, None)
    assert priced_as(Measurement("r6", "llamacpp-2024", "step_ms", 10.0, vk.replace("-vulkan", "-2024"),
                                 "llama.cpp b1500")) == (vk.replace("-vulkan", "-2024"), None)
    # CUDA graphs reached llama.cpp on 2024-05-08 (PR #6766): a 2024 CUDA row naming build 2824 or later runs with them;
    # one of build 2797 (May 7), or a Metal one, without.
    cuda = "model=llama-3.1-8b&card=rtx-4090&weights=4.85&batch=1&ctx=256&engine=llamacpp"
    may = priced_as(Measurement("r7", "llamacpp", "step_ms", 7.66, cuda, "llama.cpp build 2824 (4426e298), May 2024"))
    assert may == (cuda.replace("engine=llamacpp", "engine=llamacpp-2024") + "&cuda_graphs=1", "llamacpp-2024")
    assert priced_as(Measurement("r8", "llamacpp", "step_ms", 7.66, cuda, "llama.cpp build 2797, May 2024"))[0] \
        == cuda.replace("engine=llamacpp", "engine=llamacpp-2024")
    assert priced_as(Measurement("r9", "llamacpp", "step_ms", 7.66, cuda, "llama.cpp build 2833, Metal"))[0] \
        .endswith("engine=llamacpp-2024&cuda_graphs=0")
    assert report(may[0])["step_ms"] < 0.8 * report(cuda.replace("engine=llamacpp", "engine=llamacpp-2024"))["step_ms"]
    # A bare-metal server is not Apple's Metal backend.
    bare = priced_as(Measurement("r10", "llamacpp", "step_ms", 7.66, cuda, "llama.cpp build 2900, CUDA, bare-metal host"))
    assert bare[0].endswith("engine=llamacpp-2024&cuda_graphs=1")

    path = tmp_path / "rows.csv"
    with path.open("w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["id", "engine", "metric", "measured", "link", "source", "notes"])
        w.writerow([row.id, row.engine, row.metric, row.measured, row.link, row.source, ""])
    expected = report(moved)["max_throughput_tok_s"]
    as_linked = report(link)["max_throughput_tok_s"]
    assert abs(expected / as_linked - 1) > 0.05  # the two releases differ, so the choice shows
    for flags, value in (((), expected), (("--as-linked",), as_linked)):
        out = subprocess.run([sys.executable, "-m", "calc", "--validate", str(path), *flags], capture_output=True,
                             text=True, timeout=120, cwd=ROOT)
        assert out.returncode == 0, out.stderr
        line = next(x for x in out.stdout.splitlines() if x.startswith("r1 "))
        assert number_text(value) in line
        assert ("1 of 1 rows name an older release" in out.stdout) == (not flags)
    bare = subprocess.run([sys.executable, "-m", "calc", "--as-linked"], capture_output=True, text=True, timeout=60,
                          cwd=ROOT)
    assert bare.returncode == 2 and "--as-linked goes with --validate CSV" in bare.stderr


#: XiongjieDai/GPU-Benchmarks-on-LLM-Inference's source text: one document, two tables of different months.
_XD = ("XiongjieDai/GPU-Benchmarks-on-LLM-Inference README.md @00dd2bde (llama.cpp; LLaMA-2 table = average eval "
       "tokens/s, snapshots Dec 2023; LLaMA-3 tables May 2024)")


def test_a_row_of_a_two_month_document_is_dated_by_its_own_table():
    from calc.validate import Measurement, row_month
    row = lambda notes, version="": Measurement("x", "llamacpp", "step_ms", 7.66, "", _XD, notes, version)  # noqa: E731
    assert row_month(row("Llama-3 8B | Q4_K_M (4.58 GB) | RTX 4090 24GB | 1")) == (2024, 5)
    assert row_month(row("LLaMA-2 7B | Q4_0 | RTX 3090 24GB | 1")) == (2023, 12)
    # A row naming neither table is dated by the earlier month (never priced with a later release than it may be).
    assert row_month(row("Mistral 7B | Q4_0 | RTX 3090 24GB")) == (2023, 12)
    # The version column comes first, and a text naming one month is dated by it.
    assert row_month(row("Llama-3 8B", version="llama.cpp of Dec 2023")) == (2023, 12)
    assert row_month(Measurement("x", "llamacpp", "step_ms", 1.0, "", "no month", "", "")) is None


def test_a_users_llamacpp_row_dated_may_2024_runs_with_cuda_graphs_unless_on_apple_silicon():
    from calc.evaluate import report
    from calc.validate import Measurement, priced_as
    # The shared rows' form: the plain engine, no build, the document's two months in the source.
    cuda = "model=llama-3.1-8b&card=rtx-4090&weights=4.85&kv=fp16&gpus=1&batch=1&ctx=256&engine=llamacpp"
    llama3 = priced_as(Measurement("a", "llamacpp", "step_ms", 7.6581, cuda, _XD,
                                   "Llama-3 8B | Q4_K_M (4.58 GB) | RTX 4090 24GB | 1 | short/512 (tg512)"))
    assert llama3 == (cuda.replace("engine=llamacpp", "engine=llamacpp-2024") + "&cuda_graphs=1", "llamacpp-2024")
    # Measured 7.658 ms a token (130.6 tok/s); without graphs the prediction was 29 % too slow.
    assert report(llama3[0])["step_ms"] == pytest.approx(7.658, rel=0.10)
    llama2 = priced_as(Measurement("b", "llamacpp", "step_ms", 6.695, cuda, _XD, "LLaMA-2 7B | Q4_0 | 4090 24GB | 1"))
    assert llama2 == (cuda.replace("engine=llamacpp", "engine=llamacpp-2024"), "llamacpp-2024")
    apple = ("model=llama-3.1-8b&card=custom&mem_gib=192&bw_tbs=0.8&tflops=27.2&link_gbs=64&weights=4.85&kv=fp16"
             "&gpus=1&batch=1&ctx=256&engine=llamacpp")
    m2 = priced_as(Measurement("c", "llamacpp", "step_ms", 13.3, apple, _XD, "Llama-3 8B | Q4_K_M | M2 Ultra 76-core GPU"))
    # ... and its custom card is an Apple GPU, whose memory is Metal's working set of the unified memory.
    assert m2[0].endswith("engine=llamacpp-2024&cuda_graphs=0&arch=apple")
    # A base chip or a Mac named without Pro, Max or Ultra is Apple's too; an M.2 disk is not.
    for said in ("Llama-3 8B | Q4_K_M | M1 7-Core GPU 8GB", "Mac mini (M4, 10-core GPU)", "MacBook Air M2"):
        assert priced_as(Measurement("e", "llamacpp", "step_ms", 40.0, apple, _XD, said))[0].endswith(
            "cuda_graphs=0&arch=apple")
    assert "cuda_graphs=0" not in priced_as(Measurement("f", "llamacpp", "step_ms", 7.6, cuda, _XD,
                                                        "Llama-3 8B | Q4_K_M | RTX 4090 24GB, model on an M.2 SSD"))[0]
    # A build named decides before the month: build 2797 (May 7, 2024) ran without graphs.
    early = priced_as(Measurement("d", "llamacpp", "step_ms", 7.66, cuda, "llama.cpp build 2797 (May 2024)", "Llama-3 8B"))
    assert "cuda_graphs" not in early[0]


def test_a_users_llamacpp_row_of_several_cards_dated_before_2024_splits_its_matrices_by_rows():
    from calc.evaluate import report
    from calc.validate import Measurement, priced_as
    # The shared rows' form: the plain engine, no build, the document's two months in the source.
    two = ("model=custom&params_b=6.738&active_b=6.738&layers=32&heads=32&kv_heads=32&head_dim=128&hidden=4096"
           "&embed_b=0.131&card=rtx-4090&weights=q4_0&kv=fp16&gpus=2&batch=1&ctx=512&engine=llamacpp")
    dec = priced_as(Measurement("a", "llamacpp", "step_ms", 15.09, two, _XD, "LLaMA-2 7B | Q4_0 | 4090 24GB x2 | 1"))
    assert dec == (two.replace("engine=llamacpp", "engine=llamacpp-2024") + "&split=row", "llamacpp-2024")
    # Measured 15.09 ms a token (66.26 tok/s): 24 ms a layer of hand-overs less than whole layers would take ...
    assert report(dec[0])["step_ms"] == pytest.approx(15.09, rel=0.15)
    # ... where priced as whole layers it was 39 % too fast.
    assert report(dec[0].replace("&split=row", ""))["step_ms"] < 0.65 * 15.09
    # A row of May 2024 (whole layers by default since January), one card, or a link that says: no row split.
    may = priced_as(Measurement("b", "llamacpp", "step_ms", 8.16, two, _XD, "Llama-3 8B | Q4_K_M | 4090 x2 | 1"))
    assert "split" not in may[0]
    one = two.replace("gpus=2", "gpus=1")
    assert "split" not in priced_as(Measurement("c", "llamacpp", "step_ms", 6.7, one, _XD, "LLaMA-2 7B | Q4_0"))[0]
    said = two + "&split=layer"
    assert priced_as(Measurement("d", "llamacpp", "step_ms", 9.0, said, _XD, "LLaMA-2 7B | Q4_0"))[0].endswith(
        "engine=llamacpp-2024&split=layer")
    # The family's own id gets it too.
    own = two.replace("engine=llamacpp", "engine=llamacpp-2024")
    assert priced_as(Measurement("e", "llamacpp-2024", "step_ms", 15.09, own, _XD, "LLaMA-2 7B | Q4_0 | x2"))[0] == (
        own + "&split=row")


def test_a_row_split_is_priced_for_the_2023_2024_builds_only_and_keeps_the_cache_on_the_main_card():
    from calc import memory, model
    from calc.scenario import ScenarioError, load
    link = "model=llama-3.1-70b&card=rtx-4090&weights=q4_0&gpus=6&batch=1&ctx=4096&engine=llamacpp-2024"
    rows, layers = load(link + "&split=row").scenario, load(link).scenario
    # Every card reads its share of each matrix at once; the main card reads, and holds, the whole cache.
    assert model.peaks(rows).weights == pytest.approx(6 * model.peaks(layers).weights)
    assert model.peaks(rows).kv == pytest.approx(model.peaks(layers).kv)
    assert memory.memory(rows).cache_cards == 1 and memory.memory(layers).cache_cards == 6
    assert memory.max_batch(rows, 4096) < memory.max_batch(layers, 4096)
    # The Fit page's card is the main one: the cache the batch fills is all there, not a sixth of it.
    from calc import tables
    stack = tables.memory_stack(rows).set_index("part")
    filled = next(p for p in stack.index if p.startswith("KV cache at batch"))
    batch = memory.batch_used(rows)
    assert stack.loc[filled, "gib_per_card"] == pytest.approx(batch * float(model.cache_bytes(rows, 4096)) / 2**30)
    assert stack.loc[filled, "gib_total"] == stack.loc[filled, "gib_per_card"]
    # 80 layers of (420 + 5 * 117) us at the A100's 1.41 GHz, on a 2.52 GHz card.
    assert model.row_split_seconds(rows) == pytest.approx(80 * (420 + 5 * 117) * 1e-6 * 1.41 / 2.52)
    for engine in ("llamacpp", "llamacpp-vulkan", "vllm"):
        with pytest.raises(ScenarioError) as refused:
            load(link.replace("llamacpp-2024", engine) + "&split=row")
        assert "split" in {e.key for e in refused.value.errors}


def test_a_users_file_that_copies_shipped_rows_is_not_called_out_of_sample(tmp_path, capsys):
    from calc.validate import cross_validated_predictions, main
    shipped = MEASURED[0]
    unseen_link = "model=llama-3.1-8b&card=l40s&weights=bf16&batch=1&ctx=512&engine=vllm"
    path = tmp_path / "rows.csv"
    with path.open("w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["id", "engine", "metric", "measured", "link", "source", "notes"])
        # the same set-up and figure under another id is the shipped row all the same
        w.writerow(["copied", shipped.engine, shipped.metric, shipped.measured, shipped.link, shipped.source, ""])
        w.writerow(["mine", "vllm", "step_ms", 20.0, unseen_link, "my own run", ""])
    assert main(path, as_linked=True) == 0
    out = capsys.readouterr().out
    assert "1 of 2 rows of this file are rows the shipped profiles were fitted to" in out
    assert "The other 1 row against the shipped profiles (rows the calibration never saw: out of sample)" in out
    copied = next(x for x in out.splitlines() if x.startswith("copied "))
    assert number_text(cross_validated_predictions()[shipped.id]) in copied  # its leave-one-source-out prediction
    mine = next(x for x in out.splitlines() if x.startswith("mine "))
    assert mine.count("%") == 1  # no cross-validated prediction for a row no fit saw


def test_a_bad_row_of_a_users_file_is_listed_and_the_others_still_predicted(tmp_path, capsys):
    """An unreadable row, or an unknown engine or model in a link: each is named with its reason (the field, its
    value and what is accepted), counts in no table, and does not stop the other rows. A set-up that does not fit
    in memory as linked is predicted all the same and named as in doubt."""
    from calc.evaluate import report
    from calc.validate import main
    good = "model=llama-3.1-8b&card=l40s&weights=bf16&batch=1&ctx=512&engine=vllm"
    path = tmp_path / "rows.csv"
    with path.open("w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["id", "engine", "metric", "measured", "link", "source", "notes"])
        w.writerow(["ttft", "vllm", "ttft_ms", 50, good, "s1", ""])
        w.writerow(["text", "vllm", "step_ms", "fast", good, "s1", ""])
        w.writerow(["neg", "vllm", "step_ms", -3, good, "s1", ""])
        w.writerow(["trt", "tensorrt-llm", "step_ms", 20, good.replace("engine=vllm", "engine=tensorrt-llm"), "s2", ""])
        w.writerow(["nomodel", "vllm", "step_ms", 20, good.replace("llama-3.1-8b", "no-such-model"), "s3", ""])
        w.writerow(["toobig", "vllm", "step_ms", 20, good.replace("llama-3.1-8b", "llama-3.1-405b"), "s4", ""])
        w.writerow(["mine", "vllm", "step_ms", 20.0, good, "s5", ""])
    assert main(path) == 1
    out = capsys.readouterr().out
    assert "5 rows of this file could not be predicted and count in no table:" in out
    assert "rows.csv line 2 (id ttft): metric='ttft_ms' is not accepted: metric takes one of step_ms, max_throughput_tok_s" in out
    assert "rows.csv line 3 (id text): measured='fast' is not a number: measured takes a positive number" in out
    assert "rows.csv line 4 (id neg): measured='-3' is not accepted: measured takes a positive number" in out
    assert "rows.csv line 5 (id trt): engine='tensorrt-llm' is not accepted: engine takes one of" in out
    assert "rows.csv line 6 (id nomodel): model='no-such-model' is not accepted" in out
    assert "1 row predicted all the same, but in doubt (counted in the tables):\n  rows.csv line 7 (id toobig): the set-up does not fit" in out
    mine = next(x for x in out.splitlines() if x.startswith("mine "))
    assert number_text(report(good)["step_ms"]) in mine
    assert not any(x.startswith(("trt ", "nomodel ")) for x in out.splitlines())  # in no table
    table = out.split("These rows against the shipped profiles")[1]
    assert "without a prediction" not in table
    assert next(x for x in table.splitlines() if x.startswith("vllm ")).split()[2] == "2"  # "mine" and "toobig"
    cli = subprocess.run([sys.executable, "-m", "calc", "--validate", str(path)], capture_output=True, text=True,
                         timeout=120, cwd=ROOT)
    assert cli.returncode == 1 and "mine " in cli.stdout and not cli.stderr


def test_kept_out_rows_file_under_the_profile_whose_figures_predicted_them():
    """gpustack's rows name vllm-2025, which shares every figure of vllm: they count against vllm, and a vllm-2025
    scenario quotes them as a vllm one does; the V0 engine's rows (vllm-v0, vllm's efficiencies and host times of
    its own) are a band of their own, which a vllm-v0 scenario quotes and a vllm one does not; a profile with no such
    rows quotes none."""
    from calc import engines, words
    from calc.evaluate import report
    kept = kept_out_results()
    assert len(kept) == 553 and all(r.row.engine == engines.kept_out_as(r.row.engine) for r in kept)
    assert {r.row.id for r in kept if r.row.engine == "vllm"} >= {"b0ad3525", "1cc0dea9"}
    # dstack's MI300X runs with multi-step scheduling are V0's too.
    assert {r.row.id for r in kept if r.row.engine == "vllm-v0"} >= {"bad28ae3", "9e7bac6f", "370e2676", "fad36824"}
    assert engines.figures_of("vllm-v0") == "vllm-v0" and engines.kept_out_as("vllm-v0") == "vllm-v0"
    (v0,) = report("engine=vllm-v0")["error_band_kept_out"]
    assert v0["n"] == 67 and v0["signed_median_pct"] > 100
    v0_report, v1_report = report("engine=vllm-v0"), report("engine=vllm")
    assert v0_report["error_band"] != v1_report["error_band"]  # its own two fitted rows, cross-validated
    # Whose rows each band is, in the report as on the pages.
    assert (v0_report["error_band_from"], v0_report["error_band_kept_out_from"]) == ("vllm-v0", "vllm-v0")
    assert (v1_report["error_band_from"], v1_report["error_band_kept_out_from"]) == ("vllm", "vllm")
    assert report("engine=sglang")["error_band_kept_out_from"] == "sglang"  # its own rows (gpustack's), kept out
    # The other cells of TensorRT-LLM v0.17's table file under its own family (it keeps a memory rule of its own).
    assert report("engine=trtllm-2025")["error_band_kept_out_from"] == "trtllm-2025"
    assert engines.error_band("vllm-2025", engines.KEPT_OUT) == engines.error_band("vllm", engines.KEPT_OUT)
    assert engines.error_band("trtllm-2025", engines.KEPT_OUT)[0]["n"] == 310
    assert report("engine=trtllm")["error_band_kept_out_from"] == "trtllm"  # gpustack's v1.2.0rc1 runs
    assert report("engine=trtllm-v05")["error_band_kept_out_from"] is None  # none of its releases' rows kept out
    r = report("engine=vllm")
    (band,) = r["error_band_kept_out"]
    assert band["metric"] == "max_throughput_tok_s" and band["n"] == 33 and band["signed_median_pct"] > 25
    text = words.accuracy_text(r["engine"], r["error_band"], r["error_band_kept_out"])
    assert (f"; on 33 published vLLM rows kept out of the fit (vLLM v0.10.2, vLLM v0.11.0, from "
            f"github.com/gpustack/gpustack), full-load "
            f"throughput came out a median {band['signed_median_pct']:.0f} % too fast (worst row "
            f"{band['max_pct']:.0f} % off)") in text
    slow = words.accuracy_text("llamacpp-vulkan-2025", engines.error_band("llamacpp-vulkan-2025"),
                               engines.error_band("llamacpp-vulkan-2025", engines.KEPT_OUT))
    assert "on 8 published llama.cpp Vulkan (to Aug 2025) rows kept out of the fit (llama.cpp build 4878, " \
           "llama.cpp build 5315, llama.cpp build 5583 and 1 more, from ggml-org/llama.cpp), decode step time " \
           "came out a median 30 % too slow (worst row 50 % off)" in slow
    assert "kept out" not in words.accuracy_text("trtllm-2025", engines.error_band("trtllm-2025"), None)


def test_a_users_throughput_row_whose_texts_describe_a_finite_run_is_priced_as_that_run(tmp_path):
    from calc.evaluate import report
    from calc.validate import Measurement, main, priced_as
    # SGLang's benchmark of vLLM v0.6.0 as the shared rows give it: the run is in the source and notes only.
    link = ("model=llama-3.1-8b&card=a100-80gb&weights=bf16&kv=bf16&compute=bf16&gpus=1&batch=auto&in_tok=220"
            "&out_tok=194&engine=vllm")
    source = ("sgl-project/sglang benchmark/benchmark_vllm_060/README.md @120affb9 (SGLang v0.3.0 vs vLLM v0.6.0 with "
              "--num-scheduler-steps 10; sglang.bench_serving ShareGPT, 5000 prompts, request rate inf)")
    row = Measurement("s1", "vllm", "max_throughput_tok_s", 4132.37, link, source,
                      "Llama 3.1 8B Instruct | BF16 | A100 80G x1, TP1 | offline, all 5000 prompts at once")
    moved, family = priced_as(row)
    # V0's cap of 256 sequences, and the run: 5000 prompts, ShareGPT's reply lengths up to 2048 - 220 tokens. A V0
    # release, multi-step scheduling (--num-scheduler-steps 10) or not: priced by the V0 family, whose host times
    # are fitted on such runs.
    assert family == "vllm-v0"
    v0_link = link.replace("engine=vllm", "engine=vllm-v0")
    assert moved == v0_link + "&max_seqs=256&run_prompts=5000&out_spread=exp&out_max=1828"
    run = report(moved)["run_throughput_tok_s"]
    assert run == pytest.approx(4132.37, rel=0.10)
    assert report(v0_link)["max_throughput_tok_s"] > 1.02 * run  # the steady state flattered it (4,346 tok/s)
    # A step row, a link that states its run, or a text naming no count or a paced run: nothing added.
    # (a step row gives its batch, which the release ran whatever its default cap)
    assert priced_as(Measurement("s2", "vllm", "step_ms", 7.0, link.replace("auto", "8"), source, "")) \
        == (v0_link.replace("auto", "8"), "vllm-v0")  # its family only
    stated = link + "&run_prompts=100"
    assert "out_spread" not in priced_as(Measurement("s3", "vllm", "max_throughput_tok_s", 1.0, stated, source))[0]
    paced = Measurement("s4", "vllm", "max_throughput_tok_s", 1.0, link, "vLLM v0.30.0, 500 prompts at 4 req/s")
    assert priced_as(paced) == (link.replace("engine=vllm", "engine=vllm-0.21"), "vllm-0.21")  # no run
    # The current releases keep the card's default cap; a release family's own id still takes the run.
    current = Measurement("s5", "vllm", "max_throughput_tok_s", 1.0, link, "vLLM v0.11.0; --num-prompts 1000, "
                          "no --request-rate")
    assert priced_as(current)[0] == link.replace("engine=vllm", "engine=vllm-2025") + "&run_prompts=1000"
    # The same release scheduling one step at a time (V0's default) is its V0 family's.
    single = Measurement("s7", "vllm", "max_throughput_tok_s", 1.0, link, "vLLM v0.6.3 (V0 engine); "
                         "--num-scheduler-step 1; 256 prompts, offline")
    assert priced_as(single) == (link.replace("engine=vllm", "engine=vllm-v0") + "&max_seqs=256&run_prompts=256", "vllm-v0")
    own_id = Measurement("s6", "vllm-2025", "max_throughput_tok_s", 1.0, link.replace("=vllm", "=vllm-2025"),
                         "ShareGPT; 1,000 requests all at once")
    assert priced_as(own_id)[0].endswith("engine=vllm-2025&run_prompts=1000&out_spread=exp&out_max=1828")
    # The printout says which links were completed, and --as-linked leaves them as written.
    path = tmp_path / "rows.csv"
    with path.open("w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["id", "engine", "metric", "measured", "link", "source", "notes"])
        w.writerow(["u1", "vllm", "max_throughput_tok_s", 4132.37, link, source, "offline"])
    import contextlib
    import io
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        main(path)
    assert "1 of 1 rows' links were completed from what their texts say" in out.getvalue()
    assert "as a finite run of requests sent at once with ShareGPT's reply lengths" in out.getvalue()
    assert "with vLLM V0's cap of 256 sequences" in out.getvalue()


def test_a_users_row_whose_link_is_empty_or_names_an_unknown_key_is_refused_not_priced_as_the_defaults(tmp_path):
    from calc.validate import Measurement, evaluate, link_not_read, priced_as
    typo = "model=llama-3.1-8b&card=h100-sxm&weights=bf16&bacth=1&engine=vllm"
    assert "unknown key 'bacth' (did you mean 'batch'?)" in link_not_read(typo)
    assert "empty" in link_not_read("")
    assert "unknown key 'this is not a link'" in link_not_read("this is not a link")
    # Many unknown keys are counted, the first five named: refused all the same.
    assert link_not_read("model=llama-3.1-8b&batch=1&" + "&".join(f"x{i}=1" for i in range(6))).startswith(
        "link: unknown keys (6): 'x0', 'x1'")
    assert link_not_read("https://calc.example/cost?model=llama-3.1-8b&batch=1") == ""  # a whole URL reads
    rows = [Measurement("t", "vllm", "step_ms", 7.5, typo, "vLLM v0.6.0"),  # a completion must not drop the typo
            Measurement("e", "vllm", "step_ms", 7.5, "", "")]
    assert priced_as(rows[0]) == (typo, None)
    assert [(r.predicted, r.reason.split(";")[0]) for r in evaluate(rows)] == [
        (None, "link: unknown key 'bacth' (did you mean 'batch'?)"), (None, "link: empty")]
    path = tmp_path / "rows.csv"
    with path.open("w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["id", "engine", "metric", "measured", "link", "source", "notes"])
        w.writerow(["t", "vllm", "step_ms", 7.5, typo, "internal", ""])
    out = subprocess.run([sys.executable, "-m", "calc", "--validate", str(path)], capture_output=True, text=True,
                         timeout=120, cwd=ROOT)
    assert out.returncode == 1 and "rows.csv line 2 (id t): link: unknown key 'bacth'" in out.stdout


def test_a_users_file_lists_its_refused_rows_in_file_order_and_a_header_alone_is_said(tmp_path, capsys):
    """Unreadable rows were listed before refused ones whatever their lines; a file of a header alone printed empty
    tables and exited 0, as if its rows had been checked."""
    from calc.validate import main
    path = tmp_path / "mine.csv"
    with path.open("w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["id", "engine", "metric", "measured", "link", "source", "notes"])
        w.writerow(["typo", "vllm", "step_ms", 7.5, "model=llama-3.1-8b&bacth=1&engine=vllm", "s", ""])
        w.writerow(["text", "vllm", "step_ms", "fast", "model=llama-3.1-8b&engine=vllm", "s", ""])
    assert main(path) == 1
    out = capsys.readouterr().out
    assert out.index("mine.csv line 2 (id typo)") < out.index("mine.csv line 3 (id text)")
    empty = tmp_path / "empty.csv"
    empty.write_text("id,engine,metric,measured,link,source,notes\n")
    assert main(empty) == 1
    assert "empty.csv holds no rows under its header: nothing to predict." in capsys.readouterr().out


def test_a_row_that_names_an_apple_machine_but_prices_a_catalogue_card_is_in_doubt():
    """A row whose notes say "MacBook Air M2" and whose link names no card was priced, without a word, on the
    default H100 (5.8 ms against 55 measured): it is predicted all the same and named as in doubt."""
    from calc.validate import Measurement, evaluate
    mac = Measurement("mac", "llamacpp", "step_ms", 55.0, "model=llama-3.1-8b&weights=q4_0&batch=1&engine=llamacpp",
                      "own run", "llama-bench tg128 on a MacBook Air M2, 16 GB")
    (result,) = evaluate([mac])
    assert result.predicted is not None
    assert "its text names an Apple machine ('macbook') while its link prices the catalogue's H100" in result.reason
    custom = Measurement("mac2", "llamacpp", "step_ms", 55.0, "model=llama-3.1-8b&card=custom&mem_gib=16&bw_tbs=0.1"
                         "&weights=q4_0&batch=1&engine=llamacpp", "own run", "MacBook Air M2")
    assert evaluate([custom])[0].reason == ""
