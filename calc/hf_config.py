"""Read a Hugging Face ``config.json`` and describe the model as link keys.

A pasted or uploaded ``config.json`` becomes a *custom* model (docs/method.md sections 2-5,
last bullet).  The shapes in the file are enough to count the parameters
exactly, so the calculator does not need the weights:

* input embeddings ``vocab_size * hidden_size``; an output head of the same
  size unless ``tie_word_embeddings`` is true;
* per layer, the attention projections (q, k, v, o with
  ``head_dim`` = the config's ``head_dim`` or ``hidden_size / num_attention_heads``),
  their biases where the family has them (Qwen2: q/k/v; ``attention_bias``:
  q/k/v/o; gpt-oss also one "sink" logit per head), q/k norms (Qwen3, Gemma 3,
  OLMo 2/3), and DeepSeek's multi-head latent attention (MLA) when
  ``kv_lora_rank`` is set;
* per layer, a gated MLP of three matrices (gate, up, down), or a
  mixture-of-experts block: the router (with its bias for gpt-oss and DeepSeek-V3's
  ``noaux_tc`` routing), the routed experts and any shared expert;
* the norms: two per layer (four for Gemma 2 and 3) and a final one.

Units: ``params_b``, ``active_b`` and ``embed_b`` are **billions of
parameters** (floats, rounded to 1e-9 so the exact count survives);
``state_kib`` is KiB (a float); every other shape key is an integer
(``layers``, ``heads``, ``kv_heads``, ``head_dim``, ``hidden``, ``kv_latent``,
``vocab``, ``linear_layers`` and ``state_layers`` are counts or widths in elements, ``window``
is tokens) and 0 means "absent".  ``active_b`` is everything a token uses: the
total less the routed experts it is not sent to (``num_experts_per_tok`` of
them are).  Multi-token-prediction layers (``num_nextn_predict_layers``) and
vision or audio towers are not part of the text model and are not counted.

A field the file leaves out takes the default of the ``transformers``
config class of its ``model_type`` where the table ``_DEFAULTS`` has one (the
library fills these in, and real checkpoints rely on it: Gemma 3's
``vocab_size`` 262,208 and its five sliding layers to every global one).
The model's size fields never default.

Hybrid layouts (read from the ``transformers`` configuration and modelling
code of each family): Qwen3-Next, Qwen3.5 and Qwen3.6 (``model_type``
``qwen3_next``, ``qwen3_5*``) mix Gated DeltaNet layers (``layer_types``
entries ``"linear_attention"``, else every ``full_attention_interval``-th
layer is softmax attention) with gated softmax attention (``q_proj`` twice as
wide: its second half gates the output); Nemotron-H (``nemotron_h``) lists one
block per character of ``hybrid_override_pattern`` (``M`` Mamba2, ``*``
attention, ``-`` MLP, ``E`` mixture of experts) or ``layers_block_type``;
Jamba (``jamba``) has attention on layer ``i`` when ``i % attn_layer_period ==
attn_layer_offset`` and Mamba elsewhere, experts when ``i %
expert_layer_period == expert_layer_offset``.  Their linear (recurrent)
layers' projections are counted; ``linear_layers`` is the number of layers
holding a fixed state per sequence instead of a per-token cache and
``state_kib`` that state per layer and sequence at 16 bits (KiB = 1,024
bytes): Gated DeltaNet ``Hv * dk * dv`` recurrent values plus a convolution
window of ``(K - 1) * (2 * Hk * dk + Hv * dv)``; Mamba2 ``H * P * N`` plus
``(K - 1) * (H * P + 2 * G * N)``; Mamba (Jamba) ``E * hidden * N`` plus
``(K - 1) * E * hidden``.  ``layers`` is the number of layers, and the
attention figures (``heads``, ``kv_heads``, ``head_dim``) describe the
softmax-attention layers.  Nemotron-H's MLP-only blocks (``-``, ``E``) have
neither cache nor state: they are counted in the parameters and folded into
the mixer blocks, so ``layers`` is its Mamba plus attention blocks (a
``note`` says so).  Falcon-H1 (``falcon_h1``) runs softmax attention and a
Mamba2 mixer side by side in every layer, so each of its layers holds a KV
cache *and* a fixed state: ``linear_layers`` is 0 and ``state_layers`` (the
layers holding a state, linear or not; given only when it differs from
``linear_layers``) is ``layers``.

Weight formats: a ``quantization_config`` (or ``compression_config``) is read
for the format keys ``weights``, ``weights_experts``, ``weights_attn``,
``weights_embed`` (format ids of ``calc/data/weight_formats.csv`` or bits per
weight) and ``layers_full`` (whole blocks kept at 16 bits): ``fbgemm_fp8``,
``fp8``, ``compressed-tensors``, ``gptq``, ``awq``, ``mxfp4``,
``bitsandbytes`` and ``modelopt``; the modules it keeps in 16 bits
(``modules_to_not_convert``, ``ignore``, ``llm_int8_skip_modules``,
``exclude_modules``) set the attention, embedding and whole-block formats.
An unknown ``quant_method`` leaves the formats unset.
:func:`from_hf_config_with_notes` returns beside the keys a list of plain
sentences saying what was read (formats, hybrid layout, what was left out).

Errors: every problem raises :class:`HFConfigError` (a ``ValueError``) whose
``.field`` names the config field at fault and whose message says what was
expected: a missing field the count needs, a value that is not a non-negative
integer (or a bool where a bool is meant), an absurd size, or an architecture
whose cache this calculator cannot size: linear-attention, recurrent,
state-space or convolution layers outside the families above
(``layer_types`` entries, hybrid layer lists, ``mamba_*``/``ssm_*``/``linear_*``
fields), Falcon-H1 with attention on some layers only (``attn_layer_indices``)
or a sliding window, caches shared
between layers, or per-token caches beside the keys and values (DeepSeek
V3.2's ``index_*`` indexer); and a ``quantization_config`` of a known method
whose figures are not what the method allows.  Such a config is refused rather than sized wrongly.
A message quotes at most 60 characters of any value from the file.
:func:`from_hf_config_json` also rejects text that is too large, not UTF-8,
not JSON, NaN/Infinity, nested deeper than 20 levels, holding more than 10,000
keys and items, or whose top level is not an object.  Nothing in the file is
ever evaluated or imported.

Sources for the shapes (read 2025): the Hugging Face ``transformers``
modelling code of each family (``modeling_llama``, ``modeling_mistral``,
``modeling_mixtral``, ``modeling_qwen2``, ``modeling_qwen3``,
``modeling_qwen3_moe``, ``modeling_gemma2``, ``modeling_gemma3``,
``modeling_deepseek_v3``, ``modeling_gpt_oss``, ``modeling_llama4``,
``modular_qwen3_next``, ``modular_qwen3_5``, ``modular_qwen3_5_moe``,
``modeling_nemotron_h``, ``modular_jamba``, ``modeling_falcon_h1``; read 2026) and the
DeepSeek-V2/V3 technical reports for MLA.  The totals agree with the published
counts (Llama-3.1-8B 8,030,261,248; Mixtral-8x7B 46.7B / 12.9B active;
DeepSeek-V3 671B / 37B active; gpt-oss-20b 20.9B); the test fixtures and their
origins are listed in ``tests/fixtures/hf/SOURCES.md``.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from typing import Any

__all__ = [
    "HFConfigError",
    "count_parameters",
    "from_hf_config",
    "from_hf_config_json",
    "from_hf_config_json_with_notes",
    "from_hf_config_with_notes",
]

# Sanity bounds.  They sit far above any released model and only exist so
# that a hostile or garbled file cannot ask for nonsense.
MAX_LAYERS = 10_000
MAX_WIDTH = 1 << 22  # hidden size, head_dim, MLP widths, LoRA ranks
MAX_HEADS = 1 << 16
MAX_VOCAB = 1 << 25
MAX_EXPERTS = 1 << 16
MAX_WINDOW = 1 << 30  # tokens
MAX_PARAMS = 10**14  # 100 trillion parameters

MAX_JSON_DEPTH = 20
MAX_JSON_ITEMS = 10_000

# Model types whose layers are not (only) softmax attention plus an MLP; a
# count from the standard fields would be wrong, so they are refused.
# Qwen3-Next / Qwen3.5 (Gated DeltaNet), Nemotron-H and Jamba are counted by
# the hybrid code below (``_HYBRID_FIELDS``), and so is Falcon-H1 (attention and
# Mamba2 side by side in every layer, ``_count_falcon_h1``).
_UNSUPPORTED_TYPES = (
    "gemma3n",
    "gemma4",
    "deepseek_v4",
    "mamba",
    "zamba",
    "falcon_mamba",
    "nemotron_h_",  # nemotron_h_puzzle and other variants with per-block shapes
    "rwkv",
    "recurrent_gemma",
    "lfm2",
    "minimax",
    "bamba",
    "granitemoehybrid",
)

_KNOWN_LAYER_TYPES = ("full_attention", "sliding_attention", "chunked_attention")

# Defaults the Hugging Face ``transformers`` config classes fill in for a field
# that ``config.json`` leaves out, per ``model_type``; real checkpoints rely on
# them (google/gemma-3-27b-it states neither ``vocab_size`` nor the 5:1
# sliding/global pattern, gemma-3-4b-it not even its head counts).  A default
# applies only when the field is absent from the text config and the top level
# alike: an explicit ``null`` stays "not set", as the library keeps it.  The
# table holds the fields that decide the vocabulary, the attention shapes and
# the cache layout.  It never holds the model's size (``hidden_size``,
# ``num_hidden_layers``, ``intermediate_size``): a file without those is cut
# short, and is refused naming the field rather than read as the library's
# small example model.  Families not listed get no defaults.
_GEMMA3_TEXT = {
    # transformers Gemma3TextConfig.__init__ (configuration_gemma3.py, 4.50+):
    # vocab_size=262_208, num_attention_heads=8, num_key_value_heads=4,
    # head_dim=256, tie_word_embeddings=True, sliding_window=4096,
    # sliding_window_pattern=6: layer i is global when (i + 1) % 6 == 0, the
    # rest slide (later versions keep this rule as the default layer_types).
    # Gemma3Config (model_type "gemma3") builds its text model from
    # Gemma3TextConfig, so both names share the table.
    "vocab_size": 262_208,
    "num_attention_heads": 8,
    "num_key_value_heads": 4,
    "head_dim": 256,
    "tie_word_embeddings": True,
    "sliding_window": 4096,
    "sliding_window_pattern": 6,
}
_QWEN_WINDOW = {
    # Qwen2Config / Qwen3Config / Qwen2MoeConfig / Qwen3MoeConfig: the window
    # in the file is used only with use_sliding_window=True (default False).
    "use_sliding_window": False,
}
_DEFAULTS: dict[str, dict[str, Any]] = {
    "gemma3_text": _GEMMA3_TEXT,
    "gemma3": _GEMMA3_TEXT,
    # transformers Gemma2Config: vocab_size=256000, num_attention_heads=8,
    # num_key_value_heads=4, head_dim=256, tie_word_embeddings=True,
    # sliding_window=4096; its default layer_types slide on layer i when
    # (i + 1) % 2 != 0, i.e. the even layers (see _window).
    "gemma2": {
        "vocab_size": 256_000,
        "num_attention_heads": 8,
        "num_key_value_heads": 4,
        "head_dim": 256,
        "tie_word_embeddings": True,
        "sliding_window": 4096,
    },
    # transformers GemmaConfig: vocab_size=256000, head_dim=256 (Gemma 7B's
    # 3072 / 16 heads would give 192), tie_word_embeddings=True, no window.
    "gemma": {
        "vocab_size": 256_000,
        "head_dim": 256,
        "tie_word_embeddings": True,
    },
    # transformers MistralConfig: sliding_window=4096 on every layer, unless
    # the file says null.
    "mistral": {"sliding_window": 4096},
    # Qwen2Config / Qwen3Config: max_window_layers=28 (layers from there on
    # slide when the window is on); Qwen3Config: head_dim=128 (Qwen3-4B has
    # 2560 / 32 heads = 80 but 128-wide heads).
    "qwen2": {**_QWEN_WINDOW, "max_window_layers": 28},
    "qwen3": {**_QWEN_WINDOW, "max_window_layers": 28, "head_dim": 128},
    "qwen2_moe": _QWEN_WINDOW,
    "qwen3_moe": _QWEN_WINDOW,
    # transformers Llama4TextConfig: attention_chunk_size=8192 on the RoPE
    # layers (three of every four, no_rope_layer_interval=4; see _window).
    "llama4_text": {"attention_chunk_size": 8192},
    "llama4": {"attention_chunk_size": 8192},
}
# transformers Qwen3NextConfig / Qwen3_5TextConfig / Qwen3_5MoeTextConfig
# (configuration_qwen3_next.py, modular_qwen3_5.py, modular_qwen3_5_moe.py):
# head_dim=256, the Gated DeltaNet shape (kernel 4, 16 key heads and 32 value
# heads of 128) and, without layer_types, full attention on every 4th layer.
_GDN_DEFAULTS = {
    "head_dim": 256,
    "full_attention_interval": 4,
    "linear_conv_kernel_dim": 4,
    "linear_key_head_dim": 128,
    "linear_value_head_dim": 128,
    "linear_num_key_heads": 16,
    "linear_num_value_heads": 32,
}
_DEFAULTS.update(dict.fromkeys(("qwen3_next", "qwen3_5", "qwen3_5_text", "qwen3_5_moe", "qwen3_5_moe_text"),
                                _GDN_DEFAULTS))
# transformers NemotronHConfig (configuration_nemotron_h.py): head_dim=128
# (older files say attention_head_dim), the Mamba2 mixer's shape (128 heads of
# 64, state 128, 8 groups, kernel 4, conv bias on, projection biases off).
_DEFAULTS["nemotron_h"] = {
    "head_dim": 128,
    "ssm_state_size": 128,
    "mamba_num_heads": 128,
    "mamba_head_dim": 64,
    "n_groups": 8,
    "conv_kernel": 4,
    "use_conv_bias": True,
    "use_bias": False,
}
# transformers JambaConfig (configuration_jamba.py): attention on layer i when
# i % 8 == 4, experts when i % 2 == 1, Mamba state 16, kernel 4, expand 2,
# dt rank ceil(hidden / 16), conv bias on, projection biases off.
_DEFAULTS["jamba"] = {
    "attn_layer_period": 8,
    "attn_layer_offset": 4,
    "expert_layer_period": 2,
    "expert_layer_offset": 1,
    "mamba_d_state": 16,
    "mamba_d_conv": 4,
    "mamba_expand": 2,
    "mamba_dt_rank": "auto",
    "mamba_conv_bias": True,
    "mamba_proj_bias": False,
}

# Fields of architectures whose cache is not (only) keys and values of
# softmax attention, or whose layers are not all attention: counting them
# with the plain formula would mis-size the cache, so they are refused
# naming the field.  Each maps to what the calculator would miss.
_INDEXER_KEYS = ("index_head_dim", "index_n_heads", "index_topk")
_UNSIZED_FIELDS = {
    # Layers of another kind beside attention (recurrent, state-space,
    # linear attention, convolution).
    "attn_layer_indices": "only the listed layers are attention; the others are state-space layers",
    "attn_layer_period": "only every attn_layer_period-th layer is attention; the others are Mamba layers",
    "attn_layer_offset": "only some layers are attention; the others are Mamba layers",
    "full_attention_interval": "only every full_attention_interval-th layer is softmax attention; "
    "the others are linear attention",
    "hybrid_override_pattern": "the pattern mixes Mamba, attention and MLP layers",
    "layers_block_type": "the layers mix attention with state-space blocks",
    "hybrid_layer_ids": "the layers mix attention with state-space blocks",
    "block_types": "the layers mix attention with recurrent blocks",
    "attn_type_list": "the layers mix linear and softmax attention",
    "full_attn_idxs": "only the listed layers are attention; the others are convolutions",
    # Caches laid out otherwise than one key and one value per layer.
    "num_kv_shared_layers": "later layers reuse earlier layers' keys and values",
    "use_cla": "adjacent layers share one key/value cache (cross-layer attention)",
    "global_head_dim": "global layers cache heads of another width than head_dim",
    "num_global_key_value_heads": "global layers cache another number of key/value heads",
    "attention_k_eq_v": "keys double as values on some layers",
    "cross_attention_layers": "the listed layers attend to image features, not to the tokens' cache",
}
_UNSIZED_PREFIXES = {
    "mamba_": "the model has Mamba (state-space) layers, whose state is not a per-token cache",
    "ssm_": "the model has state-space layers, whose state is not a per-token cache",
    "linear_": "the model has linear-attention layers, whose state is not a per-token cache",
}

# The hybrid families counted here, and the fields and prefixes each of them
# uses for its linear layers (so they are not refused as unknown hybrids).
_HYBRID_FIELDS = {
    "gdn": ({"full_attention_interval", "mamba_ssm_dtype"}, ("linear_",)),
    "nemotron_h": ({"hybrid_override_pattern", "layers_block_type"}, ("mamba_", "ssm_")),
    "jamba": ({"attn_layer_period", "attn_layer_offset"}, ("mamba_",)),
    "falcon_h1": ({"attn_layer_indices"}, ("mamba_", "ssm_")),
}
# Legacy layer-type names transformers still reads (configuration_utils.remap_legacy_layer_types).
_LEGACY_LAYER_TYPES = {"mamba": "linear_attention", "attention": "full_attention"}

_EXPERT_KEYS = ("num_local_experts", "n_routed_experts", "num_experts")
_MLA_KEYS = ("kv_lora_rank", "qk_rope_head_dim", "qk_nope_head_dim")
_TOPK_KEYS = ("num_experts_per_tok", "experts_per_token")


class HFConfigError(ValueError):
    """A config.json that cannot be turned into a model.

    ``field`` is the name of the config field at fault (``"config"`` for the
    document as a whole); the message starts with it.
    """

    def __init__(self, field: str, message: str) -> None:
        self.field = shown_name(field)
        super().__init__(f"{self.field}: {bounded(message, MAX_MESSAGE_CHARS)}")


#: Longest value, field name and message echoed back: a config's own text is never repeated at length.
MAX_VALUE_CHARS = 60
MAX_MESSAGE_CHARS = 400


def bounded(text: str, limit: int = MAX_VALUE_CHARS) -> str:
    """``text`` with control and format characters escaped (no terminal escape sequence survives) and cut to
    ``limit`` characters with an ellipsis."""
    safe = "".join(ch if ch.isprintable() else ascii(ch)[1:-1] for ch in str(text))
    return safe if len(safe) <= limit else safe[: limit - 1] + "…"


def shown_name(name: str) -> str:
    """A config field name for a message: as is when it is a plain identifier, else quoted and escaped."""
    name = str(name)
    if name.isidentifier() and name.isascii() and len(name) <= MAX_VALUE_CHARS:
        return name
    return bounded(repr(name))


def shown(value: Any) -> str:
    """A config value for a message: its repr, escaped and bounded (a 4,000-digit integer, a megabyte of
    text); integers longer than the bound are given by their digit count."""
    if isinstance(value, int) and not isinstance(value, bool) and abs(value) >= 10**MAX_VALUE_CHARS:
        # str() of an integer past 4,300 digits raises: count its digits from its bits
        return f"an integer of about {int(value.bit_length() * 0.30103) + 1:,} digits"
    if isinstance(value, str) and len(value) > MAX_VALUE_CHARS:
        return bounded(repr(value[: MAX_VALUE_CHARS + 1])) + f" ({len(value):,} characters)"
    if isinstance(value, (list, dict)) and len(value) > MAX_VALUE_CHARS:
        return f"a {type(value).__name__} of {len(value):,} entries"
    return bounded(repr(value))


# --------------------------------------------------------------------------
# Field access
# --------------------------------------------------------------------------


class _Fields:
    """Look a field up in ``text_config`` first, then at the top level."""

    def __init__(self, config: Mapping) -> None:
        if not isinstance(config, Mapping):
            raise HFConfigError(
                "config",
                f"expected a JSON object (mapping), got {type(config).__name__}",
            )
        inner = config.get("text_config")
        if inner is not None and not isinstance(inner, Mapping):
            raise HFConfigError(
                "text_config",
                f"expected an object, got {type(inner).__name__}",
            )
        self.layers: tuple[Mapping, ...] = (inner, config) if inner else (config,)
        self.defaults: Mapping[str, Any] = {}

    def get(self, name: str) -> Any:
        """The field's value; the family's default (``self.defaults``) when no
        layer has the key at all; None when it is null or has no default."""
        for layer in self.layers:
            if name in layer and layer[name] is not None:
                return layer[name]
        if any(name in layer for layer in self.layers):
            return None  # an explicit null: not set
        return self.defaults.get(name)

    def names(self):
        """Every key of the text config and the top level (each once)."""
        seen: set = set()
        for layer in self.layers:
            for key in layer:
                if key not in seen:
                    seen.add(key)
                    yield key

    def has(self, name: str) -> bool:
        return self.get(name) is not None

    def given(self, name: str) -> bool:
        """The file itself sets the field (not null), whatever the family's defaults."""
        return any(layer.get(name) is not None for layer in self.layers)

    def integer(
        self,
        name: str,
        *,
        minimum: int = 1,
        maximum: int = MAX_WIDTH,
        default: int | None = None,
        why: str = "needed to count the parameters",
    ) -> int:
        value = self.get(name)
        if value is None:
            if default is not None:
                return default
            raise HFConfigError(name, f"missing: {why}")
        return _as_int(name, value, minimum, maximum)

    def flag(self, name: str, default: bool) -> bool:
        value = self.get(name)
        if value is None:
            return default
        if not isinstance(value, bool):
            raise HFConfigError(name, f"expected true or false, got {shown(value)}")
        return value

    def first(self, names: tuple[str, ...]) -> str | None:
        for name in names:
            if self.has(name):
                return name
        return None


def _as_int(name: str, value: Any, minimum: int, maximum: int) -> int:
    if isinstance(value, bool):
        raise HFConfigError(name, f"expected an integer, got {shown(value)}")
    if isinstance(value, float):
        if not math.isfinite(value) or not value.is_integer():
            raise HFConfigError(name, f"expected an integer, got {shown(value)}")
        value = int(value)
    if not isinstance(value, int):
        raise HFConfigError(
            name, f"expected an integer, got {type(value).__name__} {shown(value)}"
        )
    if value < minimum:
        raise HFConfigError(name, f"must be at least {minimum}, got {shown(value)}")
    if value > maximum:
        raise HFConfigError(name, f"{shown(value)} is implausibly large (limit {maximum})")
    return value


def _int_list(fields: _Fields, name: str, length: int, maximum: int) -> list[int]:
    value = fields.get(name)
    if not isinstance(value, list):
        raise HFConfigError(name, f"expected a list of integers, got {shown(value)}")
    if len(value) > length:
        raise HFConfigError(name, f"has {len(value)} entries, more than {length} layers")
    return [_as_int(name, v, 0, maximum) for v in value]


# --------------------------------------------------------------------------
# Counting
# --------------------------------------------------------------------------


def _architectures(fields: _Fields) -> str:
    names = []
    for layer in fields.layers:
        value = layer.get("architectures")
        if isinstance(value, list):
            names.extend(v.lower() for v in value if isinstance(v, str))
    return " ".join(names)


_ARCH_FAMILIES = (
    ("qwen3next", "qwen3_next"),
    ("qwen3_5moe", "qwen3_5_moe"),
    ("qwen3_5", "qwen3_5"),
    ("nemotronh", "nemotron_h"),
    ("jamba", "jamba"),
    ("falconh1", "falcon_h1"),
    ("gptoss", "gpt_oss"),
    ("deepseekv3", "deepseek_v3"),
    ("deepseekv2", "deepseek_v2"),
    ("qwen3moe", "qwen3_moe"),
    ("qwen2moe", "qwen2_moe"),
    ("llama4", "llama4"),
    ("gemma3", "gemma3"),
    ("gemma2", "gemma2"),
    ("gemma", "gemma"),
    ("qwen3", "qwen3"),
    ("qwen2", "qwen2"),
    ("olmo3", "olmo3"),
    ("olmo2", "olmo2"),
)


def _model_type(fields: _Fields, arch: str) -> str:
    """The family: ``model_type`` (text model's first), else from ``architectures``."""
    value = fields.get("model_type")
    if value is not None and not isinstance(value, str):
        raise HFConfigError("model_type", f"expected a string, got {shown(value)}")
    if value:
        return value.lower()
    for marker, family in _ARCH_FAMILIES:
        if marker in arch:
            return family
    return ""


def _family(kind: str) -> str | None:
    """The hybrid family of a ``model_type`` counted here: ``"gdn"`` (Gated DeltaNet: Qwen3-Next, Qwen3.5,
    Qwen3.6), ``"nemotron_h"``, ``"jamba"`` or ``"falcon_h1"``; None for the attention-only families."""
    if kind.startswith(("qwen3_next", "qwen3_5")):
        return "gdn"
    if kind in ("nemotron_h", "jamba", "falcon_h1"):
        return kind
    return None


def _mlp(hidden: int, inner: int, bias: bool) -> int:
    """Gated MLP: gate and up (hidden -> inner) and down (inner -> hidden)."""
    params = 3 * hidden * inner
    if bias:
        params += 2 * inner + hidden
    return params


def _attention(f: _Fields, kind: str, hidden: int, heads: int, kv_heads: int, head_dim: int) -> int:
    """Parameters of one standard (non-MLA) attention block."""
    q = heads * head_dim
    kv = kv_heads * head_dim
    params = hidden * q + 2 * hidden * kv + q * hidden
    if kind.startswith("qwen2"):
        params += q + 2 * kv  # Qwen2 always has q/k/v biases, none on o
    elif f.flag("attention_bias", False):
        params += q + 2 * kv + hidden
    if kind.startswith("gpt_oss"):
        params += heads  # one learned attention-sink logit per head
    if _family(kind) == "gdn":
        # Qwen3NextAttention: q_proj is 2 * heads * head_dim wide, its second half gating the output.
        params += hidden * q + (q if f.flag("attention_bias", False) else 0)
    if kind.startswith(("qwen3", "gemma3")):
        params += 2 * head_dim  # q_norm and k_norm over one head
    elif kind.startswith(("olmo2", "olmo3")):
        params += q + kv  # q_norm and k_norm over the whole projection
    return params


def _mla(f: _Fields, hidden: int, heads: int) -> tuple[int, int, int]:
    """Multi-head latent attention (DeepSeek-V2/V3).

    Returns (parameters per layer, cached latent width, head dim). The head dim is ``v_head_dim``, the width of
    each head's output and of ``o_proj`` (128 for DeepSeek-V3, as its preset says): under MLA the cache and the
    attention arithmetic use the latent width, and ``head_dim`` enters only the size of the attention projections
    (calc/model.py ``attention_params``), which the value width sizes more closely than ``qk_nope + qk_rope``.
    """
    kv_rank = f.integer("kv_lora_rank")
    rope = f.integer("qk_rope_head_dim")
    nope = f.integer("qk_nope_head_dim", minimum=0)
    v_dim = f.integer("v_head_dim")
    bias = f.flag("attention_bias", False)
    qk_dim = nope + rope
    params = 0
    if f.has("q_lora_rank"):
        q_rank = f.integer("q_lora_rank")
        params += hidden * q_rank + q_rank  # q_a_proj + q_a_layernorm
        params += q_rank * heads * qk_dim  # q_b_proj
        if bias:
            params += q_rank
    else:
        params += hidden * heads * qk_dim  # q_proj
    params += hidden * (kv_rank + rope) + kv_rank  # kv_a_proj_with_mqa + kv_a_layernorm
    params += kv_rank * heads * (nope + v_dim)  # kv_b_proj
    params += heads * v_dim * hidden  # o_proj
    if bias:
        params += (kv_rank + rope) + hidden
    return params, kv_rank + rope, v_dim


def _moe_layers(f: _Fields, layers: int, kind: str = "") -> set[int]:
    """Indices of the layers whose MLP is a mixture of experts."""
    if kind == "jamba":
        # JambaConfig.layers_num_experts: experts on layer i when i % expert_layer_period == expert_layer_offset.
        period = f.integer("expert_layer_period", maximum=MAX_LAYERS)
        offset = f.integer("expert_layer_offset", minimum=0, maximum=MAX_LAYERS)
        if offset >= period:
            raise HFConfigError("expert_layer_offset", f"{offset} must be smaller than expert_layer_period ({period})")
        return {i for i in range(layers) if i % period == offset}
    if f.has("moe_layers"):
        return set(_int_list(f, "moe_layers", layers, layers - 1))
    first_dense = f.integer("first_k_dense_replace", minimum=0, maximum=layers, default=0)
    freq = f.integer("moe_layer_freq", maximum=layers, default=1)
    step = f.integer("decoder_sparse_step", maximum=layers, default=1)
    interleave = f.integer("interleave_moe_layer_step", maximum=layers, default=1)
    dense_only = set(_int_list(f, "mlp_only_layers", layers, layers)) if f.has("mlp_only_layers") else set()
    return {
        i
        for i in range(layers)
        if i >= first_dense
        and i % freq == 0
        and (i + 1) % step == 0
        and (i + 1) % interleave == 0
        and i not in dense_only
    }


def _window(f: _Fields, kind: str, layers: int) -> tuple[int, int]:
    """(window length in tokens, number of layers that use it)."""
    types = f.get("layer_types")
    if types is not None:
        if not isinstance(types, list) or not all(isinstance(t, str) for t in types):
            raise HFConfigError("layer_types", "expected a list of strings")
        if len(types) != layers:
            raise HFConfigError(
                "layer_types",
                f"has {len(types)} entries but num_hidden_layers is {layers}",
            )
        unknown = sorted(set(types) - set(_KNOWN_LAYER_TYPES))
        if unknown:
            kinds = ", ".join(shown(t) for t in unknown[:3])
            if len(unknown) > 3:
                kinds += f" and {len(unknown) - 3} more"
            raise HFConfigError(
                "layer_types",
                f"layers of type {kinds} are not supported "
                "(only softmax attention, full, sliding or chunked, can be counted)",
            )
        sliding = types.count("sliding_attention")
        chunked = types.count("chunked_attention")
        if sliding and chunked:
            raise HFConfigError("layer_types", "mixes sliding and chunked layers")
        if sliding:
            return f.integer("sliding_window", maximum=MAX_WINDOW, why="layer_types has sliding layers"), sliding
        if chunked:
            return f.integer("attention_chunk_size", maximum=MAX_WINDOW, why="layer_types has chunked layers"), chunked
        return 0, 0

    if kind.startswith("llama4") and f.has("attention_chunk_size"):
        chunk = f.integer("attention_chunk_size", maximum=MAX_WINDOW)
        if f.has("no_rope_layers"):
            flags = _int_list(f, "no_rope_layers", layers, 1)
            count = sum(flags)  # 1 = RoPE layer = chunked attention
        else:
            interval = f.integer("no_rope_layer_interval", maximum=layers, default=4)
            count = sum(1 for i in range(layers) if (i + 1) % interval != 0)
        return (chunk, count) if count else (0, 0)

    if not f.flag("use_sliding_window", True):
        return 0, 0  # Qwen2/Qwen3: the window in the file is switched off
    if not f.has("sliding_window"):
        return 0, 0
    window = f.integer("sliding_window", maximum=MAX_WINDOW)
    if kind.startswith("gemma2"):
        count = (layers + 1) // 2  # even-numbered layers are local
    elif f.has("sliding_window_pattern"):
        pattern = f.integer("sliding_window_pattern", maximum=layers + 1)
        count = sum(1 for i in range(layers) if (i + 1) % pattern != 0)
    elif f.get("use_sliding_window") is True and f.has("max_window_layers"):
        # Qwen2/Qwen3: the first max_window_layers layers keep full attention.
        count = max(0, layers - f.integer("max_window_layers", minimum=0, maximum=layers))
    else:
        count = layers  # Mistral-style: every layer uses the window
    return (window, count) if count else (0, 0)


def _is_set(value: Any) -> bool:
    """A field that switches its feature on: not null, false, zero or empty."""
    if value is None or value is False:
        return False
    if isinstance(value, (int, float)) and value == 0:
        return False
    return not (isinstance(value, (str, list, dict, tuple)) and len(value) == 0)


def _refuse_unsized(f: _Fields, family: str | None = None) -> None:
    """Refuse a config whose cache or layers the calculator cannot size.

    The calculator sizes one key and one value per KV head, layer and token
    (or an MLA latent), and a fixed state in the linear layers of the hybrid
    families it counts (``family``: their own layout fields are let through).
    An architecture that caches more per token (DeepSeek V3.2's indexer keys),
    shares caches between layers, or mixes attention with layers of another
    kind would be mis-sized without a word, so it is refused naming the first
    field that shows it.
    """
    allowed, prefixes = _HYBRID_FIELDS.get(family or "", (set(), ()))
    for name in _INDEXER_KEYS:
        value = f.get(name)
        if _is_set(value):
            raise HFConfigError(
                name,
                f"set ({shown(value)}): this architecture (DeepSeek V3.2 sparse attention) "
                "caches an indexer key per token and layer beside its attention cache, "
                "which the calculator does not size; refused rather than under-sized",
            )
    for name, what in _UNSIZED_FIELDS.items():
        if name in allowed:
            continue
        value = f.get(name)
        if _is_set(value):
            raise HFConfigError(
                name,
                f"set ({shown(value)}): {what}; the calculator sizes only softmax "
                "attention's per-token keys and values, so this config is refused "
                "rather than mis-sized",
            )
    for key in f.names():
        if not isinstance(key, str) or f.get(key) is None or key in allowed or key.startswith(prefixes):
            continue
        for prefix, what in _UNSIZED_PREFIXES.items():
            if key.startswith(prefix):
                raise HFConfigError(
                    shown_name(key),
                    f"{what}; the calculator sizes only softmax attention's per-token "
                    "keys and values, so this config is refused rather than mis-sized",
                )


# --------------------------------------------------------------------------
# Hybrid layouts: which layers are linear (a fixed state) and what they hold
# --------------------------------------------------------------------------


def _type_list(f: _Fields, name: str, allowed: tuple[str, ...], length: int | None = None) -> list[str]:
    """A list of layer-type names (legacy names mapped as transformers maps them), each one of ``allowed``."""
    value = f.get(name)
    if not isinstance(value, list) or not all(isinstance(t, str) for t in value):
        raise HFConfigError(name, f"expected a list of strings, got {shown(value)}")
    if len(value) > MAX_LAYERS:
        raise HFConfigError(name, f"has {len(value):,} entries, more than {MAX_LAYERS:,} layers")
    if length is not None and len(value) != length:
        raise HFConfigError(name, f"has {len(value)} entries but num_hidden_layers is {length}")
    types = [_LEGACY_LAYER_TYPES.get(t, t) for t in value]
    unknown = sorted(set(types) - set(allowed))
    if unknown:
        kinds = ", ".join(shown(t) for t in unknown[:3])
        if len(unknown) > 3:
            kinds += f" and {len(unknown) - 3} more"
        raise HFConfigError(
            name, f"layers of type {kinds} are not supported in this family (it has {', '.join(allowed)})"
        )
    return types


def _gdn_layout(f: _Fields, layers: int, notes: list[str]) -> list[bool]:
    """Qwen3-Next / Qwen3.5: True for each Gated DeltaNet layer (Qwen3NextConfig.__post_init__: layer_types,
    else linear unless (i + 1) % full_attention_interval == 0)."""
    if f.get("layer_types") is not None:
        linear = [t == "linear_attention" for t in
                  _type_list(f, "layer_types", ("linear_attention", "full_attention"), layers)]
        interval = f.get("full_attention_interval")
        if isinstance(interval, int) and not isinstance(interval, bool) and interval > 0 and linear != [
                (i + 1) % interval != 0 for i in range(layers)]:
            notes.append(f"layer_types and full_attention_interval {interval} disagree; layer_types was used, "
                         "as transformers does.")
        return linear
    interval = f.integer("full_attention_interval", maximum=MAX_LAYERS)
    return [(i + 1) % interval != 0 for i in range(layers)]


def _jamba_layout(f: _Fields, layers: int) -> list[bool]:
    """Jamba: True for each Mamba layer (JambaConfig.layers_block_type: attention when
    i % attn_layer_period == attn_layer_offset)."""
    if f.get("layer_types") is not None:
        types = _type_list(f, "layer_types", ("linear_attention", "full_attention"), layers)
        return [t == "linear_attention" for t in types]
    period = f.integer("attn_layer_period", maximum=MAX_LAYERS)
    offset = f.integer("attn_layer_offset", minimum=0, maximum=MAX_LAYERS)
    if offset >= period:
        raise HFConfigError("attn_layer_offset", f"{offset} must be smaller than attn_layer_period ({period})")
    return [i % period != offset for i in range(layers)]


def _gdn(f: _Fields, hidden: int) -> tuple[int, int]:
    """Gated DeltaNet (Qwen3NextGatedDeltaNet, Qwen3_5GatedDeltaNet): (parameters of one layer, state bytes
    per sequence at 16 bits).

    Projections in_proj_qkvz (hidden -> 2 * Hk * dk + 2 * Hv * dv; Qwen3.5 splits it into in_proj_qkv and
    in_proj_z) and in_proj_ba (hidden -> 2 * Hv), a depthwise conv1d of kernel K over 2 * Hk * dk + Hv * dv
    channels without bias, dt_bias and A_log (Hv each), the gated norm (dv) and out_proj (Hv * dv -> hidden).
    The state: the recurrent Hv x dk x dv matrix and the convolution's last K - 1 inputs.
    """
    hk = f.integer("linear_num_key_heads", maximum=MAX_HEADS)
    hv = f.integer("linear_num_value_heads", maximum=MAX_HEADS)
    dk = f.integer("linear_key_head_dim")
    dv = f.integer("linear_value_head_dim")
    kernel = f.integer("linear_conv_kernel_dim", maximum=1024)
    if hv % hk:
        raise HFConfigError("linear_num_value_heads", f"{hv} is not a multiple of linear_num_key_heads ({hk})")
    key, value = hk * dk, hv * dv
    conv = 2 * key + value
    params = hidden * (2 * key + 2 * value) + hidden * 2 * hv + conv * kernel + 2 * hv + dv + value * hidden
    state = hv * dk * dv * 2 + (kernel - 1) * conv * 2
    return params, state


def _mamba1(f: _Fields, hidden: int) -> tuple[int, int]:
    """Jamba's Mamba mixer (JambaMambaMixer): (parameters of one layer, state bytes per sequence at 16 bits).

    With E = mamba_expand * hidden, N = mamba_d_state, K = mamba_d_conv and R = mamba_dt_rank ("auto":
    ceil(hidden / 16)): in_proj hidden -> 2E, a depthwise conv1d (E x K, bias with mamba_conv_bias),
    x_proj E -> R + 2N, dt_proj R -> E with bias, A_log (E x N), D (E), out_proj E -> hidden (in_proj and
    out_proj biases with mamba_proj_bias) and the RMS norms of dt, B and C (R + 2N).  The state: E x N
    recurrent values and the convolution's last K - 1 inputs (E each).
    """
    inner = f.integer("mamba_expand") * hidden
    if inner > MAX_WIDTH:
        raise HFConfigError("mamba_expand", f"gives a Mamba width of {inner:,}, which is not a real model")
    state_size = f.integer("mamba_d_state", maximum=1 << 16)
    kernel = f.integer("mamba_d_conv", maximum=1024)
    rank_value = f.get("mamba_dt_rank")
    rank = math.ceil(hidden / 16) if rank_value == "auto" else f.integer("mamba_dt_rank")
    proj_bias = f.flag("mamba_proj_bias", False)
    conv_bias = f.flag("mamba_conv_bias", True)
    params = hidden * 2 * inner + inner * hidden + (2 * inner + hidden if proj_bias else 0)
    params += inner * kernel + (inner if conv_bias else 0)
    params += inner * (rank + 2 * state_size) + rank * inner + inner  # x_proj, dt_proj with its bias
    params += inner * state_size + inner  # A_log, D
    params += rank + 2 * state_size  # dt, B and C norms
    state = inner * state_size * 2 + (kernel - 1) * inner * 2
    return params, state


def _mamba2(f: _Fields, hidden: int) -> tuple[int, int]:
    """Nemotron-H's Mamba2 mixer (NemotronHMamba2Mixer): (parameters of one block, state bytes per sequence
    at 16 bits).

    With H = mamba_num_heads, P = mamba_head_dim, I = H * P, G = n_groups, N = ssm_state_size and
    K = conv_kernel: in_proj hidden -> I + (I + 2GN) + H, a depthwise conv1d over I + 2GN channels (bias with
    use_conv_bias), dt_bias, A_log and D (H each), the gated norm (I) and out_proj I -> hidden (biases with
    use_bias).  The state: H x P x N recurrent values and the convolution's last K - 1 inputs.
    """
    heads = f.integer("mamba_num_heads", maximum=MAX_HEADS)
    head_dim = f.integer("mamba_head_dim")
    inner = heads * head_dim
    if inner > MAX_WIDTH:
        raise HFConfigError("mamba_num_heads", f"gives a Mamba width of {inner:,}, which is not a real model")
    groups = f.integer(f.first(("n_groups", "mamba_n_groups")) or "n_groups", maximum=MAX_HEADS)
    state_size = f.integer("ssm_state_size", maximum=1 << 16)
    kernel = f.integer(f.first(("conv_kernel", "mamba_d_conv")) or "conv_kernel", maximum=1024)
    conv_bias = f.flag(f.first(("use_conv_bias", "mamba_conv_bias")) or "use_conv_bias", True)
    bias = f.flag("use_bias", False)
    conv = inner + 2 * groups * state_size
    projection = inner + conv + heads
    params = hidden * projection + inner * hidden + (projection + hidden if bias else 0)
    params += conv * kernel + (conv if conv_bias else 0)
    params += 3 * heads + inner  # dt_bias, A_log, D, gated norm
    state = heads * head_dim * state_size * 2 + (kernel - 1) * conv * 2
    return params, state


_NEMOTRON_BLOCKS = {"M": "linear_attention", "*": "full_attention", "-": "mlp", "E": "moe"}


def _nemotron_blocks(f: _Fields) -> list[str]:
    """Nemotron-H's blocks in order, one of "linear_attention" (Mamba2), "full_attention", "mlp", "moe":
    layers_block_type when set, else hybrid_override_pattern (NemotronHConfig.__post_init__)."""
    name = f.first(("layers_block_type", "layer_types"))
    if name is not None:
        return _type_list(f, name, tuple(_NEMOTRON_BLOCKS.values()))
    pattern = f.get("hybrid_override_pattern")
    if pattern is None:
        raise HFConfigError("hybrid_override_pattern", "missing: Nemotron-H's layout of Mamba, attention and MLP "
                                                       "blocks is needed to count it")
    if not isinstance(pattern, str):
        raise HFConfigError("hybrid_override_pattern", f"expected a string of M, *, - and E, got {shown(pattern)}")
    if len(pattern) > MAX_LAYERS:
        raise HFConfigError("hybrid_override_pattern", f"has {len(pattern):,} blocks, more than {MAX_LAYERS:,}")
    unknown = sorted(set(pattern) - set(_NEMOTRON_BLOCKS))
    if unknown:
        raise HFConfigError("hybrid_override_pattern",
                            f"has {shown(''.join(unknown)[:10])}: expected only M (Mamba), * (attention), "
                            "- (MLP) and E (experts)")
    return [_NEMOTRON_BLOCKS[c] for c in pattern]


# --------------------------------------------------------------------------
# Counting the model
# --------------------------------------------------------------------------


def _head_dim(f: _Fields, hidden: int, heads: int, alias: str | None = None) -> int:
    """The attention head width: the file's head_dim (or its ``alias``), else the family's default, else
    hidden_size / num_attention_heads."""
    for name in ("head_dim", alias):
        if name and f.given(name):
            return f.integer(name)
    if f.has("head_dim"):
        return f.integer("head_dim")
    if hidden % heads == 0:
        return hidden // heads
    raise HFConfigError(
        "head_dim",
        f"missing, and hidden_size {hidden} is not a multiple of num_attention_heads {heads}",
    )


def _kv_heads(f: _Fields, heads: int) -> int:
    kv_heads = f.integer("num_key_value_heads", maximum=MAX_HEADS, default=heads)
    if kv_heads > heads:
        raise HFConfigError(
            "num_key_value_heads",
            f"{kv_heads} is more than num_attention_heads ({heads})",
        )
    return kv_heads


def _count_nemotron_h(f: _Fields, kind: str, hidden: int, vocab: int, tied: bool, notes: list[str]) -> dict:
    """Nemotron-H (modeling_nemotron_h): one norm and one mixer per block, a final norm, the embeddings and
    the LM head.  Mixers: Mamba2 (:func:`_mamba2`), attention (q, k, v, o), MLP (up and down, relu2: no gate)
    and MoE (NemotronHMoE: a router with a score-correction bias, routed experts of up and down projections
    from moe_latent_size wide inputs when it is set, the latent projections, one shared MLP)."""
    blocks = _nemotron_blocks(f)
    if not any(b in ("linear_attention", "full_attention") for b in blocks):
        raise HFConfigError("hybrid_override_pattern", "has no Mamba (M) or attention (*) block")
    if f.has("num_hidden_layers") and f.get("num_hidden_layers") != len(blocks):
        notes.append(f"num_hidden_layers ({shown(f.get('num_hidden_layers'))}) differs from the "
                     f"{len(blocks)} blocks of the layout; the layout was used, as transformers does.")
    if f.has("sliding_window"):
        raise HFConfigError("sliding_window", f"set ({shown(f.get('sliding_window'))}): a window on "
                                              "Nemotron-H's attention blocks is not modelled; refused rather "
                                              "than mis-sized")
    mlp_bias = f.flag("mlp_bias", False)
    n = {b: blocks.count(b) for b in _NEMOTRON_BLOCKS.values()}
    # The attention figures are read even for a layout without attention blocks (they describe no cache then).
    heads = f.integer("num_attention_heads", maximum=MAX_HEADS)
    kv_heads = _kv_heads(f, heads)
    head_dim = _head_dim(f, hidden, heads, "attention_head_dim")
    attn = _attention(f, kind, hidden, heads, kv_heads, head_dim) if n["full_attention"] else 0
    mamba, state = _mamba2(f, hidden) if n["linear_attention"] else (0, 0)
    dense = 0
    if n["mlp"]:
        inner = f.integer("intermediate_size")
        dense = 2 * hidden * inner + (inner + hidden if mlp_bias else 0)
    experts = top_k = moe_total = moe_active = 0
    if n["moe"]:
        key = f.first(_EXPERT_KEYS) or "n_routed_experts"
        experts = f.integer(key, minimum=2, maximum=MAX_EXPERTS, why="the layout has expert (E) blocks")
        top_k = f.integer("num_experts_per_tok", maximum=MAX_EXPERTS, why="the layout has expert (E) blocks")
        if top_k >= experts:
            raise HFConfigError("num_experts_per_tok", f"{top_k} experts per token of {experts} is not a "
                                                       "mixture of experts")
        inner = f.integer("moe_intermediate_size", why="the width of each expert's MLP")
        latent = f.integer("moe_latent_size") if f.has("moe_latent_size") else 0
        expert = 2 * (latent or hidden) * inner
        shared_inner = f.integer("moe_shared_expert_intermediate_size", minimum=0, default=0)
        shared = 2 * hidden * shared_inner + (shared_inner + hidden if mlp_bias and shared_inner else 0)
        fixed = hidden * experts + experts + shared  # router weight and e_score_correction_bias, shared MLP
        if latent:
            fixed += 2 * hidden * latent + (latent + hidden if mlp_bias else 0)  # fc1/fc2_latent_proj
        moe_total, moe_active = fixed + experts * expert, fixed + top_k * expert
    shared_part = vocab * hidden * (1 if tied else 2) + hidden  # tables and norm_f
    common = (len(blocks) * hidden + n["linear_attention"] * mamba + n["full_attention"] * attn
              + n["mlp"] * dense)
    total = shared_part + common + n["moe"] * moe_total
    active = shared_part + common + n["moe"] * moe_active
    layers = n["linear_attention"] + n["full_attention"]
    if n["mlp"] or n["moe"]:
        notes.append(
            f"Nemotron-H layout: {len(blocks)} blocks ({n['linear_attention']} Mamba2, {n['full_attention']} "
            f"attention, {n['mlp']} MLP, {n['moe']} experts); the MLP and expert blocks hold no cache or state "
            f"and are folded into the mixer blocks, so layers = {layers} (Mamba plus attention).")
    return {
        "total": total, "active": active, "layers": layers, "heads": heads, "kv_heads": kv_heads,
        "head_dim": head_dim, "experts": experts, "experts_active": top_k, "kv_latent": 0,
        "window": 0, "window_layers": 0, "linear_layers": n["linear_attention"],
        "state_layers": n["linear_attention"], "state_bytes": state,
        "parts": [_PARTS[b] for b in blocks],
    }


def _count_falcon_h1(f: _Fields, kind: str, layers: int, hidden: int, heads: int, vocab: int, tied: bool,
                     notes: list[str]) -> dict:
    """Falcon-H1 (modeling_falcon_h1): every decoder layer runs softmax attention and a Mamba2 mixer side by side,
    then a gated MLP; two norms a layer, a final norm, the embeddings and the LM head.

    Attention: q, k, v, o with ``head_dim`` (the config's, else hidden / heads), biases with attention_bias.
    Mamba2 (FalconH1Mixer), with d = mamba_d_ssm (missing from the file: 1024, the class default; an explicit
    null: mamba_expand * hidden), H = mamba_n_heads, P = mamba_d_head ("auto": d / H), G = mamba_n_groups,
    N = mamba_d_state and K = mamba_d_conv: in_proj hidden -> 2d + 2GN + H (bias with mamba_proj_bias), a
    depthwise conv1d over d + 2GN channels (bias with mamba_conv_bias), dt_bias, A_log and D (H each), the gated
    norm (d, with mamba_rms_norm) and out_proj d -> hidden (bias with projectors_bias). Its state per sequence, at
    16 bits: H * P * N recurrent values and the convolution's last K - 1 inputs over d + 2GN channels, as vLLM
    keeps it. So every layer holds a KV cache and that state: linear_layers 0, state_layers = layers."""
    if _is_set(f.get("attn_layer_indices")):
        raise HFConfigError("attn_layer_indices", f"set ({shown(f.get('attn_layer_indices'))}): attention on some "
                                                  "layers only is not modelled for Falcon-H1; refused rather than "
                                                  "mis-sized")
    if f.has("sliding_window"):
        raise HFConfigError("sliding_window", f"set ({shown(f.get('sliding_window'))}): a window on the "
                                              "attention of this hybrid is not modelled; refused rather than "
                                              "mis-sized")
    kv_heads = _kv_heads(f, heads)
    head_dim = _head_dim(f, hidden, heads)
    attn = _attention(f, kind, hidden, heads, kv_heads, head_dim)
    # mamba_d_ssm: a key missing from the file takes the class default (1024); an explicit null means
    # mamba_expand * hidden (FalconH1Config and FalconH1Mixer).
    if f.has("mamba_d_ssm"):
        d_ssm, said = f.integer("mamba_d_ssm"), ""
    elif any("mamba_d_ssm" in layer for layer in f.layers):
        d_ssm = f.integer("mamba_expand", default=2) * hidden
        said = " (mamba_d_ssm null: mamba_expand x hidden_size)"
    else:
        d_ssm, said = 1024, " (mamba_d_ssm missing: the class default)"
    m_heads = f.integer("mamba_n_heads", default=128, maximum=MAX_HEADS)
    d_head = f.get("mamba_d_head")
    d_head = d_ssm // m_heads if d_head in (None, "auto") else f.integer("mamba_d_head")
    if d_head * m_heads != d_ssm:
        raise HFConfigError("mamba_d_head", f"{d_head} x mamba_n_heads {m_heads} is not the Mamba width "
                                            f"mamba_d_ssm {d_ssm}{said}; FalconH1Config requires them equal")
    groups = f.integer("mamba_n_groups", default=1, maximum=MAX_HEADS)
    state_size = f.integer("mamba_d_state", default=256, maximum=1 << 16)
    kernel = f.integer("mamba_d_conv", default=4, maximum=1024)
    conv = d_ssm + 2 * groups * state_size
    projection = d_ssm + conv + m_heads
    mamba = hidden * projection + (projection if f.flag("mamba_proj_bias", False) else 0)
    mamba += conv * kernel + (conv if f.flag("mamba_conv_bias", True) else 0)
    mamba += 3 * m_heads + (d_ssm if f.flag("mamba_rms_norm", False) else 0)
    mamba += d_ssm * hidden + (hidden if f.flag("projectors_bias", False) else 0)
    mlp = _mlp(hidden, f.integer("intermediate_size"), f.flag("mlp_bias", False))
    per_layer = attn + mamba + mlp + 2 * hidden
    total = layers * per_layer + vocab * hidden * (1 if tied else 2) + hidden
    state = (m_heads * d_head * state_size + (kernel - 1) * conv) * 2
    notes.append(f"Falcon-H1 runs attention and a Mamba2 mixer side by side in each of its {layers} layers: every "
                 f"layer holds a KV cache and a fixed state of {state / 1024:g} KiB per sequence (state_layers = "
                 f"{layers}, linear_layers = 0).")
    return {
        "total": total, "active": total, "layers": layers, "heads": heads, "kv_heads": kv_heads,
        "head_dim": head_dim, "experts": 0, "experts_active": 0, "kv_latent": 0, "window": 0, "window_layers": 0,
        "linear_layers": 0, "state_layers": layers, "state_bytes": state,
        "parts": [frozenset({"attn", "linear", "mlp"})] * layers,
    }


# What each layer (block) holds, for reading which modules a checkpoint keeps in 16 bits: a mixer
# ("attn" softmax attention, "linear" a recurrent layer) and an MLP ("mlp" gated, "mlp2" up/down only,
# "moe" experts); Nemotron-H's blocks hold one of them each.
_PARTS = {"linear_attention": frozenset({"linear"}), "full_attention": frozenset({"attn"}),
          "mlp": frozenset({"mlp2"}), "moe": frozenset({"moe"})}


def _count(config: Mapping, notes: list[str]) -> tuple[dict, _Fields]:
    """The counts of :func:`count_parameters`, plus ``parts`` (what each layer holds, see ``_PARTS``) and
    the fields read; sentences worth telling the user are appended to ``notes``."""
    f = _Fields(config)
    arch = _architectures(f)
    kind = _model_type(f, arch)
    family = _family(kind)
    _refuse_unsized(f, family)
    if kind.startswith(_UNSUPPORTED_TYPES):
        raise HFConfigError(
            "model_type",
            f"{shown(kind)} has linear-attention, recurrent or state-space layers "
            "that this calculator cannot count",
        )
    f.defaults = _DEFAULTS.get(kind, {})

    # Nemotron-H's layout gives its number of blocks; the others state it first.
    layers = 0 if family == "nemotron_h" else f.integer("num_hidden_layers", maximum=MAX_LAYERS)
    hidden = f.integer("hidden_size")
    heads = 0 if family == "nemotron_h" else f.integer("num_attention_heads", maximum=MAX_HEADS)
    vocab = f.integer("vocab_size", maximum=MAX_VOCAB)
    tied = f.flag("tie_word_embeddings", False)
    embed = vocab * hidden
    head = 0 if tied else vocab * hidden

    if family == "falcon_h1":
        c = _count_falcon_h1(f, kind, layers, hidden, heads, vocab, tied, notes)
        if c["total"] > MAX_PARAMS:
            raise HFConfigError("config", f"describes {c['total']:,} parameters, which is not a real model")
        c.update(model_type=kind, embed=embed, head=head, tied=tied, hidden=hidden, vocab=vocab)
        return c, f

    if family == "nemotron_h":
        c = _count_nemotron_h(f, kind, hidden, vocab, tied, notes)
        if c["total"] > MAX_PARAMS:
            raise HFConfigError("config", f"describes {c['total']:,} parameters, which is not a real model")
        c.update(model_type=kind, embed=embed, head=head, tied=tied, hidden=hidden, vocab=vocab)
        return c, f

    mlp_bias = f.flag("mlp_bias", False)

    # Which layers are linear (a fixed state per sequence instead of a per-token cache).
    linear_at: list[bool] = [False] * layers
    linear = state = 0
    if family == "gdn":
        linear_at = _gdn_layout(f, layers, notes)
        linear, state = _gdn(f, hidden)
    elif family == "jamba":
        linear_at = _jamba_layout(f, layers)
        linear, state = _mamba1(f, hidden)
    linear_layers = sum(linear_at)
    if linear_layers == 0:
        linear = state = 0
    attn_layers = layers - linear_layers

    # Any MLA field makes the others necessary: a half-MLA config is an error,
    # not a silently different model.
    mla = any(f.has(name) for name in _MLA_KEYS)
    if mla:
        attn, kv_latent, head_dim = _mla(f, hidden, heads)
        kv_heads = heads
    else:
        kv_heads = _kv_heads(f, heads)
        head_dim = _head_dim(f, hidden, heads)
        attn = _attention(f, kind, hidden, heads, kv_heads, head_dim)
        kv_latent = 0

    norms = (4 if kind.startswith(("gemma2", "gemma3")) else 2) * hidden

    expert_key = f.first(_EXPERT_KEYS)
    if family == "jamba" and expert_key is None:
        raise HFConfigError("num_experts", "missing: Jamba's number of experts per expert layer (1 for none; "
                                           "transformers would assume 16)")
    experts = f.integer(expert_key, minimum=0, maximum=MAX_EXPERTS) if expert_key else 0
    if family == "jamba" and experts == 1:
        experts = 0  # JambaConfig.layers_num_experts: one expert is a dense MLP
    llama4 = kind.startswith("llama4")

    top_k = 0
    moe_at: set[int] = set()
    if experts:
        topk_key = f.first(_TOPK_KEYS) or _TOPK_KEYS[0]
        top_k = f.integer(topk_key, maximum=MAX_EXPERTS, why="the model has experts")
        if top_k >= experts:
            raise HFConfigError(
                topk_key,
                f"{top_k} experts per token of {experts} is not a mixture of experts",
            )
        moe_at = _moe_layers(f, layers, kind)

    if experts and moe_at:
        # Mixtral, gpt-oss, Llama 4, OLMoE and Jamba size their experts with
        # intermediate_size; the DeepSeek and Qwen MoE families need
        # moe_intermediate_size (their intermediate_size is the dense MLP's).
        if llama4 or (
            not f.has("moe_intermediate_size")
            and (expert_key == "num_local_experts" or kind.startswith(("olmoe", "jamba")))
        ):
            expert_inner = f.integer("intermediate_size", why="the width of each expert's MLP")
        else:
            expert_inner = f.integer(
                "moe_intermediate_size", why="the width of each expert's MLP"
            )
        expert = _mlp(hidden, expert_inner, mlp_bias or kind.startswith("gpt_oss"))
        router = hidden * experts
        if kind.startswith("gpt_oss") or f.get("topk_method") == "noaux_tc":
            router += experts  # router bias / DeepSeek-V3 score-correction bias
        shared = 0
        if llama4:
            shared = _mlp(hidden, expert_inner, mlp_bias)
        elif f.has("n_shared_experts"):
            n_shared = f.integer("n_shared_experts", minimum=0, maximum=MAX_EXPERTS)
            if n_shared:
                shared = _mlp(hidden, n_shared * expert_inner, mlp_bias)
        elif f.has("shared_expert_intermediate_size"):
            width = f.integer("shared_expert_intermediate_size", minimum=0)
            if width:
                shared = _mlp(hidden, width, mlp_bias) + hidden  # + shared_expert_gate
        moe_total = router + shared + experts * expert
        moe_active = router + shared + top_k * expert
    else:
        moe_total = moe_active = 0
        experts = top_k = 0

    dense_layers = layers - len(moe_at)
    dense = 0
    if dense_layers:
        name = "intermediate_size_mlp" if llama4 and f.has("intermediate_size_mlp") else "intermediate_size"
        dense = _mlp(hidden, f.integer(name), mlp_bias)

    shared_part = embed + head + hidden  # + final norm
    mixers = attn_layers * attn + linear_layers * linear + layers * norms
    total = shared_part + mixers + dense_layers * dense + len(moe_at) * moe_total
    active = shared_part + mixers + dense_layers * dense + len(moe_at) * moe_active
    if total > MAX_PARAMS:
        raise HFConfigError(
            "config", f"describes {total:,} parameters, which is not a real model"
        )

    if family:
        if f.has("sliding_window") and f.flag("use_sliding_window", True):
            raise HFConfigError("sliding_window", f"set ({shown(f.get('sliding_window'))}): a window on the "
                                                  "attention layers of this hybrid is not modelled; refused "
                                                  "rather than mis-sized")
        window, window_layers = 0, 0
    else:
        window, window_layers = _window(f, kind, layers)
    mixer_of = ["linear" if lin else "attn" for lin in linear_at]
    parts = [frozenset({mixer_of[i], "moe" if i in moe_at else "mlp"}) for i in range(layers)]
    return {
        "model_type": kind,
        "total": total,
        "active": active,
        "embed": embed,
        "head": head,
        "tied": tied,
        "layers": layers,
        "heads": heads,
        "kv_heads": kv_heads,
        "head_dim": head_dim,
        "hidden": hidden,
        "experts": experts,
        "experts_active": top_k,
        "kv_latent": kv_latent,
        "window": window,
        "window_layers": window_layers,
        "vocab": vocab,
        "linear_layers": linear_layers,
        "state_layers": linear_layers,
        "state_bytes": state,
        "parts": parts,
    }, f


def count_parameters(config: Mapping) -> dict:
    """Count the parameters of the text model that ``config`` describes.

    Returns integers: ``total``, ``active`` (per token), ``embed`` (input
    table), ``head`` (untied output head, 0 when tied), ``layers``, ``heads``,
    ``kv_heads``, ``head_dim``, ``hidden``, ``experts``, ``experts_active``,
    ``kv_latent``, ``window``, ``window_layers``, ``vocab``, ``linear_layers``
    (layers with a fixed state instead of a per-token cache), ``state_layers``
    (layers holding a fixed state, with or without a cache: ``linear_layers``
    except for Falcon-H1) and ``state_bytes`` (that state per state layer and
    sequence at 16 bits),
    plus ``tied`` (bool) and ``model_type`` (str).  Raises
    :class:`HFConfigError` as described in the module docstring.
    """
    counts, _ = _count(config, [])
    counts.pop("parts")
    return counts


# --------------------------------------------------------------------------
# Weight formats: quantization_config
# --------------------------------------------------------------------------

# The 16-bit format a checkpoint keeps its unquantized weights in, from its dtype.
_DTYPE_FORMATS = {"bfloat16": "bf16", "float16": "fp16", "float32": "fp32", "bf16": "bf16", "fp16": "fp16"}
_FORMAT_BITS = {"bf16": 16, "fp16": 16, "fp32": 32}
_MAX_MODULE_NAME = 300  # longest module name (or pattern) read from a list of modules kept unquantized

# Module names as transformers and the quantizers spell them, by what they belong to.
_ATTN_MODULES = {"self_attn", "attn", "attention", "self_attention"}
_ATTN_PROJ = {"q_proj": "q", "k_proj": "k", "v_proj": "v", "o_proj": "o", "qkv_proj": "qkv",
              "query_key_value": "qkv", "q_a_proj": "q", "q_b_proj": "q", "kv_a_proj_with_mqa": "kv",
              "kv_b_proj": "kv"}
_MLP_MODULES = {"mlp", "feed_forward", "block_sparse_moe", "ffn", "moe"}
_MLP_PROJ = {"gate_proj": "gate", "up_proj": "up", "down_proj": "down", "gate_up_proj": "gateup",
             "w1": "gate", "w3": "up", "w2": "down", "experts": "experts"}
_ROUTER = {"gate", "router", "shared_expert_gate", "e_score_correction_bias"}
_LINEAR_MODULES = {"linear_attn", "mamba"}
_LINEAR_PROJ = {"in_proj", "out_proj", "conv1d", "x_proj", "dt_proj", "in_proj_qkvz", "in_proj_ba",
                "in_proj_qkv", "in_proj_z", "in_proj_b", "in_proj_a"}
_NORMS = {"input_layernorm", "post_attention_layernorm", "pre_feedforward_layernorm",
          "post_feedforward_layernorm", "norm", "q_norm", "k_norm", "pre_ff_layernorm"}
_OUTSIDE = ("visual", "vision", "audio", "mm_projector", "multi_modal_projector", "mtp")


class _Kept:
    """The modules a checkpoint keeps out of its quantized format, by layer."""

    def __init__(self, layers: int) -> None:
        self.layers = layers
        self.every: dict[str, set[str]] = {}  # part -> projections (or {"all"}), on every layer
        self.at: dict[int, dict[str, set[str]]] = {}  # layer -> part -> projections
        self.unread: list[str] = []

    def add(self, layer: int | None, part: str, what: str) -> None:
        where = self.every if layer is None else self.at.setdefault(layer, {})
        where.setdefault(part, set()).add(what)

    def of(self, layer: int, part: str) -> set[str]:
        return self.every.get(part, set()) | self.at.get(layer, {}).get(part, set())

    def whole(self, layer: int) -> bool:
        return bool(self.of(layer, "layer"))

    def attn(self, layer: int) -> bool:
        got = self.of(layer, "attn")
        if "all" in got or self.whole(layer):
            return True
        have = set().union(*({"q", "k", "v"} if g == "qkv" else {"k", "v"} if g == "kv" else {g} for g in got))
        return {"q", "k", "v", "o"} <= have

    def mlp(self, layer: int, gated: bool, moe: bool) -> bool:
        got = self.of(layer, "mlp")
        if "all" in got or self.whole(layer):
            return True
        if moe:
            return "experts" in got
        have = set().union(*({"gate", "up"} if g == "gateup" else {g} for g in got))
        return ({"gate", "up", "down"} if gated else {"up", "down"}) <= have

    def linear(self, layer: int) -> bool:
        return "all" in self.of(layer, "linear") or self.whole(layer)


def _glob(entry: str) -> str | None:
    """A module name or pattern as dotted text with ``*`` wildcards; a ``re:`` pattern is read only when it
    uses nothing but ``.*``, escaped dots and anchors (no other regular expression is ever run)."""
    if entry.startswith("re:"):
        text = entry[3:].removeprefix("^").removesuffix("$").replace("\\.", "\x00").replace(".*", "*")
        text = text.replace("\x00", ".")
        if any(ch in text for ch in "[](){}+?|\\^$"):
            return None
        return text
    return entry


def _read_kept(names: Any, field: str, kept: _Kept) -> None:
    """Add the modules of one list (modules_to_not_convert, ignore, ...) to ``kept``.  Names are read by
    their dotted parts ("model.layers.3.self_attn.q_proj", "model.layers.*.mlp.router", "lm_head", and
    compressed-tensors' "re:.*mlp.gate$"); a layer number names that layer only (3 is not 30)."""
    if names is None:
        return
    if not isinstance(names, list):
        raise HFConfigError("quantization_config", f"{field}: expected a list of module names, got {shown(names)}")
    for entry in names:
        if not isinstance(entry, str):
            raise HFConfigError("quantization_config", f"{field}: expected module names, got {shown(entry)}")
        text = _glob(entry) if len(entry) <= _MAX_MODULE_NAME else None
        if text is None:
            kept.unread.append(entry)
            continue
        raw = text.split(".")
        while raw and raw[-1] in ("weight", "bias", "*", ""):
            raw.pop()
        tokens = [t.strip("*") for t in raw]
        if any("*" in t for t in tokens):
            kept.unread.append(entry)
            continue
        if any(t.startswith(_OUTSIDE) for t in tokens):
            continue  # a vision tower, projector or MTP module: not counted here
        if "lm_head" in tokens or any(t.startswith(("embed", "wte")) for t in tokens):
            continue  # the tables stay at 16 bits with every method read here (GPTQ's lm_head flag aside)
        layer: int | None = None
        rest = [t for t in tokens if t]
        for i, token in enumerate(tokens):
            if token not in ("layers", "h"):
                continue
            nxt = raw[i + 1] if i + 1 < len(raw) else "*"
            if nxt.isdigit() and len(nxt) <= 5:
                layer = int(nxt)
            elif nxt.strip("*"):
                continue  # "h" or "layers" as part of another name
            rest = [t for t in tokens[i + 2:] if t]
            break
        if layer is not None and layer >= kept.layers:
            kept.unread.append(entry)
            continue
        part = _module_part(rest)
        if part is None:
            kept.unread.append(entry)
        elif part[0]:
            kept.add(layer, *part)


def _module_part(tokens: list[str]) -> tuple[str, str] | None:
    """(part, projection) of a module path inside a layer: part "layer" (the whole layer), "attn", "mlp",
    "linear", or "" for what the formats do not tell apart (routers, norms, convolution weights); None when
    the name is not understood."""
    if not tokens:
        return "layer", "all"
    for i, token in enumerate(tokens):
        nxt = tokens[i + 1] if i + 1 < len(tokens) else None
        if token in _ATTN_MODULES:
            return "attn", _ATTN_PROJ.get(nxt, "all") if nxt else "all"
        if token in _ATTN_PROJ:
            return "attn", _ATTN_PROJ[token]
        if token in _LINEAR_MODULES:
            return "linear", "all" if nxt is None else "part"
        if token in _LINEAR_PROJ:
            return "linear", "part"
        if token in _MLP_MODULES:
            if nxt is None:
                return "mlp", "all"
            if nxt in _ROUTER:
                return "", ""
            if nxt in ("shared_expert", "shared_experts"):
                return "mlp", "shared"
            if nxt == "experts" and i + 2 < len(tokens):
                return "mlp", "part"  # one expert, or one matrix of each
            return ("mlp", _MLP_PROJ[nxt]) if nxt in _MLP_PROJ else ("mlp", "part")
        if token == "experts" and nxt is not None:
            return "mlp", "part"
        if token in _MLP_PROJ:
            return "mlp", _MLP_PROJ[token]
        if token in ("shared_expert", "shared_experts"):
            return "mlp", "shared"
        if token in _ROUTER or token in _NORMS or token.endswith("layernorm"):
            return "", ""
        if token == "mixer" and nxt is None:
            return "layer", "all"  # a Nemotron-H block is its norm and its mixer
        if token == "mixer":
            continue
        return None
    return None


def _bits_text(bits: float) -> str:
    """Bits per weight as link text (``4.127``)."""
    value = round(bits, 4)
    return str(int(value)) if float(value).is_integer() else f"{value:g}"


def _format_bits(fmt: str) -> float:
    from .catalogue import weight_formats  # the catalogue's formats, read lazily

    row = weight_formats().get(fmt)
    return float(row["bits"]) if row else float(fmt)


def _int_format(bits: int, group: int) -> str:
    """GPTQ / AWQ integer weights: 4 bits in groups of 128 or 64 are the catalogue's int4-g128 / int4-g64,
    per-channel scales (group -1) are negligible, other groups store a 16-bit scale and a 16-bit zero per
    group (bits + 32 / group)."""
    if group <= 0:
        return {8: "int8", 4: "int4"}.get(bits, _bits_text(bits))
    if bits == 4 and group in (128, 64):
        return f"int4-g{group}"
    return _bits_text(bits + 32 / group)


def _q_int(q: Mapping, names: tuple[str, ...], lo: int, hi: int, default: int | None = None) -> int:
    for name in names:
        value = q.get(name)
        if value is None:
            continue
        if isinstance(value, bool) or not isinstance(value, (int, float)) or value != int(value) \
                or not lo <= value <= hi:
            raise HFConfigError("quantization_config",
                                f"{name}: expected an integer from {lo} to {hi}, got {shown(value)}")
        return int(value)
    if default is None:
        raise HFConfigError("quantization_config", f"{names[0]}: missing, the method needs it")
    return default


def _q_flag(q: Mapping, name: str, default: bool) -> bool:
    value = q.get(name)
    if value is None:
        return default
    if not isinstance(value, bool):
        raise HFConfigError("quantization_config", f"{name}: expected true or false, got {shown(value)}")
    return value


def _ct_format(weights: Any, where: str) -> tuple[str, str]:
    """compressed-tensors: (format, words) of one config group's ``weights``."""
    if not isinstance(weights, Mapping):
        raise HFConfigError("quantization_config", f"{where}.weights: expected an object, got {shown(weights)}")
    bits = _q_int(weights, ("num_bits",), 1, 16)
    kind = weights.get("type", "int")
    if kind not in ("int", "float"):
        raise HFConfigError("quantization_config", f"{where}.weights.type: expected int or float, got {shown(kind)}")
    group = weights.get("group_size")
    group = _q_int(weights, ("group_size",), 1, 1 << 20) if group is not None else 0
    strategy = weights.get("strategy")
    symmetric = _q_flag(weights, "symmetric", True)
    if kind == "float":
        if bits == 8:
            return "fp8", "FP8"
        if bits == 4 and group == 16:
            return "nvfp4", "NVFP4 (FP4 with an FP8 scale per 16)"
        if bits == 4 and group == 32:
            return "mxfp4", "MXFP4 (FP4 with an 8-bit scale per 32)"
        fmt = _bits_text(bits + (8 / group if group else 0))
        return fmt, f"{bits}-bit floats" + (f" with an 8-bit scale per {group}" if group else "")
    if not group or strategy in ("channel", "tensor"):
        return {8: "int8", 4: "int4"}.get(bits, _bits_text(bits)), f"{bits}-bit integers, one scale per channel"
    if not symmetric:
        return _int_format(bits, group), f"{bits}-bit integers, a 16-bit scale and zero per {group}"
    return _bits_text(bits + 16 / group), f"{bits}-bit integers, a 16-bit scale per {group}"


def _ct_target(targets: Any) -> str:
    """Which part a compressed-tensors group targets: "experts", "attn" or "all"."""
    if not isinstance(targets, list) or not targets:
        return "all"
    text = " ".join(t for t in targets if isinstance(t, str))
    if "expert" in text and not any(k in text for k in ("Linear", "self_attn", "q_proj")):
        return "experts"
    if any(k in text for k in ("self_attn", "q_proj", "k_proj", "v_proj", "o_proj")) and "Linear" not in text:
        return "attn"
    return "all"


def _formats(f: _Fields, c: dict, notes: list[str]) -> dict:
    """The format keys a ``quantization_config`` sets (empty when there is none or it is not read); what was
    read is told in ``notes``."""
    name = f.first(("quantization_config", "compression_config"))
    if name is None:
        return {}
    q = f.get(name)
    if not isinstance(q, Mapping):
        notes.append(f"{name} is not an object ({shown(q)}): the weight formats were not read.")
        return {}
    method = q.get("quant_method")
    if method is None and (q.get("load_in_4bit") or q.get("load_in_8bit")):
        method = "bitsandbytes"
    if not isinstance(method, str):
        notes.append(f"{name} names no quant_method ({shown(method)}): the weight formats were not read; "
                     "set them yourself.")
        return {}
    method = method.lower()
    dtype = f.get("torch_dtype") or f.get("dtype")
    base = _DTYPE_FORMATS.get(dtype, "bf16") if isinstance(dtype, str) else "bf16"
    kept = _Kept(len(c["parts"]))
    w = we = wa = None  # the quantized format of the weights, the routed experts and the attention
    words = ""
    head_bits = 0.0  # bits of a quantized LM head (GPTQ lm_head), 0 when it stays at 16 bits

    if method == "fbgemm_fp8":
        w, words = "fp8", "FP8 weights with one scale per output channel (fbgemm_fp8)"
        _read_kept(q.get("modules_to_not_convert"), "modules_to_not_convert", kept)
    elif method == "fp8":
        block = q.get("weight_block_size")
        w = "fp8"
        if isinstance(block, list) and len(block) == 2 and all(isinstance(b, int) for b in block):
            words = f"FP8 weights in {block[0]}x{block[1]} blocks, one scale each (fp8)"
        else:
            words = "FP8 weights (fp8)"
        _read_kept(q.get("modules_to_not_convert"), "modules_to_not_convert", kept)
    elif method == "compressed-tensors":
        groups = q.get("config_groups")
        if not isinstance(groups, Mapping) or not groups:
            notes.append("compressed-tensors without config_groups: the weight formats were not read.")
            return {}
        by_part: dict[str, tuple[str, str]] = {}
        for key, group in groups.items():
            if not isinstance(group, Mapping):
                raise HFConfigError("quantization_config", f"config_groups.{shown_name(key)}: expected an object")
            if group.get("weights") is None:
                continue  # activations only
            fmt, text = _ct_format(group.get("weights"), f"config_groups.{shown_name(key)}")
            part = _ct_target(group.get("targets"))
            if part in by_part and by_part[part][0] != fmt:
                notes.append(f"config_groups give {part} both {by_part[part][0]} and {fmt}; the first was used.")
                continue
            by_part.setdefault(part, (fmt, text))
        if not by_part:
            notes.append("compressed-tensors quantizes no weights: the weight formats were not set.")
            return {}
        main = by_part.get("all") or next(iter(by_part.values()))
        w, words = main[0], f"{main[1]} (compressed-tensors)"
        we = by_part.get("experts", main)[0]
        wa = by_part.get("attn", main)[0]
        _read_kept(q.get("ignore"), "ignore", kept)
        if q.get("sparsity_config"):
            notes.append("compressed-tensors sparsity_config is set: sparse weights are not modelled.")
        if q.get("kv_cache_scheme"):
            notes.append("The checkpoint also quantizes its KV cache (kv_cache_scheme); set kv yourself.")
    elif method in ("gptq", "awq"):
        bits = _q_int(q, ("bits", "w_bit"), 1, 16)
        group = _q_int(q, ("group_size", "q_group_size"), -1, 1 << 20, default=-1)
        w = _int_format(bits, group)
        words = f"{bits}-bit integer weights " + (f"in groups of {group}" if group > 0 else "per channel") \
            + f" ({method})"
        _read_kept(q.get("modules_to_not_convert"), "modules_to_not_convert", kept)
        if method == "gptq" and _q_flag(q, "lm_head", False):
            head_bits = _format_bits(w)
        if q.get("dynamic") or q.get("modules_in_block_to_quantize"):
            notes.append(f"{method}: per-module overrides (dynamic, modules_in_block_to_quantize) were not read.")
    elif method == "mxfp4":
        if not c["experts"]:
            notes.append("mxfp4 quantizes the routed experts and this model has none: the weights stay at "
                         "16 bits.")
        w, we = base, "mxfp4"
        words = "routed experts in MXFP4 (FP4 with an 8-bit scale per 32), everything else at 16 bits (mxfp4)"
        _read_kept(q.get("modules_to_not_convert"), "modules_to_not_convert", kept)
    elif method == "bitsandbytes":
        if _q_flag(q, "load_in_4bit", False) or _q_flag(q, "_load_in_4bit", False):
            kind = q.get("bnb_4bit_quant_type") or "fp4"
            if kind not in ("nf4", "fp4"):
                raise HFConfigError("quantization_config", f"bnb_4bit_quant_type: expected nf4 or fp4, got {shown(kind)}")
            if _q_flag(q, "bnb_4bit_use_double_quant", False):
                # 4 bits, an 8-bit absmax per 64 weights and an fp32 scale per 256 absmax.
                w = _bits_text(4 + 8 / 64 + 32 / (64 * 256))
                words = f"4-bit {kind.upper()} weights, absmax per 64 quantized again (bitsandbytes)"
            else:
                w = _bits_text(4 + 32 / 64)  # an fp32 absmax per 64 weights
                words = f"4-bit {kind.upper()} weights with an fp32 absmax per 64 (bitsandbytes)"
        elif _q_flag(q, "load_in_8bit", False) or _q_flag(q, "_load_in_8bit", False):
            w, words = "int8", "8-bit integer weights, one scale per row (bitsandbytes LLM.int8)"
        else:
            notes.append("bitsandbytes with neither load_in_4bit nor load_in_8bit: the formats were not read.")
            return {}
        _read_kept(q.get("llm_int8_skip_modules"), "llm_int8_skip_modules", kept)
    elif method == "modelopt":
        algo = q.get("quant_algo")
        if algo == "FP8":
            w, words = "fp8", "FP8 weights (modelopt)"
        elif algo == "NVFP4":
            w, words = "nvfp4", "NVFP4 weights, FP4 with an FP8 scale per 16 (modelopt)"
        else:
            notes.append(f"modelopt quant_algo {shown(algo)} is not one this calculator reads: the weight "
                         "formats were not set; set them yourself.")
            return {}
        _read_kept(q.get("exclude_modules"), "exclude_modules", kept)
        if q.get("kv_cache_quant_algo"):
            notes.append("The checkpoint also quantizes its KV cache (kv_cache_quant_algo); set kv yourself.")
    else:
        notes.append(f"quant_method {shown(method)} is not one this calculator reads: the weight formats were "
                     "not set; set them yourself.")
        return {}
    return _apply_kept(c, kept, base, (w, we or w, wa or w), words, head_bits, notes)


def _apply_kept(c: dict, kept: _Kept, base: str, formats: tuple[str, str, str], words: str, head_bits: float,
                notes: list[str]) -> dict:
    """The format keys from the quantized formats (of the weights, the routed experts and the attention
    projections) and the modules kept at 16 bits.  A layer with its mixer and its MLP kept whole counts in
    layers_full; a Nemotron-H block holds only one of them, so its kept attention sets weights_attn."""
    w, we, wa = formats
    parts: list[frozenset] = c["parts"]
    full = [i for i, p in enumerate(parts) if p & {"attn", "linear"} and p & {"mlp", "moe"} and (
        kept.whole(i) or (("attn" not in p or kept.attn(i)) and ("linear" not in p or kept.linear(i))
                          and kept.mlp(i, "mlp" in p, "moe" in p)))]
    attention = [i for i, p in enumerate(parts) if "attn" in p and i not in full]
    attn_kept = [i for i in attention if kept.attn(i)]
    if attention and len(attn_kept) == len(attention):
        wa = base
    elif attn_kept:
        share = len(attn_kept) / len(attention)
        wa = _bits_text(share * _FORMAT_BITS.get(base, 16) + (1 - share) * _format_bits(wa))
        notes.append(f"The attention projections of {len(attn_kept)} of {len(attention)} attention layers "
                     f"stay at 16 bits: weights_attn = {wa} bits, their average.")
    we_ = base
    if head_bits and c["head"]:
        # A quantized LM head beside the 16-bit input table: their average.
        we_ = _bits_text((_FORMAT_BITS.get(base, 16) + head_bits) / 2)
        notes.append(f"The LM head is quantized too (lm_head) and the input table is not: weights_embed = "
                     f"{we_} bits, their average.")
    keys = {"weights": w, "weights_experts": we if c["experts"] else w, "weights_attn": wa,
            "weights_embed": we_, "layers_full": len(full)}

    said = [f"Weights: {words}; weights={w}"]
    if c["experts"] and keys["weights_experts"] != w:
        said.append(f"weights_experts={keys['weights_experts']}")
    said.append(f"the embedding table and LM head stay at 16 bits (weights_embed={we_})" if not head_bits
                else f"weights_embed={we_}")
    if wa != w:
        said.append(f"weights_attn={wa}")
    if full:
        blocks = ", ".join(str(i) for i in full[:6]) + (f" and {len(full) - 6} more" if len(full) > 6 else "")
        said.append(f"whole layers {blocks} stay at 16 bits (layers_full={len(full)})")
    notes.append("; ".join(said) + ".")
    others = [i for i, p in enumerate(parts) if i not in full and (
        (kept.of(i, "mlp") and p & {"mlp", "mlp2", "moe"}) or (kept.of(i, "linear") and "linear" in p)
        or (kept.whole(i) and "attn" not in p))]
    if others:
        notes.append(f"Parts of {len(others)} other layers are kept at 16 bits too (MLP, expert or recurrent "
                     "projections); that is not modelled: they count at the weight format.")
    if kept.unread:
        names = ", ".join(shown(n) for n in kept.unread[:3]) + (
            f" and {len(kept.unread) - 3} more" if len(kept.unread) > 3 else "")
        notes.append(f"Modules kept unquantized that were not understood: {names}.")
    return keys


# --------------------------------------------------------------------------
# Link keys
# --------------------------------------------------------------------------


def from_hf_config_with_notes(config: Mapping) -> tuple[dict, list[str]]:
    """:func:`from_hf_config` and a list of plain sentences about what was read: the hybrid layout, the
    weight formats of a ``quantization_config`` (or why they were not read) and anything left out.

    Raises :class:`HFConfigError` as :func:`from_hf_config` does.
    """
    notes: list[str] = []
    c, f = _count(config, notes)
    keys = {
        "model": "custom",
        "params_b": round(c["total"] / 1e9, 9),
        "active_b": round(c["active"] / 1e9, 9),
        "layers": c["layers"],
        "heads": c["heads"],
        "kv_heads": c["kv_heads"],
        "head_dim": c["head_dim"],
        "hidden": c["hidden"],
        "experts": c["experts"],
        "experts_active": c["experts_active"],
        "kv_latent": c["kv_latent"],
        "window": c["window"],
        "window_layers": c["window_layers"],
        "embed_b": 0.0 if c["tied"] else round(c["embed"] / 1e9, 9),
        "vocab": c["vocab"],
        "linear_layers": c["linear_layers"],
        "state_kib": round(c["state_bytes"] / 1024, 6) if c["state_layers"] else 0.0,
    }
    if c["state_layers"] != c["linear_layers"]:
        keys["state_layers"] = c["state_layers"]
    if c["linear_layers"]:
        notes.insert(0, f"Hybrid: {c['linear_layers']} of {c['layers']} layers keep a fixed state of "
                        f"{keys['state_kib']:g} KiB per sequence (at 16 bits) instead of a KV cache; the other "
                        f"{c['layers'] - c['linear_layers']} attend over a KV cache.")
        dtype = f.get("mamba_ssm_dtype") or f.get("mamba_ssm_cache_dtype")
        if dtype == "float32":
            notes.append("The config asks for a float32 recurrent state (mamba_ssm_dtype or "
                         "mamba_ssm_cache_dtype): an engine that honours it holds about twice state_kib.")
    keys.update(_formats(f, c, notes))
    return keys, notes


def from_hf_config(config: Mapping) -> dict:
    """Turn a parsed Hugging Face ``config.json`` into custom-model link keys.

    ``config`` is the decoded JSON object; the text model may sit under
    ``text_config`` (multimodal checkpoints), whose fields take precedence
    over the top level.  Returns::

        {"model": "custom", "params_b", "active_b", "embed_b",   # billions
         "layers", "heads", "kv_heads", "head_dim", "hidden",
         "experts", "experts_active", "kv_latent", "window",
         "window_layers", "vocab", "linear_layers",              # ints, 0 = absent
         "state_kib"}                                            # KiB per state layer, 0.0 = none

    plus ``state_layers`` (int) when the layers holding a state are not just
    the linear ones (Falcon-H1: every layer has attention and a state),
    and, when the file has a ``quantization_config`` this module reads,
    ``weights``, ``weights_experts``, ``weights_attn``, ``weights_embed``
    (format ids or bits per weight, as link text) and ``layers_full`` (int).

    ``embed_b`` is the untied input table (``vocab_size * hidden_size / 1e9``)
    and 0 when the embeddings are tied, as docs/method.md sections 2-5 defines it.  With MLA
    ``kv_heads`` equals ``heads``, ``head_dim`` is the query/key head width and
    ``kv_latent`` is ``kv_lora_rank + qk_rope_head_dim``.  For a hybrid,
    ``linear_layers`` of the ``layers`` keep ``state_kib`` of state per
    sequence instead of a KV cache (and ``state_layers`` keep it beside one).

    Raises :class:`HFConfigError` (a ``ValueError``) naming the field when the
    input is not a mapping, a field the count needs is missing, a shape is not
    a positive integer or is absurdly large, or the architecture cannot be
    counted.  :func:`from_hf_config_with_notes` also says what was read.
    """
    return from_hf_config_with_notes(config)[0]


# --------------------------------------------------------------------------
# JSON text
# --------------------------------------------------------------------------

def _reject_constant(name: str) -> Any:
    raise HFConfigError("config", f"{name} is not a number JSON allows")


def _finite_float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise HFConfigError("config", f"number {text[:40]} overflows a float")
    return value


def _check_shape(value: Any) -> None:
    """Refuse nesting deeper than MAX_JSON_DEPTH or too many keys and items."""
    count = 0
    stack = [(value, 0)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, (dict, list)):
            depth += 1
            if depth > MAX_JSON_DEPTH:
                raise HFConfigError(
                    "config", f"JSON nested deeper than {MAX_JSON_DEPTH} levels"
                )
            children = item.values() if isinstance(item, dict) else item
            count += len(item)
            if count > MAX_JSON_ITEMS:
                raise HFConfigError(
                    "config", f"more than {MAX_JSON_ITEMS:,} keys and items in total"
                )
            stack.extend((child, depth) for child in children)


def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict:
    result: dict = {}
    for key, value in pairs:
        if key in result:
            raise HFConfigError(key, "appears twice in the same object")
        result[key] = value
    return result


def _parse_json(text: str | bytes, max_bytes: int) -> dict:
    """Parse ``config.json`` text safely (see :func:`from_hf_config_json`)."""
    if isinstance(text, (bytes, bytearray)):
        raw = bytes(text)
        if len(raw) > max_bytes:
            raise HFConfigError(
                "config", f"file is {len(raw):,} bytes, more than the {max_bytes:,} allowed"
            )
        if b"\x00" in raw:
            raise HFConfigError("config", "file is binary, not JSON text")
        try:
            text = raw.decode("utf-8-sig")
        except UnicodeDecodeError as exc:
            raise HFConfigError("config", f"file is not UTF-8 text ({exc.reason})") from None
    elif isinstance(text, str):
        size = len(text.encode("utf-8", errors="surrogatepass"))
        if size > max_bytes:
            raise HFConfigError(
                "config", f"text is {size:,} bytes, more than the {max_bytes:,} allowed"
            )
        text = text.removeprefix("\ufeff")
    else:
        raise HFConfigError(
            "config", f"expected JSON text (str or bytes), got {type(text).__name__}"
        )
    if "\x00" in text:
        raise HFConfigError("config", "file is binary, not JSON text")

    try:
        value = json.loads(
            text,
            parse_constant=_reject_constant,
            parse_float=_finite_float,
            object_pairs_hook=_no_duplicates,
        )
    except HFConfigError:
        raise
    except RecursionError:
        # The C decoder guards its own recursion; anything this deep is far
        # past the nesting limit.
        raise HFConfigError(
            "config", f"JSON nested deeper than {MAX_JSON_DEPTH} levels"
        ) from None
    except json.JSONDecodeError as exc:
        raise HFConfigError(
            "config", f"not valid JSON: {exc.msg} at line {exc.lineno} column {exc.colno}"
        ) from None
    except ValueError as exc:  # e.g. an integer with thousands of digits
        raise HFConfigError("config", f"not valid JSON: {exc}") from None
    _check_shape(value)
    if not isinstance(value, dict):
        raise HFConfigError(
            "config", f"top level must be a JSON object, got {type(value).__name__}"
        )
    return value


def from_hf_config_json(text: str | bytes, max_bytes: int = 1_000_000) -> dict:
    """Parse ``config.json`` text safely, then apply :func:`from_hf_config`.

    ``text`` is the file's content as ``str`` or UTF-8 ``bytes``; at most
    ``max_bytes`` bytes (UTF-8) are accepted.  The text is read with
    ``json.loads`` only (never evaluated); NaN and Infinity, duplicate keys,
    nesting deeper than 20 levels, more than 10,000 keys and items in total,
    bytes that are not UTF-8 text and a top level that is not an object all
    raise :class:`HFConfigError` (field ``"config"`` or the key at fault) with
    a message saying which limit was hit.  Returns the link-key dict of
    :func:`from_hf_config`.
    """
    return from_hf_config(_parse_json(text, max_bytes))


def from_hf_config_json_with_notes(text: str | bytes, max_bytes: int = 1_000_000) -> tuple[dict, list[str]]:
    """:func:`from_hf_config_json` and the notes of :func:`from_hf_config_with_notes`."""
    return from_hf_config_with_notes(_parse_json(text, max_bytes))
