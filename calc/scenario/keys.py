"""The link keys: one row per key (:data:`KEY_TABLE`) declares its kind, range, words, widget, and where its value
comes from when the link does not give it: a preset's figure (the model, card, engine profile or API row), a
literal, or a derivation from other keys (calc/scenario/derive.py). Everything else (the pydantic models, the
resolving loop, the app's widgets, the command line's help, the memo's inputs) is made from this table.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from .. import catalogue
from ..engines import DEFAULT_ENGINE, ENGINES, card_families
from . import derive as d
from .derive import AUTO

DEFAULT_MODEL = "llama-3.1-70b"
DEFAULT_CARD = "h100-sxm"
CUSTOM = "custom"

#: The card families a link's ``arch`` names (calc/data/card_families.csv, in file order), in lower case as a
#: link's choices are (``turing``; :func:`calc.engines.family_name` spells them as the file does).
ARCH_FAMILIES: tuple[str, ...] = tuple(f.lower() for f in card_families())
#: Bits per weight of each named weight format, scales included (docs/method.md), with the source of each
#: figure in ``calc/data/weight_formats.csv``.
WEIGHT_FORMATS: dict[str, float] = {name: row["bits"] for name, row in catalogue.weight_formats().items()}
DEFAULT_WEIGHTS = "int4-g128"
#: Bits per element of each named KV-cache format (docs/method.md section 1).
KV_FORMATS: dict[str, float] = {"fp16": 16, "bf16": 16, "fp8": 8, "int8": 8, "int4": 4}


def weight_format_bits(fmt: Any) -> float:
    """Bits per weight, scales included, of a weight format's name (``int4-g128``: 4.25) or of a link's own count."""
    return WEIGHT_FORMATS.get(fmt) or float(fmt)


def packed_weights(bits: float) -> bool:
    """Whether weights of ``bits`` bits each (scales included) are unpacked by the kernel that reads them: fewer than
    8 bits, or a width that is not a whole number of bytes, which only blocks with their own scales give (GGUF's
    Q8_0: 32 int8 weights and one fp16 scale, 8.5 bits). FP8, INT8 and 16-bit weights are read as stored
    (docs/method.md section 8)."""
    return bool(bits < 8 or abs(bits - 8 * round(bits / 8)) >= 1e-6)  # a width read from a link may carry rounding


#: Precisions the matrix units can run at (docs/method.md sections 2-5).
COMPUTE_PRECISIONS = catalogue.PRECISIONS


def link_text(value: Any) -> str:
    """Link text for a value: integers without a decimal point, floats in their shortest exact form."""
    if isinstance(value, bool):
        return str(int(value))
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if value.is_integer() and abs(value) < 1e15:
            return str(int(value))
        return repr(value)
    return str(value)


#: What an empty value means, for keys that may be empty.
NONE_GIVEN, UNKNOWN = "none", "unknown"
#: A default that comes from a preset (the key's ``preset`` source) or a derivation.
PRESET = "preset"
#: A custom model's or card's value of a preset figure: the default preset's figure.
FROM_DEFAULT = "from the default preset"
#: Where a preset figure comes from, by the key that picks the preset (the engine's figures from its profile).
SOURCES = ("model", "card", "engine", "api")


@dataclass(frozen=True)
class Key:
    """One link key: the single place that declares it.

    ``kind`` is ``"float"`` or ``"int"`` (a number in ``lo..hi``, both ends included), ``"id"`` (a preset id),
    ``"weights"`` / ``"kv"`` (a format name or bits 1..32), ``"choice"`` (one of ``choices``), ``"flag"`` (0 or 1)
    or ``"batch"`` (``auto`` or an integer in ``lo..hi``). ``default`` is the value when neither the link nor a
    preset gives one (:data:`PRESET`: the preset's figure). ``empty`` says what an empty value means for keys that
    may be left empty (``auto``, ``none``, ``unknown``). ``step`` and ``fmt`` are how the app's number input moves
    and shows it; ``group`` is the sidebar group; ``unit`` is for people.
    """

    key: str
    kind: str
    label: str
    help: str
    group: str
    default: Any = PRESET
    lo: float | None = None
    hi: float | None = None
    unit: str = ""
    step: float | None = None
    fmt: str | None = None
    empty: str | None = None
    choices: tuple[str, ...] = ()
    rule: str = ""  # a consistency rule with another key, added to the accepted text
    accepted_text: str = ""  # what the key accepts, where the kind alone cannot say it
    #: How the app's slider for the key moves: ``(scale, lowest, highest)`` with scale ``"log"`` (about six stops a
    #: decade), ``"pow2"`` (powers of two and 1.5 times them) or ``"formats"`` (the formats, by bits); None = no
    #: slider. The span (lowest > 0) is the usual one, 0 is added where the key accepts it; any accepted value is
    #: still entered exactly (see slider_stops).
    slider: tuple[str, float, float] | None = None
    #: True for a number that also accepts ``auto``: follow the traffic (SPEC section 10; ``ctx``, ``duty``).
    follows: bool = False
    #: Where the value comes from when the link lacks it: one of :data:`SOURCES` (the row of the key that picks
    #: that preset: ``model``, ``card``, ``engine``, ``api``), or "" for the literal ``default``. A preset's
    #: empty figure gives ``default`` (None where ``default`` is :data:`PRESET`).
    preset: str = ""
    #: The preset row's field, when it is not named as the key.
    field: str = ""
    #: A custom model's or card's value: :data:`FROM_DEFAULT` (the default preset's figure) or a literal.
    custom: Any = FROM_DEFAULT
    #: A figure the preset stands for (a model's shape, a card's datasheet): typing over it makes the model or
    #: card custom in the app, and the notes name it as modified.
    shape: bool = False
    #: ``derive(r, base)`` works the value out from other keys (calc/scenario/derive.py); None: ``base`` is it.
    derive: Callable[[Any, Any], Any] | None = None
    #: Other keys whose change drops this one's value in the app, besides the preset's own key (its default is
    #: worked out from them).
    after: tuple[str, ...] = ()
    #: False for a key the preset's key does not drop when it changes (the weight format outlives a model change
    #: unless a checkpoint brings its own; see with_change).
    drops_with_preset: bool = True

    @property
    def numeric(self) -> bool:
        return self.kind in ("float", "int")

    @property
    def accepted(self) -> str:
        """What the key accepts, in words (every error message ends with it)."""
        if self.accepted_text:
            return self.accepted_text
        if self.kind in ("float", "int", "batch"):
            what = "an integer" if self.kind != "float" else "a number"
            text = f"{what} from {_range_text(float(self.lo))} to {_range_text(float(self.hi))}{self.rule}"
            if self.kind == "batch":
                return "'auto' or " + text
            if self.follows:
                return "'auto' (follow the traffic) or " + text
            return text + (", or empty for none" if self.empty == NONE_GIVEN else "")
        if self.kind in ("weights", "kv"):
            names = WEIGHT_FORMATS if self.kind == "weights" else KV_FORMATS
            return "one of " + ", ".join(names) + (", or bits per weight from 1 to 32" if self.kind == "weights"
                                                    else ", or bits from 1 to 32; by name, a format the engine "
                                                         "holds its cache in (vLLM, SGLang: fp16, bf16, fp8; "
                                                         "TensorRT-LLM: also int8; llama.cpp: fp16, bf16, int8, "
                                                         "int4)")
        if self.kind == "choice":
            return "one of " + ", ".join(self.choices)
        if self.kind == "flag":
            return "1 or 0"
        raise ValueError(f"no accepted text for {self.key}")  # pragma: no cover


def _range_text(value: float) -> str:
    """An end of a key's range for people: large whole numbers with thousands separators (1,000,000,000,000, not
    1000000000000), others as a link writes them."""
    return f"{int(value):,}" if value.is_integer() and abs(value) >= 100_000 else link_text(value)


def _K(key: str, kind: str, label: str, help: str, group: str, **figures: Any) -> Key:
    return Key(key, kind, label, help, group, **figures)


#: Reasons to self-host that no cost figure captures, by the id the ``why`` key lists (their wording is the memo's).
REASON_IDS = ("residency", "finetune", "latency", "capacity")

#: Every link key in link order (docs/method.md): the one table the pydantic models, the command
#: line's help and the app's inputs are made from. Keys are never renamed or re-purposed. The lowest values of
#: the numeric ranges keep every division in the model finite.
KEY_TABLE: tuple[Key, ...] = (
    _K("model", "id", "Model", "Preset model; its shape fills the fields below.", "model",
       default=DEFAULT_MODEL, accepted_text="a model preset id or 'custom'"),
    _K("params_b", "float", "Total parameters (billions)", "All weights held in memory, MoE experts included.",
       "model", lo=1e-6, hi=1e5, unit="billion parameters", step=1.0, fmt="%g", slider=("log", 0.1, 2000),
       preset="model", shape=True),
    _K("active_b", "float", "Active parameters per token (billions)",
       "Parameters one token uses; equals the total for a dense model.", "model",
       lo=1e-6, hi=1e5, unit="billion parameters", step=1.0, fmt="%g", rule=", and <= params_b", slider=("log", 0.1, 2000),
       preset="model", shape=True, derive=d.active_b),
    _K("layers", "int", "Layers", "Transformer blocks.", "model", lo=1, hi=10_000, step=1, slider=("pow2", 1, 256),
       preset="model", shape=True),
    _K("heads", "int", "Query heads", "Attention (query) heads per layer.", "model", lo=1, hi=100_000, step=1, slider=("pow2", 1, 256),
       preset="model", shape=True, derive=d.heads),
    _K("kv_heads", "int", "KV heads (GQA)",
       "Key/value heads per layer; fewer than query heads under grouped-query attention.", "model",
       lo=1, hi=100_000, step=1, rule=", and divides heads", slider=("pow2", 1, 256),
       preset="model", shape=True),
    _K("head_dim", "int", "Head dimension", "Width of one attention head.", "model", lo=1, hi=100_000, step=1, slider=("pow2", 16, 1024),
       preset="model", shape=True),
    _K("hidden", "int", "Model width (hidden size)", "Residual-stream width; sets the tensor-parallel all-reduce size.",
       "model", lo=1, hi=10_000_000_000, step=1, slider=("pow2", 256, 65536),
       preset="model", shape=True, custom=None, derive=d.hidden),
    _K("experts", "int", "Routed experts per MoE layer", "0 for a dense model.", "model", lo=0, hi=100_000, step=1,
       accepted_text="0 (dense) or an integer from 2 to 100,000", slider=("pow2", 2, 1024),
       preset="model", shape=True, custom=0),
    _K("experts_active", "int", "Routed experts per token", "Experts each token is routed to.", "model",
       lo=0, hi=100_000, step=1, accepted_text="an integer with 1 <= experts_active < experts (0 when dense)", slider=("pow2", 1, 64),
       preset="model", shape=True, custom=0),
    _K("kv_latent", "int", "MLA latent width per layer",
       "kv_lora_rank + qk_rope_head_dim for multi-head latent attention; 0 = plain KV cache.", "model",
       lo=0, hi=1_000_000, step=1, accepted_text="0 (no MLA) or an integer from 1 to 1,000,000", slider=("pow2", 64, 4096),
       preset="model", shape=True, custom=0),
    _K("window", "int", "Sliding window (tokens)", "Attention window of the windowed layers; 0 = no window.", "model",
       lo=0, hi=100_000_000, unit="tokens", step=1, accepted_text="0 (none) or an integer from 1 to 100,000,000", slider=("pow2", 256, 1048576),
       preset="model", shape=True, custom=0),
    _K("window_layers", "int", "Layers using the window", "How many layers attend only within the window.", "model",
       lo=0, hi=10_000, step=1, accepted_text="an integer from 0 to layers", slider=("pow2", 1, 256),
       preset="model", shape=True, custom=0),
    _K("embed_b", "float", "Input-embedding parameters (billions)",
       "Untied input-embedding table, which a decode step does not read; 0 when tied.", "model",
       lo=0, hi=1e5, unit="billion parameters", step=0.1, fmt="%g", rule=", and < active_b", slider=("log", 0.01, 100),
       preset="model", shape=True, custom=0.0),
    _K("vocab", "int", "Vocabulary (tokens)",
       "Rows of the embedding table and of the LM head (config.json vocab_size); sizes the LM head's weights and "
       "the logits an engine profiles; default: the preset's, else embed_b / hidden, else 131072.", "model",
       lo=1, hi=100_000_000, unit="tokens", step=1, slider=("pow2", 4096, 1048576),
       preset="model", shape=True, custom=None, derive=d.vocab, after=("hidden", "embed_b")),
    _K("linear_layers", "int", "Linear-attention layers",
       "Layers that keep a fixed state per sequence instead of a per-token KV cache (Gated DeltaNet, Mamba); "
       "0 = every layer attends over a KV cache.", "model", lo=0, hi=10_000, step=1,
       accepted_text="an integer from 0 to layers - window_layers", slider=("pow2", 1, 256),
       preset="model", shape=True, custom=0),
    _K("state_kib", "float", "State per layer and sequence (KiB)",
       "Recurrent state a linear-attention or Mamba mixer keeps per sequence in each of the state_layers, at 16 bits (KiB = 1024 "
       "bytes); default: the preset's, else hidden / 2 (2 x hidden x 128 values, the shape of Mamba2 and Gated "
       "DeltaNet states).",
       "model", lo=0, hi=1e9, unit="KiB", step=64.0, fmt="%g", slider=("log", 16, 100000),
       preset="model", shape=True, custom=None, derive=d.state_kib, after=("hidden", "linear_layers",
                                                                             "state_layers")),
    _K("state_layers", "int", "Layers holding a state",
       "Layers that keep a fixed state of state_kib per sequence: the linear_layers, whose state replaces the KV "
       "cache, and, in a model that runs a Mamba mixer beside attention in every layer (Falcon-H1), attention "
       "layers too, which then keep both; default: linear_layers.", "model", lo=0, hi=10_000, step=1,
       accepted_text="an integer from linear_layers to layers", slider=("pow2", 1, 256),
       preset="model", shape=True, custom=None, derive=d.state_layers, after=("linear_layers",)),
    _K("card", "id", "Accelerator", "Preset card; its datasheet figures fill the fields below.", "hardware",
       default=DEFAULT_CARD, accepted_text="a card preset id or 'custom'"),
    _K("mem_gib", "float", "Memory per card (GiB)",
       "Device memory as the driver reports it (nvidia-smi total; the card preset records it, not the label), "
       "GiB = 2^30 bytes.", "hardware", lo=0.001, hi=1e5, unit="GiB", step=1.0, fmt="%g", slider=("log", 8, 2048),
       preset="card", shape=True),
    _K("torch_gib", "float", "Memory per card as CUDA reports it (GiB)",
       "The total torch.cuda.mem_get_info() returns, which vLLM and SGLang size their share from (an H100 80 GB: "
       "79.19 GiB against nvidia-smi's 79.65); default: the card preset's, else mem_gib.", "hardware",
       lo=0.001, hi=1e5, unit="GiB", step=1.0, fmt="%g", rule=", and <= mem_gib", slider=("log", 8, 2048),
       preset="card", shape=True, derive=d.torch_gib, after=("mem_gib",)),
    _K("bw_tbs", "float", "Memory bandwidth per card (TB/s)", "Datasheet memory bandwidth, 1 TB/s = 1e12 bytes/s.",
       "hardware", lo=0.001, hi=1e4, unit="TB/s", step=0.1, fmt="%g", slider=("log", 0.1, 30),
       preset="card", shape=True),
    _K("tflops", "float", "Dense peak per card (TFLOP/s)", "Dense (not 'with sparsity') peak at the compute precision.",
       "hardware", lo=0.001, hi=1e6, unit="TFLOP/s", step=10.0, fmt="%g", slider=("log", 10, 30000),
       preset="card", shape=True, derive=d.tflops, after=("compute",)),
    _K("gpus", "int", "Cards per replica", "Cards one model replica is split over: by tensor parallel (vLLM, SGLang, "
       "TensorRT-LLM, the roofline), by whole layers or, split=row, by matrix rows (llama.cpp).", "hardware",
       default=1, lo=1, hi=64, unit="cards", step=1, slider=("pow2", 1, 64),
       rule=", one the engine can split the heads over (vLLM, SGLang, TensorRT-LLM: a divisor of the attention "
            "heads)"),
    _K("compute", "choice", "Compute precision", "Precision the matrix units run at; picks the card's dense peak.",
       "hardware", default="bf16", choices=COMPUTE_PRECISIONS,
       accepted_text="one of bf16, fp16, fp8, int8, fp4, a precision the card has and no narrower than the "
                     "stored weights (fp8 and int8: weights of 8 bits or fewer; fp4: 4 bits)"),
    _K("link_gbs", "float", "Interconnect per card (GB/s, one direction)",
       "NVLink / Infinity Fabric / PCIe bandwidth used by the all-reduces.", "hardware",
       lo=0.001, hi=1e5, unit="GB/s", step=10.0, fmt="%g", slider=("log", 10, 3000),
       preset="card", custom=None, derive=d.link_gbs),
    _K("clock_ghz", "float", "Boost clock per card (GHz; llama.cpp Vulkan only)",
       "The card's boost clock from its datasheet. Only an engine whose time per layer is a count of clock cycles "
       "uses it (llama.cpp's Vulkan backend: layer_ghz > 0), at layer_us x layer_ghz / clock_ghz; every other "
       "engine's step is the same at any clock. A preset card's default is its published clock; a custom card, or "
       "a preset with none published, has it unknown: the time per layer as the profile states it.", "hardware",
       lo=0.1, hi=10, unit="GHz", step=0.1, fmt="%g", empty=UNKNOWN, slider=("log", 0.5, 4),
       preset="card", custom=None, shape=True),
    _K("arch", "choice", "Card family",
       "The card's architecture family (a preset card's own, calc/data/card_arch.csv; it cannot be changed for a "
       "preset). For a custom card, naming its family applies that family's share of the engine's bandwidth where "
       "one was measured (eff_card, calc/data/card_families.csv: Turing cards under llama.cpp's Vulkan builds) and "
       "the error band measured on that family; apple marks a Mac's GPU, whose memory under llama.cpp is Metal's "
       "working set of the unified memory given as mem_gib (two thirds up to 32 GiB, three quarters above); unknown "
       "(the default for a custom card): none of these.", "hardware",
       choices=(*ARCH_FAMILIES, "unknown"), derive=d.arch, after=("card",),
       accepted_text=f"one of {', '.join((*ARCH_FAMILIES, 'unknown'))}, a custom card's (a preset's own); apple: a "
                     "Mac's GPU, run by llama.cpp only, its memory Metal's working set of mem_gib"),
    _K("link_us", "float", "All-reduce latency (µs)", "Fixed cost of one all-reduce.", "hardware",
       default=10.0, lo=0, hi=1e6, unit="µs", step=1.0, fmt="%g", slider=("log", 1, 1000)),
    _K("weights", "weights", "Weight format", "Bits per weight, scales included (int4-g128 = 4.25).", "precision",
       default=DEFAULT_WEIGHTS, slider=("formats", 1, 32),
       preset="model", custom=None, drops_with_preset=False, derive=d.weights),
    _K("weights_experts", "weights", "Routed-expert weight format",
       "Format of the routed-expert weights of an MoE model (gpt-oss ships them in mxfp4); default: the weight format.",
       "precision", slider=("formats", 1, 32),
       derive=d.weights_experts, after=("weights",)),
    _K("weights_attn", "weights", "Attention-projection weight format",
       "Format of the attention projections (q, k, v, o); checkpoints such as Meta's 405B FP8 keep them at 16 bits; "
       "default: the weight format.", "precision", slider=("formats", 1, 32),
       derive=d.weights_attn, after=("weights",)),
    _K("weights_embed", "weights", "Embedding and LM-head weight format",
       "Format of the embedding table and the LM head; default: the weight format.", "precision",
       slider=("formats", 1, 32),
       derive=d.weights_embed, after=("weights",)),
    _K("layers_full", "int", "Blocks kept whole at 16 bits",
       "Transformer blocks a quantized checkpoint keeps entirely in 16 bits (Meta's 405B FP8 keeps the first and "
       "the last: 2); default: the preset's, else 0.", "precision", lo=0, hi=10_000, step=1,
       accepted_text="an integer from 0 to layers", slider=("pow2", 1, 256),
       derive=d.layers_full, after=("weights",)),
    _K("kv", "kv", "KV-cache format", "Precision of cached keys and values.", "precision", default="fp16", slider=("formats", 1, 32)),
    _K("ctx", "int", "Context (tokens per sequence)",
       "Tokens held in the KV cache per sequence; auto (the default) = a request of the traffic, prompt plus "
       "output tokens, as the Decision page sizes it; a number is a what-if for the Fit, Speed and Cost pages.",
       "precision", default=AUTO, lo=1, hi=100_000_000, unit="tokens", step=1024, slider=("pow2", 128, 1048576),
       empty=AUTO, follows=True,
       derive=d.ctx),
    _K("batch", "batch", "Batch (sequences per step)",
       "Concurrent sequences per decode step; auto = largest useful batch.", "precision",
       default=AUTO, lo=1, hi=1_000_000, unit="sequences", step=1, empty=AUTO),
    _K("eff", "float", "Efficiency (fraction of peak)",
       "Fraction of peak compute and bandwidth kernels reach; sets eff_bw, eff_kv and eff_flops where those are not "
       "given (roofline's figure is 0.7; another engine uses its own figures unless eff is given).",
       "advanced", default=0.7, lo=0.001, hi=1, step=0.05, fmt="%g",
       after=("engine",)),
    _K("overhead_gib", "float", "Reserved memory per card (GiB)",
       "Activations, workspace, fragmentation; default: the engine profile's reserve (roofline 4); empty for vLLM "
       "and SGLang, whose reserve is worked out from the launch settings as they do (docs/method.md section 8.2).",
       "advanced", lo=0, hi=1e5, unit="GiB", step=1.0, fmt="%g", empty=NONE_GIVEN,
       preset="engine"),
    _K("usd_hr", "float", "Rent per card-hour (USD)", "Your hourly quote per card.", "money",
       lo=0, hi=1e4, unit="USD per card-hour", step=0.1, fmt="%.2f", empty=UNKNOWN,
       preset="card"),
    _K("duty", "float", "Duty cycle (busy fraction)",
       "Fraction of the month the cards do useful work; auto (the default) = the traffic's implied duty per "
       "replica; a number is a what-if for the cost per million tokens.", "money",
       default=AUTO, lo=0.001, hi=1, step=0.05, fmt="%g", empty=AUTO, follows=True,
       derive=d.duty),
    _K("upkeep", "float", "Upkeep per month (USD)",
       "Engineering time on serving, all cards together; does not fall with volume.", "money",
       default=4000.0, lo=0, hi=1e9, unit="USD per month", step=500.0, fmt="%g"),
    _K("hours", "float", "Hours in a month",
       "The month's length (720 = 30 days): it scales the rent and the traffic alike, since requests a day x "
       "hours / 24 are the month's requests. A fleet that runs part of the day is not a shorter month.", "money",
       default=720.0, lo=1, hi=744, unit="hours", step=24.0, fmt="%g"),
    _K("attn", "flag", "Count attention in the step",
       "1 counts KV-cache reads and attention FLOPs; 0 reproduces the weights-only textbook tables.", "advanced",
       default=1),
    _K("req_day", "float", "Requests per day", "Average daily request volume.", "traffic",
       default=10000.0, lo=0.001, hi=1e12, unit="requests per day", step=1000.0, fmt="%g", slider=("log", 1, 1000000000.0)),
    _K("in_tok", "int", "Prompt tokens per request", "Input tokens per request.", "traffic",
       default=1000, lo=0, hi=10_000_000, unit="tokens", step=100, slider=("log", 10, 1000000.0)),
    _K("out_tok", "int", "Output tokens per request", "Generated tokens per request.", "traffic",
       default=300, lo=1, hi=10_000_000, unit="tokens", step=50, slider=("log", 1, 100000.0)),
    _K("peak", "float", "Peak-hour factor", "Busiest hour's request rate over the average hour's.", "traffic",
       default=3.0, lo=1, hi=1000, step=0.5, fmt="%g", slider=("log", 1, 20),
       derive=d.peak, after=("profile",)),
    _K("tpot_ms", "float", "Latency target: time per output token (ms)",
       "Longest acceptable time per output token; empty = no target.", "traffic",
       default=None, lo=0.001, hi=1e6, unit="ms", step=5.0, fmt="%g", empty=NONE_GIVEN),
    _K("api", "id", "API price row", "Provider and model to compare with.", "traffic",
       accepted_text="an API price id from the catalogue",
       preset="model", field="api_ref", derive=d.api, after=("active_b",)),
    _K("api_in", "float", "API input price (USD per 1M tokens)", "Price per million prompt tokens.", "traffic",
       lo=0, hi=1000, unit="USD per 1M tokens", step=0.05, fmt="%g",
       preset="api"),
    _K("api_out", "float", "API output price (USD per 1M tokens)", "Price per million output tokens.", "traffic",
       lo=0, hi=1000, unit="USD per 1M tokens", step=0.05, fmt="%g",
       preset="api"),
    _K("why", "reasons", "Reasons to self-host beyond cost",
       "Reasons ticked on the Decision page, listed in the memo; they have no price.", "decision",
       default=None, choices=REASON_IDS, empty=NONE_GIVEN,
       accepted_text="a comma-separated list of " + ", ".join(REASON_IDS) + ", or empty for none"),
    # docs/method.md section 8: the engine profile and the figures it sets (each key overrides the profile's figure).
    _K("engine", "choice", "Serving engine",
       "Engine profile: the fractions of each peak, the fixed costs and the memory share a real engine has; "
       "roofline is the textbook model (70 % of every peak, no fixed costs), not what an engine reaches.", "engine", default=DEFAULT_ENGINE, choices=ENGINES),
    _K("eff_bw", "float", "Bandwidth reached reading weights (fraction)",
       "Fraction of datasheet bandwidth reached reading the weights; default: the link's eff, else the profile's.",
       "engine", lo=0.001, hi=1, step=0.05, fmt="%g",
       preset="engine", derive=d.eff_bw, after=("eff",)),
    _K("eff_kv", "float", "Bandwidth reached reading the KV cache (fraction)",
       "Fraction of datasheet bandwidth reached reading the KV cache; default: the link's eff, else the profile's.",
       "engine", lo=0.001, hi=1, step=0.05, fmt="%g",
       preset="engine", derive=d.eff_kv, after=("eff",)),
    _K("eff_card", "float", "Bandwidth share of the card family (fraction of eff_bw and eff_kv)",
       "Share of the engine's bandwidth figures (eff_bw, eff_kv) a card of this family reaches: 1 for the families "
       "the profiles are fitted on, fitted where a family's own rows read slower (Turing under llama.cpp's Vulkan "
       "builds: calc/data/card_families.csv); default: the family's under the engine (arch), 1 for the roofline, "
       "for an unknown family or an engine no such row measured.",
       "engine", lo=0.001, hi=1, step=0.05, fmt="%g", derive=d.eff_card,
       after=("arch", "engine")),
    _K("eff_flops", "float", "Compute reached (fraction of dense peak)",
       "Fraction of the dense peak reached by a decode step's arithmetic (and by a prefill's, unless eff_prefill "
       "is given); default: the link's eff, else the profile's.",
       "engine", lo=0.001, hi=1, step=0.05, fmt="%g",
       preset="engine", derive=d.eff_flops, after=("eff",)),
    _K("eff_prefill", "float", "Compute reached in prefill (fraction of dense peak)",
       "Fraction of the dense peak the prefill's arithmetic reaches: its GEMMs multiply thousands of prompt tokens "
       "at once, where a decode step's multiply one row per sequence in the batch, so a prefill can reach more of the "
       "peak than eff_flops (times eff_fp4 at compute=fp4); counted in the prefill under load and in the TTFT; "
       "default: the profile's (eff_flops where the link gives eff_flops, eff where it gives eff).", "engine",
       lo=0.001, hi=1, step=0.05, fmt="%g",
       preset="engine", derive=d.eff_prefill, after=("eff", "eff_flops")),
    _K("step_us", "float", "Fixed time per decode step (µs)",
       "Scheduling, kernel launches and sampling, once per step; default: the profile's.", "engine",
       lo=0, hi=1e6, unit="µs", step=100.0, fmt="%g",
       preset="engine"),
    _K("mem_util", "float", "Share of card memory the engine takes",
       "Fraction of each card's memory the engine uses for weights, reserve and KV cache; default: the profile's.",
       "engine", lo=0.001, hi=1, step=0.05, fmt="%g",
       preset="engine"),
    _K("max_seqs", "int", "Most sequences per step",
       "Cap on the sequences the engine schedules per step; default: the profile's (roofline: none).", "engine",
       lo=1, hi=65536, unit="sequences", step=1, empty=NONE_GIVEN,
       accepted_text="an integer from 1 to 65536 (absent: the profile's cap; roofline has none)",
       preset="engine", derive=d.max_seqs, after=("card", "mem_gib", "torch_gib", "max_batched_tokens")),
    _K("tok_us", "float", "Host time per output token under load (µs)",
       "Sampling, detokenisation and bookkeeping per generated token that the engine does not overlap with the "
       "cards; counted in the throughput under full load only; default: the profile's.", "engine",
       lo=0, hi=1e6, unit="µs", step=1.0, fmt="%g",
       preset="engine"),
    _K("eff_link", "float", "Interconnect bandwidth reached under load (fraction)",
       "Fraction of the interconnect's bandwidth the all-reduces reach at full load; counted in the throughput "
       "under full load only; default: the profile's.", "engine", lo=0.001, hi=1, step=0.05, fmt="%g",
       preset="engine"),
    _K("layer_us", "float", "Fixed time per layer per decode step (µs)",
       "Kernel launches and host work that repeat for every layer of every step (an engine that replays its steps "
       "as CUDA graphs pays almost none); added to step_us once per layer; default: the profile's.", "engine",
       lo=0, hi=1e5, unit="µs", step=10.0, fmt="%g",
       preset="engine"),
    _K("layer_ghz", "float", "Card clock the time per layer is stated at (GHz)",
       "For an engine whose time per layer is a count of clock cycles (llama.cpp's Vulkan backend dispatches each "
       "layer's small shaders one after another, each waiting on the last): layer_us is the time at this clock, and "
       "a card of known clock_ghz takes layer_us x layer_ghz / clock_ghz per layer; 0: the time per layer does not "
       "follow the clock; default: the profile's (0 where the link gives layer_us alone).", "engine",
       lo=0, hi=10, unit="GHz", step=0.1, fmt="%g",
       preset="engine", derive=d.layer_ghz),
    _K("eager_us", "float", "Time per layer added without CUDA graphs (µs)",
       "What each layer of each step adds when the engine launches its kernels one by one instead of replaying a "
       "captured CUDA graph (cuda_graphs=0); added to layer_us; measured for llama.cpp only (its builds before "
       "CUDA graphs, and current builds on cards older than Ampere), 0 for the engines no row measures without "
       "graphs; also paid by a llama.cpp step of more than one sequence, for which its CUDA backend captures no "
       "graph; default: the profile's (0 where the link gives layer_us alone).", "engine",
       lo=0, hi=1e5, unit="µs", step=10.0, fmt="%g",
       preset="engine", derive=d.eager_us),
    _K("eff_dequant", "float", "Bandwidth kept on packed weights (fraction of eff_bw)",
       "Share of eff_bw the kernels keep when the weights are packed, stored in fewer than 8 bits or in blocks with "
       "their own scales (4-bit formats and every GGUF block format, Q8_0 included), and unpacked on the fly; 1 = no loss; default: the profile's.", "engine",
       lo=0.001, hi=1, step=0.05, fmt="%g",
       preset="engine"),
    _K("kv_reread", "float", "GQA re-reads of the KV cache (share)",
       "0 when the decode attention kernel reads each KV head once for all the query heads it serves (every engine "
       "of 2024 on); 1 when it reads it once per query head, as TensorRT-LLM's masked-attention kernel of v0.5 "
       "and v0.6 did (one thread block per query head), so a GQA model reads H/Hkv times the cache it holds; "
       "default: the profile's.", "engine", lo=0, hi=1, step=0.25, fmt="%g",
       preset="engine"),
    _K("eff_fp4", "float", "Compute kept at FP4 (fraction of eff_flops)",
       "Share of eff_flops the arithmetic keeps at compute=fp4: NVFP4 and MXFP4 GEMMs scale every block of 16 or 32 "
       "values and quantize their activations on the fly, and attention runs at 8 or 16 bits, so a step reaches less "
       "of the FP4 peak than of the FP8 one; 1 = as at every other precision; default: the profile's (1 where the link "
       "gives eff_flops or eff). Counts only at compute=fp4.", "engine", lo=0.001, hi=1, step=0.05, fmt="%g",
       preset="engine", derive=d.eff_fp4, after=("eff", "eff_flops")),
    _K("eff_fp8", "float", "Decode compute kept at FP8 (fraction of eff_flops)",
       "Share of eff_flops a decode step's arithmetic keeps at compute=fp8: a decode step multiplies each weight "
       "matrix by one row per sequence, and vLLM's FP8 GEMMs (activations quantized on the fly, then scaled "
       "GEMMs) reach about the BF16 rate at those sizes, so FP8 saves the weights' bytes but little arithmetic; a "
       "prefill's thousands of rows keep the FP8 peak; 1 = as at every other precision; default: the profile's "
       "(1 where the link gives eff_flops or eff). Counts only at compute=fp8, in decode steps.", "engine",
       lo=0.001, hi=1, step=0.05, fmt="%g",
       preset="engine", derive=d.eff_fp8, after=("eff", "eff_flops")),
    _K("overlap", "float", "Memory and arithmetic overlapped in a step (share)",
       "Share of the shorter of a decode step's two times, reading memory and doing the arithmetic, that its "
       "kernels hide under the longer: 1 = the roofline's max of the two (a GEMM streams its next tile while the "
       "tensor cores work on this one, as every engine of 2024 on is measured to); below 1 a step near the ridge "
       "point, where the two times are close, pays part of both, as TensorRT-LLM's static-batch releases of 2023 "
       "(v0.5 to v0.9) did; 0 = the two add; default: the profile's (1 where the link gives eff_flops or eff).",
       "engine", lo=0, hi=1, step=0.05, fmt="%g",
       preset="engine", derive=d.overlap, after=("eff", "eff_flops")),
    _K("expert_us", "float", "Prefill time per expert per MoE layer per chunk (µs)",
       "Fixed time each routed expert's GEMM costs in every MoE layer of every prefill chunk (max_batched_tokens "
       "tokens), beside its FLOPs: the grouped GEMM's set-up, its part-filled tiles and the tokens gathered to it and "
       "back; a model of many small experts pays it most; counted in prefill only; default: the profile's (0 where "
       "the link gives step_us).", "engine", lo=0, hi=1e4, unit="µs", step=1.0, fmt="%g",
       preset="engine", derive=d.expert_us, after=("step_us",)),
    _K("max_batched_tokens", "int", "Most tokens per engine step",
       "vLLM's --max-num-batched-tokens, SGLang's --chunked-prefill-size, TensorRT-LLM's max_num_tokens, "
       "llama.cpp's -ub (n_ubatch): the tokens one step may hold; sizes the activations the engine reserves memory "
       "for; default: the engine's (vLLM: 8192 on cards of 70 GiB and more other than the A100, else 2048; "
       "llama.cpp: 512).", "engine",
       lo=1, hi=10_000_000, unit="tokens", step=512, slider=("pow2", 256, 131072),
       derive=d.max_batched_tokens, after=("engine", "card", "mem_gib", "torch_gib")),
    _K("dequant_q8", "flag", "Q8_0 blocks unpacked at eff_dequant",
       "1 when the loss on packed weights (eff_dequant) also applies to 8-bit blocks with their own scales (GGUF's "
       "Q8_0, 8.5 bits a weight), as it does to every format below 8 bits; 0 reads them at the full eff_bw, as a "
       "link that gives eff_dequant without this key does (links printed before it existed keep their numbers).",
       "engine", default=1, derive=d.dequant_q8, after=("engine",)),
    _K("cuda_graphs", "flag", "CUDA graphs captured",
       "1 when the engine captures its decode steps as CUDA graphs (the default of every engine here but the "
       "llama.cpp builds of before May 2024); vLLM reserves their memory before sizing its KV cache (since v0.21); "
       "0 as with --enforce-eager, or llama.cpp on a card older than Ampere: each layer then adds eager_us.",
       "engine", default=1, derive=d.cuda_graphs, after=("engine",)),
    _K("split", "choice", "Split over several cards (llama.cpp)",
       "How llama.cpp shares a model over several cards (--split-mode): layer gives each card whole layers, and the "
       "cards take turns (the default since January 2024); row splits every weight matrix over the cards, which read "
       "their shares at once and hand their results to the main card after every product, which also holds the whole "
       "KV cache (the only way of the CUDA builds before, priced with llamacpp-2024's hand-over time; docs/method.md "
       "section 5). Other engines split by tensor parallel.",
       "engine", default="layer", choices=("layer", "row"),
       accepted_text="one of layer, row (row under engine=llamacpp-2024 only)"),
    _K("flash_attn", "flag", "Flash attention",
       "1 when attention runs through a flash-attention kernel (every engine here by default, and llama.cpp since "
       "August 2025, -fa auto); 0 as llama.cpp's -fa off and its builds before: its compute buffer then holds the "
       "attention scores of a whole physical batch over the context (docs/method.md section 8.2). Memory only.",
       "engine", default=1, derive=d.flash_attn, after=("engine",)),
    # docs/method.md section 9: levers that change the answer.
    _K("spec_k", "int", "Speculative decoding: draft tokens per step",
       "Tokens a draft model proposes per step for the target to verify; 0 = off.", "levers",
       default=0, lo=0, hi=64, unit="tokens", step=1),
    _K("spec_alpha", "float", "Draft acceptance rate",
       "Probability that the target accepts a draft token.", "levers",
       default=0.7, lo=0, hi=0.999, step=0.05, fmt="%g"),
    _K("spec_c", "float", "Draft step / target step",
       "Time of one draft step over one target step at the same batch.", "levers",
       default=0.05, lo=0, hi=10, step=0.01, fmt="%g"),
    _K("prefix_hit", "float", "Prefix-cache hit share",
       "Share of prompt tokens found in a prefix cache: fewer prefill FLOPs self-hosted, cached-input prices at "
       "the API.", "levers", default=0.0, lo=0, hi=1, step=0.05, fmt="%g"),
    _K("api_cached", "float", "API cached-input price (USD per 1M tokens)",
       "Price per million cached prompt tokens; default: the API row's, else the input price.", "levers",
       lo=0, hi=1000, unit="USD per 1M tokens", step=0.05, fmt="%g",
       derive=d.api_cached, after=("api",)),
    _K("discount", "float", "Rent discount for a commitment",
       "Discount on the hourly rent for a reservation or commitment, paid whether the traffic comes or not.",
       "levers", default=0.0, lo=0, hi=0.99, step=0.05, fmt="%g"),
    # SPEC section 9: owning the cards, the day's traffic, mixing with the API.
    _K("card_usd", "float", "Purchase price per card (USD)",
       "What one card costs to buy; default: the card preset's public price (sourced and dated), else none.",
       "own", lo=1, hi=1e8, unit="USD", step=1000.0, fmt="%g", empty=UNKNOWN,
       preset="card", custom=None),
    _K("server_frac", "float", "Server and installation per card (share of its price)",
       "Server, network and installation per card, as a share of the card's price.", "own",
       default=0.4, lo=0, hi=100, step=0.05, fmt="%g"),
    _K("years", "float", "Service life (years)", "Years the purchase is spread over.", "own",
       default=4.0, lo=0.1, hi=30, unit="years", step=0.5, fmt="%g"),
    _K("wacc", "float", "Cost of capital (a year)", "Yearly cost of the money tied up in the cards.", "own",
       default=0.08, lo=0, hi=0.99, step=0.01, fmt="%g"),
    _K("residual", "float", "Resale value at the end (share of what was paid)",
       "What the cards and servers fetch at the end of their life.", "own",
       default=0.1, lo=0, hi=0.99, step=0.05, fmt="%g"),
    _K("power_w", "float", "Board power per card (W)",
       "Power one card draws under load; default: the card preset's datasheet figure.", "own",
       lo=1, hi=1e5, unit="W", step=50.0, fmt="%g", empty=UNKNOWN,
       preset="card", custom=None),
    _K("idle_frac", "float", "Idle power (share of board power)", "Power an idle card still draws.", "own",
       default=0.25, lo=0, hi=1, step=0.05, fmt="%g"),
    _K("pue", "float", "PUE (facility over IT power)", "Cooling and distribution on top of the cards' power.",
       "own", default=1.4, lo=1, hi=5, step=0.1, fmt="%g"),
    _K("usd_kwh", "float", "Electricity (USD per kWh)", "Price of a kilowatt-hour.", "own",
       default=0.12, lo=0, hi=10, unit="USD per kWh", step=0.01, fmt="%g"),
    _K("colo_usd", "float", "Rack space per card per month (USD)", "Hosting of an owned card, per month.", "own",
       default=0.0, lo=0, hi=1e6, unit="USD per card-month", step=10.0, fmt="%g"),
    _K("buy_lot", "int", "Cards bought together",
       "Cards sold as one unit: an owned fleet is bought in whole units, and a card bought and not in use still "
       "costs its capital, rack space and idle power. Default: the cards on the card's baseboard where it is sold "
       "on one (8 for an SXM or OAM card: HGX, AMD's and Intel's OAM platforms; HGX also comes with 4 GPUs for "
       "some cards: set 4 where that is what you buy), else 1 (a PCIe card; a custom card).", "own",
       lo=1, hi=1000, unit="cards", step=1, preset="card", custom=None, derive=d.buy_lot),
    _K("profile", "profile", "The day's traffic (24 hourly weights)",
       "flat, office or evening (docs/method.md section 7.8), or 24 comma-separated weights >= 0, not all 0, "
       "hour 0 first; empty = no profile (every hour like the peak factor says).", "traffic",
       default=None, empty=NONE_GIVEN,
       accepted_text="flat, office, evening, or 24 comma-separated numbers >= 0 (not all 0), or empty for none"),
    _K("autoscale", "flag", "Rented replicas follow the hour",
       "1: a rented fleet runs, each hour, the replicas that hour needs (with a profile).", "traffic", default=0),
    _K("min_replicas", "int", "Fewest replicas when autoscaled", "Replicas an autoscaled fleet always keeps.",
       "traffic", default=1, lo=0, hi=100_000, unit="replicas", step=1),
    # The quantization lab's experiment (docs/method.md section 10.4): inputs of its page, kept in the link too.
    _K("lab_n", "choice", "Lab: matrix size (n x n)", "Size of the lab's random weight matrix; the notes use 4096.",
       "lab", default="4096", choices=("512", "1024", "2048", "4096")),
    _K("lab_group", "choice", "Lab: group size (weights per scale pair)", "Weights that share one scale pair.",
       "lab", default="128", choices=("32", "64", "128", "256", "512")),
    _K("lab_outliers", "choice", "Lab: outliers (share of weights)",
       "Share of the matrix's weights made much louder; the reference tables' 4,096 of 4096 x 4096 is 0.0244 %.",
       "lab", default="0.000244140625", choices=("0", "0.0001", "0.000244140625", "0.001", "0.005", "0.01"),
       accepted_text="one of 0, 0.0001 (0.01 %), 0.000244140625 (0.0244 %: 4,096 of 4096 x 4096), 0.001 (0.1 %), "
                     "0.005 (0.5 %) or 0.01 (1 %), a share of the weights"),
    _K("lab_scale", "choice", "Lab: outlier scale (x a typical weight)", "How much louder an outlier is.",
       "lab", default="20", choices=("2", "5", "10", "20", "50", "100")),
    # A finite benchmark run (docs/method.md section 8.1): how a published throughput was measured, so that a
    # benchmark's figure can be checked against the model; the bills and replicas never use it.
    _K("run_prompts", "int", "Benchmark run: requests sent at once",
       "A finite benchmark run of this many requests, all sent at once (vllm bench serve --num-prompts N with no "
       "request rate): the report's run_throughput_tok_s is that run's output tokens over its duration, the ramp "
       "and the tail of the last long replies included. 0 = none (steady full load only).", "traffic",
       default=0, lo=0, hi=100_000, unit="requests", step=100),
    _K("out_spread", "choice", "Benchmark run: reply lengths",
       "How a run's reply lengths spread around out_tok: 'none' (every reply out_tok tokens, as with --ignore-eos) "
       "or 'exp' (exponential around the mean, as a chat dataset such as ShareGPT gives).", "traffic",
       default="none", choices=("none", "exp")),
    _K("out_max", "int", "Benchmark run: longest reply (tokens)",
       "The longest reply of an 'exp' spread (a dataset's length filter, or max-model-len less the prompt), at "
       "least out_tok; 0 = what the model's trained context leaves beside the prompt.", "traffic",
       default=0, lo=0, hi=10_000_000, unit="tokens", step=256),
)

#: The table by key, in link order.
KEYS: dict[str, Key] = {k.key: k for k in KEY_TABLE}

RANGES: dict[str, tuple[type, float, float]] = {
    k.key: (float if k.kind == "float" else int, k.lo, k.hi) for k in KEY_TABLE if k.numeric or k.kind == "batch"}

#: The figures a model preset stands for (its shape) and a card preset's datasheet figures: typing over one makes
#: the model or card custom.
MODEL_FIGURES = tuple(k.key for k in KEY_TABLE if k.preset == "model" and k.shape)
CARD_FIGURES = tuple(k.key for k in KEY_TABLE if k.preset == "card" and k.shape)


def _dependents() -> dict[str, tuple[str, ...]]:
    """Keys whose default comes from another key, by that key: changing the parent drops them (in the app)."""
    out: dict[str, list[str]] = {}
    for k in KEY_TABLE:
        parents = ((k.preset,) if k.preset and k.drops_with_preset else ()) + k.after
        for parent in parents:
            out.setdefault(parent, []).append(k.key)
    return {parent: tuple(keys) for parent, keys in out.items()}


#: Keys whose default comes from another key, by that key (from each row's preset and ``after``).
DEPENDENTS: dict[str, tuple[str, ...]] = _dependents()
