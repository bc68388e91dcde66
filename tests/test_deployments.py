"""Memory as real deployments hold it: tensor-parallel KV copies, weights per part, named quantisation formats.

Each right value below is one a deployment was found to need; each test pins the whole kind of fault.
"""

from __future__ import annotations

import math

import pytest

from apptest import open_app, texts
from calc import catalogue, parse, report
from calc.scenario import WEIGHT_FORMATS

GIB = 2**30


# ---------------------------------------------------------------- tensor parallel keeps KV copies


@pytest.mark.parametrize("link, max_batch, copies", [
    ("model=llama-3.1-70b&card=h100-sxm&mem_gib=80&gpus=16&weights=bf16&kv=bf16&ctx=32768", 54, 2.0),
    ("model=deepseek-v3&card=h200-sxm&mem_gib=141&gpus=8&weights=fp8&kv=bf16&ctx=32768", 27, 8.0),
])
def test_tensor_parallel_counts_the_kv_copies(link, max_batch, copies):
    r = report(link + "&engine=roofline&overhead_gib=4")
    assert r["max_batch"] == max_batch
    assert r["kv_copy_factor"] == copies
    one_card = report(link.replace("gpus=", "gpus=1&x=") + "&engine=roofline&overhead_gib=4")
    assert r["kv_bytes_per_token"] == one_card["kv_bytes_per_token"]  # the model's own figure, no copies
    assert r["kv_gib_per_sequence"] == pytest.approx(copies * one_card["kv_gib_per_sequence"], rel=1e-12)
    # The bytes a step reads follow the same copies.
    assert r["kv_read_gib_per_step"] == pytest.approx(r["batch"] * r["kv_gib_per_sequence"], rel=1e-12)


@pytest.mark.parametrize("kv_heads, gpus, per_card", [(8, 1, 8), (8, 2, 4), (8, 3, 3), (8, 8, 1), (8, 16, 1),
                                                      (1, 4, 1), (5, 2, 3), (64, 64, 1), (6, 4, 2)])
def test_each_card_holds_ceil_of_kv_heads_over_cards(kv_heads, gpus, per_card):
    # The contract's tensor parallel (the roofline takes any number of cards; vLLM would refuse 3 cards for 64 heads)
    r = report(f"model=custom&params_b=1&layers=2&heads={8 * kv_heads}&kv_heads={kv_heads}&head_dim=128&gpus={gpus}"
               "&kv=fp16&ctx=1000&engine=roofline")
    assert r["kv_heads_per_card"] == per_card
    assert r["kv_copy_factor"] == pytest.approx(gpus * per_card / kv_heads)
    assert r["kv_gib_per_sequence"] * GIB == pytest.approx(2 * gpus * per_card * 128 * 2 * 2 * 1000)


def test_no_copies_when_the_cards_divide_the_heads():
    for gpus in (1, 2, 4, 8):
        r = report(f"model=llama-3.1-70b&gpus={gpus}&weights=fp8&ctx=8192")
        assert r["kv_copy_factor"] == 1 and r["kv_gib_per_sequence"] == pytest.approx(2.5)
        assert not any("copies" in w or "keeps" in w for w in r["warnings"])


def test_the_fit_page_shows_the_copies():
    at = open_app({"model": "llama-3.1-70b", "gpus": "16", "weights": "bf16"}, "pages/fit.py")
    assert not at.exception
    shown = texts(at.info)
    assert "copies the KV cache 2×" in shown and "1 of the model's 8 KV heads" in shown
    plain = open_app({"model": "llama-3.1-70b", "gpus": "8"}, "pages/fit.py")
    assert "copies the KV cache" not in texts(plain.info)


# ---------------------------------------------------------------- weights per part


def test_gpt_oss_holds_its_checkpoint_formats():
    r = report("model=gpt-oss-120b")
    assert r["scenario"]["weights"] == "bf16" and r["scenario"]["weights_experts"] == "mxfp4"
    # The checkpoint: routed experts in MXFP4 (4.25 bits), the rest in bf16. docs/method.md section 8 counts the experts'
    # biases with the experts (60.71 GiB); the files keep them in bf16 (65.25 GB = 60.77 GiB).
    assert r["weights_gib"] == pytest.approx(60.8, abs=0.1)
    m = catalogue.models()["gpt-oss-120b"]
    M = (m["params_b"] - m["active_b"]) / (1 - m["experts_active"] / m["experts"]) * 1e9
    assert r["weights_gib"] * GIB == pytest.approx((m["params_b"] * 1e9 - M) * 2 + M * 4.25 / 8, rel=1e-12)
    # int4-g128 everywhere but the embeddings and LM head, which an integer checkpoint keeps in bf16 (201,088 x 2,880
    # twice, untied: 1.16e9 weights at 16 bits instead of 4.25, 1.59 GiB more than every part at 4.25 bits, 57.8).
    assert report("model=gpt-oss-120b&weights=int4-g128")["weights_gib"] == pytest.approx(59.39, abs=0.05)
    assert report("model=gpt-oss-120b&weights=int4-g128&weights_embed=int4-g128")["weights_gib"] == \
        pytest.approx(57.8, abs=0.05)


def test_weights_given_alone_apply_to_every_part_and_experts_can_differ():
    both = parse("model=gpt-oss-20b&weights=fp8").scenario
    assert both.weights == both.weights_experts == "fp8"
    split = parse("model=mixtral-8x7b&weights=bf16&weights_experts=q4_k_m").scenario
    r_split, r_bf16 = report(split.to_query()), report("model=mixtral-8x7b&weights=bf16")
    assert r_split["weights_gib"] < r_bf16["weights_gib"]
    assert any("routed experts in q4_k_m" in w for w in r_split["warnings"])
    # A step of one token reads the dense part and its k experts, each part in its own format.
    m = catalogue.models()["mixtral-8x7b"]
    M = (m["params_b"] - m["active_b"]) / (1 - m["experts_active"] / m["experts"]) * 1e9
    D = m["params_b"] * 1e9 - M
    f1 = m["experts_active"] / m["experts"]
    expected = ((D - m["embed_b"] * 1e9) * 2 + M * f1 * WEIGHT_FORMATS["q4_k_m"] / 8) / GIB
    one = report(split.to_query().replace("batch=auto", "") + "&batch=1")
    assert one["weights_read_gib_per_step"] == pytest.approx(expected, rel=1e-9)


def test_dense_models_ignore_the_expert_format_and_say_so():
    r = report("model=llama-3.1-8b&weights=fp8&weights_experts=int4")
    assert r["weights_gib"] == pytest.approx(8.03e9 / GIB)
    assert any("weights_experts has no effect" in w for w in r["warnings"])


# ---------------------------------------------------------------- named formats with their bits and sources


@pytest.mark.parametrize("fmt, file_gib", [("q4_k_m", 39.6), ("q5_k_m", 46.5), ("q6_k", 53.9), ("q3_k_m", 31.9),
                                           ("iq4_xs", 35.3)])
def test_gguf_formats_size_llama_70b_as_its_published_files(fmt, file_gib):
    assert round(report(f"model=llama-3.1-70b&weights={fmt}")["weights_gib"], 1) == file_gib


@pytest.mark.parametrize("fmt, bits", [("mxfp4", 4.25), ("nvfp4", 4.5), ("int4-g128", 4.25), ("q8_0", 8.5),
                                       ("q4_0", 4.5), ("q2_k", 3.1593)])
def test_block_formats_carry_their_scales(fmt, bits):
    assert WEIGHT_FORMATS[fmt] == bits
    link = f"model=custom&params_b=8&weights={fmt}&weights_embed={fmt}"  # every part in the format
    assert report(link)["weights_gib"] * GIB == pytest.approx(8e9 * bits / 8)


def test_every_format_has_bits_a_source_and_a_date():
    table = catalogue.weight_formats()
    for name in ("q2_k", "q3_k_m", "q4_k_m", "q5_k_m", "q6_k", "iq4_xs", "mxfp4", "nvfp4"):
        assert name in table
    for name, row in table.items():
        assert 1 <= row["bits"] <= 32 and row["source"] and row["read_on"], name
        assert math.isfinite(row["bits"])


def test_switching_model_brings_in_and_drops_shipped_formats():
    from calc import with_change
    to_oss = parse(with_change(parse("model=llama-3.1-70b&weights=fp8").scenario.to_params(), "model",
                               "gpt-oss-120b")).scenario
    assert (to_oss.weights, to_oss.weights_experts) == ("bf16", "mxfp4")
    back = parse(with_change(to_oss.to_params(), "model", "llama-3.1-70b")).scenario
    assert (back.weights, back.weights_experts) == ("int4-g128", "int4-g128")
    kept = parse(with_change(parse("model=llama-3.1-70b&weights=fp8").scenario.to_params(), "model",
                             "llama-3.1-8b")).scenario
    assert kept.weights == "fp8"  # neither checkpoint ships its own format: the choice stays
