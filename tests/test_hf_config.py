"""calc.hf_config: Hugging Face config.json -> custom-model link keys.

The fixtures are real published configs (origins in tests/fixtures/hf/SOURCES.md); the
reference totals are the published or independently computed parameter counts.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest

from calc import report
from calc.__main__ import main
from calc.hf_config import _DEFAULTS, HFConfigError, count_parameters, from_hf_config, from_hf_config_json

FIXTURES = Path(__file__).parent / "fixtures" / "hf"
REFUSED = FIXTURES / "refused"  # real configs the calculator must refuse (not in ALL_FIXTURES)

LINK_KEYS = {
    "model", "params_b", "active_b", "layers", "heads", "kv_heads", "head_dim", "hidden",
    "experts", "experts_active", "kv_latent", "window", "window_layers", "embed_b",
}
INT_KEYS = LINK_KEYS - {"model", "params_b", "active_b", "embed_b"}


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
    for key in ("params_b", "active_b", "embed_b"):
        assert type(keys[key]) is float, key
    # docs/method.md sections 2-5 consistency rules.
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


def test_qwen3_next_shaped_config_is_refused_naming_a_field():
    config = dict(load("qwen3-8b"), model_type="qwen3_next", full_attention_interval=4,
                  linear_num_value_heads=32, linear_num_key_heads=16, linear_key_head_dim=128,
                  linear_value_head_dim=128, linear_conv_kernel_dim=4,
                  layer_types=["linear_attention"] * 3 + ["full_attention"])
    err = refused(config)
    assert err.field == "full_attention_interval"


def test_jamba_shaped_config_is_refused_naming_a_field():
    config = dict(load("mixtral-8x7b"), model_type="jamba", architectures=["JambaForCausalLM"],
                  attn_layer_period=8, attn_layer_offset=4, mamba_d_state=16, mamba_expand=2)
    assert refused(config).field == "attn_layer_period"


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
