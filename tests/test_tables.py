"""Golden values for every table of ``calc.tables``, worked by hand (the arithmetic is in the comments).

The base case is a custom 70B dense model on a custom card with round figures, so each number can be
checked with a pencil:

* weights: 70e9 weights at 4 bits = 35e9 bytes = 35e9 / 2**30 GiB = 32.596 GiB (W4 below);
  8 bits: 70e9 bytes = 65.193 GiB; 16 bits: 140e9 bytes = 130.385 GiB.
* KV cache: 2 * 80 layers * 8 kv heads * 128 dims * 2 bytes = 327,680 bytes per token (320 KiB);
  one sequence of 8,192 tokens = 327,680 * 8,192 = 2 GiB + 0.5 GiB = 2.5 GiB; of 2,048 tokens 0.625 GiB;
  of 32,768 tokens 10 GiB; of 1,024 tokens 0.3125 GiB.
* card: 80 GiB, 2 TB/s and 1,000 TFLOP/s at efficiency 0.5, so BW = 1e12 bytes/s and F = 5e14 FLOP/s
  per card; 4 GiB reserved per card; 2.5 USD per card-hour; interconnect 100 GB/s and 10 µs.

Tensor parallel keeps whole KV heads: each of g cards holds ceil(8/g) heads, so the replica's cache per
sequence is g * ceil(8/g) / 8 times the model's own (1 for g = 2, 2 for g = 16).
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from calc import catalogue, parse, report, tables
from calc.scenario import with_change

GiB = 2**30
W4 = 35e9 / GiB   # 32.59629011154175 GiB
W8 = 70e9 / GiB   # 65.1925802230835 GiB
W16 = 140e9 / GiB  # 130.385160446167 GiB

BASE = {
    "engine": "roofline", "model": "custom", "params_b": "70", "layers": "80", "heads": "64", "kv_heads": "8", "head_dim": "128",
    "card": "custom", "mem_gib": "80", "bw_tbs": "2", "tflops": "1000", "eff": "0.5", "overhead_gib": "4",
    "weights": "4", "kv": "fp16", "ctx": "8192", "batch": "17", "attn": "1", "usd_hr": "2.5", "upkeep": "3600",
    "hours": "720", "duty": "0.5", "link_gbs": "100", "link_us": "10",
}
#: The seed link of docs/worked-examples.md on a card preset (figures from the catalogue).
SEED = {"engine": "roofline", "model": "custom", "params_b": "70", "layers": "80", "heads": "64", "kv_heads": "8", "head_dim": "128",
        "card": "custom", "mem_gib": "80", "bw_tbs": "3.35", "tflops": "989", "weights": "4", "kv": "fp16",
        "ctx": "8192", "attn": "0", "batch": "17", "duty": "0.3", "eff": "0.7", "overhead_gib": "4",
        "usd_hr": "2.5", "upkeep": "0"}


def sc(base=BASE, **over):
    """The scenario of ``base`` with overrides; the link must be accepted whole."""
    parsed = parse({**base, **{k: str(v) for k, v in over.items()}})
    assert not parsed.errors, [e.message for e in parsed.errors]
    return parsed.scenario


def approx(x):
    return pytest.approx(x, rel=1e-12, abs=1e-12)


def row(df, **match):
    """The one row of ``df`` whose columns equal ``match``."""
    mask = np.ones(len(df), dtype=bool)
    for col, value in match.items():
        mask &= (df[col] == value).to_numpy()
    hits = df[mask]
    assert len(hits) == 1, (match, hits)
    return hits.iloc[0]


# ------------------------------------------------------------------------------------------ memory_stack


PARTS = ["weights (as loaded)", "reserve (overhead_gib)", "KV cache at batch 17", "KV cache allocated, unused",
         "left by the engine"]


def test_memory_stack_one_card():
    df = tables.memory_stack(sc())
    assert list(df.columns) == ["part", "gib_per_card", "gib_total", "start_gib", "end_gib"]
    assert list(df["part"]) == PARTS
    # laid end to end on the card: each block starts where the one before ends, the last ends at the card's size
    assert list(df["start_gib"]) == [0.0, approx(W4), approx(W4 + 4), approx(W4 + 4 + 42.5), approx(80)]
    assert df["end_gib"].iloc[-1] == approx(80)
    # weights 32.596; reserve 4; cache 17 sequences * 2.5 GiB = 42.5; the rest of the cache the engine holds
    # 80 - 4 - 32.596 - 42.5 = 0.9037; the roofline takes the whole card, so it leaves nothing
    assert list(df["gib_total"]) == [approx(W4), approx(4.0), approx(42.5), approx(80 - W4 - 42.5 - 4), approx(0)]
    assert df["gib_total"].iloc[3] == pytest.approx(0.9037098884583, abs=1e-12)
    assert list(df["gib_per_card"]) == list(df["gib_total"])  # one card: the same figures
    assert df["gib_total"].sum() == approx(80)  # the parts add up to the card


def test_memory_stack_takes_an_explicit_batch_and_shows_a_shortfall():
    df = tables.memory_stack(sc(), batch=20)
    # 20 * 2.5 = 50 GiB of cache against a KV cache of 80 - 4 - 32.596 = 43.404: the pool is full, short by 6.596
    assert list(df["part"])[-1] == "short"
    assert df["part"].iloc[2] == "KV cache at batch 20, all there is (it needs 50.00 GiB)"
    assert df["gib_total"].iloc[2] == approx(80 - 4 - W4)
    assert df["gib_total"].iloc[3] == approx(0.0)
    assert df["gib_total"].iloc[-1] == pytest.approx(-6.59629011154175, abs=1e-12)
    assert df["gib_total"].iloc[:-1].sum() == approx(80)  # the blocks add up to the card


def test_memory_stack_auto_batch_uses_the_resolved_batch():
    # batch=auto with attn=1: the step never turns compute-bound (0.323 ms of compute per sequence against
    # 2.684 ms of cache reads), so auto = max_batch = floor((76 - 32.596) / 2.5) = floor(17.36) = 17.
    df = tables.memory_stack(sc(batch="auto"))
    assert df["gib_total"].iloc[2] == approx(17 * 2.5)


def test_memory_stack_two_cards():
    # g = 2: 2 * ceil(8/2) / 8 = 1, no copies. Weights 32.596 over both cards; reserve 2 * 4 = 8; cache
    # 17 * 2.5 = 42.5; the rest 2 * 80 - 32.596 - 42.5 - 8 = 76.904. Per card: half of each.
    df = tables.memory_stack(sc(gpus=2))
    total = [W4, 8.0, 42.5, 160 - W4 - 42.5 - 8, 0.0]
    assert list(df["gib_total"]) == [approx(t) for t in total]
    assert list(df["gib_per_card"]) == [approx(t / 2) for t in total]
    assert df["gib_per_card"].iloc[3] == pytest.approx(38.45185494422913, abs=1e-12)


def test_memory_stack_sixteen_cards_copies_kv_heads():
    # g = 16 with 8 KV heads: each card holds ceil(8/16) = 1 head, so the replica holds 16 heads' worth,
    # 16 * 1 / 8 = 2 times the model's cache: 17 * 2.5 * 2 = 85 GiB. Reserve 16 * 4 = 64;
    # the rest 16 * 80 - 32.596 - 85 - 64 = 1098.404 GiB; per card / 16.
    df = tables.memory_stack(sc(gpus=16))
    total = [W4, 64.0, 85.0, 1280 - W4 - 85 - 64, 0.0]
    assert list(df["gib_total"]) == [approx(t) for t in total]
    assert list(df["gib_per_card"]) == [approx(t / 16) for t in total]
    assert df["gib_per_card"].iloc[2] == approx(5.3125)  # 85 / 16


def test_memory_stack_three_cards_copy_part_of_the_heads():
    # g = 3: ceil(8/3) = 3 heads per card, 9 in all for 8: the cache is 9/8 of the model's,
    # 17 * 2.5 * 9/8 = 47.8125 GiB.
    df = tables.memory_stack(sc(gpus=3))
    assert df["gib_total"].iloc[2] == approx(47.8125)
    assert df["gib_total"].iloc[3] == approx(240 - W4 - 47.8125 - 12)


def test_memory_stack_of_an_engine_that_leaves_part_of_the_card():
    # mem_util 0.9: the engine takes 72 of the 80 GiB, and the 8 it leaves are their own block
    df = tables.memory_stack(sc(mem_util=0.9, batch=10))
    assert df["gib_total"].iloc[-1] == approx(8.0)
    assert df["gib_total"].iloc[3] == approx(72 - 4 - W4 - 25)
    assert df["gib_total"].sum() == approx(80)


# --------------------------------------------------------------------------------------------- fit_table

# Sequences per (weights row, context) worked by hand: free = g * (80 - 4) - W (GiB, all cards), and
# seqs = floor(free / (cache per sequence)), cache per sequence = 0.625 / 2.5 / 10 GiB at 2k / 8k / 32k
# times the copy factor.
FIT_CASES = {
    # g = 1: free 76 - W.  16-bit: 76 - 130.385 < 0 -> nothing fits.
    #   8-bit: 10.807 GiB -> 17.29 / 4.32 / 1.08 -> 17, 4, 1.   4-bit: 43.404 -> 69.45 / 17.36 / 4.34.
    1: {"16": (76 - W16, (0, 0, 0)), "8": (76 - W8, (17, 4, 1)), "4": (76 - W4, (69, 17, 4))},
    # g = 2 (copy factor 1): free 152 - W.  16-bit: 21.615 -> 34.58 / 8.65 / 2.16.
    #   8-bit: 86.807 -> 138.89 / 34.72 / 8.68.   4-bit: 119.404 -> 191.05 / 47.76 / 11.94.
    2: {"16": (152 - W16, (34, 8, 2)), "8": (152 - W8, (138, 34, 8)), "4": (152 - W4, (191, 47, 11))},
    # g = 16 (copy factor 2: 1.25 / 5 / 20 GiB per sequence): free 1216 - W.
    #   16-bit: 1085.615 -> 868.49 / 217.12 / 54.28.   8-bit: 1150.807 -> 920.65 / 230.16 / 57.54.
    #   4-bit: 1183.404 -> 946.72 / 236.68 / 59.17.
    16: {"16": (1216 - W16, (868, 217, 54)), "8": (1216 - W8, (920, 230, 57)), "4": (1216 - W4, (946, 236, 59))},
}


@pytest.mark.parametrize("gpus", sorted(FIT_CASES))
def test_fit_table_by_cards(gpus):
    df = tables.fit_table(sc(gpus=gpus))
    assert list(df.columns) == ["weights", "bits_per_weight", "weights_gib", "free_gib",
                                "seqs_at_2048", "seqs_at_8192", "seqs_at_32768", "quality", "quality_source",
                                "quality_url"]
    assert df["quality"].isna().all()  # bare bit counts are no published format
    assert df["quality_url"].isna().all()
    # The scenario's format is "4", one of the three default rows, so there are exactly three rows.
    assert list(df["weights"]) == ["16-bit", "8-bit", "4-bit"]
    assert list(df["bits_per_weight"]) == [16.0, 8.0, 4.0]
    assert list(df["weights_gib"]) == [approx(W16), approx(W8), approx(W4)]
    for fmt, (free, seqs) in FIT_CASES[gpus].items():
        r = row(df, weights=f"{fmt}-bit")
        assert r["free_gib"] == approx(free), (gpus, fmt)
        assert (r["seqs_at_2048"], r["seqs_at_8192"], r["seqs_at_32768"]) == seqs, (gpus, fmt)


def test_first_address_is_the_link_a_source_text_opens_with():
    # Punctuation that ends the sentence is not part of the address.
    assert catalogue.first_address("see https://a.org/x; read 2025-01-02 https://b.org") == "https://a.org/x"
    assert catalogue.first_address("(https://a.org/y).") == "https://a.org/y"
    assert catalogue.first_address("model card https://hf.co/m (table 2)") == "https://hf.co/m"
    assert catalogue.first_address("a paper, no address") is None


def test_fit_table_links_each_published_quality_figure_to_its_source():
    df = tables.fit_table(sc(weights="fp8"))
    r = row(df, weights="fp8 (8-bit)")
    assert r["quality_source"].startswith(r["quality_url"])
    assert r["quality_url"] == "https://huggingface.co/neuralmagic/Meta-Llama-3-8B-Instruct-FP8"


def test_fit_table_free_memory_is_negative_when_the_weights_do_not_fit():
    df = tables.fit_table(sc())
    # 76 - 130.385 = -54.385 GiB: shown as the shortfall, while the sequence counts stay at 0.
    assert df["free_gib"].iloc[0] == pytest.approx(-54.385160446167, abs=1e-12)
    assert df["seqs_at_2048"].dtype == np.int64


def test_fit_table_adds_the_scenario_named_format_and_takes_contexts_and_formats():
    # The scenario in int4-g128 (4.25 bits): a fourth row, labelled with its bits. An integer checkpoint keeps its
    # embeddings and LM head (the tied table, 131,072 x 8,192 = 1.0737e9 weights) in bf16:
    # 70e9 * 4.25 / 8 + 1.0737e9 * (16 - 4.25) / 8 = 38.7643e9 bytes = 36.102 GiB; free 76 - 36.102 = 39.898 GiB;
    # at 4,096 tokens (1.25 GiB) 31.92 -> 31; at 1,024 tokens (0.3125 GiB) 127.67 -> 127.
    df = tables.fit_table(sc(weights="int4-g128"), contexts=(4096, 1024))
    assert list(df["weights"]) == ["16-bit", "8-bit", "4-bit", "int4-g128 (4.25-bit)"]
    assert list(df.columns[4:6]) == ["seqs_at_4096", "seqs_at_1024"]
    r = df.iloc[3]
    W = 70e9 * 4.25 / 8 + 131072 * 8192 * (16 - 4.25) / 8
    assert r["bits_per_weight"] == 4.25
    assert r["weights_gib"] == approx(W / GiB)
    assert r["free_gib"] == approx(76 - W / GiB)
    assert (r["seqs_at_4096"], r["seqs_at_1024"]) == (31, 127)
    # Explicit formats: repeats dropped, named formats labelled with their bits, numbers as bits.
    df = tables.fit_table(sc(), contexts=(8192,), formats=["fp8", "6", "fp8"])
    assert list(df["weights"]) == ["fp8 (8-bit)", "6-bit"]
    # 6 bits: 52.5e9 bytes = 48.894 GiB; free 76 - 48.894 = 27.106 -> 10.84 sequences of 2.5 GiB -> 10.
    assert list(df["seqs_at_8192"]) == [4, 10]


def test_fit_table_gives_a_mixed_checkpoint_a_row_of_its_own():
    # MoE: P = 100B, Pa = 40B, 4 experts with 1 active: routed M = (100 - 40) / (1 - 1/4) = 80B,
    # the rest D = 20B. Weights in 8 bits, routed experts in 4 bits:
    #   checkpoint row: 20e9 * 8/8 + 80e9 * 4/8 = 20e9 + 40e9 = 60e9 bytes, 60e9 * 8 / 100e9 = 4.8 bits a weight;
    #   row "16": every weight in 16 bits = 200e9 bytes; "8": 100e9; "4": 50e9.
    s = sc(params_b=100, active_b=40, experts=4, experts_active=1, weights=8, weights_experts=4, gpus=4)
    df = tables.fit_table(s, contexts=(8192,))
    assert list(df["weights"]) == ["checkpoint: routed experts in 4-bit, the rest in 8-bit", "16-bit", "8-bit",
                                   "4-bit"]
    assert list(df["bits_per_weight"]) == [approx(4.8), 16, 8, 4]
    assert list(df["weights_gib"]) == [approx(60e9 / GiB), approx(200e9 / GiB), approx(100e9 / GiB),
                                       approx(50e9 / GiB)]
    # g = 4: copy factor 4 * ceil(8/4) / 8 = 1; free 4 * 76 - W = 304 - 55.879 = 248.121 GiB for the checkpoint
    # -> 248.121 / 2.5 = 99.25 -> 99 sequences; 16-bit: 304 - 186.265 = 117.735 -> 47.09 -> 47;
    # 8-bit: 304 - 93.132 = 210.868 -> 84.35 -> 84.
    assert list(df["free_gib"]) == [approx(304 - 60e9 / GiB), approx(304 - 200e9 / GiB), approx(304 - 100e9 / GiB),
                                    approx(304 - 50e9 / GiB)]
    assert list(df["seqs_at_8192"]) == [99, 47, 84, 102]  # 4-bit: (304 - 46.566) / 2.5 = 102.97 -> 102
    assert df["quality"].iloc[0] is None  # quality is published per format, not for a mix


def test_fit_table_has_no_checkpoint_row_when_every_part_is_in_the_weights_format():
    s = sc(params_b=100, active_b=40, experts=4, experts_active=1, weights=8, gpus=4)
    assert list(tables.fit_table(s, contexts=(8192,))["weights"]) == ["16-bit", "8-bit", "4-bit"]


# ------------------------------------------------------------------------------------------- speed_sweep


def test_speed_sweep_one_card_with_attention():
    # BW = 2e12 * 0.5 = 1e12 bytes/s, F = 1e15 * 0.5 = 5e14 FLOP/s.
    # weights: 35e9 bytes / 1e12 = 35 ms per step, whatever the batch (a dense model reads all of them).
    # cache: B * 2.5 GiB = B * 2,684,354,560 bytes / 1e12 = B * 2.68435456 ms.
    # compute: B * (2 * 70e9 + 4 * 64 heads * 128 * 80 layers * 8192) / 5e14
    #        = B * (1.4e11 + 2.147483648e10) / 5e14 = B * 0.322949673 ms.
    df = tables.speed_sweep(sc(), batches=np.array([1, 17, 18]))
    assert list(df.columns) == ["batch", "step_ms", "memory_ms", "weights_ms", "cache_ms", "compute_ms", "comm_ms",
                                "fixed_ms", "tok_s", "tok_s_per_seq", "bound", "fits_in_memory"]
    assert list(df["fixed_ms"]) == [0.0, 0.0, 0.0]
    assert list(df["weights_ms"]) == [approx(35.0)] * 3
    assert list(df["cache_ms"]) == [approx(b * 2.68435456) for b in (1, 17, 18)]
    assert list(df["compute_ms"]) == [approx(b * 0.32294967296) for b in (1, 17, 18)]
    assert list(df["comm_ms"]) == [0.0, 0.0, 0.0]
    step = [35 + b * 2.68435456 for b in (1, 17, 18)]  # memory-bound: 37.684, 80.634, 83.318 ms
    assert list(df["memory_ms"]) == [approx(x) for x in step]
    assert list(df["step_ms"]) == [approx(x) for x in step]
    assert list(df["tok_s"]) == [approx(b * 1e3 / x) for b, x in zip((1, 17, 18), step, strict=True)]
    assert df["tok_s"].iloc[0] == pytest.approx(26.5362114, rel=1e-8)  # 1000 / 37.68435456
    assert list(df["tok_s_per_seq"]) == [approx(1e3 / x) for x in step]
    assert list(df["bound"]) == ["memory"] * 3
    # max batch at 8192: floor((76 - 32.596) / 2.5) = 17, so 18 does not fit.
    assert list(df["fits_in_memory"]) == [True, True, False]


def test_speed_sweep_fixed_time_per_layer_and_weights_below_8_bits():
    # 80 layers: (step_us + L*layer_us) = (500 + 80*100) µs = 8.5 ms added to every step.
    # 4-bit weights: 35e9 bytes / 1e12 = 35 ms; at eff_dequant 0.5 they read at half that bandwidth, 70 ms.
    # 8-bit weights are not unpacked: 70e9 bytes / 1e12 = 70 ms whatever eff_dequant says.
    base = tables.speed_sweep(sc(), batches=np.array([1, 4]))
    slow = tables.speed_sweep(sc(step_us=500, layer_us=100, eff_dequant=0.5), batches=np.array([1, 4]))
    assert list(slow["fixed_ms"]) == [approx(8.5)] * 2
    assert list(base["weights_ms"]) == [approx(35.0)] * 2
    assert list(slow["weights_ms"]) == [approx(70.0)] * 2
    assert list(slow["step_ms"]) == [approx(70.0 + b * 2.68435456 + 8.5) for b in (1, 4)]
    int8 = tables.speed_sweep(sc(weights="int8", weights_embed="int8", eff_dequant=0.5), batches=np.array([1]))
    assert int8["weights_ms"].iloc[0] == approx(70.0)


def test_speed_sweep_without_attention_turns_compute_bound():
    # attn=0: no cache reads, compute B * 1.4e11 / 5e14 = B * 0.28 ms against 35 ms of weights:
    # B = 100 -> 28 ms of compute, step 35 ms, 2,857.14 tok/s; B = 200 -> 56 ms > 35 ms: compute-bound,
    # 200 / 0.056 = 3,571.43 tok/s, 17.857 tok/s per sequence.
    df = tables.speed_sweep(sc(attn=0), batches=[100, 200])
    assert list(df["cache_ms"]) == [0.0, 0.0]
    assert list(df["compute_ms"]) == [approx(28.0), approx(56.0)]
    assert list(df["step_ms"]) == [approx(35.0), approx(56.0)]
    assert list(df["tok_s"]) == [approx(100 / 0.035), approx(200 / 0.056)]
    assert list(df["tok_s_per_seq"]) == [approx(1 / 0.035), approx(1 / 0.056)]
    assert list(df["bound"]) == ["memory", "compute"]


def test_speed_sweep_at_another_context_and_default_batches():
    # n = 2048: cache per sequence 0.625 GiB = 671,088,640 bytes -> B * 0.67108864 ms; attention FLOPs a
    # quarter of 8192's: (1.4e11 + 5.36870912e9) / 5e14 = 0.290737418 ms per sequence.
    # Max batch at 2048: floor(43.404 / 0.625) = 69.
    df = tables.speed_sweep(sc(), n=2048)
    assert len(df) == 1024 and list(df["batch"][:3]) == [1, 2, 3] and df["batch"].iloc[-1] == 1024
    first = df.iloc[0]
    assert first["cache_ms"] == approx(0.67108864)
    assert first["compute_ms"] == approx(0.29073741824)
    assert first["step_ms"] == approx(35.67108864)
    assert int(df["fits_in_memory"].sum()) == 69 and bool(df["fits_in_memory"].iloc[68])


def test_speed_sweep_two_cards():
    # g = 2 (copy factor 1): BW = 2e12, F = 1e15. weights 35e9 / 2e12 = 17.5 ms; cache B * 1.34217728 ms;
    # compute B * 1.6147483648e11 / 1e15 = B * 0.16147483648 ms.
    # comm: 2 * 80 layers * (2 * (2 - 1)/2 * B * 8192 * 2 bytes / 100e9 + 10e-6)
    #     = 160 * (B * 1.6384e-7 + 1e-5) s = B * 0.0262144 ms + 1.6 ms.
    # B = 1: step 17.5 + 1.34217728 + 1.6262144 = 20.46839168 ms.
    df = tables.speed_sweep(sc(gpus=2), batches=[1, 64])
    assert list(df["weights_ms"]) == [approx(17.5)] * 2
    assert list(df["cache_ms"]) == [approx(1.34217728), approx(64 * 1.34217728)]
    assert list(df["comm_ms"]) == [approx(1.6262144), approx(64 * 0.0262144 + 1.6)]
    assert df["step_ms"].iloc[0] == approx(20.46839168)
    # max batch: floor((152 - 32.596) / 2.5) = floor(47.76) = 47
    assert list(df["fits_in_memory"]) == [True, False]


def test_speed_sweep_sixteen_cards_reads_the_copied_cache():
    # g = 16: BW = 16e12, F = 8e15. weights 35e9 / 16e12 = 2.1875 ms; the cache holds 2 copies:
    # 2 * 2,684,354,560 / 16e12 = 0.33554432 ms per sequence; compute 1.6147483648e11 / 8e15 = 0.0201843546 ms.
    # comm: 160 * (2 * 15/16 * B * 16384 / 100e9 + 1e-5) = 160 * (B * 3.072e-7 + 1e-5) s = B * 0.049152 + 1.6 ms.
    # B = 1: 2.1875 + 0.33554432 + 1.649152 = 4.17219632 ms.
    df = tables.speed_sweep(sc(gpus=16), batches=[1, 236, 237])
    first = df.iloc[0]
    assert first["weights_ms"] == approx(2.1875)
    assert first["cache_ms"] == approx(0.33554432)
    assert first["compute_ms"] == approx(0.020184354560)
    assert first["comm_ms"] == approx(1.649152)
    assert first["step_ms"] == approx(4.17219632)
    # max batch: floor((1216 - 32.596) / 5) = floor(236.68) = 236
    assert list(df["fits_in_memory"]) == [True, True, False]


# ------------------------------------------------------------------------------------------ cost surface

# Cost case: attn=0 (step = max(35 ms, B * 0.28 ms)) at ctx 1024, where memory holds
# floor(43.404 / 0.3125) = 138 sequences. rent = g * usd_hr * step / (3600 * B * duty) * 1e6;
# upkeep = upkeep * step / (B * 3600 * hours * duty) * 1e6 with upkeep 3600 USD and 720 hours.


def cost_case(**over):
    return sc(attn=0, ctx=1024, **over)


def test_cost_surface_hand_worked_cells():
    rent_total, rent, reachable = tables.cost_surface(cost_case(), batches=np.array([1, 100, 200]),
                                                      duties=np.array([0.5, 1.0]))
    assert rent_total.shape == rent.shape == reachable.shape == (2, 3)  # (duties, batches)
    # B = 100, duty 0.5: step 35 ms; rent 2.5e6 * 0.035 / (3600 * 100 * 0.5) = 87,500 / 180,000 = 35/72;
    # upkeep 3600e6 * 0.035 / (100 * 3600 * 720 * 0.5) = 35,000 / 36,000 = 35/36; total 105/72 = 1.4583.
    assert rent[0, 1] == approx(35 / 72)
    assert rent_total[0, 1] == approx(105 / 72)
    # B = 200, duty 1: step 56 ms; rent 2.5e6 * 0.056 / (3600 * 200) = 7/36; upkeep 1e6 * 0.056 / (200 * 720)
    # = 7/18; total 21/36 = 0.5833.
    assert rent[1, 2] == approx(7 / 36)
    assert rent_total[1, 2] == approx(21 / 36)
    # B = 1, duty 0.5: rent 2.5e6 * 0.035 / 1800 = 48.611; upkeep 1e6 * 0.035 / 360 = 97.222; total 145.833.
    assert rent[0, 0] == approx(875 / 18)
    assert rent_total[0, 0] == approx(875 / 6)
    # Memory holds 138 sequences at 1,024 tokens: 1 and 100 are reachable, 200 is not (on every duty row).
    assert reachable.tolist() == [[True, True, False], [True, True, False]]


def test_cost_surface_default_grid_and_unpriced_card():
    total, rent, reachable = tables.cost_surface(cost_case())
    assert total.shape == (100, 1024)  # DUTIES x batch_grid
    assert tables.DUTIES[0] == pytest.approx(0.01) and tables.DUTIES[-1] == 1.0
    assert int(reachable[0].sum()) == 138
    # Duty 1 (last row), B = 100 (column 99): half the duty-0.5 cell, 105/144.
    assert total[-1, 99] == approx(105 / 144)
    unpriced = cost_case().model_copy(update={"usd_hr": None})
    total, rent, _ = tables.cost_surface(unpriced, batches=np.array([100]), duties=np.array([0.5]))
    assert math.isnan(rent[0, 0]) and math.isnan(total[0, 0])


def test_cost_surface_on_several_cards_multiplies_the_rent():
    # g = 2, B = 100, duty 0.5, attn=0: weights 17.5 ms, compute 100 * 1.4e11 / 1e15 = 14 ms,
    # comm 100 * 0.0262144 + 1.6 = 4.22144 ms, step 17.5 + 4.22144 = 21.72144 ms.
    # rent 2 * 2.5e6 * 0.02172144 / (3600 * 100 * 0.5) = 108,607.2 / 180,000 = 0.603372;
    # upkeep 1e6 * 0.02172144 / (100 * 360) = 0.603373 (the same here: 2 * 2.5 USD/h * 720 h = 3,600 USD).
    total, rent, _ = tables.cost_surface(cost_case(gpus=2), batches=np.array([100]), duties=np.array([0.5]))
    assert rent[0, 0] == approx(2 * 2.5e6 * 0.02172144 / 180_000)
    assert rent[0, 0] == pytest.approx(0.60337333, rel=1e-7)
    assert total[0, 0] == approx(2 * 0.60337333333333)


def test_cost_surface_frame_is_the_long_form():
    df = tables.cost_surface_frame(cost_case(), np.array([1, 100, 200]), np.array([0.5, 1.0]))
    assert list(df.columns) == ["batch", "duty", "usd_per_mtok", "rent_usd_per_mtok", "reachable"]
    assert len(df) == 6
    # Row-major over (duty, batch): duty 0.5 with batches 1, 100, 200, then duty 1.0.
    assert list(df["batch"]) == [1, 100, 200, 1, 100, 200]
    assert list(df["duty"]) == [0.5, 0.5, 0.5, 1.0, 1.0, 1.0]
    cell = row(df, batch=100, duty=0.5)
    assert cell["usd_per_mtok"] == approx(105 / 72) and cell["rent_usd_per_mtok"] == approx(35 / 72)
    assert bool(cell["reachable"])
    cell = row(df, batch=200, duty=1.0)
    assert cell["usd_per_mtok"] == approx(21 / 36) and not bool(cell["reachable"])


def test_cost_by_duty():
    df = tables.cost_by_duty(cost_case(), batches=[100, 1, 100, 200])
    assert list(df.columns) == ["batch", "fits_in_memory", "tok_s", "duty", "rent_usd_per_mtok",
                                "upkeep_usd_per_mtok", "usd_per_mtok"]
    # Repeated batches dropped, order kept; the default duties 0.1, 0.3, 0.6, 1.0 for each.
    assert list(df["batch"]) == [100] * 4 + [1] * 4 + [200] * 4
    assert list(df["duty"][:4]) == [0.1, 0.3, 0.6, 1.0]
    # B = 100: 2,857.14 tok/s; duty 1: rent 2.5e6 * 0.035 / 360,000 = 35/144 = 0.2431,
    # upkeep 1e6 * 0.035 / 72,000 = 35/72 = 0.4861; duty 0.1: ten times both (2.431, 4.861).
    r = row(df, batch=100, duty=1.0)
    assert r["tok_s"] == approx(100 / 0.035)
    assert (r["rent_usd_per_mtok"], r["upkeep_usd_per_mtok"], r["usd_per_mtok"]) == (
        approx(35 / 144), approx(35 / 72), approx(105 / 144))
    r = row(df, batch=100, duty=0.1)
    assert r["rent_usd_per_mtok"] == approx(350 / 144) and r["upkeep_usd_per_mtok"] == approx(350 / 72)
    # B = 1, duty 0.3: step 35 ms; rent 2.5e6 * 0.035 / (3600 * 0.3) = 81.019; upkeep 1e6 * 0.035 / 216 = 162.037
    r = row(df, batch=1, duty=0.3)
    assert r["usd_per_mtok"] == approx(2.5e6 * 0.035 / 1080 + 1e6 * 0.035 / 216)
    assert r["usd_per_mtok"] == pytest.approx(243.05555555, rel=1e-9)
    # Memory holds 138 sequences at 1,024 tokens.
    assert list(df.drop_duplicates("batch")["fits_in_memory"]) == [True, True, False]


# ------------------------------------------------------------------------------------- catalogue tables


def test_models_table():
    df = tables.models_table()
    assert list(df["id"]) == list(catalogue.models())
    r = row(df, id="llama-3.1-70b")
    # 2 * 80 layers * 8 heads * 128 dims * 2 bytes = 327,680 bytes; 70.554e9 * 2 bytes / 2**30 = 131.417 GiB.
    assert r["kv_bytes_per_token_16bit"] == 327_680
    assert r["weights_gib_16bit"] == approx(141.108e9 / GiB)
    assert r["weights_gib_16bit"] == pytest.approx(131.4170659, rel=1e-9)
    assert (r["layers"], r["heads"], r["kv_heads"], r["head_dim"], r["hidden"]) == (80, 64, 8, 128, 8192)
    assert pd.isna(r["experts"]) and pd.isna(r["kv_latent"]) and pd.isna(r["window"])  # blank, not 0
    r = row(df, id="deepseek-v3")
    # MLA: 61 layers * 576 latent * 2 bytes = 70,272 bytes per token; every weight in 16 bits:
    # 671.026e9 * 2 / 2**30 = 1,249.88 GiB.
    assert r["kv_bytes_per_token_16bit"] == 70_272
    assert r["weights_gib_16bit"] == approx(1342.052e9 / GiB)
    assert r["weights_gib_16bit"] == pytest.approx(1249.883324, rel=1e-9)
    assert (r["experts"], r["experts_active"], r["kv_latent"]) == (256, 8, 576)
    assert str(df["experts"].dtype) == "Int64"


def test_cards_table():
    df = tables.cards_table()
    assert list(df["id"]) == list(catalogue.cards())
    r = row(df, id="a100-80gb")
    # 81,920 MiB as the driver reports it = 80 GiB; 312 TFLOP/s / 2.039 TB/s = 153.02 FLOP per byte.
    assert (r["mem_gib"], r["mem_mib"], r["bw_tbs"], r["bf16_tflops"]) == (80.0, 81920, 2.039, 312.0)
    assert r["flop_per_byte_bf16"] == approx(312 / 2.039)
    assert r["flop_per_byte_bf16"] == pytest.approx(153.016184, rel=1e-8)
    assert pd.isna(r["fp8_tflops"])  # the A100 has no fp8 units
    r = row(df, id="h100-sxm")
    # 81,559 MiB / 1024 = 79.647 GiB (the driver's figure, not the 80 GB label)
    assert (r["mem_mib"], r["mem_gib"]) == (81559, 81559 / 1024)
    assert r["flop_per_byte_bf16"] == approx(989 / 3.35)  # 295.22
    assert pd.isna(row(df, id="mi325x")["mem_mib"])  # no driver figure found: blank
    assert str(df["mem_mib"].dtype) == "Int64"
    # the boost clock with its source; none published for the B200: blank, and the source says so
    assert (r["clock_ghz"], "1.98" in r["clock_source"]) == (1.98, True)
    assert pd.isna(row(df, id="b200")["clock_ghz"]) and row(df, id="b200")["clock_source"].startswith("not found")


def test_apis_table():
    df = tables.apis_table()
    assert list(df["id"]) == list(catalogue.apis())
    assert list(df.columns) == ["id", "provider", "model", "family", "kind", "api_in", "api_out", "source",
                                "read_on", "tier_above_tok", "tier_api_in", "tier_api_out", "tier_source",
                                "tier_read_on"]
    r = row(df, id="gemini/gemini-2.5-pro")
    assert (r["api_in"], r["api_out"]) == (1.25, 10.0)
    # Prompts above 200,000 tokens are billed at twice the input and 1.5 times the output price.
    assert (r["tier_above_tok"], r["tier_api_in"], r["tier_api_out"]) == (200_000, 2.5, 15.0)
    r = row(df, id="azure_ai/deepseek-v3")
    assert (r["api_in"], r["api_out"]) == (1.14, 4.56)
    assert pd.isna(r["tier_above_tok"])  # no long-prompt tier: blank
    assert str(df["tier_above_tok"].dtype) == "Int64"


# ------------------------------------------------------------------------------------------ compare_cards


def test_compare_cards():
    # The seed link (70B at 4 bits, batch 17, attn=0, duty 0.3, no upkeep) moved to catalogue cards.
    df = tables.compare_cards(sc(SEED), ["a100-80gb", "l4", "h100-sxm", "a100-80gb"])
    assert list(df["card"]) == ["a100-80gb", "l4", "h100-sxm"]  # repeats dropped
    a100 = row(df, card="a100-80gb")
    # A100 80GB: 80 GiB, 2.039 TB/s, 312 TFLOP/s bf16, 1.39 USD/h. BW = 2.039e12 * 0.7 = 1.4273e12,
    # F = 312e12 * 0.7 = 2.184e14. Free 76 - 32.596 = 43.404 GiB -> 17 sequences of 2.5 GiB.
    # Step at 17: weights 35e9 / 1.4273e12 = 24.5218 ms > compute 17 * 1.4e11 / 2.184e14 = 10.897 ms.
    step_s = 35e9 / 1.4273e12
    assert (a100["mem_gib"], a100["bw_tbs"], a100["tflops"], a100["usd_hr"]) == (80.0, 2.039, 312.0, 1.39)
    assert bool(a100["fits"]) and a100["max_batch"] == 17 and a100["batch"] == 17
    assert a100["step_ms"] == approx(step_s * 1e3)
    assert a100["step_ms"] == pytest.approx(24.52182442, rel=1e-8)
    assert a100["tok_s"] == approx(17 / step_s)  # 693.26
    # Break-even: (35e9 / 1.4273e12) / (1.4e11 / 2.184e14) = 24.5218 ms / 0.641026 ms = 38.25 > 17:
    # memory caps the batch.
    assert a100["break_even_batch"] == approx(step_s / (1.4e11 / 2.184e14))
    assert bool(a100["memory_caps_batch"])
    # Rent at duty 0.3: 1.39e6 * step / (3600 * 17 * 0.3) = 1.39e6 * 0.0245218 / 18,360 = 1.8565 USD per 1M.
    assert a100["usd_per_mtok"] == approx(1.39e6 * step_s / 18_360)
    assert a100["usd_per_mtok"] == pytest.approx(1.856499, rel=1e-6)
    # The traffic's bill on that card: the Decision page's (every replica's rent, no upkeep in the seed).
    moved = with_change(sc(SEED).to_params(), "card", "a100-80gb")
    assert a100["self_host_usd_month"] == approx(report(moved)["self_host_usd_month"])
    assert a100["self_host_usd_month"] == approx(a100["replicas"] * 1.39 * 720)
    # H100 SXM at the driver's 79.65 GiB: free 75.647 - 32.596 = 43.051 -> 17 sequences; 3.35 TB/s:
    # step 35e9 / 2.345e12 = 14.925 ms (docs/worked-examples.md), rent 2.5e6 * 0.0149254 / 18,360 = 2.0323.
    h100 = row(df, card="h100-sxm")
    assert h100["mem_gib"] == 81559 / 1024 and h100["max_batch"] == 17
    assert h100["step_ms"] == approx(35e9 / 2.345e12 * 1e3)
    assert h100["usd_per_mtok"] == approx(2.5e6 * (35e9 / 2.345e12) / 18_360)
    # L4: 23,034 MiB = 22.49 GiB, less 4 reserved, cannot hold 32.6 GiB of weights: no speed, no price.
    l4 = row(df, card="l4")
    assert not bool(l4["fits"]) and l4["max_batch"] == 0
    for col in ("step_ms", "tok_s", "usd_per_mtok", "break_even_batch", "usd_hr", "self_host_usd_month"):
        assert math.isnan(l4[col]), col


def test_batches_past_the_engines_cap_are_not_drawn_as_reachable():
    """llama.cpp schedules 4 sequences per step (max_seqs): a batch memory holds but the engine never runs is
    marked like one memory cannot hold, on the Speed and Cost pages' tables."""
    from calc import parse
    s = parse("engine=llamacpp&model=llama-3.1-8b&card=rtx-4090&weights=q4_k_m").scenario
    assert s.max_seqs == 4
    sweep = tables.speed_sweep(s, batches=np.array([1, 4, 5, 16]))
    assert list(sweep["fits_in_memory"]) == [True, True, False, False]
    by_duty = tables.cost_by_duty(s, [4, 8])
    assert set(by_duty[by_duty["batch"] == 8]["fits_in_memory"]) == {False}


def test_the_cards_comparison_gives_the_decision_pages_bill_on_each_card():
    """One link, one bill: the comparison's bill for the scenario's own card is the Decision page's, replicas and all."""
    from calc import evaluate, parse
    from calc.tables import compare_cards
    link = "model=llama-3.1-70b&card=rtx-4090&gpus=2&engine=llamacpp&weights=q4_k_m"
    ev = evaluate(parse(link))
    row = compare_cards(ev.scenario, ["rtx-4090", "l40s"]).set_index("card").loc["rtx-4090"]
    assert ev.decision.replicas > 1 and row["replicas"] == ev.decision.replicas
    assert row["self_host_usd_month"] == pytest.approx(ev.decision.self_host_usd_month)


def test_memory_stack_names_a_hybrids_state_beside_its_cache():
    # Qwen3.5-35B-A3B: 30 of 40 layers keep a state instead of a cache; the block holds both.
    df = tables.memory_stack(parse({"model": "qwen3.5-35b-a3b", "card": "h100-sxm"}).scenario, batch=4)
    assert "KV cache and state at batch 4" in list(df.part)
    assert "KV cache at batch 17" in list(tables.memory_stack(sc()).part)


def test_a_card_the_set_up_cannot_run_on_is_not_priced_with_defaults():
    """TensorRT-LLM runs NVFP4 weights and an FP8 cache only on cards with such tensor cores: on an A100 or an L40S
    the calculator refuses the link, so the comparison gives those cards no figures and says why (it priced them
    with the refused inputs' defaults: an L40S at 9,688 USD a month, cheaper than the B200 the link named)."""
    from calc.tables import compare_cards
    s = sc(dict(model="qwen3-30b-a3b", card="b200", weights="nvfp4", kv="fp8", compute="fp4", gpus="1",
                engine="trtllm", req_day="3000000"))
    df = compare_cards(s, ["b200", "a100-80gb", "l40s"]).set_index("card")
    assert df.loc["b200", "fits"] and df.loc["b200", "self_host_usd_month"] > 0 and pd.isna(df.loc["b200", "refused"])
    for card, name, too in (("a100-80gb", "A100 80GB SXM", ", kv"), ("l40s", "L40S 48 GB", "")):  # the L40S has FP8
        row = df.loc[card]
        assert not row["fits"] and pd.isna(row["tok_s"]) and pd.isna(row["self_host_usd_month"])
        assert row["usd_hr"] == catalogue.cards()[card]["usd_hr"]  # the datasheet's rent, as for any other card
        assert row["refused"] == (f"weights=nvfp4: TensorRT-LLM runs nvfp4 weights on cards with FP4 tensor cores, and "
                                  f"{name} has none (refused too: weights_experts, weights_attn, weights_embed{too})")


def test_the_by_batch_sweeps_reach_the_batch_the_scenario_can_serve():
    """The Speed, Cost and Levers charts stopped at batch 1,024 while Qwen3-30B-A3B in NVFP4 on a B200 serves 2,048
    (the engine's max_seqs; memory holds 2,375): the sweeps now run to the power of two at or above what memory
    holds, 1,024 at least and 16,384 at most."""
    from calc import memory
    s = sc(dict(model="qwen3-30b-a3b", card="b200", weights="nvfp4", kv="fp8", compute="fp4", gpus="1",
                engine="trtllm", req_day="3000000"))
    held = int(memory.max_batch(s, s.ctx))
    assert held == 2375 and tables.sweep_top(s) == 4096
    sweep = tables.speed_sweep(s)
    assert sweep["batch"].max() == 4096 and sweep.loc[sweep["batch"] == 2048, "fits_in_memory"].item()
    assert not sweep.loc[sweep["batch"] == 2049, "fits_in_memory"].item()  # max_seqs: the engine stops there
    assert tables.cost_batches(s).max() == 4096 and tables.spec_curve(s)["batch"].max() == 4096
    assert tables.sweep_top(sc(SEED)) == 1024
    assert tables.sweep_top(sc(dict(model="llama-3.2-1b", card="b200", weights="fp8", kv="fp8", ctx="64"))) == 16384
    assert tables.powers_of_two(4096) == [1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096]
