"""calc/memory.py: memory as each engine allocates it (docs/method.md section 8.2), the checkpoint's parts
(section 2.1), linear attention (section 2.3) and the engines' tensor-parallel rule (section 5)."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from calc import catalogue, load, memory, model, parse, report, tables
from calc.scenario import ScenarioError

CASES = Path(__file__).parent / "fixtures" / "memory_cases.csv"


def _cases() -> list[dict]:
    with CASES.open(newline="", encoding="utf-8") as f:
        return list(csv.DictReader(f))


@pytest.mark.parametrize("case", _cases(), ids=lambda c: c["id"])
def test_engine_start_up_printouts(case):
    """Each printout the engine gave at start-up, within the case's tolerance (tests/fixtures/memory_cases.csv)."""
    r = report(case["link"])
    metric = case["metric"]
    if metric == "kv_tokens_per_kv_gib":
        got = r["kv_tokens"] / r["kv_cache_gib"]
    elif "." in metric:  # one block of the engine's reserve: llama.cpp's "compute buffer size"
        group, block = metric.split(".", 1)
        got = r[group][block]
    else:
        got = r[metric]
    want = float(case["expected"])
    assert abs(got / want - 1) <= float(case["tolerance"]), (case["id"], got, want)


def test_the_printed_figures_are_worded_as_the_engines_print_them():
    r = report("model=qwen2.5-32b&card=l4&gpus=4&weights=bf16&engine=sglang&mem_util=0.85&ctx=8192")
    assert r["kv_cache_gib"] == pytest.approx(4 * r["kv_cache_gib_per_card"])
    assert r["kv_tokens"] == pytest.approx(r["max_concurrency"] * 8192)
    assert r["max_batch"] == int(r["max_concurrency"])
    # SGLang's cell: 2 KV heads per card x 128 x 64 layers x 2 (K and V) x 2 bytes = 64 KiB a token per card; it
    # prints a whole number of tokens (max_total_num_tokens), the tokens the memory holds rounded down
    assert isinstance(r["kv_tokens"], int)
    assert r["kv_tokens"] == int(r["kv_cache_gib_per_card"] * 2**30 / 65536)


@pytest.mark.parametrize("engine, latent_model, page", [
    ("vllm", None, 16), ("vllm-2025", None, 16), ("vllm", "deepseek-v3", 64), ("trtllm", None, 32),
    ("trtllm-2024", None, 64), ("sglang", None, 1), ("llamacpp", None, 1), ("roofline", None, 1)])
def test_the_printed_token_count_is_whole_blocks_of_the_engines_page(engine, latent_model, page):
    """vLLM prints "GPU KV cache size" as blocks x 16 tokens and its concurrency as those blocks over the blocks one
    request takes; TensorRT-LLM pages in 32 (LLM API) or 64 (TensorRT engines); SGLang and llama.cpp count tokens."""
    model_id = latent_model or "llama-3.1-8b"
    gpus = 8 if latent_model else 1
    card = "h200-sxm" if latent_model else "h100-sxm"
    ctx = 4000  # not a multiple of any page
    r = report(f"model={model_id}&card={card}&gpus={gpus}&engine={engine}&ctx={ctx}")
    s = load(f"model={model_id}&card={card}&gpus={gpus}&engine={engine}&ctx={ctx}").scenario
    raw = r["kv_cache_gib"] * 2**30 / float(model.cache_bytes(s, ctx)) * ctx
    assert r["kv_tokens"] > 0
    if page == 1:  # whole tokens: the count an engine that pages single tokens prints
        assert r["kv_tokens"] == int(raw)
        assert r["max_concurrency"] == pytest.approx(int(raw) / ctx, rel=1e-12)
    else:
        assert r["kv_tokens"] % page == 0 and raw - page < r["kv_tokens"] <= raw
        blocks_per_request = -(-ctx // page)
        assert r["max_concurrency"] == pytest.approx(r["kv_tokens"] / page / blocks_per_request, rel=1e-12)
        assert r["max_concurrency"] < raw / ctx


def test_vllm_sums_its_own_terms():
    """vLLM v0.21 and later: torch's total x utilization less the weights as loaded, the activation peak of its profiling run,
    the memory outside its allocator and the CUDA graphs; a link's overhead_gib replaces the three."""
    s = load("model=llama-3.1-8b&card=h100-sxm&weights=bf16&engine=vllm-0.21").scenario
    mem = memory.memory(s)
    assert s.torch_gib == pytest.approx(catalogue.cards()["h100-sxm"]["torch_gib"])
    assert s.max_seqs == 1024 and s.max_batched_tokens == 8192  # vLLM's defaults on a card of >= 70 GiB
    names = [b.name for b in mem.reserve]
    assert names == ["activation peak of the profiling run", "memory outside PyTorch's allocator", "CUDA graphs"]
    sampler = 1024 * 128256 * 14 / 2**30  # rows x vocab x bytes per element
    assert mem.reserve[0].gib == pytest.approx(sampler)
    want = 0.9 * s.torch_gib - model.weight_bytes(s) / 2**30 - sampler - 0.2 - 0.5
    assert mem.kv_cache_gib == pytest.approx(want)
    eager = memory.memory(load("model=llama-3.1-8b&card=h100-sxm&weights=bf16&engine=vllm-0.21&cuda_graphs=0").scenario)
    assert eager.kv_cache_gib == pytest.approx(want + 0.5)
    given = memory.memory(load("model=llama-3.1-8b&card=h100-sxm&weights=bf16&engine=vllm-0.21&overhead_gib=3").scenario)
    assert given.kv_cache_gib == pytest.approx(0.9 * s.torch_gib - model.weight_bytes(s) / 2**30 - 3)


def test_a_vllm_link_that_names_no_release_is_charged_the_family_that_leaves_less_cache():
    """Plain engine=vllm takes whichever release family's accounting leaves the smaller KV cache: the 2025
    sampler profile where a large vocabulary's logits dominate (gpt-oss-120b, vllm issue #27508's launch), the
    later releases' CUDA-graph reserve where the sampler holds few rows; weights as loaded follow the same family."""
    def kv(link):
        return memory.memory(load(link).scenario)

    gptoss = "model=gpt-oss-120b&card=h100-sxm&ctx=131072&mem_util=0.95&max_batched_tokens=1024&engine="
    plain, new, old = (kv(gptoss + e) for e in ("vllm", "vllm-0.21", "vllm-2025"))
    assert new.kv_cache_gib == pytest.approx(7.81, abs=0.01) and old.kv_cache_gib == pytest.approx(1.94, abs=0.01)
    assert plain.kv_cache_gib == old.kv_cache_gib and plain.weights_loaded_gib == old.weights_loaded_gib
    assert memory.vllm_release_id(load(gptoss + "vllm").scenario) == "vllm-2025"
    few = "model=llama-3.1-8b&card=h100-sxm&weights=bf16&max_seqs=8&engine="
    plain, new, old = (kv(few + e) for e in ("vllm", "vllm-0.21", "vllm-2025"))
    assert new.kv_cache_gib == pytest.approx(old.kv_cache_gib - 0.5)  # the same forward peak, less the graphs
    assert plain.kv_cache_gib == new.kv_cache_gib
    assert [b.name for b in plain.reserve][-1] == "CUDA graphs"


@pytest.mark.parametrize("gpus", [2, 4, 8])
def test_vllm_samples_the_whole_vocabulary_on_every_card(gpus):
    """The V1 engine all-gathers the logits (vllm/platforms/interface.py use_all_gather), so each card's sampler
    profile holds rows x the whole vocabulary, however many cards share the model; the forward pass splits."""
    s = load(f"model=llama-3.1-70b&card=h100-sxm&gpus={gpus}&weights=bf16&engine=vllm-0.21").scenario
    mem = memory.memory(s)
    assert mem.reserve[0].gib == pytest.approx(1024 * 128256 * 14 / 2**30)  # 1.67 GiB per card, not 1.67 / gpus
    old = memory.memory(load(f"model=llama-3.1-70b&card=h100-sxm&gpus={gpus}&weights=bf16&engine=vllm-2025").scenario)
    assert old.reserve[0].gib == pytest.approx(1024 * 128256 * 38 / 2**30)


@pytest.mark.parametrize("card, seqs, tokens", [("h100-sxm", 1024, 8192), ("h200-sxm", 1024, 8192),
                                               ("a100-80gb", 256, 2048), ("l4", 256, 2048)])
def test_vllm_defaults_follow_the_card(card, seqs, tokens):
    s = load(f"card={card}&engine=vllm").scenario
    assert (s.max_seqs, s.max_batched_tokens) == (seqs, tokens)
    # vLLM never schedules more sequences than a step holds tokens
    assert load(f"card={card}&engine=vllm&max_batched_tokens=128").scenario.max_seqs == 128


def test_sglang_keeps_its_reserve_outside_its_fraction():
    """SGLang takes mem_fraction_static of the memory free when it starts; what it leaves is outside the
    fraction, not a reserve taken on top (the case of 4 L4s that did not fit before)."""
    s = load("model=qwen2.5-32b&card=l4&gpus=4&weights=bf16&engine=sglang&mem_util=0.85").scenario
    mem = memory.memory(s)
    free = s.torch_gib - memory.SGLANG_CONTEXT_GIB
    assert mem.kv_cache_gib == pytest.approx(0.85 * free - mem.weights_loaded_gib)
    assert mem.reserve[1].gib == pytest.approx(0.15 * free)


def test_sglang_counts_the_communicators_of_a_group_joined_by_nvlink():
    """Tensor parallel over NVLink or xGMI, SGLang's distributed start-up holds about 2 GiB a card before it
    measures (PR #11716 printed 1.77 to 2.01 GB on 8 ranks); over PCIe, or on one card, only the CUDA context."""
    def context(link):
        s = load(link).scenario
        return s.torch_gib - (memory.memory(s).kv_cache_gib + memory.memory(s).weights_loaded_gib) / s.mem_util
    base = "model=qwen2.5-32b&weights=bf16&engine=sglang&mem_util=0.85"
    assert context(base + "&card=h100-sxm&gpus=4") == pytest.approx(0.3 + 2.0)
    assert context(base + "&card=h100-pcie&gpus=4") == pytest.approx(0.3)
    assert context(base + "&card=h100-sxm&gpus=1") == pytest.approx(0.3)
    assert context(base + "&card=h100-sxm&gpus=4&overhead_gib=1") == pytest.approx(1.0)


def test_a_link_that_names_the_presets_own_format_keeps_its_parts():
    """weights=fp8 on Meta's 405B FP8 release is that release: its bf16 attention, embeddings and end blocks stay."""
    shipped = report("model=llama-3.1-405b-fp8&gpus=8")
    named = report("model=llama-3.1-405b-fp8&gpus=8&weights=fp8")
    assert named["weights_loaded_gib"] == pytest.approx(shipped["weights_loaded_gib"]) == pytest.approx(56.71, abs=0.01)
    assert report("model=llama-3.1-405b-fp8&gpus=8&weights=int4-g128")["scenario"]["weights_attn"] == "int4-g128"


def test_roofline_is_the_contract():
    s = load("model=llama-3.1-70b&engine=roofline&overhead_gib=4").scenario
    want = s.mem_gib - 4 - model.weight_bytes(s) / 2**30
    assert memory.memory(s).kv_cache_gib == pytest.approx(want)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(sorted(catalogue.models())), st.sampled_from(["bf16", "fp8", "int4-g128", "q4_k_m"]))
def test_with_every_part_in_the_weight_format_the_bytes_are_as_before(mid, weights):
    """docs/method.md section 2.1: the parts add up to W = (P - M)*bpw/8 + M*bpw_e/8 when they share a format."""
    parts = "".join(f"&{k}={weights}" for k in ("weights_experts", "weights_attn", "weights_embed"))
    s = load(f"model={mid}&weights={weights}{parts}&layers_full=0").scenario
    M, _ = model.moe_split(s)
    bits = s.weight_bits
    assert model.weight_bytes(s) == pytest.approx((s.params_b * 1e9 - M) * bits / 8 + M * bits / 8, rel=1e-12)
    assert sum(p.params for p in model.weight_parts(s)) == pytest.approx(s.params_b * 1e9, rel=1e-12)


def test_a_checkpoint_keeps_parts_at_16_bits():
    plain = load("model=llama-3.1-405b&weights=fp8&gpus=8").scenario
    meta = load("model=llama-3.1-405b-fp8&gpus=8").scenario
    assert (meta.weights, meta.weights_attn, meta.weights_embed, meta.layers_full) == ("fp8", "bf16", "bf16", 2)
    extra = model.weight_bytes(meta) - model.weight_bytes(plain)
    attn = model.attention_params(plain)
    emb = model.embedding_params(plain)
    rest = plain.params_b * 1e9 - attn - emb
    assert extra == pytest.approx(attn + emb + rest * 2 / 126)  # one more byte for each 16-bit weight
    # a decode step reads the 16-bit parts too, so it is slower
    assert model.step_seconds(meta, 1) > model.step_seconds(plain, 1)


def test_linear_attention_layers_hold_a_state_not_a_cache():
    base = "model=custom&params_b=35&active_b=3&layers=40&heads=16&kv_heads=2&head_dim=256&hidden=2048" \
           "&experts=256&experts_active=8&kv=fp8"
    full = load(base).scenario
    hybrid = load(base + "&linear_layers=30&state_kib=1072").scenario
    assert model.kv_bytes_per_token(full) == 40 * 1024 and model.kv_bytes_per_token(hybrid) == 10 * 1024
    state = 30 * 1072 * 1024
    for n in (1, 4096, 131072):
        assert float(model.cache_bytes(hybrid, n)) == pytest.approx(10 * 1024 * n + state)
    assert load(base + "&linear_layers=30").scenario.state_kib == 1024  # default: hidden / 2
    assert parse(base + "&linear_layers=30&state_kib=0").errors[0].key == "state_kib"
    assert parse(base + "&linear_layers=41").errors[0].key == "linear_layers"


@pytest.mark.parametrize("engine", ["vllm", "sglang", "trtllm"])
def test_engines_that_split_heads_refuse_a_size_that_does_not_divide_them(engine):
    with pytest.raises(ScenarioError) as exc:
        report(f"model=llama-3.1-8b&gpus=3&engine={engine}")
    err = exc.value.errors[0]
    assert err.key == "gpus" and "32 attention heads" in err.message
    with pytest.raises(ScenarioError) as exc:  # 8 KV heads cannot be split 16 ways... but can be copied: 16 % 8 == 0
        report(f"model=custom&heads=48&kv_heads=6&gpus=4&engine={engine}")
    assert "KV heads" in exc.value.errors[0].message
    assert report(f"model=llama-3.1-8b&gpus=16&engine={engine}&card=h100-sxm")["kv_copy_factor"] == 2


@pytest.mark.parametrize("engine, copies", [("roofline", 9 / 8), ("llamacpp", 1.0)])
def test_engines_that_split_no_heads_take_any_size(engine, copies):
    # The roofline's tensor parallel copies a KV head over cards that do not divide them; llama.cpp gives each
    # card whole layers with all their heads, so nothing is copied.
    r = report(f"model=llama-3.1-8b&gpus=3&engine={engine}&weights=bf16")
    assert r["kv_copy_factor"] == pytest.approx(copies)


def test_llamacpp_over_several_cards_gains_memory_not_speed():
    """docs/method.md section 5: llama.cpp's cards take turns within a step (whole layers each), so a step of one
    sequence reads at one card's bandwidth and hands the activations on once per boundary, never all-reduces."""
    one = report("model=llama-3.1-8b&card=rtx-4090&weights=q8_0&engine=llamacpp&batch=1&ctx=4096")
    two = report("model=llama-3.1-8b&card=rtx-4090&weights=q8_0&engine=llamacpp&batch=1&ctx=4096&gpus=2")
    s = parse("model=llama-3.1-8b&card=rtx-4090&weights=q8_0&engine=llamacpp&gpus=2").scenario
    hop_ms = (s.hidden * 2 / (s.link_gbs * 1e9) + s.link_us * 1e-6) * 1e3
    assert two["step_ms"] == pytest.approx(one["step_ms"] + hop_ms, rel=1e-9)
    assert two["free_gib"] > one["free_gib"] + 15
    tp = report("model=llama-3.1-8b&card=rtx-4090&weights=q8_0&engine=roofline&batch=1&ctx=4096&gpus=2")
    assert tp["comm_ms"] > two["comm_ms"] > 0


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(["llama-3.1-70b", "gpt-oss-120b", "qwen3-next-80b-a3b", "gemma-3-27b"]),
       st.sampled_from(["h100-sxm", "h200-sxm", "l40s", "b200"]),
       st.sampled_from(["vllm", "vllm-2025", "sglang", "trtllm", "trtllm-2024", "llamacpp", "roofline"]),
       st.sampled_from([1, 2, 4, 8]))
def test_the_fit_chart_adds_up_to_the_card(mid, card, engine, gpus):
    """docs/method.md section 8.2: the parts of a card's memory, read by hand, add up to the card."""
    p = parse(f"model={mid}&card={card}&engine={engine}&gpus={gpus}&weights=fp8")
    if p.errors:
        return
    stack = tables.memory_stack(p.scenario)
    kept = stack[stack["part"] != "short"]
    assert kept["gib_per_card"].min() >= -1e-9
    if not (stack["part"] == "short").any():
        assert kept["gib_per_card"].sum() == pytest.approx(p.scenario.mem_gib)


def test_llamacpp_allocates_the_cells_it_is_told_and_leaves_the_rest_free():
    """llama-server holds max_seqs slots of ctx tokens in one cache of n_ctx cells, padded to 256; what the card has
    beyond it stays free, and the sequences that fit count the room, capped at the slots."""
    r = report("engine=llamacpp&model=llama-3.1-8b&card=rtx-4090&ctx=1300")
    assert r["kv_tokens"] == 5376 and r["max_concurrency"] == pytest.approx(5376 / 1300)  # 4 x 1,300 -> 5,376
    assert r["kv_cache_gib"] == pytest.approx(5376 * 131072 / 2**30)
    assert r["free_gib"] > 10 * r["kv_cache_gib"] and r["max_batch"] > 4 and r["batch"] == 4
    assert set(r["reserve_gib_per_card"]) == {"CUDA context", "compute buffers"}
    vulkan = report("engine=llamacpp-vulkan&model=llama-3.1-8b&card=rtx-4090&ctx=1300")["reserve_gib_per_card"]
    assert set(vulkan) == {"Vulkan context", "compute buffers"}  # no CUDA context on the Vulkan backend
    # Without flash attention the scores of every head over every cell take the card: 4 x 32,768 cells at 512
    # tokens a step hold 8.3 GiB of scores, so fewer sequences of 32,768 tokens fit.
    on = report("engine=llamacpp&model=llama-3.1-8b&card=rtx-4090&ctx=32768")
    off = report("engine=llamacpp&model=llama-3.1-8b&card=rtx-4090&ctx=32768&flash_attn=0")
    assert off["reserve_gib_per_card"]["compute buffers"] == pytest.approx(4 * 512 * 131072 * 33 / 2**30 + 32 / 1024)
    assert off["free_gib"] < on["free_gib"] - 8 and off["max_batch"] < on["max_batch"]
    assert report("engine=llamacpp-2024&model=llama-3.1-8b&card=rtx-4090")["scenario"]["flash_attn"] == 0


def test_llamacpp_on_two_cards_holds_a_70b_model_with_room_for_its_slots():
    """70B at Q4_K_M over two 24 GB cards (whole layers each): 19.5 GiB of weights a card and a few hundred MiB of
    buffers leave room for four 1,300-token slots; the flat 4 GiB reserve of before said nothing fit."""
    r = report("engine=llamacpp&model=llama-3.1-70b&card=rtx-4090&gpus=2&weights=q4_k_m&in_tok=1000&out_tok=300")
    assert r["fits"] and r["max_batch"] >= 4 and r["batch"] == 4
    assert r["weights_loaded_gib"] == pytest.approx((r["weights_gib"] - 1.050673152e9 * 4.8213 / 8 / 2**30) / 2,
                                                    rel=1e-3)
    pinned = report("engine=llamacpp&model=llama-3.1-70b&card=rtx-4090&gpus=2&weights=q4_k_m&in_tok=1000&out_tok=300"
                    "&overhead_gib=4")
    assert pinned["reserve_gib_per_card"] == {"reserve (overhead_gib)": 4.0} and pinned["max_batch"] < 4


@pytest.mark.parametrize("link, printed", [
    # TensorRT-LLM issue #6294 (v0.20, trtllm-bench --kv_cache_free_gpu_mem_fraction 0.8, max_num_tokens 23552):
    # "Allocated 52.51 GiB for max tokens in paged KV cache (860320)"
    ("engine=trtllm&model=llama-3.1-8b&card=h100-pcie&weights=fp8&kv=fp8&mem_util=0.8&max_batched_tokens=23552", 52.51),
    # TensorRT-LLM PR #15734 (2026, an H200 at fraction 0.9, 163,840 bytes a token: Mistral Small 3.1 24B's shape):
    # "Allocated 81.90 GiB for max tokens in paged KV cache (536768)"
    ("engine=trtllm&model=custom&params_b=24&active_b=24&layers=40&heads=32&kv_heads=8&head_dim=128&hidden=5120"
     "&vocab=131072&weights=bf16&card=h200-sxm&mem_util=0.9", 81.90),
])
def test_the_current_tensorrt_llm_accounting_the_notes_quote(link, printed):
    """The PyTorch backend's own sizing, quoted beside the profile's fitted reserve (docs/calibration.md section 8)."""
    from calc import load
    assert memory.trtllm_torch_kv_gib(load(link).scenario) == pytest.approx(printed, rel=0.03)


def test_weights_larger_than_the_card_are_said_as_an_excess_not_a_negative_remainder():
    mem = memory.memory(load("model=llama-3.1-405b&weights=bf16").scenario)
    text = mem.sentence()
    assert mem.unclaimed_gib < 0
    assert f"together {-mem.unclaimed_gib:,.2f} GiB more than the {mem.card_gib:,.2f} GiB card holds" in text
    assert " -" not in text


def test_a_llamacpp_card_that_cannot_hold_the_weights_is_told_in_gib_first():
    from calc import notes
    s = parse("model=llama-3.1-70b&card=rtx-4090&engine=llamacpp-vulkan&weights=q4_k_m").scenario
    (said,) = [w for w in notes.scenario_warnings(s) if w.startswith("the weights do not fit")]
    card = memory.memory(s).card_gib
    assert f"the engine takes the card's {card:,.2f} GiB, where it allocates the" in said



def test_a_tiny_card_memory_reads_as_given_wherever_it_is_printed():
    """memory.gib_text: two decimals, or two significant figures below 0.01 GiB, at every place a card's memory
    is printed (the engine's share, the unclaimed remainder, the memo's card figures)."""
    import subprocess
    import sys
    assert memory.gib_text(79.2) == "79.20" and memory.gib_text(0.001) == "0.001" and memory.gib_text(0) == "0.00"
    out = subprocess.run([sys.executable, "-m", "calc", "--memo", "card=custom&mem_gib=0.001"],
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert "Custom card: 0.001 GiB" in out.stdout and "0.00 GiB" not in out.stdout


def test_weights_that_miss_vllms_share_by_a_little_are_told_the_larger_share():
    """gpt-oss-120b on one H100 under vLLM's 2025 accounting: 73.3 GiB needed against 90 % of 79.2 GiB; at
    mem_util 0.95 the same link holds a KV cache of the size the note gives (vLLM ~0.11 printed 1.71 GiB there at a
    smaller max_num_batched_tokens: cases/memory)."""
    from calc import memory, parse, report
    link = "model=gpt-oss-120b&card=h100-sxm&req_day=500000"
    mem = memory.memory(parse(link).scenario)
    assert mem.kv_cache_gib < 0
    text = mem.larger_share_text()
    larger = report(link + "&mem_util=0.95")
    assert larger["fits"] and text == (f"mem_util 0.95 (gpu_memory_utilization) leaves {larger['free_gib']:,.2f} GiB "
                                       "per card for the KV cache")
    assert memory.memory(parse("model=llama-3.1-405b&card=h100-sxm").scenario).larger_share_text() == ""  # far off
    assert memory.memory(parse(link + "&mem_util=0.95").scenario).larger_share_text() == ""  # it fits


def test_a_macs_gpu_holds_metals_working_set_of_the_unified_memory():
    """docs/method.md section 8.2: on an Apple machine (arch=apple) llama.cpp allocates within Metal's working set,
    two thirds of the unified memory up to 32 GiB and three quarters above: Llama 2 70B in Q4_0 (36.4 GiB of weights)
    does not fit a 48 GB M3 Max (36 GiB; XiongjieDai's run of it paged, at 3.1 tokens a second), fits a 64 GB one."""
    from calc import memory
    from calc.scenario import parse
    mac = ("model=custom&params_b=68.977&active_b=68.977&layers=80&heads=64&kv_heads=8&head_dim=128&hidden=8192"
           "&embed_b=0.262&card=custom&bw_tbs=0.4&tflops=16.4&arch=apple&weights=q4_0&kv=fp16&batch=1&ctx=512"
           "&engine=llamacpp-2024&mem_gib=")
    small, large = parse(mac + "48").scenario, parse(mac + "64").scenario
    assert memory.memory(small).total_gib == pytest.approx(36.0) and memory.max_batch(small, 512) == 0
    assert memory.memory(large).total_gib == pytest.approx(48.0) and memory.max_batch(large, 512) > 0
    assert memory.apple_working_set_gib(32) == pytest.approx(32 * 2 / 3)  # 21,845.34 MB on a 32 GB M2 Max
    assert "Metal's working set, 36.00 GiB of the 48.00 GiB of unified memory" in memory.memory(small).sentence()
    # Without the family it is a card of 48 GiB, where the weights fit.
    assert memory.max_batch(parse(mac.replace("&arch=apple", "") + "48").scenario, 512) > 0


def test_only_llamacpp_runs_on_a_macs_gpu():
    """docs/method.md section 5: a Mac's GPU (arch=apple) has Metal, which llama.cpp runs on and vLLM, SGLang and
    TensorRT-LLM do not: the family is refused beside them (naming arch, so the link's engine stays and the figures
    are a custom card's of no family), and llama.cpp and the roofline take it."""
    from calc.scenario import parse
    mac = "model=llama-3.1-8b&card=custom&mem_gib=64&bw_tbs=0.4&tflops=16.4&arch=apple&engine="
    for engine in ("vllm", "sglang", "trtllm", "vllm-2025"):
        parsed = parse(mac + engine)
        assert [e.key for e in parsed.errors] == ["arch"] and "does not run on an Apple GPU" in parsed.errors[0].reason
        assert (parsed.scenario.engine, parsed.scenario.arch) == (engine, "unknown")
    for engine in ("llamacpp", "llamacpp-2024", "roofline"):
        assert not parse(mac + engine).errors


def test_an_moe_shape_without_routed_expert_weights_loads_without_padding():
    """A custom MoE whose parameter total leaves its routed experts no weights (active = total) loads as stored under
    vLLM's MXFP4 kernels: nothing to pad (found by the reference-agreement test: it divided by an expert width of 0)."""
    link = ("model=custom&params_b=1&layers=1&kv_heads=1&experts=2&experts_active=1&active_b=1&kv_latent=16&window=1"
            "&weights_experts=mxfp4")
    for engine in ("vllm-2025", "vllm-0.21", "vllm-v0"):
        s = parse(f"{link}&engine={engine}").scenario
        assert memory.loaded_weight_bytes(s) == model.weight_bytes(s)
