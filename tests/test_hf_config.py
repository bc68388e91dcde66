"""calc.hf_config: Hugging Face config.json -> custom-model link keys.

The fixtures are real published configs (origins in tests/fixtures/hf/SOURCES.md); the
reference totals are the published or independently computed parameter counts.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest

from calc.hf_config import HFConfigError, count_parameters, from_hf_config, from_hf_config_json

FIXTURES = Path(__file__).parent / "fixtures" / "hf"

LINK_KEYS = {
    "model", "params_b", "active_b", "layers", "heads", "kv_heads", "head_dim", "hidden",
    "experts", "experts_active", "kv_latent", "window", "window_layers", "embed_b",
}
INT_KEYS = LINK_KEYS - {"model", "params_b", "active_b", "embed_b"}


def load(name: str) -> dict:
    return json.loads((FIXTURES / f"{name}.json").read_text())


def near(value: float, reference: float, rel: float = 0.005) -> bool:
    return abs(value - reference) <= rel * reference


# (fixture, reference total B, reference active B or None for dense)
REFERENCES = [
    ("llama-3.1-8b", 8.030261248, None),
    ("llama-3.1-70b", 70.554, None),
    ("llama-2-70b", 68.98, None),
    ("mixtral-8x7b", 46.703, 12.88),
    ("deepseek-v3", 671.0, 37.5),
    ("gemma-2-9b", 9.242, None),
    ("gemma-2-27b", 27.227, None),
    ("qwen2.5-7b", 7.616, None),
    ("qwen3-8b", 8.191, None),
    ("gpt-oss-20b", 20.915, 4.187),
]
ALL_FIXTURES = sorted(p.stem for p in FIXTURES.glob("*.json"))


# ---------------------------------------------------------------- real numbers

@pytest.mark.parametrize("name,total,active", REFERENCES)
def test_totals_match_references(name, total, active):
    keys = from_hf_config(load(name))
    assert near(keys["params_b"], total), (name, keys["params_b"], total)
    if active is None:
        assert keys["active_b"] == keys["params_b"]
        assert keys["experts"] == 0 and keys["experts_active"] == 0
    else:
        assert near(keys["active_b"], active), (name, keys["active_b"], active)


def test_llama_3_1_8b_exact_count_and_kv_bytes():
    keys = from_hf_config(load("llama-3.1-8b"))
    assert round(keys["params_b"] * 1e9) == 8_030_261_248  # the Hub's safetensors total
    assert (keys["layers"], keys["heads"], keys["kv_heads"], keys["head_dim"]) == (32, 32, 8, 128)
    assert keys["hidden"] == 4096
    kv_bytes_16bit = 2 * keys["layers"] * keys["kv_heads"] * keys["head_dim"] * 2
    assert kv_bytes_16bit == 131_072
    assert keys["embed_b"] == pytest.approx(128_256 * 4096 / 1e9)
    assert keys["window"] == keys["window_layers"] == keys["kv_latent"] == 0


def test_llama_70b_shapes():
    new, old = from_hf_config(load("llama-3.1-70b")), from_hf_config(load("llama-2-70b"))
    assert new["params_b"] == pytest.approx(70.553706496)
    assert old["params_b"] == pytest.approx(68.976648192)
    for keys in (new, old):
        assert (keys["layers"], keys["heads"], keys["kv_heads"], keys["head_dim"]) == (80, 64, 8, 128)
        assert 2 * keys["layers"] * keys["kv_heads"] * keys["head_dim"] * 2 == 327_680


def test_mixtral_experts():
    keys = from_hf_config(load("mixtral-8x7b"))
    assert (keys["experts"], keys["experts_active"]) == (8, 2)
    assert near(keys["params_b"], 46.70) and near(keys["active_b"], 12.88)
    assert keys["window"] == 0  # "sliding_window": null
    # The routed experts are the whole difference: 6 unused experts x 32 layers x 3 matrices.
    unused = (keys["params_b"] - keys["active_b"]) * 1e9
    assert round(unused) == 6 * 32 * 3 * 4096 * 14336


def test_deepseek_v3_mla_and_moe():
    keys = from_hf_config(load("deepseek-v3"))
    assert near(keys["params_b"], 671.0) and near(keys["active_b"], 37.5)
    assert keys["kv_latent"] == 512 + 64
    assert keys["kv_heads"] == keys["heads"] == 128
    assert keys["layers"] == 61  # the MTP layer is not counted
    assert keys["layers"] * keys["kv_latent"] * 2 == 70_272  # bytes per token at 16 bits
    assert (keys["experts"], keys["experts_active"]) == (256, 8)
    assert keys["head_dim"] == 128 + 64


def test_deepseek_v3_ignores_mtp_layers():
    config = load("deepseek-v3")
    without = dict(config, num_nextn_predict_layers=0)
    assert from_hf_config(without) == from_hf_config(config)


@pytest.mark.parametrize("name,layers,local", [("gemma-2-9b", 42, 21), ("gemma-2-27b", 46, 23)])
def test_gemma2_tied_and_alternating_window(name, layers, local):
    keys = from_hf_config(load(name))
    assert keys["embed_b"] == 0  # tied: the table is read as the output head
    assert keys["layers"] == layers
    assert (keys["window"], keys["window_layers"]) == (4096, local)


def test_gemma2_9b_head_dim_is_not_hidden_over_heads():
    keys = from_hf_config(load("gemma-2-9b"))
    assert keys["head_dim"] == 256 and keys["hidden"] // keys["heads"] == 224
    assert 2 * keys["layers"] * keys["kv_heads"] * keys["head_dim"] * 2 == 344_064


def test_qwen25_7b_bias_and_disabled_window():
    config = load("qwen2.5-7b")
    keys = from_hf_config(config)
    assert near(keys["params_b"], 7.616)
    assert config["sliding_window"] == 131072 and config["use_sliding_window"] is False
    assert keys["window"] == keys["window_layers"] == 0
    # Qwen2 always carries q/k/v biases, even without an attention_bias key.
    as_llama = dict(config, model_type="llama", architectures=["LlamaForCausalLM"])
    bias = (keys["params_b"] - from_hf_config(as_llama)["params_b"]) * 1e9
    assert round(bias) == 28 * (28 * 128 + 2 * 4 * 128)


def test_qwen3_qk_norms():
    config = load("qwen3-8b")
    keys = from_hf_config(config)
    as_llama = dict(config, model_type="llama", architectures=["LlamaForCausalLM"])
    norms = (keys["params_b"] - from_hf_config(as_llama)["params_b"]) * 1e9
    assert round(norms) == 36 * 2 * 128


def test_qwen3_moe_num_experts_alias():
    keys = from_hf_config(load("qwen3-30b-a3b"))
    assert (keys["experts"], keys["experts_active"]) == (128, 8)
    assert near(keys["params_b"], 30.5)  # published "30.5B total"
    # Published "3.3B activated" is rounded; the exact count is the total less
    # 120 unused experts of 3 x 2048 x 768 in each of the 48 layers.
    unused = 48 * 120 * 3 * 2048 * 768
    assert round(keys["params_b"] * 1e9) - round(keys["active_b"] * 1e9) == unused
    assert 3.25 <= keys["active_b"] <= 3.4


def test_gpt_oss_20b():
    keys = from_hf_config(load("gpt-oss-20b"))
    assert near(keys["params_b"], 20.9)
    assert near(keys["active_b"], 4.187)
    # OpenAI's "3.6B active" leaves out the input embedding table.
    assert near(keys["active_b"] - keys["embed_b"], 3.61)
    assert (keys["experts"], keys["experts_active"]) == (32, 4)
    assert (keys["window"], keys["window_layers"]) == (128, 12)
    assert keys["head_dim"] == 64 and keys["kv_heads"] == 8


# ---------------------------------------------------------------- nesting

def test_gemma3_text_config_resolves_like_the_flat_text_model():
    nested = load("gemma-3-4b")
    flat = dict(nested["text_config"])
    flat_keys = from_hf_config(flat)
    assert from_hf_config(nested) == flat_keys
    assert flat_keys["embed_b"] == 0  # Gemma ties its embeddings by default
    assert (flat_keys["window"], flat_keys["window_layers"]) == (1024, 34 - 5)  # 5 of 6 local
    # The model card's 4.3B includes the ~0.4B vision tower, which is not counted here.
    assert 3.8 < flat_keys["params_b"] < 4.3


@pytest.mark.parametrize("name", [n for n in ALL_FIXTURES if n != "gemma-3-4b"])
def test_wrapped_under_text_config_resolves_the_same(name):
    flat = load(name)
    wrapped = {
        "architectures": ["LlavaForConditionalGeneration"],
        "model_type": "llava",
        "text_config": copy.deepcopy(flat),
        "vision_config": {"hidden_size": 1024, "num_hidden_layers": 24, "model_type": "clip_vision_model"},
    }
    assert from_hf_config(wrapped) == from_hf_config(flat)


def test_text_config_fields_fall_back_to_the_top_level():
    flat = load("llama-3.1-8b")
    inner = {k: v for k, v in flat.items() if k not in ("tie_word_embeddings", "vocab_size")}
    outer = {"tie_word_embeddings": False, "vocab_size": 128256, "text_config": inner}
    assert from_hf_config(outer) == from_hf_config(flat)


def test_text_config_must_be_an_object():
    with pytest.raises(HFConfigError) as info:
        from_hf_config({"text_config": [1, 2, 3]})
    assert info.value.field == "text_config"


# ---------------------------------------------------------------- output contract

@pytest.mark.parametrize("name", ALL_FIXTURES)
def test_output_keys_types_and_spec_consistency(name):
    keys = from_hf_config(load(name))
    assert set(keys) == LINK_KEYS and keys["model"] == "custom"
    for key in INT_KEYS:
        assert type(keys[key]) is int, key
    for key in ("params_b", "active_b", "embed_b"):
        assert type(keys[key]) is float, key
    # SPEC section 5 consistency rules.
    assert 1 <= keys["kv_heads"] <= keys["heads"]
    assert 0 <= keys["window_layers"] <= keys["layers"]
    assert (keys["window"] == 0) == (keys["window_layers"] == 0)
    assert keys["embed_b"] < keys["active_b"] <= keys["params_b"]
    if keys["experts"]:
        assert 1 <= keys["experts_active"] < keys["experts"]
    else:
        assert keys["experts_active"] == 0


def test_count_parameters_breakdown():
    c = count_parameters(load("llama-3.1-8b"))
    assert c["total"] == 8_030_261_248 and c["active"] == c["total"]
    assert c["embed"] == c["head"] == 128_256 * 4096 and c["tied"] is False


def test_input_is_not_modified():
    config = load("deepseek-v3")
    before = copy.deepcopy(config)
    from_hf_config(config)
    assert config == before


# ---------------------------------------------------------------- other families

def test_mistral_style_window_applies_to_every_layer():
    config = dict(load("llama-3.1-8b"), model_type="mistral", sliding_window=4096)
    keys = from_hf_config(config)
    assert (keys["window"], keys["window_layers"]) == (4096, 32)


def test_qwen2_enabled_window_starts_after_max_window_layers():
    config = dict(load("qwen2.5-7b"), use_sliding_window=True, sliding_window=4096, max_window_layers=20)
    keys = from_hf_config(config)
    assert (keys["window"], keys["window_layers"]) == (4096, 28 - 20)


def test_attention_bias_and_mlp_bias_are_counted():
    base = load("llama-3.1-8b")
    plain = count_parameters(base)["total"]
    with_bias = count_parameters(dict(base, attention_bias=True, mlp_bias=True))["total"]
    per_layer = (4096 + 2 * 1024 + 4096) + (2 * 14336 + 4096)
    assert with_bias - plain == 32 * per_layer


def test_llama4_style_moe_shared_expert_and_chunked_attention():
    # A small Llama-4-shaped text model, counted by hand below.
    config = {
        "model_type": "llama4_text", "vocab_size": 100, "hidden_size": 16,
        "num_hidden_layers": 4, "num_attention_heads": 4, "num_key_value_heads": 2, "head_dim": 4,
        "intermediate_size": 8, "intermediate_size_mlp": 32, "num_local_experts": 4,
        "num_experts_per_tok": 1, "interleave_moe_layer_step": 2,
        "attention_chunk_size": 64, "no_rope_layers": [1, 1, 1, 0], "tie_word_embeddings": False,
    }
    c = count_parameters(config)
    attn = 16 * 16 + 2 * 16 * 8 + 16 * 16
    expert = 3 * 16 * 8
    moe = 16 * 4 + expert + 4 * expert  # router + shared expert + routed experts
    dense = 3 * 16 * 32
    total = 2 * 100 * 16 + 16 + 4 * (attn + 2 * 16) + 2 * dense + 2 * moe
    assert c["total"] == total
    assert c["total"] - c["active"] == 2 * 3 * expert  # layers 1 and 3 are MoE
    assert (c["window"], c["window_layers"]) == (64, 3)


# ---------------------------------------------------------------- bad configs

@pytest.mark.parametrize("field", [
    "num_hidden_layers", "hidden_size", "num_attention_heads", "vocab_size", "intermediate_size",
])
def test_missing_field_is_named(field):
    config = load("llama-3.1-8b")
    del config[field]
    with pytest.raises(HFConfigError) as info:
        from_hf_config(config)
    assert info.value.field == field
    assert field in str(info.value)
    assert isinstance(info.value, ValueError)


@pytest.mark.parametrize("name,field", [
    ("mixtral-8x7b", "num_experts_per_tok"),
    ("mixtral-8x7b", "intermediate_size"),
    ("deepseek-v3", "kv_lora_rank"),
    ("deepseek-v3", "qk_rope_head_dim"),
    ("deepseek-v3", "v_head_dim"),
    ("deepseek-v3", "moe_intermediate_size"),
    ("gpt-oss-20b", "sliding_window"),
])
def test_missing_family_field_is_named(name, field):
    config = load(name)
    del config[field]
    if field == "num_experts_per_tok":
        config.pop("experts_per_token", None)
    with pytest.raises(HFConfigError) as info:
        from_hf_config(config)
    assert info.value.field == field and field in str(info.value)


def test_missing_head_dim_when_hidden_does_not_divide():
    config = dict(load("llama-3.1-8b"), num_attention_heads=30)
    with pytest.raises(HFConfigError) as info:
        from_hf_config(config)
    assert info.value.field == "head_dim"


@pytest.mark.parametrize("field,value", [
    ("hidden_size", "4096"),
    ("hidden_size", 4096.5),
    ("hidden_size", -4096),
    ("hidden_size", 0),
    ("hidden_size", True),
    ("hidden_size", [4096]),
    ("hidden_size", "32*128"),  # never evaluated
    ("hidden_size", 10**9),
    ("num_hidden_layers", 10**6),
    ("vocab_size", 10**12),
    ("num_key_value_heads", 64),  # more than num_attention_heads
    ("tie_word_embeddings", "false"),
    ("intermediate_size", float("nan")),
])
def test_bad_values_name_the_field(field, value):
    config = dict(load("llama-3.1-8b"), **{field: value})
    with pytest.raises(HFConfigError) as info:
        from_hf_config(config)
    assert info.value.field == field and field in str(info.value)


def test_integral_float_is_accepted():
    config = dict(load("llama-3.1-8b"), hidden_size=4096.0)
    assert from_hf_config(config) == from_hf_config(load("llama-3.1-8b"))


def test_too_many_experts_per_token():
    config = dict(load("mixtral-8x7b"), num_experts_per_tok=8)
    with pytest.raises(HFConfigError) as info:
        from_hf_config(config)
    assert info.value.field == "num_experts_per_tok"


def test_absurd_total_is_refused():
    config = dict(load("mixtral-8x7b"), num_local_experts=60_000, num_hidden_layers=9_000)
    with pytest.raises(HFConfigError):
        from_hf_config(config)


@pytest.mark.parametrize("value", [None, [], "config.json", 42, b"{}"])
def test_non_mapping_input(value):
    with pytest.raises(HFConfigError) as info:
        from_hf_config(value)
    assert info.value.field == "config"


def test_linear_attention_layers_are_refused():
    config = dict(load("gpt-oss-20b"), layer_types=["linear_attention", "full_attention"] * 12)
    with pytest.raises(HFConfigError) as info:
        from_hf_config(config)
    assert info.value.field == "layer_types"


def test_layer_types_length_must_match():
    config = dict(load("gpt-oss-20b"), layer_types=["sliding_attention"] * 3)
    with pytest.raises(HFConfigError) as info:
        from_hf_config(config)
    assert info.value.field == "layer_types"


def test_hybrid_model_type_is_refused():
    config = dict(load("qwen3-8b"), model_type="qwen3_next")
    with pytest.raises(HFConfigError) as info:
        from_hf_config(config)
    assert info.value.field == "model_type"


# ---------------------------------------------------------------- JSON text

def test_json_text_and_bytes_match_the_mapping():
    text = (FIXTURES / "deepseek-v3.json").read_text()
    expected = from_hf_config(json.loads(text))
    assert from_hf_config_json(text) == expected
    assert from_hf_config_json(text.encode()) == expected
    assert from_hf_config_json(b"\xef\xbb\xbf" + text.encode()) == expected  # BOM


def test_oversized_text_is_refused():
    text = (FIXTURES / "llama-3.1-8b.json").read_text()
    with pytest.raises(HFConfigError) as info:
        from_hf_config_json(text, max_bytes=100)
    assert "bytes" in str(info.value)
    padded = text[:-2] + "," + '"pad": "' + "x" * 1_000_000 + '"}'
    with pytest.raises(HFConfigError):
        from_hf_config_json(padded)
    with pytest.raises(HFConfigError):
        from_hf_config_json(padded.encode())


@pytest.mark.parametrize("blob", [
    b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR",
    b"PK\x03\x04\x14\x00\x00\x00\x08\x00",
    b"\xff\xfe{\x00\"\x00",
    b'{"hidden_size": 4096, "x": "\xc3\x28"}',
])
def test_binary_or_non_utf8_is_refused(blob):
    with pytest.raises(HFConfigError) as info:
        from_hf_config_json(blob)
    assert info.value.field == "config"


@pytest.mark.parametrize("constant", ["NaN", "Infinity", "-Infinity", "1e999"])
def test_nan_and_infinity_are_refused(constant):
    with pytest.raises(HFConfigError):
        from_hf_config_json('{"num_hidden_layers": 32, "rope_theta": ' + constant + "}")


@pytest.mark.parametrize("text", ["[]", '"config"', "42", "null", "true", "[{}]"])
def test_non_object_json_is_refused(text):
    with pytest.raises(HFConfigError) as info:
        from_hf_config_json(text)
    assert info.value.field == "config"


@pytest.mark.parametrize("text", ["", "{", "{'hidden_size': 1}", '{"a": 1,}', "hidden_size=4096"])
def test_invalid_json_is_refused(text):
    with pytest.raises(HFConfigError):
        from_hf_config_json(text)


def test_nesting_limit():
    def nested(depth: int) -> str:  # depth counts the top-level object
        return '{"a": ' + "[" * (depth - 1) + "]" * (depth - 1) + "}"

    with pytest.raises(HFConfigError) as info:
        from_hf_config_json(nested(21))
    assert "nested" in str(info.value)
    # 20 levels parse; that object then lacks the model's fields.
    with pytest.raises(HFConfigError) as info:
        from_hf_config_json(nested(20))
    assert info.value.field == "num_hidden_layers"
    with pytest.raises(HFConfigError) as info:  # far past the decoder's own recursion limit
        from_hf_config_json("[" * 200_000 + "]" * 200_000)
    assert "nested" in str(info.value)


def test_item_limit():
    config = load("llama-3.1-8b")
    config["eos_token_id"] = list(range(10_001))
    with pytest.raises(HFConfigError) as info:
        from_hf_config_json(json.dumps(config))
    assert "10,000" in str(info.value)
    config["eos_token_id"] = list(range(9_000))
    assert from_hf_config_json(json.dumps(config))["params_b"] == pytest.approx(8.030261248)


def test_duplicate_keys_are_refused():
    with pytest.raises(HFConfigError) as info:
        from_hf_config_json('{"hidden_size": 4096, "hidden_size": 8192}')
    assert info.value.field == "hidden_size"


def test_huge_integer_literal_is_refused():
    with pytest.raises(HFConfigError):
        from_hf_config_json('{"hidden_size": %s}' % ("9" * 5000))


def test_json_missing_field_is_named():
    config = load("llama-3.1-8b")
    del config["num_hidden_layers"]
    with pytest.raises(HFConfigError) as info:
        from_hf_config_json(json.dumps(config))
    assert info.value.field == "num_hidden_layers"


@pytest.mark.parametrize("value", [None, 42, ["{}"], {"a": 1}])
def test_json_entry_point_needs_text(value):
    with pytest.raises(HFConfigError):
        from_hf_config_json(value)
