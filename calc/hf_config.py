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
parameters** (floats, rounded to 1e-9 so the exact count survives); every
other key is an integer (``layers``, ``heads``, ``kv_heads``, ``head_dim``,
``hidden`` and ``kv_latent`` are counts or widths in elements, ``window`` is
tokens) and 0 means "absent".  ``active_b`` is everything a token uses: the
total less the routed experts it is not sent to (``num_experts_per_tok`` of
them are).  Multi-token-prediction layers (``num_nextn_predict_layers``) and
vision or audio towers are not part of the text model and are not counted.

A field the file leaves out takes the default of the ``transformers``
config class of its ``model_type`` where the table ``_DEFAULTS`` has one (the
library fills these in, and real checkpoints rely on it: Gemma 3's
``vocab_size`` 262,208 and its five sliding layers to every global one).
The model's size fields never default.

Errors: every problem raises :class:`HFConfigError` (a ``ValueError``) whose
``.field`` names the config field at fault and whose message says what was
expected: a missing field the count needs, a value that is not a non-negative
integer (or a bool where a bool is meant), an absurd size, or an architecture
whose cache this calculator cannot size: linear-attention, recurrent,
state-space or convolution layers (``layer_types`` entries, hybrid layer
lists, ``mamba_*``/``ssm_*``/``linear_*`` fields), caches shared between
layers, or per-token caches beside the keys and values (DeepSeek V3.2's
``index_*`` indexer).  Such a config is refused rather than sized wrongly.
A message quotes at most 60 characters of any value from the file.
:func:`from_hf_config_json` also rejects text that is too large, not UTF-8,
not JSON, NaN/Infinity, nested deeper than 20 levels, holding more than 10,000
keys and items, or whose top level is not an object.  Nothing in the file is
ever evaluated or imported.

Sources for the shapes (read 2025): the Hugging Face ``transformers``
modelling code of each family (``modeling_llama``, ``modeling_mistral``,
``modeling_mixtral``, ``modeling_qwen2``, ``modeling_qwen3``,
``modeling_qwen3_moe``, ``modeling_gemma2``, ``modeling_gemma3``,
``modeling_deepseek_v3``, ``modeling_gpt_oss``, ``modeling_llama4``) and the
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
_UNSUPPORTED_TYPES = (
    "gemma3n",
    "gemma4",
    "qwen3_next",
    "qwen3_5",
    "deepseek_v4",
    "mamba",
    "jamba",
    "zamba",
    "falcon_h1",
    "falcon_mamba",
    "nemotron_h",
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
    if kind.startswith(("qwen3", "gemma3")):
        params += 2 * head_dim  # q_norm and k_norm over one head
    elif kind.startswith(("olmo2", "olmo3")):
        params += q + kv  # q_norm and k_norm over the whole projection
    return params


def _mla(f: _Fields, hidden: int, heads: int) -> tuple[int, int, int]:
    """Multi-head latent attention (DeepSeek-V2/V3).

    Returns (parameters per layer, cached latent width, query/key head dim).
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
    return params, kv_rank + rope, qk_dim


def _moe_layers(f: _Fields, layers: int) -> set[int]:
    """Indices of the layers whose MLP is a mixture of experts."""
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


def _refuse_unsized(f: _Fields) -> None:
    """Refuse a config whose cache or layers the calculator cannot size.

    The calculator sizes one key and one value per KV head, layer and token
    (or an MLA latent).  An architecture that caches more per token (DeepSeek
    V3.2's indexer keys), shares caches between layers, or mixes attention with
    layers of another kind would be mis-sized without a word, so it is refused
    naming the first field that shows it.
    """
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
        value = f.get(name)
        if _is_set(value):
            raise HFConfigError(
                name,
                f"set ({shown(value)}): {what}; the calculator sizes only softmax "
                "attention's per-token keys and values, so this config is refused "
                "rather than mis-sized",
            )
    for key in f.names():
        if not isinstance(key, str) or f.get(key) is None:
            continue
        for prefix, what in _UNSIZED_PREFIXES.items():
            if key.startswith(prefix):
                raise HFConfigError(
                    shown_name(key),
                    f"{what}; the calculator sizes only softmax attention's per-token "
                    "keys and values, so this config is refused rather than mis-sized",
                )


def count_parameters(config: Mapping) -> dict:
    """Count the parameters of the text model that ``config`` describes.

    Returns integers: ``total``, ``active`` (per token), ``embed`` (input
    table), ``head`` (untied output head, 0 when tied), ``layers``, ``heads``,
    ``kv_heads``, ``head_dim``, ``hidden``, ``experts``, ``experts_active``,
    ``kv_latent``, ``window``, ``window_layers``, plus ``tied`` (bool) and
    ``model_type`` (str).  Raises :class:`HFConfigError` as described in the
    module docstring.
    """
    f = _Fields(config)
    _refuse_unsized(f)
    arch = _architectures(f)
    kind = _model_type(f, arch)
    if kind.startswith(_UNSUPPORTED_TYPES):
        raise HFConfigError(
            "model_type",
            f"{shown(kind)} has linear-attention, recurrent or state-space layers "
            "that this calculator cannot count",
        )
    f.defaults = _DEFAULTS.get(kind, {})

    layers = f.integer("num_hidden_layers", maximum=MAX_LAYERS)
    hidden = f.integer("hidden_size")
    heads = f.integer("num_attention_heads", maximum=MAX_HEADS)
    vocab = f.integer("vocab_size", maximum=MAX_VOCAB)
    tied = f.flag("tie_word_embeddings", False)
    mlp_bias = f.flag("mlp_bias", False)

    # Any MLA field makes the others necessary: a half-MLA config is an error,
    # not a silently different model.
    mla = any(f.has(name) for name in _MLA_KEYS)
    if mla:
        attn, kv_latent, head_dim = _mla(f, hidden, heads)
        kv_heads = heads
    else:
        kv_heads = f.integer("num_key_value_heads", maximum=MAX_HEADS, default=heads)
        if kv_heads > heads:
            raise HFConfigError(
                "num_key_value_heads",
                f"{kv_heads} is more than num_attention_heads ({heads})",
            )
        if f.has("head_dim"):
            head_dim = f.integer("head_dim")
        elif hidden % heads == 0:
            head_dim = hidden // heads
        else:
            raise HFConfigError(
                "head_dim",
                f"missing, and hidden_size {hidden} is not a multiple of "
                f"num_attention_heads {heads}",
            )
        attn = _attention(f, kind, hidden, heads, kv_heads, head_dim)
        kv_latent = 0

    norms = (4 if kind.startswith(("gemma2", "gemma3")) else 2) * hidden

    expert_key = f.first(_EXPERT_KEYS)
    experts = f.integer(expert_key, minimum=0, maximum=MAX_EXPERTS) if expert_key else 0
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
        moe_at = _moe_layers(f, layers)

    if experts and moe_at:
        # Mixtral, gpt-oss, Llama 4 and OLMoE size their experts with
        # intermediate_size; the DeepSeek and Qwen MoE families need
        # moe_intermediate_size (their intermediate_size is the dense MLP's).
        if llama4 or (
            not f.has("moe_intermediate_size")
            and (expert_key == "num_local_experts" or kind.startswith("olmoe"))
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

    embed = vocab * hidden
    head = 0 if tied else vocab * hidden
    shared_part = embed + head + hidden  # + final norm
    total = shared_part + layers * (attn + norms) + dense_layers * dense + len(moe_at) * moe_total
    active = shared_part + layers * (attn + norms) + dense_layers * dense + len(moe_at) * moe_active
    if total > MAX_PARAMS:
        raise HFConfigError(
            "config", f"describes {total:,} parameters, which is not a real model"
        )

    window, window_layers = _window(f, kind, layers)
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
    }


def from_hf_config(config: Mapping) -> dict:
    """Turn a parsed Hugging Face ``config.json`` into custom-model link keys.

    ``config`` is the decoded JSON object; the text model may sit under
    ``text_config`` (multimodal checkpoints), whose fields take precedence
    over the top level.  Returns::

        {"model": "custom", "params_b", "active_b", "embed_b",   # billions
         "layers", "heads", "kv_heads", "head_dim", "hidden",
         "experts", "experts_active", "kv_latent", "window",
         "window_layers"}                                     # ints, 0 = absent

    ``embed_b`` is the untied input table (``vocab_size * hidden_size / 1e9``)
    and 0 when the embeddings are tied, as docs/method.md sections 2-5 defines it.  With MLA
    ``kv_heads`` equals ``heads``, ``head_dim`` is the query/key head width and
    ``kv_latent`` is ``kv_lora_rank + qk_rope_head_dim``.

    Raises :class:`HFConfigError` (a ``ValueError``) naming the field when the
    input is not a mapping, a field the count needs is missing, a shape is not
    a positive integer or is absurdly large, or the architecture cannot be
    counted.
    """
    c = count_parameters(config)
    return {
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
    }


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
    return from_hf_config(value)
