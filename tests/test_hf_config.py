"""calc.hf_config: Hugging Face config.json -> custom-model link keys.

The fixtures are real published configs (origins in tests/fixtures/hf/SOURCES.md); the
reference totals are the published or independently computed parameter counts.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest

from calc import accuracy, catalogue, model, report
from calc.__main__ import main
from calc.hf_config import (
    _DEFAULTS,
    HFConfigError,
    count_parameters,
    from_hf_config,
    from_hf_config_json,
    from_hf_config_json_with_notes,
    from_hf_config_with_notes,
)
from calc.scenario import parse

FIXTURES = Path(__file__).parent / "fixtures" / "hf"
REFUSED = FIXTURES / "refused"  # real configs the calculator must refuse (not in ALL_FIXTURES)

LINK_KEYS = {
    "model", "params_b", "active_b", "layers", "heads", "kv_heads", "head_dim", "hidden",
    "experts", "experts_active", "kv_latent", "window", "window_layers", "embed_b",
    "vocab", "linear_layers", "state_kib",
}
INT_KEYS = LINK_KEYS - {"model", "params_b", "active_b", "embed_b", "state_kib"}
FORMAT_KEYS = {"weights", "weights_experts", "weights_attn", "weights_embed", "layers_full"}


def load(name: str, folder: Path = FIXTURES) -> dict:
    return json.loads((folder / f"{name}.json").read_text())


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
    ("gemma-3-27b-it", 27.0, None),
]
ALL_FIXTURES = sorted(p.stem for p in FIXTURES.glob("*.json"))
NESTED_FIXTURES = [n for n in ALL_FIXTURES if "text_config" in load(n)]


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
    assert keys["head_dim"] == 128  # v_head_dim: the preset's figure (calc/hf_config.py _mla)


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


@pytest.mark.parametrize("name", [n for n in ALL_FIXTURES if n not in NESTED_FIXTURES])
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
    for key in ("params_b", "active_b", "embed_b", "state_kib"):
        assert type(keys[key]) is float, key
    # docs/method.md sections 2-5 consistency rules.
    assert 1 <= keys["kv_heads"] <= keys["heads"]
    assert 0 <= keys["window_layers"] <= keys["layers"]
    assert keys["linear_layers"] + keys["window_layers"] <= keys["layers"]
    assert (keys["linear_layers"] == 0) == (keys["state_kib"] == 0)
    assert keys["vocab"] == count_parameters(load(name))["vocab"]
    assert not parse(keys).errors  # calc takes the keys as they are
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


@pytest.mark.parametrize("kind", ["lfm2", "minimax", "zamba2", "bamba", "granitemoehybrid", "nemotron_h_puzzle"])
def test_hybrid_model_type_is_refused(kind):
    config = dict(load("qwen3-8b"), model_type=kind)
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


# ---------------------------------------------------------------- defaults by model_type

GEMMA3_27B_EMBED = 262_208 * 5376  # the checkpoint's table: 262,208 rows (transformers' default vocab_size)


def test_gemma3_27b_takes_the_library_defaults_it_leaves_out():
    config = load("gemma-3-27b-it")
    assert "vocab_size" not in config["text_config"] and "sliding_window_pattern" not in config["text_config"]
    c = count_parameters(config)
    assert c["model_type"] == "gemma3_text"
    assert c["embed"] == GEMMA3_27B_EMBED == 1_409_630_208 and c["head"] == 0 and c["tied"] is True
    assert c["total"] == c["active"] == 27_009_346_304
    # Gemma 3 technical report, table 1 (27B): 1,416M embedding parameters (the token table here plus the
    # 1152 x 5376 image projector, not counted) and 25,600M non-embedding ones; the vision tower is left out.
    assert c["total"] - c["embed"] == 25_599_716_096
    assert near(c["total"] - c["embed"], 25.6e9, rel=0.001)
    assert near(c["embed"] + 1152 * 5376, 1.416e9, rel=0.001)
    keys = from_hf_config(config)
    assert keys["params_b"] == 27.009346304 and keys["active_b"] == keys["params_b"] and keys["embed_b"] == 0
    assert (keys["layers"], keys["heads"], keys["kv_heads"], keys["head_dim"], keys["hidden"]) == (62, 32, 16, 128, 5376)
    # sliding_window_pattern 6: layers 5, 11, ..., 59 are global (10 of 62), the other 52 slide over 1024 tokens.
    assert (keys["window"], keys["window_layers"]) == (1024, 52)


def test_gemma3_27b_kv_cache_at_128k_in_bf16():
    keys = from_hf_config(load("gemma-3-27b-it"))
    r = report({**keys, "ctx": 128000, "kv": "bf16"})
    assert r["kv_bytes_per_token"] == 2 * 62 * 16 * 128 * 2 == 507_904  # every layer full, as docs/method.md sections 2-5 defines it
    # (10 global layers x 128,000 tokens + 52 sliding layers x 1,024) x 8,192 bytes = 10.171875 GiB.
    assert r["kv_gib_per_sequence"] == pytest.approx(10.171875, rel=1e-12)
    assert round(r["kv_gib_per_sequence"], 2) == 10.17


def test_gemma3_27b_on_the_command_line(capsys):
    code = main(["--hf-config", str(FIXTURES / "gemma-3-27b-it.json"), "ctx=128000&kv=bf16"])
    out = capsys.readouterr()
    assert code == 0, out.err
    r = json.loads(out.out)
    assert round(r["kv_gib_per_sequence"], 2) == 10.17
    # the config has the shape of the catalogue's Gemma 3 27B: its preset (27.009 B, rounded) stands for it
    assert r["scenario"]["model"] == "gemma-3-27b" and r["scenario"]["params_b"] == pytest.approx(27.009346304, rel=1e-4)


def test_gemma3_4b_it_text_config_that_omits_its_heads():
    # google/gemma-3-4b-it states only its sizes and window; heads, KV heads, head_dim and the
    # vocabulary come from Gemma3TextConfig (8, 4, 256, 262,208).
    minimal = {"text_config": {"hidden_size": 2560, "intermediate_size": 10240, "model_type": "gemma3_text",
                               "num_hidden_layers": 34, "sliding_window": 1024},
               "model_type": "gemma3", "architectures": ["Gemma3ForConditionalGeneration"]}
    full = load("gemma-3-4b")  # states every field, with a 262,144-row vocabulary
    got, want = count_parameters(minimal), count_parameters(full)
    for key in ("heads", "kv_heads", "head_dim", "hidden", "layers", "window", "window_layers", "tied"):
        assert got[key] == want[key], key
    assert (got["heads"], got["kv_heads"], got["head_dim"]) == (8, 4, 256)
    assert got["total"] - want["total"] == (262_208 - 262_144) * 2560


def test_explicit_fields_win_over_the_defaults():
    config = load("gemma-3-27b-it")
    config["text_config"].update(vocab_size=262_144, sliding_window_pattern=2)
    c = count_parameters(config)
    assert c["embed"] == 262_144 * 5376
    assert (c["window"], c["window_layers"]) == (1024, 31)


def test_an_explicit_null_is_not_replaced_by_a_default():
    config = load("gemma-3-27b-it")
    config["text_config"]["vocab_size"] = None
    with pytest.raises(HFConfigError) as info:
        from_hf_config(config)
    assert info.value.field == "vocab_size"
    mistral = dict(load("llama-3.1-8b"), model_type="mistral", sliding_window=None)
    assert (from_hf_config(mistral)["window"], from_hf_config(mistral)["window_layers"]) == (0, 0)


@pytest.mark.parametrize("field", ["hidden_size", "num_hidden_layers", "intermediate_size"])
def test_the_model_size_never_defaults(field):
    config = load("gemma-3-27b-it")
    del config["text_config"][field]
    with pytest.raises(HFConfigError) as info:
        from_hf_config(config)
    assert info.value.field == field
    for table in _DEFAULTS.values():
        assert field not in table


def test_gemma2_defaults_match_its_stated_fields():
    config = load("gemma-2-9b")
    assert (config["vocab_size"], config["head_dim"], config["sliding_window"]) == (256_000, 256, 4096)
    bare = {k: v for k, v in config.items() if k not in ("vocab_size", "head_dim", "sliding_window")}
    assert from_hf_config(bare) == from_hf_config(config)
    bare = {k: v for k, v in bare.items() if k not in ("num_attention_heads", "num_key_value_heads")}
    keys = from_hf_config(bare)  # Gemma2Config: 8 heads, 4 KV heads
    assert (keys["heads"], keys["kv_heads"], keys["window"], keys["window_layers"]) == (8, 4, 4096, 21)


def test_gemma_1_head_dim_is_256_not_hidden_over_heads():
    config = {"model_type": "gemma", "hidden_size": 3072, "num_hidden_layers": 28, "num_attention_heads": 16,
              "num_key_value_heads": 16, "intermediate_size": 24576}
    c = count_parameters(config)
    assert (c["head_dim"], c["embed"], c["head"], c["tied"]) == (256, 256_000 * 3072, 0, True)
    assert near(c["total"], 8.54e9)  # Gemma 7B: 8.54B parameters with its tied table


def test_qwen_window_is_off_unless_the_file_turns_it_on():
    config = {k: v for k, v in load("qwen2.5-7b").items() if k != "use_sliding_window"}
    assert config["sliding_window"] == 131072
    assert (from_hf_config(config)["window"], from_hf_config(config)["window_layers"]) == (0, 0)
    for name in ("qwen3-8b", "qwen3-30b-a3b"):
        config = {k: v for k, v in load(name).items() if k != "use_sliding_window"}
        config["sliding_window"] = 4096
        assert from_hf_config(config)["window_layers"] == 0, name


def test_qwen2_enabled_window_without_max_window_layers_starts_at_layer_28():
    config = {k: v for k, v in load("qwen2.5-7b").items() if k != "max_window_layers"}
    config.update(use_sliding_window=True, sliding_window=4096, num_hidden_layers=40)
    keys = from_hf_config(config)
    assert (keys["window"], keys["window_layers"]) == (4096, 40 - 28)


def test_qwen3_head_dim_defaults_to_128():
    # Qwen3-4B's shape: 2560 wide, 32 heads of 128 (not 2560 / 32 = 80).
    config = {k: v for k, v in load("qwen3-8b").items() if k != "head_dim"}
    config.update(hidden_size=2560, intermediate_size=9728)
    assert from_hf_config(config)["head_dim"] == 128


def test_mistral_window_defaults_to_4096_on_every_layer():
    config = {k: v for k, v in load("llama-3.1-8b").items() if k != "sliding_window"}
    config["model_type"] = "mistral"
    keys = from_hf_config(config)
    assert (keys["window"], keys["window_layers"]) == (4096, 32)


def test_llama4_chunk_defaults_to_8192():
    config = {
        "model_type": "llama4_text", "vocab_size": 100, "hidden_size": 16,
        "num_hidden_layers": 8, "num_attention_heads": 4, "num_key_value_heads": 2, "head_dim": 4,
        "intermediate_size": 8, "intermediate_size_mlp": 32, "num_local_experts": 4,
        "num_experts_per_tok": 1, "tie_word_embeddings": False,
    }
    c = count_parameters(config)
    assert (c["window"], c["window_layers"]) == (8192, 6)  # no_rope_layer_interval 4: layers 3 and 7 are global


def test_families_without_a_table_get_no_defaults():
    config = load("llama-3.1-8b")
    del config["vocab_size"]
    with pytest.raises(HFConfigError) as info:
        from_hf_config(config)
    assert info.value.field == "vocab_size"


# ---------------------------------------------------------------- caches the calculator does not size

def refused(config) -> HFConfigError:
    with pytest.raises(HFConfigError) as info:
        from_hf_config(config)
    err = info.value
    assert str(err).startswith(f"{err.field}: ")
    assert len(str(err)) < 600
    return err


def test_deepseek_v32_indexer_is_refused_naming_the_field():
    config = load("deepseek-v3.2-exp", REFUSED)
    err = refused(config)
    assert err.field == "index_head_dim"
    assert "indexer" in str(err) and "does not size" in str(err)
    # Without the indexer it is DeepSeek V3's shape.
    plain = {k: v for k, v in config.items() if not k.startswith("index_")}
    assert near(from_hf_config(plain)["params_b"], 671.0)


@pytest.mark.parametrize("field,value", [("index_head_dim", 128), ("index_n_heads", 64), ("index_topk", 2048)])
def test_each_indexer_field_alone_is_refused(field, value):
    err = refused(dict(load("deepseek-v3"), **{field: value}))
    assert err.field == field and "indexer" in str(err)


def test_deepseek_v32_on_the_command_line_exits_2(capsys):
    code = main(["--hf-config", str(REFUSED / "deepseek-v3.2-exp.json"), "ctx=128000"])
    out = capsys.readouterr()
    assert code == 2 and out.out == ""
    assert "index_head_dim" in out.err and "Traceback" not in out.err


def test_deepseek_v32_json_text_is_refused():
    with pytest.raises(HFConfigError) as info:
        from_hf_config_json((REFUSED / "deepseek-v3.2-exp.json").read_bytes())
    assert info.value.field == "index_head_dim"


@pytest.mark.parametrize("kinds", [
    ["linear_attention", "linear_attention", "linear_attention", "full_attention"],  # Qwen3-Next, MiniMax
    ["mamba", "attention"],                                                            # Granite 4.0 hybrid
    ["conv", "conv", "full_attention"],                                                # LFM2
], ids=["linear-attention", "mamba", "conv"])
def test_layer_types_other_than_attention_are_refused(kinds):
    layers = 32
    types = (kinds * layers)[:layers]
    err = refused(dict(load("llama-3.1-8b"), layer_types=types))
    assert err.field == "layer_types"
    for kind in set(types) - {"full_attention"}:
        assert repr(kind) in str(err)


@pytest.mark.parametrize("field,value", [
    ("attn_layer_indices", [9, 18, 27]),                # Bamba, Falcon-H1
    ("attn_layer_period", 8),                           # Jamba
    ("attn_layer_offset", 4),                           # Jamba
    ("full_attention_interval", 4),                     # Qwen3-Next
    ("hybrid_override_pattern", "M-M-M-M*-M-M-M-M-"),   # Nemotron-H
    ("layers_block_type", ["mamba", "hybrid"] * 16),    # Zamba
    ("hybrid_layer_ids", [5, 11, 17]),                  # Zamba 2
    ("block_types", ["recurrent", "recurrent", "attention"]),  # RecurrentGemma
    ("attn_type_list", [0, 0, 0, 1] * 8),               # MiniMax-Text-01
    ("full_attn_idxs", [2, 5, 8]),                      # LFM2
    ("num_kv_shared_layers", 10),                       # Gemma 3n
    ("use_cla", True),                                  # Hunyuan-Large cross-layer attention
    ("global_head_dim", 512),                           # Gemma 4
    ("num_global_key_value_heads", 1),                  # Gemma 4
    ("attention_k_eq_v", True),                         # Gemma 4
    ("cross_attention_layers", [3, 8, 13]),             # Llama 3.2 Vision
])
def test_hybrid_and_shared_cache_fields_are_refused(field, value):
    err = refused(dict(load("llama-3.1-8b"), **{field: value}))
    assert err.field == field and field in str(err)
    assert "refused" in str(err)


@pytest.mark.parametrize("field,value", [
    ("mamba_d_state", 16),                                # Jamba, Bamba, Falcon-H1, Zamba
    ("mamba_n_heads", 128),
    ("ssm_state_size", 128),                              # Nemotron-H
    ("linear_num_value_heads", 32),                       # Qwen3-Next
    ("linear_key_head_dim", 128),
    ("linear_attn_config", {"kda_layers": [1, 2, 3]}),    # Kimi Linear
])
def test_state_space_and_linear_attention_fields_are_refused(field, value):
    err = refused(dict(load("qwen3-8b"), **{field: value}))
    assert err.field == field


def test_such_fields_are_found_under_text_config_too():
    config = {"model_type": "llava", "text_config": dict(load("llama-3.1-8b"), mamba_d_state=16)}
    assert refused(config).field == "mamba_d_state"


@pytest.mark.parametrize("field,value", [
    ("use_cla", False), ("num_kv_shared_layers", 0), ("cross_attention_layers", []), ("attention_k_eq_v", False),
    ("attn_layer_indices", None), ("mamba_d_state", None), ("index_topk", 0),
])
def test_switched_off_fields_are_not_refused(field, value):
    base = load("llama-3.1-8b")
    assert from_hf_config(dict(base, **{field: value})) == from_hf_config(base)


def test_a_cla_factor_with_cla_switched_off_is_not_refused():
    base = load("llama-3.1-8b")
    assert from_hf_config(dict(base, use_cla=False, cla_share_factor=2)) == from_hf_config(base)


def test_qwen3_next_layout_with_a_short_layer_types_is_refused_naming_it():
    config = dict(load("qwen3-next-80b-a3b"), layer_types=["linear_attention"] * 3 + ["full_attention"])
    assert refused(config).field == "layer_types"


def test_the_hybrid_fields_of_one_family_are_refused_in_another():
    # Qwen3-Next's layout fields pass only for Qwen3-Next; Jamba's only for Jamba; Nemotron-H's only for it.
    assert refused(dict(load("qwen3-next-80b-a3b"), attn_layer_period=8)).field == "attn_layer_period"
    assert refused(dict(load("jamba-1.5-mini"), full_attention_interval=4)).field == "full_attention_interval"
    assert refused(dict(load("jamba-1.5-mini"), linear_num_value_heads=32)).field == "linear_num_value_heads"
    err = refused(dict(load("nemotron-h-8b-base-8k"), linear_key_head_dim=128))
    assert err.field == "linear_key_head_dim"
    assert refused(dict(load("qwen3-next-80b-a3b"), mamba_d_state=16)).field == "mamba_d_state"


# ---------------------------------------------------------------- bounded messages

def test_a_huge_or_control_character_layer_type_is_quoted_short():
    hostile = "\x1b[31m" + "x" * 10_000
    err = refused(dict(load("llama-3.1-8b"), layer_types=[hostile] * 32))
    text = str(err)
    assert "\x1b" not in text and "\\x1b" in text and "x" * 100 not in text


def test_many_unknown_layer_types_are_summarised():
    err = refused(dict(load("llama-3.1-8b"), layer_types=[f"kind{i}" * 20 for i in range(32)]))
    assert "and 29 more" in str(err)


def test_a_hostile_prefixed_field_name_is_quoted_short():
    key = "mamba_" + "\x07" * 5000
    err = refused(dict(load("llama-3.1-8b"), **{key: 1}))
    assert len(err.field) <= 60 and "\x07" not in err.field and "\x07" not in str(err)


@pytest.mark.parametrize("field,value", [
    ("tie_word_embeddings", "y" * 100_000),
    ("hidden_size", "\x00" * 100_000),
    ("hidden_size", 10**5000),          # too long even to print in full
    ("moe_layers", "z" * 100_000),
    ("model_type", ["q" * 100_000]),
    ("use_cla", "\u202e" * 50_000),
], ids=["long-flag", "nul-int", "huge-int", "long-list", "long-type", "rtl-flag"])
def test_values_are_never_echoed_at_length(field, value):
    config = dict(load("llama-3.1-8b"), **{field: value})
    if field == "moe_layers":
        config.update(num_local_experts=8, num_experts_per_tok=2, moe_intermediate_size=1024)
    err = refused(config)
    assert err.field == field
    assert "\x00" not in str(err) and "\u202e" not in str(err)


# ---------------------------------------------------------------- hybrids: linear layers and their state

def kib(nbytes: int) -> float:
    return nbytes / 1024


def test_qwen3_next_80b_a3b_layout_state_and_count():
    keys, notes = from_hf_config_with_notes(load("qwen3-next-80b-a3b"))
    # full_attention_interval 4: layers 3, 7, ..., 47 are gated softmax attention, the other 36 Gated DeltaNet.
    assert (keys["layers"], keys["linear_layers"]) == (48, 36)
    assert (keys["heads"], keys["kv_heads"], keys["head_dim"], keys["hidden"]) == (16, 2, 256, 2048)
    # 32 value heads x 128 x 128 recurrent values + a 3-step window over 2 x 16 x 128 + 32 x 128 channels, 2 bytes each.
    assert keys["state_kib"] == kib(32 * 128 * 128 * 2 + 3 * (2 * 16 * 128 + 32 * 128) * 2) == 1072
    assert (keys["experts"], keys["experts_active"], keys["vocab"]) == (512, 10, 151936)
    # By hand: a Gated DeltaNet layer 33,718,464 (in_proj_qkvz 2048 x 12288, in_proj_ba 2048 x 64, conv 8192 x 4,
    # dt_bias + A_log 64, norm 128, out_proj 4096 x 2048); a full-attention layer 27,263,488 (q_proj 2048 x 8192
    # with its output gate, k/v 2048 x 512, o 4096 x 2048, q/k norms 256 each); the MoE block of every layer
    # 1,614,809,088 (router 2048 x 512, 512 experts of 3 x 2048 x 512, a 512-wide shared expert and its gate).
    gdn, full = 33_718_464, 27_263_488
    moe_total, moe_active = 1_614_809_088, 2048 * 512 + 3 * 2048 * 512 + 2048 + 10 * 3 * 2048 * 512
    rest = 2 * 151936 * 2048 + 2048 + 48 * 2 * 2048  # tables, final norm, two norms a layer
    assert round(keys["params_b"] * 1e9) == rest + 36 * gdn + 12 * full + 48 * moe_total == 79_674_391_296
    assert round(keys["active_b"] * 1e9) == rest + 36 * gdn + 12 * full + 48 * moe_active == 3_874_929_408
    # The catalogue's row (79.674 B / 3.875 B, 36 linear layers of 1072 KiB) has this shape: the preset stands for it.
    assert catalogue.match_model(keys) == "qwen3-next-80b-a3b"
    preset = catalogue.models()["qwen3-next-80b-a3b"]
    assert (preset["linear_layers"], preset["state_kib"], preset["vocab"]) == (36, 1072, 151936)
    assert notes and "36 of 48 layers" in notes[0] and "1072 KiB" in notes[0]


def test_qwen3_next_kv_cache_is_on_the_full_attention_layers_only():
    keys = from_hf_config(load("qwen3-next-80b-a3b"))
    r = report({**keys, "ctx": 131072, "kv": "bf16"})
    assert r["kv_bytes_per_token"] == 2 * 12 * 2 * 256 * 2 == 24_576


def test_qwen3_5_35b_a3b_reads_layer_types_under_text_config():
    config = load("qwen3.5-35b-a3b")
    keys, notes = from_hf_config_with_notes(config)
    assert (keys["layers"], keys["linear_layers"], keys["state_kib"]) == (40, 30, 1072)
    assert (keys["experts"], keys["experts_active"], keys["vocab"]) == (256, 8, 248320)
    assert round(keys["params_b"] * 1e9) == 34_660_610_688  # catalogue: 34.661 B
    assert round(keys["active_b"] * 1e9) == 3_454_988_928  # catalogue: 3.455 B
    assert catalogue.match_model(keys) == "qwen3.5-35b-a3b"
    assert any("float32" in n for n in notes)  # mamba_ssm_dtype float32 is told, state_kib stays 16-bit
    # Without layer_types, full_attention_interval 4 gives the same layout (Qwen3_5TextConfig.__post_init__).
    inner = {k: v for k, v in config["text_config"].items() if k != "layer_types"}
    assert from_hf_config(dict(config, text_config=inner)) == keys


def test_gdn_layer_count_by_hand_on_a_small_config():
    config = {
        "model_type": "qwen3_next", "vocab_size": 100, "hidden_size": 16, "num_hidden_layers": 4,
        "num_attention_heads": 2, "num_key_value_heads": 1, "head_dim": 8, "intermediate_size": 24,
        "linear_num_key_heads": 2, "linear_num_value_heads": 4, "linear_key_head_dim": 4,
        "linear_value_head_dim": 4, "linear_conv_kernel_dim": 3, "full_attention_interval": 2,
        "tie_word_embeddings": True,
    }
    c = count_parameters(config)
    key, value = 2 * 4, 4 * 4
    gdn = 16 * (2 * key + 2 * value) + 16 * 2 * 4 + (2 * key + value) * 3 + 2 * 4 + 4 + value * 16
    full = 16 * 16 * 2 + 2 * 16 * 8 + 16 * 16 + 2 * 8  # gated q_proj, k/v, o, q/k norms
    assert c["total"] == 100 * 16 + 16 + 2 * gdn + 2 * full + 4 * (2 * 16 + 3 * 16 * 24)
    assert (c["linear_layers"], c["state_bytes"]) == (2, (4 * 4 * 4 + 2 * (2 * key + value)) * 2)


def test_gdn_defaults_follow_transformers():
    # Qwen3NextConfig: head_dim 256, Gated DeltaNet 16 key / 32 value heads of 128, kernel 4, every 4th layer full.
    config = {k: v for k, v in load("qwen3-next-80b-a3b").items()
              if not k.startswith("linear_") and k not in ("full_attention_interval", "head_dim")}
    assert from_hf_config(config) == from_hf_config(load("qwen3-next-80b-a3b"))


def test_gdn_value_heads_must_divide_by_key_heads():
    assert refused(dict(load("qwen3-next-80b-a3b"), linear_num_value_heads=24,
                        linear_num_key_heads=16)).field == "linear_num_value_heads"


def test_nemotron_h_8b_blocks_fold_into_mamba_and_attention_layers():
    keys, notes = from_hf_config_with_notes(load("nemotron-h-8b-base-8k"))
    # 52 blocks: 24 Mamba2 (M), 4 attention (*), 24 MLP-only (-); the MLP blocks fold into the others.
    assert (keys["layers"], keys["linear_layers"]) == (28, 24)
    assert (keys["heads"], keys["kv_heads"], keys["head_dim"]) == (32, 8, 128)  # head_dim from attention_head_dim
    # Mamba2: 128 heads x 64 x state 128 + a 3-step window over 128 x 64 + 2 x 8 x 128 channels, 2 bytes each.
    assert keys["state_kib"] == kib(128 * 64 * 128 * 2 + 3 * (128 * 64 + 2 * 8 * 128) * 2) == 2108
    mamba = 4096 * (8192 + 10240 + 128) + 10240 * 4 + 10240 + 3 * 128 + 8192 + 8192 * 4096
    attn = 4096 * 4096 * 2 + 2 * 4096 * 1024
    mlp = 2 * 4096 * 21504  # up and down (relu2, no gate)
    total = 2 * 131072 * 4096 + 4096 + 52 * 4096 + 24 * mamba + 4 * attn + 24 * mlp
    assert round(keys["params_b"] * 1e9) == total == 8_100_852_736
    assert keys["active_b"] == keys["params_b"] and keys["experts"] == 0
    assert any("52 blocks" in n and "layers = 28" in n for n in notes)
    r = report({**keys, "ctx": 8192, "kv": "bf16"})
    assert r["kv_bytes_per_token"] == 2 * 4 * 8 * 128 * 2  # the 4 attention blocks only


def test_nemotron_3_nano_moe_blocks():
    keys = from_hf_config(load("nemotron-3-nano-30b-a3b"))
    assert (keys["layers"], keys["linear_layers"], keys["experts"], keys["experts_active"]) == (29, 23, 128, 6)
    assert keys["state_kib"] == kib(64 * 64 * 128 * 2 + 3 * (64 * 64 + 2 * 8 * 128) * 2) == 1060
    # Published: 31.6 B total (NVIDIA's Nemotron 3 Nano announcement), "3.5B active parameters" (the model card,
    # both tables counted), 3.2 B active without the input table (SOURCES.md).
    assert round(keys["params_b"] * 1e9) == 31_577_940_288
    assert round(keys["active_b"] * 1e9) == 3_580_076_352
    assert near(keys["params_b"], 31.6, rel=0.002)
    assert near(keys["active_b"] - keys["embed_b"], 3.2, rel=0.02)
    # An expert block: router 2688 x 128 + 128 correction biases, 128 experts of up/down 2688 x 1856, a shared
    # up/down MLP 3712 wide; 6 routed experts per token.
    expert = 2 * 2688 * 1856
    assert round((keys["params_b"] - keys["active_b"]) * 1e9) == 23 * (128 - 6) * expert


def test_nemotron_h_layers_block_type_equals_its_pattern():
    config = load("nemotron-h-8b-base-8k")
    names = {"M": "mamba", "*": "attention", "-": "mlp"}  # the legacy names transformers still reads
    listed = {k: v for k, v in config.items() if k != "hybrid_override_pattern"}
    listed["layers_block_type"] = [names[ch] for ch in config["hybrid_override_pattern"]]
    assert from_hf_config(listed) == from_hf_config(config)


@pytest.mark.parametrize("pattern,field", [("M-X*", "hybrid_override_pattern"), ("----", "hybrid_override_pattern"),
                                           (None, "hybrid_override_pattern"), (["M"], "hybrid_override_pattern")])
def test_nemotron_h_bad_layouts_are_named(pattern, field):
    config = dict(load("nemotron-h-8b-base-8k"), hybrid_override_pattern=pattern)
    assert refused(config).field == field


def test_jamba_1_5_mini():
    keys = from_hf_config(load("jamba-1.5-mini"))
    # attn_layer_period 8, offset 4: layers 4, 12, 20, 28 attend; experts on the odd layers.
    assert (keys["layers"], keys["linear_layers"]) == (32, 28)
    assert (keys["heads"], keys["kv_heads"], keys["head_dim"], keys["experts"], keys["experts_active"]) == (
        32, 8, 128, 16, 2)
    # Mamba: 8192 channels (expand 2) x state 16 + a 3-step window over 8192, 2 bytes each.
    assert keys["state_kib"] == kib(8192 * 16 * 2 + 3 * 8192 * 2) == 304
    mamba = (4096 * 16384 + 8192 * 4096 + 8192 * 4 + 8192 + 8192 * (256 + 32) + 256 * 8192 + 8192
             + 8192 * 16 + 8192 + 256 + 32)
    attn = 4096 * 4096 * 2 + 2 * 4096 * 1024
    mlp = 3 * 4096 * 14336
    moe = 4096 * 16 + 16 * mlp
    total = 2 * 65536 * 4096 + 4096 + 32 * 2 * 4096 + 28 * mamba + 4 * attn + 16 * mlp + 16 * moe
    assert round(keys["params_b"] * 1e9) == total == 51_570_323_328
    assert round(keys["active_b"] * 1e9) == total - 16 * 14 * mlp == 12_110_311_296
    assert near(keys["params_b"], 52, rel=0.01) and near(keys["active_b"], 12, rel=0.01)  # AI21: 52 B / 12 B


def test_jamba_without_experts_is_refused_and_one_expert_is_dense():
    config = {k: v for k, v in load("jamba-1.5-mini").items() if k != "num_experts"}
    assert refused(config).field == "num_experts"
    dense = count_parameters(dict(config, num_experts=1))
    assert dense["experts"] == 0 and dense["total"] == dense["active"]


def test_jamba_offset_must_be_below_its_period():
    assert refused(dict(load("jamba-1.5-mini"), attn_layer_offset=8)).field == "attn_layer_offset"
    assert refused(dict(load("jamba-1.5-mini"), expert_layer_offset=2)).field == "expert_layer_offset"


# Falcon-H1's shapes. The 0.5B is Megatron-Bridge's FALCON_H1_500M_CONFIG (tests/unit_tests/models/falcon_h1/
# test_falconh1_bridge.py, acc8ca4b) with the Hub's mamba_d_ssm 1536 (= 24 Mamba heads of 64; the test dict leaves it
# out). The 1.5B and 7B follow transformers' FalconH1 model table and the Hub configs as public loaders quote them
# (see fixtures/hf/SOURCES.md); the trained 1.5B and 7B use mamba_rms_norm true.
FALCON_H1_05B = {
    "architectures": ["FalconH1ForCausalLM"], "attention_bias": False, "attn_layer_indices": None, "head_dim": 64,
    "hidden_size": 1024, "intermediate_size": 2048, "mamba_conv_bias": True, "mamba_d_conv": 4, "mamba_d_head": 64,
    "mamba_d_ssm": 1536, "mamba_d_state": 128, "mamba_expand": 2, "mamba_n_groups": 1, "mamba_n_heads": 24,
    "mamba_proj_bias": False, "mamba_rms_norm": False, "mlp_bias": False, "model_type": "falcon_h1",
    "num_attention_heads": 8, "num_hidden_layers": 36, "num_key_value_heads": 2, "projectors_bias": False,
    "tie_word_embeddings": False, "vocab_size": 32784,
}
FALCON_H1_15B = dict(FALCON_H1_05B, head_dim=128, hidden_size=2048, intermediate_size=4608, mamba_d_ssm=3072,
                     mamba_d_state=256, mamba_n_heads=48, mamba_rms_norm=True, num_hidden_layers=24,
                     vocab_size=65537)
FALCON_H1_7B = dict(FALCON_H1_05B, head_dim=128, hidden_size=3072, intermediate_size=12288, mamba_d_head=128,
                    mamba_d_ssm=3072, mamba_d_state=256, mamba_n_heads=24, mamba_rms_norm=True,
                    num_attention_heads=12, num_hidden_layers=44, vocab_size=130048)


@pytest.mark.parametrize("config,total", [
    (FALCON_H1_05B, 521_411_104),    # tiiuae/Falcon-H1-0.5B: 0.52 B
    (FALCON_H1_15B, 1_554_863_488),  # model.safetensors of Falcon-H1-1.5B-Instruct: 3,109,773,032 bytes at BF16
    (FALCON_H1_7B, 7_585_648_736),   # tiiuae/Falcon-H1-7B: 7.59 B
], ids=["0.5b", "1.5b", "7b"])
def test_falcon_h1_counts_attention_and_mamba_in_every_layer(config, total):
    counts = count_parameters(config)
    assert counts["total"] == counts["active"] == total
    hidden, d, heads, d_state = (config[k] for k in ("hidden_size", "mamba_d_ssm", "mamba_n_heads", "mamba_d_state"))
    q, kv = config["num_attention_heads"] * config["head_dim"], 2 * config["head_dim"]
    conv = d + 2 * d_state  # one group
    mamba = (hidden * (d + conv + heads) + conv * 4 + conv + 3 * heads + d * config["mamba_rms_norm"]
             + d * hidden)
    layer = 2 * hidden * q + 2 * hidden * kv + mamba + 3 * hidden * config["intermediate_size"] + 2 * hidden
    assert total == config["num_hidden_layers"] * layer + 2 * config["vocab_size"] * hidden + hidden
    # The safetensors file: 2 bytes a parameter plus its JSON header.
    if config is FALCON_H1_15B:
        assert 0 < 3_109_773_032 - 2 * total < 65_536


def test_falcon_h1_keeps_a_cache_and_a_state_in_every_layer():
    keys, notes = from_hf_config_with_notes(FALCON_H1_7B)
    assert (keys["layers"], keys["linear_layers"], keys["state_layers"]) == (44, 0, 44)
    assert (keys["heads"], keys["kv_heads"], keys["head_dim"]) == (12, 2, 128)
    # Mamba2: 24 heads x 128 x d_state 256 recurrent values + a 3-step window over 3072 + 2 x 256 channels.
    assert keys["state_kib"] == kib((24 * 128 * 256 + 3 * (3072 + 512)) * 2) == 1557
    assert "side by side" in notes[0] and "state_layers = 44" in notes[0]
    s = parse(keys).scenario
    assert not parse(keys).errors
    assert model.kv_bytes_per_token(s) == 44 * 2 * 2 * 128 * 2  # every layer attends: 44 KiB a token
    assert model.state_bytes(s) == 44 * 1557 * 1024             # and holds its state: 67 MiB a sequence
    assert model.cache_bytes(s, 1000)[()] == 1000 * 44 * 1024 + 44 * 1557 * 1024
    assert accuracy.model_kind(s) == "hybrid"
    # The link carries state_layers only when it differs from linear_layers.
    assert "state_layers" not in from_hf_config(load("jamba-1.5-mini"))
    assert parse(from_hf_config(load("jamba-1.5-mini"))).scenario.state_layers == 28


@pytest.mark.parametrize("change,field", [
    ({"mamba_d_ssm": 2048}, "mamba_d_head"),          # 24 heads of 64 are not 2048 wide
    ({"mamba_d_ssm": None}, "mamba_d_head"),          # null: mamba_expand x hidden = 2048
    ({"attn_layer_indices": [3, 7]}, "attn_layer_indices"),
    ({"sliding_window": 4096}, "sliding_window"),
    ({"mamba_d_state": 0}, "mamba_d_state"),
])
def test_falcon_h1_layouts_it_cannot_size_are_refused(change, field):
    err = refused(dict(FALCON_H1_05B, **change))
    assert err.field == field
    without = {k: v for k, v in FALCON_H1_05B.items() if k != "mamba_d_ssm"}
    assert "class default" in str(refused(without))  # a file without mamba_d_ssm gets 1024, not 24 x 64


def test_falcon_h1_is_found_by_its_architecture_too():
    config = {k: v for k, v in FALCON_H1_7B.items() if k != "model_type"}
    assert count_parameters(config)["total"] == 7_585_648_736


def test_a_hybrid_window_is_refused():
    assert refused(dict(load("jamba-1.5-mini"), sliding_window=4096)).field == "sliding_window"
    assert refused(dict(load("nemotron-h-8b-base-8k"), sliding_window=4096)).field == "sliding_window"


# ---------------------------------------------------------------- weight formats: quantization_config

def with_quant(name: str, quant, **extra) -> tuple[dict, list[str]]:
    return from_hf_config_with_notes(dict(load(name), quantization_config=quant, **extra))


def formats(keys: dict) -> tuple:
    return tuple(keys[k] for k in ("weights", "weights_experts", "weights_attn", "weights_embed", "layers_full"))


# Meta-Llama-3.1-405B-Instruct-FP8: fbgemm_fp8 keeping layers 0 and 125, every self_attn and lm_head in BF16, as
# the conversion script lists them (transformers quantize_fp8_llama.py, see SOURCES.md) ...
LLAMA_405B_FP8_SCRIPT = {
    "activation_scale_ub": 1200.0, "quant_method": "fbgemm_fp8",
    "modules_to_not_convert": ["model.layers.0", "model.layers.125", "lm_head"]
    + [f"model.layers.{i}.self_attn" for i in range(1, 125)],
}
# ... and as the published config.json spells them, module by module.
LLAMA_405B_FP8_MODULES = {
    "activation_scale_ub": 1200.0, "quant_method": "fbgemm_fp8",
    "modules_to_not_convert": [f"model.layers.{i}.mlp.{p}" for i in (0, 125) for p in ("down_proj", "gate_proj", "up_proj")]
    + [f"model.layers.{i}.self_attn.{p}" for i in range(126) for p in ("k_proj", "o_proj", "q_proj", "v_proj")]
    + ["lm_head"],
}


@pytest.mark.parametrize("quant", [LLAMA_405B_FP8_SCRIPT, LLAMA_405B_FP8_MODULES], ids=["script", "modules"])
def test_llama_405b_fp8_keeps_attention_embeddings_and_two_blocks_in_bf16(quant):
    keys, notes = with_quant("llama-3.1-405b", quant, torch_dtype="bfloat16")
    assert formats(keys) == ("fp8", "fp8", "bf16", "bf16", 2)
    preset = catalogue.models()["llama-3.1-405b-fp8"]
    assert formats(keys) == (preset["weights"], preset["weights_experts"], preset["weights_attn"],
                             preset["weights_embed"], preset["layers_full"])
    assert any("fbgemm_fp8" in n and "layers_full=2" in n and "weights_attn=bf16" in n for n in notes)
    assert not parse(keys).errors
    # The shape still matches the catalogue's 405B rows: the formats are extra keys, not shape.
    assert catalogue.match_model(keys) in ("llama-3.1-405b", "llama-3.1-405b-fp8")


def test_a_layer_number_names_that_layer_only():
    # "model.layers.1" keeps layer 1, not 10-19 or 100-125.
    keys, _ = with_quant("llama-3.1-405b", {"quant_method": "fbgemm_fp8", "modules_to_not_convert": ["model.layers.1"]})
    assert keys["layers_full"] == 1 and keys["weights_attn"] == "fp8"


def test_deepseek_v3_block_fp8():
    # deepseek-ai/DeepSeek-V3 config.json quantization_config (removed from the maxtext copy, see SOURCES.md).
    quant = {"activation_scheme": "dynamic", "fmt": "e4m3", "quant_method": "fp8", "weight_block_size": [128, 128]}
    keys, notes = with_quant("deepseek-v3", quant)
    assert formats(keys) == ("fp8", "fp8", "fp8", "bf16", 0)
    preset = catalogue.models()["deepseek-v3"]
    assert (preset["weights"], preset["weights_experts"], preset["weights_embed"]) == ("fp8", "fp8", "bf16")
    assert any("128x128 blocks" in n for n in notes)


def test_gpt_oss_mxfp4_experts():
    # openai/gpt-oss-20b config.json quantization_config (removed from the maxtext copy, see SOURCES.md).
    quant = {"modules_to_not_convert": ["model.layers.*.self_attn", "model.layers.*.mlp.router",
                                        "model.embed_tokens", "lm_head"], "quant_method": "mxfp4"}
    keys, notes = with_quant("gpt-oss-20b", quant)
    assert formats(keys) == ("bf16", "mxfp4", "bf16", "bf16", 0)
    preset = catalogue.models()["gpt-oss-20b"]
    assert formats(keys) == (preset["weights"], preset["weights_experts"], preset["weights_attn"],
                             preset["weights_embed"], preset["layers_full"])
    assert any("MXFP4" in n and "weights_experts=mxfp4" in n for n in notes)


@pytest.mark.parametrize("weights,expected", [
    ({"num_bits": 8, "type": "float", "strategy": "channel", "symmetric": True, "dynamic": False}, "fp8"),
    ({"num_bits": 8, "type": "int", "strategy": "channel", "symmetric": True}, "int8"),
    ({"num_bits": 4, "type": "int", "strategy": "group", "group_size": 128, "symmetric": True}, "4.125"),
    ({"num_bits": 4, "type": "int", "strategy": "group", "group_size": 128, "symmetric": False}, "int4-g128"),
    ({"num_bits": 4, "type": "float", "strategy": "tensor_group", "group_size": 16}, "nvfp4"),
    ({"num_bits": 4, "type": "float", "strategy": "group", "group_size": 32}, "mxfp4"),
], ids=["fp8", "int8", "w4a16-sym", "w4a16-asym", "nvfp4", "mxfp4"])
def test_compressed_tensors_groups(weights, expected):
    quant = {"quant_method": "compressed-tensors", "format": "pack-quantized", "ignore": ["lm_head"],
             "config_groups": {"group_0": {"targets": ["Linear"], "weights": weights, "input_activations": None}}}
    keys, notes = with_quant("llama-3.1-8b", quant)
    assert formats(keys) == (expected, expected, expected, "bf16", 0)
    assert not parse(keys).errors
    assert any("compressed-tensors" in n for n in notes)


@pytest.mark.parametrize("quant", [
    {"quant_method": "compressed-tensors", "ignore": ["lm_head"],
     "config_groups": {"g": {"targets": ["Linear"], "weights": {"num_bits": 8, "type": "float", "strategy": "channel"}}}},
    {"quant_method": "compressed-tensors", "ignore": ["lm_head", "re:.*self_attn.*"],
     "config_groups": {"g": {"targets": ["Linear"], "weights": {"num_bits": 8, "type": "float", "strategy": "channel"}}}},
    {"quant_method": "bitsandbytes", "load_in_4bit": True, "bnb_4bit_quant_type": "nf4",
     "bnb_4bit_use_double_quant": True},
], ids=["fp8-lm-head-bf16", "fp8-attention-bf16", "bnb-nf4"])
def test_a_config_of_a_preset_shape_keeps_the_parts_it_keeps_in_16_bits(quant):
    """A config.json whose shape is a catalogue preset stands for that preset, with every format the config states
    that the preset does not ship: a part the preset ships no format for follows the link's weights, so the
    config's 16-bit LM head or attention must stay stated (they were dropped as "the same as bf16", and the
    checkpoint priced 11-27 % lighter than it loads)."""
    keys, _ = with_quant("llama-3.1-8b", quant)
    matched = catalogue.match_model(keys)
    assert matched == "llama-3.1-8b"
    as_preset = parse({"model": matched, **catalogue.format_differences(keys, matched)}).scenario
    as_shape = parse(keys).scenario
    assert formats(as_preset.model_dump()) == formats(keys)
    assert model.weight_bytes(as_preset) == pytest.approx(model.weight_bytes(as_shape), rel=1e-3)  # the match's 0.1 %


def test_compressed_tensors_ignore_patterns():
    quant = {"quant_method": "compressed-tensors",
             "config_groups": {"group_0": {"targets": ["Linear"],
                                           "weights": {"num_bits": 8, "type": "float", "strategy": "channel"}}},
             "ignore": ["lm_head", "re:.*mlp.gate$", "re:.*self_attn.*", "re:model.layers.(0|1).*"]}
    keys, notes = with_quant("qwen3-30b-a3b", quant)
    assert formats(keys) == ("fp8", "fp8", "bf16", "bf16", 0)
    # The alternation is not a pattern this module reads (it never runs a regular expression): it is told.
    assert any("not understood" in n and "(0|1)" in n for n in notes)


def test_compressed_tensors_kv_scheme_and_sparsity_are_told():
    quant = {"quant_method": "compressed-tensors", "kv_cache_scheme": {"num_bits": 8, "type": "float"},
             "sparsity_config": {"format": "sparse-24-bitmask"},
             "config_groups": {"g": {"targets": ["Linear"], "weights": {"num_bits": 8, "type": "float"}}}}
    _, notes = with_quant("llama-3.1-8b", quant)
    assert any("kv_cache_scheme" in n for n in notes) and any("sparsity" in n for n in notes)


@pytest.mark.parametrize("bits,group,expected", [
    (4, 128, "int4-g128"), (4, 64, "int4-g64"), (4, 32, "5"), (3, 128, "3.25"), (8, 128, "8.25"),
    (8, -1, "int8"), (4, -1, "int4"), (2, 64, "2.5"),
])
def test_gptq_and_awq_bits_and_groups(bits, group, expected):
    # A 16-bit scale and a 16-bit zero per group: bits + 32 / group (4 bits in 128 or 64 are catalogue formats).
    gptq = {"bits": bits, "group_size": group, "desc_act": False, "sym": True, "quant_method": "gptq"}
    keys, _ = with_quant("qwen2.5-7b", gptq, torch_dtype="bfloat16")
    assert formats(keys) == (expected, expected, expected, "bf16", 0)
    awq = {"quant_method": "awq", "zero_point": True, "q_group_size": group, "w_bit": bits, "version": "GEMM"}
    assert formats(with_quant("qwen2.5-7b", awq)[0]) == formats(keys)
    assert not parse(keys).errors


def test_a_float16_checkpoint_keeps_its_tables_in_fp16():
    awq = {"bits": 4, "group_size": 128, "quant_method": "awq", "version": "gemm", "zero_point": True,
           "modules_to_not_convert": None}
    keys, _ = with_quant("qwen2.5-7b", awq, torch_dtype="float16")
    assert formats(keys) == ("int4-g128", "int4-g128", "int4-g128", "fp16", 0)


def test_gptq_with_a_quantized_lm_head():
    keys, notes = with_quant("llama-3.1-8b", {"bits": 4, "group_size": 128, "quant_method": "gptq", "lm_head": True})
    assert keys["weights_embed"] == str((16 + 4.25) / 2) == "10.125"  # the 16-bit input table and the 4.25-bit head
    assert any("LM head is quantized" in n for n in notes)


@pytest.mark.parametrize("quant,expected", [
    ({"load_in_4bit": True, "bnb_4bit_quant_type": "nf4", "bnb_4bit_use_double_quant": True}, "4.127"),
    ({"load_in_4bit": True, "bnb_4bit_quant_type": "fp4", "bnb_4bit_use_double_quant": False}, "4.5"),
    ({"load_in_8bit": True}, "int8"),
], ids=["nf4-double", "fp4", "int8"])
def test_bitsandbytes(quant, expected):
    # 4 bits + an 8-bit absmax per 64 + an fp32 scale per 256 absmax = 4.127; without double quantization an
    # fp32 absmax per 64 = 4.5.
    keys, notes = with_quant("llama-3.1-8b", {"quant_method": "bitsandbytes", "llm_int8_skip_modules": None, **quant})
    assert formats(keys) == (expected, expected, expected, "bf16", 0)
    assert any("bitsandbytes" in n for n in notes)
    assert not parse(keys).errors


def test_modelopt_nvfp4_nemotron_nano_keeps_its_attention_blocks():
    # nvidia/NVIDIA-Nemotron-3-Nano-30B-A3B-NVFP4's exclusions: the head, the six attention blocks' projections,
    # the Mamba block before each and every convolution (the shape of its hf_quant_config.json, SOURCES.md).
    attention = [5, 12, 19, 26, 33, 42]
    exclude = ["lm_head"] + [f"backbone.layers.{i}.mixer.{p}" for i in attention for p in
                             ("q_proj", "k_proj", "v_proj", "o_proj")]
    exclude += [f"backbone.layers.{i - 1}.mixer.{p}" for i in attention for p in ("in_proj", "out_proj")]
    exclude += ["backbone.layers.0.mixer.conv1d", "backbone.layers.2.mixer.conv1d"]
    quant = {"quant_method": "modelopt", "quant_algo": "NVFP4", "group_size": 16, "kv_cache_quant_algo": "FP8",
             "exclude_modules": exclude}
    keys, notes = with_quant("nemotron-3-nano-30b-a3b", quant)
    assert formats(keys) == ("nvfp4", "nvfp4", "bf16", "bf16", 0)
    assert any("not modelled" in n for n in notes)  # the Mamba projections kept in 16 bits
    assert any("KV cache" in n for n in notes)


def test_half_of_the_attention_layers_kept_is_an_average():
    modules = [f"model.layers.{i}.self_attn" for i in range(16)]  # 16 of Llama 3.1 8B's 32 layers
    keys, notes = with_quant("llama-3.1-8b", {"quant_method": "fp8", "modules_to_not_convert": modules})
    assert keys["weights_attn"] == "12"  # (16 x 16 + 16 x 8) / 32 bits
    assert any("16 of 32 attention layers" in n for n in notes)


def test_qwen3_next_fp8_keeps_linear_projections_at_16_bits_and_says_so():
    modules = ["lm_head"] + [f"model.layers.{i}.mlp.gate" for i in range(48)] + [
        f"model.layers.{i}.linear_attn.in_proj_ba" for i in range(48) if (i + 1) % 4]
    keys, notes = with_quant("qwen3-next-80b-a3b", {"quant_method": "fp8", "weight_block_size": [128, 128],
                                                    "modules_to_not_convert": modules})
    assert formats(keys) == ("fp8", "fp8", "fp8", "bf16", 0)
    assert keys["linear_layers"] == 36
    assert any("36 other layers" in n and "not modelled" in n for n in notes)


def test_jamba_in_8_bits_with_its_mamba_layers_skipped_says_what_is_not_modelled():
    # AI21's advice for Jamba: BitsAndBytesConfig(load_in_8bit=True, llm_int8_skip_modules=["mamba"]).
    quant = {"quant_method": "bitsandbytes", "load_in_8bit": True, "llm_int8_skip_modules": ["mamba"]}
    keys, notes = with_quant("jamba-1.5-mini", quant)
    assert formats(keys) == ("int8", "int8", "int8", "bf16", 0)
    assert any("28 other layers" in n and "not modelled" in n for n in notes)  # the 28 Mamba layers only


def test_whole_nemotron_h_blocks_are_not_counted_as_whole_layers():
    # A Nemotron-H block is one mixer: keeping an attention block whole keeps its attention, not a layer's MLP.
    quant = {"quant_method": "fp8", "modules_to_not_convert": [f"backbone.layers.{i}" for i in (7, 18, 29, 40)]}
    keys, _ = with_quant("nemotron-h-8b-base-8k", quant)
    assert "".join(load("nemotron-h-8b-base-8k")["hybrid_override_pattern"][i] for i in (7, 18, 29, 40)) == "****"
    assert formats(keys) == ("fp8", "fp8", "bf16", "bf16", 0)


@pytest.mark.parametrize("quant", [
    {"quant_method": "hqq", "nbits": 4}, {"quant_method": "quanto", "weights": "int8"}, {"quant_method": 7},
    {"bits": 4}, "fp8", {"quant_method": "modelopt", "quant_algo": "MIXED_PRECISION"},
], ids=["hqq", "quanto", "number", "no-method", "not-an-object", "modelopt-mixed"])
def test_unknown_methods_leave_the_formats_unset_and_say_so(quant):
    keys, notes = with_quant("llama-3.1-8b", quant)
    assert not set(keys) & FORMAT_KEYS
    assert keys == from_hf_config(load("llama-3.1-8b"))
    assert any("not" in n and ("read" in n or "set" in n) for n in notes)


@pytest.mark.parametrize("quant", [
    {"quant_method": "gptq", "bits": "four", "group_size": 128},
    {"quant_method": "gptq", "bits": 40, "group_size": 128},
    {"quant_method": "awq", "group_size": 128},
    {"quant_method": "fp8", "modules_to_not_convert": "lm_head"},
    {"quant_method": "fp8", "modules_to_not_convert": [3]},
    {"quant_method": "bitsandbytes", "load_in_4bit": "yes"},
    {"quant_method": "bitsandbytes", "load_in_4bit": True, "bnb_4bit_quant_type": "int4"},
    {"quant_method": "compressed-tensors", "config_groups": {"g": {"weights": {"num_bits": 99}}}},
    {"quant_method": "compressed-tensors", "config_groups": {"g": {"weights": {"num_bits": 4, "type": "bf"}}}},
    {"quant_method": "compressed-tensors", "config_groups": {"g": [1]}},
])
def test_a_known_method_with_bad_figures_is_refused(quant):
    err = refused(dict(load("llama-3.1-8b"), quantization_config=quant))
    assert err.field == "quantization_config"


def test_hostile_module_lists_are_read_quickly_and_quoted_short():
    nasty = "re:(a+)+$" + "a" * 40  # a catastrophic regular expression: it must never be run
    modules = [nasty, "\x1b[31m" + "x" * 5000, "model.layers.99999.self_attn", "model.layers.7.whatever"] * 50
    keys, notes = with_quant("llama-3.1-8b", {"quant_method": "fp8", "modules_to_not_convert": modules})
    assert keys["weights"] == "fp8" and keys["layers_full"] == 0
    text = " ".join(notes)
    assert "\x1b" not in text and "x" * 100 not in text and len(text) < 2000


def test_formats_come_from_the_json_entry_point_too():
    config = dict(load("gpt-oss-20b"), quantization_config={"quant_method": "mxfp4"})
    text = json.dumps(config)
    keys, notes = from_hf_config_json_with_notes(text)
    assert (keys, notes) == from_hf_config_with_notes(config)
    assert from_hf_config_json(text.encode()) == keys == from_hf_config(config)


def test_compression_config_is_read_like_quantization_config():
    quant = {"quant_method": "compressed-tensors",
             "config_groups": {"g": {"targets": ["Linear"], "weights": {"num_bits": 8, "type": "float"}}}}
    a = from_hf_config(dict(load("llama-3.1-8b"), compression_config=quant))
    assert a == from_hf_config(dict(load("llama-3.1-8b"), quantization_config=quant))
    assert a["weights"] == "fp8"


# ---------------------------------------------------------------- the presets still match

@pytest.mark.parametrize("name,preset", [
    ("llama-3.1-8b", "llama-3.1-8b"), ("llama-3.1-70b", "llama-3.1-70b"), ("mixtral-8x7b", "mixtral-8x7b"),
    ("gpt-oss-20b", "gpt-oss-20b"), ("gemma-3-27b-it", "gemma-3-27b"), ("qwen3-next-80b-a3b", "qwen3-next-80b-a3b"),
    ("qwen3.5-35b-a3b", "qwen3.5-35b-a3b"), ("llama-3.1-405b", "llama-3.1-405b"),
])
def test_imported_shapes_still_match_their_presets(name, preset):
    keys = from_hf_config(load(name))
    assert catalogue.match_model(keys) == preset
    assert keys["vocab"] == catalogue.models()[preset]["vocab"]


#: Fixtures of the models the catalogue ships, by preset id where the file's name differs.
PRESET_OF = {"gemma-3-27b-it": "gemma-3-27b"}
#: Where a fixture and its preset differ on purpose: Gemma 3 4B's file states maxtext's 262,144 (the tokenizer),
#: the preset the 262,208 rows the checkpoint loads with (models.csv notes).
KNOWN_DIFFERENCES = {("gemma-3-4b", "vocab")}


@pytest.mark.parametrize("name", [n for n in ALL_FIXTURES if PRESET_OF.get(n, n) in catalogue.models()])
def test_a_shipped_models_config_imports_as_its_preset(name):
    """One story: importing a preset's own config.json gives the preset's shape, figure for figure."""
    preset = catalogue.models()[PRESET_OF.get(name, name)]
    keys = from_hf_config(load(name))
    for key, value in keys.items():
        if key == "model" or key not in preset or (PRESET_OF.get(name, name), key) in KNOWN_DIFFERENCES:
            continue
        assert value == pytest.approx(preset[key], rel=1e-3, abs=1e-9), (name, key, value, preset[key])
