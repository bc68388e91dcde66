"""The scenario: every input of the calculator, parsed from a link and resolved against the catalogue.

A scenario is a URL query string (docs/method.md section 1). This module turns a query string, a whole URL
or a mapping into a validated, fully resolved :class:`Scenario` and back into a link. Bad values
never raise from :func:`parse`: each becomes a :class:`FieldError` naming the key, the value given
and the accepted range, and that key falls back to its default. :func:`load` is the strict form
that raises :class:`ScenarioError` instead (the command line uses it).
"""

from __future__ import annotations

import difflib
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Annotated, Any, Literal
from urllib.parse import parse_qsl, urlencode, urlsplit

from pydantic import BaseModel, ConfigDict, Field, ValidationError, create_model, field_validator

from . import catalogue
from .engines import DEFAULT_ENGINE, EFFICIENCIES, ENGINES, default_batched_tokens, default_max_seqs, tp_rule
from .engines import FIGURES as ENGINE_FIGURES
from .engines import profile as engine_profile

DEFAULT_MODEL = "llama-3.1-70b"
DEFAULT_CARD = "h100-sxm"
CUSTOM = "custom"

#: Bits per weight of each named weight format, scales included (docs/method.md), with the source of each
#: figure in ``calc/data/weight_formats.csv``.
WEIGHT_FORMATS: dict[str, float] = {name: row["bits"] for name, row in catalogue.weight_formats().items()}
DEFAULT_WEIGHTS = "int4-g128"
#: Vocabulary assumed for a custom model with a tied embedding table (Llama 4 and gpt-oss sizes bracket it).
DEFAULT_VOCAB = 131072
#: Bits per element of each named KV-cache format (docs/method.md section 1).
KV_FORMATS: dict[str, float] = {"fp16": 16, "bf16": 16, "fp8": 8, "int8": 8, "int4": 4}
#: Precisions the matrix units can run at (docs/method.md sections 2-5).
COMPUTE_PRECISIONS = catalogue.PRECISIONS


def _fmt(value: Any) -> str:
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
AUTO, NONE_GIVEN, UNKNOWN = "auto", "none", "unknown"
#: A default that comes from the model, card or API preset (resolved in :func:`_resolve`).
PRESET = "preset"


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
            text = f"{what} from {_fmt(float(self.lo))} to {_fmt(float(self.hi))}{self.rule}"
            if self.kind == "batch":
                return "'auto' or " + text
            if self.follows:
                return "'auto' (follow the traffic) or " + text
            return text + (", or empty for none" if self.empty == NONE_GIVEN else "")
        if self.kind in ("weights", "kv"):
            names = WEIGHT_FORMATS if self.kind == "weights" else KV_FORMATS
            return "one of " + ", ".join(names) + (", or bits per weight from 1 to 32" if self.kind == "weights"
                                                    else ", or bits from 1 to 32")
        if self.kind == "choice":
            return "one of " + ", ".join(self.choices)
        if self.kind == "flag":
            return "1 or 0"
        raise ValueError(f"no accepted text for {self.key}")  # pragma: no cover


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
       "model", lo=1e-6, hi=1e5, unit="billion parameters", step=1.0, fmt="%g", slider=("log", 0.1, 2000)),
    _K("active_b", "float", "Active parameters per token (billions)",
       "Parameters one token uses; equals the total for a dense model.", "model",
       lo=1e-6, hi=1e5, unit="billion parameters", step=1.0, fmt="%g", rule=", and <= params_b", slider=("log", 0.1, 2000)),
    _K("layers", "int", "Layers", "Transformer blocks.", "model", lo=1, hi=10_000, step=1, slider=("pow2", 1, 256)),
    _K("heads", "int", "Query heads", "Attention (query) heads per layer.", "model", lo=1, hi=100_000, step=1, slider=("pow2", 1, 256)),
    _K("kv_heads", "int", "KV heads (GQA)",
       "Key/value heads per layer; fewer than query heads under grouped-query attention.", "model",
       lo=1, hi=100_000, step=1, rule=", and <= heads", slider=("pow2", 1, 256)),
    _K("head_dim", "int", "Head dimension", "Width of one attention head.", "model", lo=1, hi=100_000, step=1, slider=("pow2", 16, 1024)),
    _K("hidden", "int", "Model width (hidden size)", "Residual-stream width; sets the tensor-parallel all-reduce size.",
       "model", lo=1, hi=10_000_000_000, step=1, slider=("pow2", 256, 65536)),
    _K("experts", "int", "Routed experts per MoE layer", "0 for a dense model.", "model", lo=0, hi=100_000, step=1,
       accepted_text="0 (dense) or an integer from 2 to 100000", slider=("pow2", 2, 1024)),
    _K("experts_active", "int", "Routed experts per token", "Experts each token is routed to.", "model",
       lo=0, hi=100_000, step=1, accepted_text="an integer with 1 <= experts_active < experts (0 when dense)", slider=("pow2", 1, 64)),
    _K("kv_latent", "int", "MLA latent width per layer",
       "kv_lora_rank + qk_rope_head_dim for multi-head latent attention; 0 = plain KV cache.", "model",
       lo=0, hi=1_000_000, step=1, accepted_text="0 (no MLA) or an integer from 1 to 1000000", slider=("pow2", 64, 4096)),
    _K("window", "int", "Sliding window (tokens)", "Attention window of the windowed layers; 0 = no window.", "model",
       lo=0, hi=100_000_000, unit="tokens", step=1, accepted_text="0 (none) or an integer from 1 to 100000000", slider=("pow2", 256, 1048576)),
    _K("window_layers", "int", "Layers using the window", "How many layers attend only within the window.", "model",
       lo=0, hi=10_000, step=1, accepted_text="an integer from 0 to layers", slider=("pow2", 1, 256)),
    _K("embed_b", "float", "Input-embedding parameters (billions)",
       "Untied input-embedding table, which a decode step does not read; 0 when tied.", "model",
       lo=0, hi=1e5, unit="billion parameters", step=0.1, fmt="%g", rule=", and < active_b", slider=("log", 0.01, 100)),
    _K("vocab", "int", "Vocabulary (tokens)",
       "Rows of the embedding table and of the LM head (config.json vocab_size); sizes the LM head's weights and "
       "the logits an engine profiles; default: the preset's, else embed_b / hidden, else 131072.", "model",
       lo=1, hi=100_000_000, unit="tokens", step=1, slider=("pow2", 4096, 1048576)),
    _K("linear_layers", "int", "Linear-attention layers",
       "Layers that keep a fixed state per sequence instead of a per-token KV cache (Gated DeltaNet, Mamba); "
       "0 = every layer attends over a KV cache.", "model", lo=0, hi=10_000, step=1,
       accepted_text="an integer from 0 to layers - window_layers", slider=("pow2", 1, 256)),
    _K("state_kib", "float", "State per linear layer and sequence (KiB)",
       "Recurrent state a linear-attention layer keeps per sequence, at 16 bits (KiB = 1024 bytes); default: the "
       "preset's, else hidden / 2 (2 x hidden x 128 values, the shape of Mamba2 and Gated DeltaNet states).",
       "model", lo=0, hi=1e9, unit="KiB", step=64.0, fmt="%g", slider=("log", 16, 100000)),
    _K("card", "id", "Accelerator", "Preset card; its datasheet figures fill the fields below.", "hardware",
       default=DEFAULT_CARD, accepted_text="a card preset id or 'custom'"),
    _K("mem_gib", "float", "Memory per card (GiB)",
       "Device memory as the driver reports it (nvidia-smi total; the card preset records it, not the label), "
       "GiB = 2^30 bytes.", "hardware", lo=0.001, hi=1e5, unit="GiB", step=1.0, fmt="%g", slider=("log", 8, 2048)),
    _K("torch_gib", "float", "Memory per card as CUDA reports it (GiB)",
       "The total torch.cuda.mem_get_info() returns, which vLLM and SGLang size their share from (an H100 80 GB: "
       "79.19 GiB against nvidia-smi's 79.65); default: the card preset's, else mem_gib.", "hardware",
       lo=0.001, hi=1e5, unit="GiB", step=1.0, fmt="%g", rule=", and <= mem_gib", slider=("log", 8, 2048)),
    _K("bw_tbs", "float", "Memory bandwidth per card (TB/s)", "Datasheet memory bandwidth, 1 TB/s = 1e12 bytes/s.",
       "hardware", lo=0.001, hi=1e4, unit="TB/s", step=0.1, fmt="%g", slider=("log", 0.1, 30)),
    _K("tflops", "float", "Dense peak per card (TFLOP/s)", "Dense (not 'with sparsity') peak at the compute precision.",
       "hardware", lo=0.001, hi=1e6, unit="TFLOP/s", step=10.0, fmt="%g", slider=("log", 10, 30000)),
    _K("gpus", "int", "Cards (tensor parallel)", "Cards one model replica is split over.", "hardware",
       default=1, lo=1, hi=64, unit="cards", step=1, slider=("pow2", 1, 64),
       rule=", one the engine can split the heads over (vLLM, SGLang, TensorRT-LLM: a divisor of the attention "
            "heads)"),
    _K("compute", "choice", "Compute precision", "Precision the matrix units run at; picks the card's dense peak.",
       "hardware", default="bf16", choices=COMPUTE_PRECISIONS,
       accepted_text="one of bf16, fp16, fp8, int8, fp4, and a precision the card has"),
    _K("link_gbs", "float", "Interconnect per card (GB/s, one direction)",
       "NVLink / Infinity Fabric / PCIe bandwidth used by the all-reduces.", "hardware",
       lo=0.001, hi=1e5, unit="GB/s", step=10.0, fmt="%g", slider=("log", 10, 3000)),
    _K("link_us", "float", "All-reduce latency (µs)", "Fixed cost of one all-reduce.", "hardware",
       default=10.0, lo=0, hi=1e6, unit="µs", step=1.0, fmt="%g", slider=("log", 1, 1000)),
    _K("weights", "weights", "Weight format", "Bits per weight, scales included (int4-g128 = 4.25).", "precision",
       default=DEFAULT_WEIGHTS, slider=("formats", 1, 32)),
    _K("weights_experts", "weights", "Routed-expert weight format",
       "Format of the routed-expert weights of an MoE model (gpt-oss ships them in mxfp4); default: the weight format.",
       "precision", slider=("formats", 1, 32)),
    _K("weights_attn", "weights", "Attention-projection weight format",
       "Format of the attention projections (q, k, v, o); checkpoints such as Meta's 405B FP8 keep them at 16 bits; "
       "default: the weight format.", "precision", slider=("formats", 1, 32)),
    _K("weights_embed", "weights", "Embedding and LM-head weight format",
       "Format of the embedding table and the LM head; default: the weight format.", "precision",
       slider=("formats", 1, 32)),
    _K("layers_full", "int", "Blocks kept whole at 16 bits",
       "Transformer blocks a quantized checkpoint keeps entirely in 16 bits (Meta's 405B FP8 keeps the first and "
       "the last: 2); default: the preset's, else 0.", "precision", lo=0, hi=10_000, step=1,
       accepted_text="an integer from 0 to layers", slider=("pow2", 1, 256)),
    _K("kv", "kv", "KV-cache format", "Precision of cached keys and values.", "precision", default="fp16", slider=("formats", 1, 32)),
    _K("ctx", "int", "Context (tokens per sequence)",
       "Tokens held in the KV cache per sequence; auto (the default) = a request of the traffic, prompt plus "
       "output tokens, as the Decision page sizes it; a number is a what-if for the Fit, Speed and Cost pages.",
       "precision", default=AUTO, lo=1, hi=100_000_000, unit="tokens", step=1024, slider=("pow2", 128, 1048576),
       empty=AUTO, follows=True),
    _K("batch", "batch", "Batch (sequences per step)",
       "Concurrent sequences per decode step; auto = largest useful batch.", "precision",
       default=AUTO, lo=1, hi=1_000_000, unit="sequences", step=1, empty=AUTO),
    _K("eff", "float", "Efficiency (fraction of peak)",
       "Fraction of peak compute and bandwidth kernels reach; sets eff_bw, eff_kv and eff_flops where those are not "
       "given (roofline's figure is 0.7; another engine uses its own figures unless eff is given).",
       "advanced", default=0.7, lo=0.001, hi=1, step=0.05, fmt="%g"),
    _K("overhead_gib", "float", "Reserved memory per card (GiB)",
       "Activations, workspace, fragmentation; default: the engine profile's reserve (roofline 4); empty for vLLM "
       "and SGLang, whose reserve is worked out from the launch settings as they do (docs/method.md section 8.2).",
       "advanced", lo=0, hi=1e5, unit="GiB", step=1.0, fmt="%g", empty=NONE_GIVEN),
    _K("usd_hr", "float", "Rent per card-hour (USD)", "Your hourly quote per card.", "money",
       lo=0, hi=1e4, unit="USD per card-hour", step=0.1, fmt="%.2f", empty=UNKNOWN),
    _K("duty", "float", "Duty cycle (busy fraction)",
       "Fraction of the month the cards do useful work; auto (the default) = the traffic's implied duty per "
       "replica; a number is a what-if for the cost per million tokens.", "money",
       default=AUTO, lo=0.001, hi=1, step=0.05, fmt="%g", empty=AUTO, follows=True),
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
       default=3.0, lo=1, hi=1000, step=0.5, fmt="%g", slider=("log", 1, 20)),
    _K("tpot_ms", "float", "Latency target: time per output token (ms)",
       "Longest acceptable time per output token; empty = no target.", "traffic",
       default=None, lo=0.001, hi=1e6, unit="ms", step=5.0, fmt="%g", empty=NONE_GIVEN),
    _K("api", "id", "API price row", "Provider and model to compare with.", "traffic",
       accepted_text="an API price id from the catalogue"),
    _K("api_in", "float", "API input price (USD per 1M tokens)", "Price per million prompt tokens.", "traffic",
       lo=0, hi=1000, unit="USD per 1M tokens", step=0.05, fmt="%g"),
    _K("api_out", "float", "API output price (USD per 1M tokens)", "Price per million output tokens.", "traffic",
       lo=0, hi=1000, unit="USD per 1M tokens", step=0.05, fmt="%g"),
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
       "engine", lo=0.001, hi=1, step=0.05, fmt="%g"),
    _K("eff_kv", "float", "Bandwidth reached reading the KV cache (fraction)",
       "Fraction of datasheet bandwidth reached reading the KV cache; default: the link's eff, else the profile's.",
       "engine", lo=0.001, hi=1, step=0.05, fmt="%g"),
    _K("eff_flops", "float", "Compute reached (fraction of dense peak)",
       "Fraction of the dense peak reached by the arithmetic; default: the link's eff, else the profile's.",
       "engine", lo=0.001, hi=1, step=0.05, fmt="%g"),
    _K("step_us", "float", "Fixed time per decode step (µs)",
       "Scheduling, kernel launches and sampling, once per step; default: the profile's.", "engine",
       lo=0, hi=1e6, unit="µs", step=100.0, fmt="%g"),
    _K("mem_util", "float", "Share of card memory the engine takes",
       "Fraction of each card's memory the engine uses for weights, reserve and KV cache; default: the profile's.",
       "engine", lo=0.001, hi=1, step=0.05, fmt="%g"),
    _K("max_seqs", "int", "Most sequences per step",
       "Cap on the sequences the engine schedules per step; default: the profile's (roofline: none).", "engine",
       lo=1, hi=65536, unit="sequences", step=1, empty=NONE_GIVEN,
       accepted_text="an integer from 1 to 65536 (absent: the profile's cap; roofline has none)"),
    _K("tok_us", "float", "Host time per output token under load (µs)",
       "Sampling, detokenisation and bookkeeping per generated token that the engine does not overlap with the "
       "cards; counted in the throughput under full load only; default: the profile's.", "engine",
       lo=0, hi=1e6, unit="µs", step=1.0, fmt="%g"),
    _K("eff_link", "float", "Interconnect bandwidth reached under load (fraction)",
       "Fraction of the interconnect's bandwidth the all-reduces reach at full load; counted in the throughput "
       "under full load only; default: the profile's.", "engine", lo=0.001, hi=1, step=0.05, fmt="%g"),
    _K("layer_us", "float", "Fixed time per layer per decode step (µs)",
       "Kernel launches and host work that repeat for every layer of every step (an engine that replays its steps "
       "as CUDA graphs pays almost none); added to step_us once per layer; default: the profile's.", "engine",
       lo=0, hi=1e5, unit="µs", step=10.0, fmt="%g"),
    _K("eff_dequant", "float", "Bandwidth kept on weights below 8 bits (fraction of eff_bw)",
       "Share of eff_bw the kernels keep when the weights are stored in fewer than 8 bits and unpacked on the fly "
       "(4-bit and GGUF block formats); 1 = no loss; default: the profile's.", "engine",
       lo=0.001, hi=1, step=0.05, fmt="%g"),
    _K("kv_reread", "float", "GQA re-reads of the KV cache (share)",
       "0 when the decode attention kernel reads each KV head once for all the query heads it serves (every engine "
       "of 2024 on); 1 when it reads it once per query head, as TensorRT-LLM's masked-attention kernel of v0.5 "
       "and v0.6 did (one thread block per query head), so a GQA model reads H/Hkv times the cache it holds; "
       "default: the profile's.", "engine", lo=0, hi=1, step=0.25, fmt="%g"),
    _K("max_batched_tokens", "int", "Most tokens per engine step",
       "vLLM's --max-num-batched-tokens, SGLang's --chunked-prefill-size, TensorRT-LLM's max_num_tokens: the "
       "tokens one step may hold; sizes the activations the engine reserves memory for; default: the engine's "
       "(vLLM: 8192 on cards of 70 GiB and more other than the A100, else 2048).", "engine",
       lo=1, hi=10_000_000, unit="tokens", step=512, slider=("pow2", 256, 131072)),
    _K("cuda_graphs", "flag", "CUDA graphs captured",
       "1 when the engine captures its decode steps as CUDA graphs (the default of every engine here); vLLM "
       "reserves their memory before sizing its KV cache (since v0.21); 0 as with --enforce-eager.", "engine",
       default=1),
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
       lo=0, hi=1000, unit="USD per 1M tokens", step=0.05, fmt="%g"),
    _K("discount", "float", "Rent discount for a commitment",
       "Discount on the hourly rent for a reservation or commitment, paid whether the traffic comes or not.",
       "levers", default=0.0, lo=0, hi=0.99, step=0.05, fmt="%g"),
    # SPEC section 9: owning the cards, the day's traffic, mixing with the API.
    _K("card_usd", "float", "Purchase price per card (USD)",
       "What one card costs to buy; default: the card preset's public price (sourced and dated), else none.",
       "own", lo=1, hi=1e8, unit="USD", step=1000.0, fmt="%g", empty=UNKNOWN),
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
       lo=1, hi=1e5, unit="W", step=50.0, fmt="%g", empty=UNKNOWN),
    _K("idle_frac", "float", "Idle power (share of board power)", "Power an idle card still draws.", "own",
       default=0.25, lo=0, hi=1, step=0.05, fmt="%g"),
    _K("pue", "float", "PUE (facility over IT power)", "Cooling and distribution on top of the cards' power.",
       "own", default=1.4, lo=1, hi=5, step=0.1, fmt="%g"),
    _K("usd_kwh", "float", "Electricity (USD per kWh)", "Price of a kilowatt-hour.", "own",
       default=0.12, lo=0, hi=10, unit="USD per kWh", step=0.01, fmt="%g"),
    _K("colo_usd", "float", "Rack space per card per month (USD)", "Hosting of an owned card, per month.", "own",
       default=0.0, lo=0, hi=1e6, unit="USD per card-month", step=10.0, fmt="%g"),
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
       "Share of the matrix's weights made much louder; the notes' 4,096 of 4096 x 4096 is 0.000244140625.",
       "lab", default="0.000244140625", choices=("0", "0.0001", "0.000244140625", "0.001", "0.005", "0.01")),
    _K("lab_scale", "choice", "Lab: outlier scale (x a typical weight)", "How much louder an outlier is.",
       "lab", default="20", choices=("2", "5", "10", "20", "50", "100")),
)

#: The table by key, in link order.
KEYS: dict[str, Key] = {k.key: k for k in KEY_TABLE}
#: Mantissas of the log slider's stops: about six a decade, each a round number.
_LOG_STOPS = (1, 1.5, 2, 3, 5, 7)


def _bits_of(value: Any, formats: Mapping[str, float]) -> float:
    return float(formats[value]) if value in formats else float(value)


def slider_stops(key: str, current: Any = None) -> list[Any]:
    """The stops of the app's slider for ``key``, in increasing order, with ``current`` among them.

    ``"log"``: 1, 1.5, 2, 3, 5, 7 times each power of ten in the slider's span; ``"pow2"``: 2^k and 1.5 * 2^k;
    ``"formats"``: the format names ordered by bits. Zero leads where the span starts at 0 (0 means none). A
    value outside the stops (a preset's 79.65 GiB, a typed 123,456 requests, bits such as "4.5") is inserted at
    its place, so a slider never moves a value it did not touch. Stops have the key's type (int keys give ints).
    Raises KeyError for a key without a slider.
    """
    spec = KEYS[key]
    if spec.slider is None:
        raise KeyError(f"{key} has no slider")
    scale, lo, hi = spec.slider
    if scale == "formats":
        formats = KV_FORMATS if spec.kind == "kv" else WEIGHT_FORMATS
        names = list(formats)
        if current is not None and str(current) not in names:
            names.append(str(current))
        return sorted(names, key=lambda n: (_bits_of(n, formats), n not in formats, n))
    cast = int if spec.kind == "int" else float
    stops: set[float] = {0.0} if spec.lo == 0 else set()  # 0 means none (no window, a dense model, ...)
    first, last = float(lo), float(hi)
    if scale == "log":
        for exp in range(math.floor(math.log10(first)), math.ceil(math.log10(last)) + 1):
            stops.update(float(f"{m}e{exp}") for m in _LOG_STOPS)
    else:
        for exp in range(max(0, math.floor(math.log2(first))), math.ceil(math.log2(last)) + 1):
            stops.update((2.0**exp, 1.5 * 2.0**exp))
    out = {cast(v) for v in stops if v == 0 or first <= v <= last}
    if current is not None:
        out.add(cast(current))
    return sorted(out)


#: Accepted range of every numeric key, both ends included: (type, lowest, highest).
RANGES: dict[str, tuple[type, float, float]] = {
    k.key: (float if k.kind == "float" else int, k.lo, k.hi) for k in KEY_TABLE if k.numeric or k.kind == "batch"}

#: The figures a model preset supplies (its shape) and a card preset's datasheet figures.
MODEL_FIGURES = ("params_b", "active_b", "layers", "heads", "kv_heads", "head_dim", "hidden", "experts",
                 "experts_active", "kv_latent", "window", "window_layers", "embed_b", "vocab", "linear_layers",
                 "state_kib")
CARD_FIGURES = ("mem_gib", "torch_gib", "bw_tbs", "tflops")

#: Keys whose default comes from another key: changing the parent drops them (in the app).
DEPENDENTS: dict[str, tuple[str, ...]] = {
    "model": (*MODEL_FIGURES, "api", "api_in", "api_out", "api_cached"),
    "card": (*CARD_FIGURES, "link_gbs", "usd_hr", "max_batched_tokens", "max_seqs", "card_usd", "power_w"),
    "profile": ("peak",),
    # the checkpoint's other parts follow the weight format unless given (docs/method.md section 2.1)
    "weights": ("weights_experts", "weights_attn", "weights_embed", "layers_full"),
    "mem_gib": ("torch_gib", "max_batched_tokens", "max_seqs"),
    "hidden": ("state_kib", "vocab"),
    "embed_b": ("vocab",),
    "linear_layers": ("state_kib",),
    "torch_gib": ("max_batched_tokens", "max_seqs"),
    "max_batched_tokens": ("max_seqs",),
    "compute": ("tflops",),
    "api": ("api_in", "api_out", "api_cached"),
    # A new engine brings its own profile: the link's eff would otherwise stand in for its efficiencies.
    "engine": (*ENGINE_FIGURES, "eff", "max_batched_tokens"),
    "eff": EFFICIENCIES,
}


def _bits(value: Any, formats: Mapping[str, float], key: str) -> str:
    """Normalise a precision given by name or as bits; returns the canonical link text."""
    text = str(value).strip().lower()
    if text in formats:
        return text
    bits = float(text)  # ValueError is turned into a field error by pydantic
    if not (math.isfinite(bits) and 1 <= bits <= 32):
        raise ValueError(f"{key} out of range")
    return _fmt(bits)


def _number_type(k: Key) -> Any:
    """The pydantic type of a numeric key: its type and range from the table, finite only."""
    if k.kind == "float":
        return Annotated[float, Field(ge=k.lo, le=k.hi, allow_inf_nan=False)]
    return Annotated[int, Field(ge=k.lo, le=k.hi)]


def _input_type(k: Key) -> Any:
    """The type a link value of key ``k`` must have once its validator has normalised it."""
    if k.numeric and k.follows:
        return Literal["auto"] | _number_type(k)
    if k.numeric:
        return _number_type(k)
    if k.kind == "batch":
        return Literal["auto"] | _number_type(k)
    if k.kind == "choice":
        return Literal[k.choices]
    if k.kind == "flag":
        return Literal[0, 1]
    return str


def _lower(v: Any) -> Any:
    return v.strip().lower() if isinstance(v, str) else v


def _known(table: Any, what: str, custom: bool) -> Any:
    def check(v: str | None) -> str | None:
        if v is not None and not (custom and v == CUSTOM) and v not in table():
            raise ValueError(f"unknown {what}")
        return v
    return check


def _flag(v: Any) -> Any:
    if isinstance(v, bool):
        return int(v)
    if isinstance(v, str) and v.strip() in ("0", "1"):
        return int(v.strip())
    if isinstance(v, (int, float)) and v in (0, 1):
        return int(v)
    raise ValueError("must be 0 or 1")


def _reasons(v: Any) -> Any:
    """A comma-separated list of reason ids in their canonical order (None for none); an unknown id is an error."""
    if v is None:
        return None
    ids = [part.strip().lower() for part in str(v).split(",") if part.strip()]
    unknown = [i for i in ids if i not in REASON_IDS]
    if unknown:
        raise ValueError("unknown reason")
    return ",".join(r for r in REASON_IDS if r in ids) or None


def _profile(v: Any) -> Any:
    """A named day's shape (lower case) or 24 hourly weights >= 0, not all 0, as canonical text; None for none."""
    if v is None:
        return None
    text = str(v).strip().lower()
    if text in ("", "none"):
        return None
    if text in catalogue.profiles():
        return text
    parts = [p.strip() for p in text.split(",")]
    if len(parts) != 24:
        raise ValueError("needs a shape name or 24 weights")
    weights = [float(p) for p in parts]  # ValueError: not a number
    if not all(math.isfinite(w) and w >= 0 for w in weights) or not any(weights):
        raise ValueError("weights must be numbers >= 0, not all 0")
    return ",".join(_fmt(w) for w in weights)


def card_torch_gib(card: Mapping | None, mem_gib: float, preset_memory: bool) -> float:
    """The total CUDA reports for a card of ``mem_gib``: the preset's figure (never above ``mem_gib``) when the
    card is a preset and its memory is the preset's (``preset_memory``), else ``mem_gib`` itself."""
    torch = card.get("torch_gib") if card is not None and preset_memory else None
    return mem_gib if torch is None else min(torch, mem_gib)


def day_weights(profile: str | None) -> tuple[float, ...] | None:
    """The 24 hourly weights of a scenario's ``profile`` (a named shape's, or the link's own), None without one."""
    if profile is None:
        return None
    named = catalogue.profiles().get(profile)
    return named if named is not None else tuple(float(x) for x in profile.split(","))


def _empty_none(v: Any) -> Any:
    return None if isinstance(v, str) and v.strip().lower() in ("", "none") else v


def _validators() -> dict[str, Any]:
    """Per-kind normalisation of link values, before pydantic checks types and ranges."""
    by_kind: dict[str, list[str]] = {}
    for k in KEY_TABLE:
        by_kind.setdefault(k.kind, []).append(k.key)
    formats = {"weights": WEIGHT_FORMATS, "kv": KV_FORMATS}
    out = {
        "_lower": field_validator(*by_kind["id"], *by_kind["choice"], *by_kind["batch"],
                                  *[k.key for k in KEY_TABLE if k.follows], mode="before")(
            classmethod(lambda cls, v: _lower(v))),
        "_model": field_validator("model")(classmethod(lambda cls, v: _known(catalogue.models, "model", True)(v))),
        "_card": field_validator("card")(classmethod(lambda cls, v: _known(catalogue.cards, "card", True)(v))),
        "_api": field_validator("api")(classmethod(lambda cls, v: _known(catalogue.apis, "api", False)(v))),
        "_flag": field_validator(*by_kind["flag"], mode="before")(classmethod(lambda cls, v: _flag(v))),
        "_reasons": field_validator(*by_kind["reasons"], mode="before")(classmethod(lambda cls, v: _reasons(v))),
        "_profile": field_validator(*by_kind["profile"], mode="before")(classmethod(lambda cls, v: _profile(v))),
        # -0 is 0: a link's "-0" must never print as "-0.00 USD"
        "_zero": field_validator(*by_kind["float"], mode="after")(
            classmethod(lambda cls, v: v + 0.0 if isinstance(v, float) else v)),
        "_empty": field_validator(*[k.key for k in KEY_TABLE if k.empty == NONE_GIVEN
                                    and k.kind not in ("reasons", "profile")],
                                  mode="before")(
            classmethod(lambda cls, v: _empty_none(v))),
    }
    for kind, names in formats.items():
        out[f"_{kind}"] = field_validator(*by_kind[kind], mode="before")(
            classmethod(lambda cls, v, names=names, kind=kind: None if v is None else _bits(v, names, kind)))
    return out


#: The raw inputs of one link, each optional and checked on its own (types and ranges from :data:`KEY_TABLE`).
LinkInputs = create_model(
    "LinkInputs",
    __config__=ConfigDict(extra="forbid", str_strip_whitespace=True, protected_namespaces=()),
    __validators__=_validators(),
    **{k.key: (_input_type(k) | None, None) for k in KEY_TABLE},
)


class _ScenarioBase(BaseModel):
    """What every resolved scenario can say about itself (the fields come from :data:`KEY_TABLE`)."""

    model_config = ConfigDict(frozen=True, extra="forbid", protected_namespaces=())
    #: Keys the link left to follow the traffic (``ctx``: prompt + output tokens; ``duty``: the implied duty,
    #: None in the scenario until the traffic is evaluated; SPEC section 10).
    follows_traffic: frozenset[str] = frozenset()

    @property
    def weight_bits(self) -> float:
        """Bits per weight, scales included."""
        return WEIGHT_FORMATS.get(self.weights) or float(self.weights)

    @property
    def expert_weight_bits(self) -> float:
        """Bits per routed-expert weight, scales included (docs/method.md section 8)."""
        return WEIGHT_FORMATS.get(self.weights_experts) or float(self.weights_experts)

    @property
    def kv_bits(self) -> float:
        """Bits per cached key/value element."""
        return KV_FORMATS.get(self.kv) or float(self.kv)

    def to_params(self) -> dict[str, str]:
        """Every key as link text, in link order; absent optional values are left out; a key that follows the
        traffic prints ``auto`` (SPEC section 10), so the printed scenario is still a complete link."""
        out = {}
        for key in KEYS:
            value = AUTO if key in self.follows_traffic else getattr(self, key)
            if value is not None:
                out[key] = _fmt(value)
        return out

    def to_query(self) -> str:
        """The complete link query string (no leading '?')."""
        return urlencode(self.to_params(), safe="-_.")

    def as_dict(self) -> dict[str, Any]:
        """Every key with its typed value (None where absent; ``"auto"`` where it follows the traffic), in link
        order."""
        return {key: AUTO if key in self.follows_traffic else getattr(self, key) for key in KEYS}


def _scenario_type(k: Key) -> Any:
    base = {"float": float, "int": int, "flag": int, "batch": int | Literal["auto"]}.get(k.kind, str)
    if k.key == "duty":
        return float | None  # auto: the implied duty, known once the traffic is evaluated
    return base | None if k.empty in (NONE_GIVEN, UNKNOWN) else base


#: A complete, resolved scenario: every link key with the value used (docs/method.md). Units as in
#: :data:`KEY_TABLE`; optional values are None when absent (``tpot_ms``) or unknown (``usd_hr`` of an unpriced card).
Scenario = create_model(
    "Scenario", __base__=_ScenarioBase, __module__=__name__,
    **{k.key: (_scenario_type(k), ...) for k in KEY_TABLE},
)


@dataclass(frozen=True)
class FieldError:
    """A rejected input: the key, the value given, and what the key accepts. ``rule`` marks a value that is
    fine on its own but breaks a consistency rule with other keys (it might pass beside other values)."""

    key: str
    value: str
    accepted: str
    reason: str = ""
    rule: bool = False

    @property
    def message(self) -> str:
        why = f" ({self.reason})" if self.reason else ""
        shown = repr(self.value)  # quoted, with control characters escaped
        if len(shown) > 80:  # escapes can make a bounded value long again
            shown = shown[:79] + "…"
        return f"{self.key}={shown} is not accepted{why}: {self.key} takes {self.accepted}."

    def __str__(self) -> str:
        return self.message


class ScenarioError(ValueError):
    """Raised by :func:`load` when a link has bad values; ``errors`` lists each :class:`FieldError`."""

    def __init__(self, errors: list[FieldError]):
        self.errors = list(errors)
        super().__init__("; ".join(e.message for e in self.errors))


@dataclass(frozen=True)
class Parsed:
    """The outcome of parsing a link: the scenario used, rejected inputs, and warnings."""

    scenario: Scenario
    errors: tuple[FieldError, ...] = ()
    warnings: tuple[str, ...] = ()
    given: frozenset[str] = field(default_factory=frozenset)


#: The most a link may hold, one limit for the app and the command line. Streamlit's server ignores a query
#: string of more than 1,000 fields, and its HTTP server refuses a request whose request line and headers pass
#: about 128 KB (HTTP 400, before the app runs); 100,000 characters leaves room for a browser's headers, so every
#: link longer than this that reaches the app is refused by name, as the command line refuses it.
MAX_LINK_FIELDS = 1000
MAX_LINK_CHARS = 100_000
#: The pseudo-key of an error about the link as a whole.
LINK = "link"
LINK_ACCEPTED = f"at most {MAX_LINK_FIELDS:,} fields and {MAX_LINK_CHARS:,} characters"


def link_too_long(fields: int, chars: int) -> FieldError | None:
    """The error for a query string of ``fields`` fields (``&``-separated) and ``chars`` characters that the
    app's server would ignore whole, or None when it is within the limits."""
    if fields <= MAX_LINK_FIELDS and chars <= MAX_LINK_CHARS:
        return None
    return FieldError(LINK, f"{fields:,} fields, {chars:,} characters", LINK_ACCEPTED,
                      "the app's server ignores a link this large whole, so every figure would be the default's; "
                      "give each key once")


def split_link(link: str | Mapping[str, Any] | None) -> tuple[dict[str, Any], list[str]]:
    """Split a whole URL, a query string or a mapping into {key: value} and warnings.

    Repeated keys keep their last value (with a warning); unknown keys are dropped and named in the
    warnings; a URL fragment is ignored.

    Raises:
        ScenarioError: the query string has more than :data:`MAX_LINK_FIELDS` fields or
            :data:`MAX_LINK_CHARS` characters (its one error's key is ``"link"``).
    """
    warnings: list[str] = []
    pairs: list[tuple[str, Any]]
    if link is None:
        pairs = []
    elif isinstance(link, Mapping):
        pairs = []
        for k, v in link.items():
            if isinstance(v, (list, tuple)):
                pairs.extend((str(k), x) for x in v)
            else:
                pairs.append((str(k), v))
    else:
        text = str(link).strip()
        head = text.split("?", 1)[0]
        if re.match(r"[A-Za-z][A-Za-z0-9+.-]*://", text):  # a whole URL
            text = urlsplit(text).query
        elif "?" in text and "=" not in head and "&" not in head:  # a path with its query: /cost?ctx=4096
            text = text.split("?", 1)[1]
        text = text.split("#", 1)[0].lstrip("?")
        if link_too_long(text.count("&") + 1, len(text)):
            raise ScenarioError([link_too_long(text.count("&") + 1, len(text))])
        pairs = parse_qsl(text, keep_blank_values=True)
    raw: dict[str, Any] = {}
    for key, value in pairs:
        key = key.strip()
        if key not in KEYS:
            shown = key if len(key) <= 40 else key[:40] + "…"
            note = f"unknown key {shown!r} ignored"
        elif key in raw:
            note = f"key {key!r} given more than once; the last value is used"
        else:
            note = ""
        if note and note not in warnings:
            warnings.append(note)
        if key in KEYS:
            raw[key] = value
    # Empty values mean "not given", except where empty has a meaning of its own (no latency target). An empty
    # value of a key without such a meaning is named, so that a link never falls back to a default in silence.
    empty = [k for k, v in raw.items() if isinstance(v, str) and v.strip() == "" and k != "tpot_ms"]
    for k in empty:
        if KEYS[k].empty is None:
            warnings.append(f"key {k!r} is empty: its default is used")
        del raw[k]
    return raw, warnings


def _shown(value: Any) -> str:
    text = _fmt(value) if not isinstance(value, str) else value
    return text if len(text) <= 60 else text[:60] + "…"


def _suggestion(key: str, value: Any) -> str:
    """For a preset id that is not in the catalogue, the nearest ids that are ("did you mean ..."), else ""."""
    tables = {"model": catalogue.models, "card": catalogue.cards, "api": catalogue.apis}
    if key not in tables or not isinstance(value, str):
        return ""
    text = value.strip().lower()[:200]
    ids = list(tables[key]()) + ([CUSTOM] if key != "api" else [])
    near = difflib.get_close_matches(text, ids, n=3, cutoff=0.5)
    if not near and key == "api":  # a model name without its provider: the rows that end with it
        near = [i for i in ids if text and i.endswith("/" + text)][:3]
    return "did you mean " + " or ".join(repr(n) for n in near) + "?" if near else ""


def _check_inputs(raw: dict[str, Any]) -> tuple[dict[str, Any], list[FieldError]]:
    """Validate each raw value with pydantic; bad keys are reported and removed."""
    errors: list[FieldError] = []
    values = dict(raw)
    for _ in range(len(KEYS) + 1):
        try:
            inputs = LinkInputs.model_validate(values)
        except ValidationError as exc:
            bad = {str(e["loc"][0]) for e in exc.errors() if e.get("loc")}
            for key in sorted(bad):
                errors.append(FieldError(key, _shown(raw[key]), KEYS[key].accepted, _suggestion(key, raw[key])))
                values.pop(key, None)
            continue
        return inputs.model_dump(exclude_none=True), errors
    raise RuntimeError("link validation did not settle")  # pragma: no cover


class _Conflict(Exception):
    """A broken consistency rule: ``keys`` are the inputs that may be dropped to repair it, in order;
    ``name`` is the key the error names (docs/method.md sections 2-5), with the value in use ``shown``."""

    def __init__(self, keys: tuple[str, ...], reason: str, name: str | None = None, shown: Any = None):
        self.keys, self.reason, self.name, self.shown = keys, reason, name, shown


def _resolve(v: dict[str, Any], warnings: list[str]) -> Scenario:
    """Fill every key from presets and defaults (contract rules); raise _Conflict on a broken rule."""
    models, cards, apis = catalogue.models(), catalogue.cards(), catalogue.apis()
    model_id = v.get("model", KEYS["model"].default)
    base = models[model_id] if model_id != CUSTOM else models[DEFAULT_MODEL]
    preset = model_id != CUSTOM

    def m(key: str, custom_default: Any) -> Any:
        if key in v:
            return v[key]
        return base[key] if preset else custom_default

    params_b = m("params_b", base["params_b"])
    layers = m("layers", base["layers"])
    kv_heads = m("kv_heads", base["kv_heads"])
    head_dim = m("head_dim", base["head_dim"])
    heads = m("heads", v["kv_heads"] if "kv_heads" in v else base["heads"])
    hidden = m("hidden", heads * head_dim)
    experts = m("experts", 0)
    experts_active = m("experts_active", 0)
    kv_latent = m("kv_latent", 0)
    window = m("window", 0)
    window_layers = m("window_layers", 0)
    embed_b = m("embed_b", 0.0)
    # The vocabulary: the preset's, else the untied table's rows, else a common 2025 size (docs/method.md).
    vocab = m("vocab", round(embed_b * 1e9 / hidden) if embed_b > 0 else DEFAULT_VOCAB)
    linear_layers = m("linear_layers", 0)
    if "state_kib" in v:
        state_kib = v["state_kib"]
    elif preset and base["linear_layers"] and "hidden" not in v:
        state_kib = base["state_kib"]
    else:
        state_kib = hidden / 2 if linear_layers else 0.0
    if "active_b" in v:
        active_b = v["active_b"]
    elif experts and preset:
        active_b = base["active_b"]
    else:
        active_b = params_b

    card_id = v.get("card", KEYS["card"].default)
    card = cards[card_id] if card_id != CUSTOM else cards[DEFAULT_CARD]
    compute = v.get("compute", KEYS["compute"].default)
    if card_id != CUSTOM and card["peaks"].get(compute) is None:
        raise _Conflict(("compute",), f"{card['name']} has no dense {compute} peak")
    tflops = v.get("tflops")
    if tflops is None:
        tflops = card["peaks"].get(compute)
        if tflops is None:
            raise _Conflict(("compute",), f"{cards[DEFAULT_CARD]['name']} has no dense {compute} peak; give tflops")
    if card_id == CUSTOM:
        link_gbs = v.get("link_gbs", 64.0)
    else:
        link_gbs = v.get("link_gbs", card["link_gbs"])
        if link_gbs is None:  # not in the catalogue: assume PCIe 5.0 x16, as for a custom card
            link_gbs = 64.0
    usd_hr = v.get("usd_hr", card["usd_hr"])
    mem_gib = v.get("mem_gib", card["mem_gib"])
    # What CUDA reports: the link's, else the preset's where the link keeps the preset's memory, else mem_gib.
    torch_gib = v.get("torch_gib")
    if torch_gib is None:
        torch_gib = card_torch_gib(card, mem_gib, card_id != CUSTOM and "mem_gib" not in v)
    if torch_gib > mem_gib:
        raise _Conflict(("torch_gib", "mem_gib"), f"torch_gib ({_fmt(torch_gib)}) must not exceed mem_gib ({_fmt(mem_gib)})")

    # Formats (docs/method.md section 8): the link's; else the formats the preset's checkpoint ships in; else the default.
    # Experts take the weight format when only that is given.
    shipped = preset and base.get("weights") is not None
    # The parts a checkpoint keeps in other formats follow the same rule.
    if "weights" in v:
        weights = v["weights"]
        parts = {"weights_experts": weights, "weights_attn": weights, "weights_embed": weights, "layers_full": 0}
    elif shipped:
        weights = base["weights"]
        parts = {"weights_experts": base["weights_experts"], "weights_attn": base["weights_attn"] or weights,
                 "weights_embed": base["weights_embed"] or weights, "layers_full": base["layers_full"]}
    else:
        weights = DEFAULT_WEIGHTS
        parts = {"weights_experts": weights, "weights_attn": weights, "weights_embed": weights, "layers_full": 0}
    parts = {k: v.get(k, d) for k, d in parts.items()}

    api_id = v.get("api", base["api_ref"])
    api = apis[api_id]

    # Consistency rules of docs/method.md sections 2-5, each naming a key.
    if kv_heads > heads:
        raise _Conflict(("kv_heads", "heads"), f"kv_heads ({kv_heads}) must not exceed heads ({heads})")
    if window_layers > layers:
        raise _Conflict(("window_layers", "layers"), f"window_layers ({window_layers}) must not exceed layers ({layers})")
    if linear_layers + (window_layers if window else 0) > layers:
        raise _Conflict(("linear_layers", "window_layers", "layers"),
                        f"linear_layers ({linear_layers}) and window_layers ({window_layers}) must not exceed "
                        f"layers ({layers}) together")
    if linear_layers and state_kib < 1:
        raise _Conflict(("state_kib", "linear_layers"), "state_kib must be at least 1 KiB when there are linear_layers")
    if parts["layers_full"] > layers:
        raise _Conflict(("layers_full", "layers"), f"layers_full ({parts['layers_full']}) must not exceed layers ({layers})")
    if experts == 1:
        raise _Conflict(("experts",), "an MoE layer needs at least 2 experts (0 = dense)")
    if experts and not 1 <= experts_active < experts:
        raise _Conflict(("experts_active", "experts"),
                        f"experts_active ({experts_active}) must be from 1 to experts - 1 ({experts - 1})",
                        "experts_active", experts_active)
    if active_b > params_b:
        raise _Conflict(("active_b", "params_b"), f"active_b ({_fmt(active_b)}) must not exceed params_b ({_fmt(params_b)})")
    if embed_b >= active_b:
        raise _Conflict(("embed_b", "active_b", "params_b"), f"embed_b ({_fmt(embed_b)}) must be below active_b ({_fmt(active_b)})")
    if experts:
        routed = catalogue.routed_params(params_b, active_b, experts, experts_active)
        if params_b - routed - embed_b < -1e-9 * params_b:
            raise _Conflict(("active_b", "params_b", "embed_b"),
                            f"with params_b={_fmt(params_b)}, active_b={_fmt(active_b)}, experts={experts}, "
                            f"experts_active={experts_active} and embed_b={_fmt(embed_b)} the dense part less the "
                            f"embedding table would be negative ({params_b - routed - embed_b:.6g} billion)",
                            "active_b", active_b)

    # Engine profile (docs/method.md section 8): each efficiency is the link's own key, else the link's eff, else the
    # profile's; every other figure (overhead_gib included) is the link's where given, else the profile's.
    engine = v.get("engine", DEFAULT_ENGINE)
    prof = engine_profile(engine)
    figures = {f: v[f] if f in v else v["eff"] if f in EFFICIENCIES and "eff" in v else prof[f]
               for f in ENGINE_FIGURES}
    gpus = v.get("gpus", KEYS["gpus"].default)
    rule = tp_rule(engine, heads, kv_heads, gpus, bool(kv_latent))
    if rule:
        raise _Conflict(("gpus",), rule)
    max_batched_tokens = v.get("max_batched_tokens", default_batched_tokens(engine, card_id, torch_gib))
    if "max_seqs" not in v:
        figures["max_seqs"] = default_max_seqs(engine, card_id, torch_gib, max_batched_tokens, prof["max_seqs"])

    resolved = {
        **figures, "engine": engine,
        "model": model_id, "params_b": params_b, "active_b": active_b, "layers": layers, "heads": heads,
        "kv_heads": kv_heads, "head_dim": head_dim, "hidden": hidden, "experts": experts,
        "experts_active": experts_active, "kv_latent": kv_latent, "window": window, "window_layers": window_layers,
        "embed_b": embed_b, "vocab": vocab, "linear_layers": linear_layers, "state_kib": state_kib,
        "card": card_id, "mem_gib": mem_gib, "torch_gib": torch_gib, **parts,
        "max_batched_tokens": max_batched_tokens,
        "bw_tbs": v.get("bw_tbs", card["bw_tbs"]), "tflops": tflops, "compute": compute, "link_gbs": link_gbs,
        "usd_hr": usd_hr, "weights": weights, "api": api_id,
        "api_in": v.get("api_in", api["api_in"]), "api_out": v.get("api_out", api["api_out"]),
    }
    # A cached prompt token: the link's price, else the row's, else the input price in use (docs/method.md
    # section 9).
    resolved["api_cached"] = v.get("api_cached", catalogue.cached_input_price({**api, "api_in": resolved["api_in"]}))
    # SPEC section 9: the card's purchase price and board power (a custom card has neither); a profile's shape
    # sets the peak factor.
    resolved["card_usd"] = v.get("card_usd", card.get("card_usd") if card_id != CUSTOM else None)
    resolved["power_w"] = v.get("power_w", card.get("power_w") if card_id != CUSTOM else None)
    weights = day_weights(v.get("profile"))
    if weights is not None:
        resolved["peak"] = max(weights) / (sum(weights) / 24)
    # ctx and duty follow the traffic unless the link gives a number (SPEC section 10).
    follows = frozenset(k.key for k in KEY_TABLE if k.follows and v.get(k.key, k.default) == AUTO)
    if "ctx" in follows:
        resolved["ctx"] = max(1, v.get("in_tok", KEYS["in_tok"].default) + v.get("out_tok", KEYS["out_tok"].default))
    if "duty" in follows:
        resolved["duty"] = None
    # Every other key: the link's value, else the table's default.
    return Scenario(**{k.key: resolved[k.key] if k.key in resolved else v.get(k.key, k.default) for k in KEY_TABLE},
                    follows_traffic=follows)


def parse(link: str | Mapping[str, Any] | None = None) -> Parsed:
    """Parse a link leniently: never raises for bad input.

    Args:
        link: a whole URL, a query string (with or without '?'), a mapping of key to value
            (str or number), or None for the defaults.

    Returns:
        :class:`Parsed` with the scenario used (each rejected key at its default), the rejected
        inputs as :class:`FieldError` values, and warnings (unknown keys, custom fallbacks, notes).
    """
    try:
        raw, warnings = split_link(link)
    except ScenarioError as exc:  # a link too large to read: every figure is the default, as in the app
        return Parsed(_resolve({}, []), tuple(exc.errors))
    values, errors = _check_inputs(raw)
    given = frozenset(values)
    for _ in range(len(KEYS)):
        resolve_warnings: list[str] = []
        try:
            scenario = _resolve(values, resolve_warnings)
        except _Conflict as conflict:
            culprit = _culprit(conflict, values)
            if conflict.name and conflict.name != culprit and conflict.name in values \
                    and conflict.name not in {e.key for e in errors}:
                # The rule names a key of its own (docs/method.md sections 2-5) and the link gave it: name it.
                named, shown = conflict.name, _shown(raw[conflict.name])
                reason = f"{conflict.reason}; {culprit} falls back to its default"
            else:
                named, shown, reason = culprit, _shown(raw.get(culprit, values[culprit])), conflict.reason
            errors.append(FieldError(named, shown, KEYS[named].accepted, reason, rule=True))
            values.pop(culprit)
            continue
        return Parsed(scenario, tuple(errors), tuple(warnings + resolve_warnings), given)
    raise RuntimeError("scenario resolution did not settle")  # pragma: no cover


def _culprit(conflict: _Conflict, values: dict[str, Any]) -> str:
    """The given key to drop so that a broken rule holds again.

    The rule's own keys come first. When the link gave none of them, the rule was broken by some other
    override of a preset's figures (``experts_active`` on an MoE preset makes its dense part negative):
    the first given key whose removal repairs the rule is the one to blame. The presets themselves obey
    every rule (a catalogue test), so dropping every given key always repairs it.
    """
    culprit = next((k for k in conflict.keys if k in values), None)
    if culprit is not None:
        return culprit
    order = [k for k in (*MODEL_FIGURES, *CARD_FIGURES) if k in values] + \
            [k for k in values if k not in MODEL_FIGURES and k not in CARD_FIGURES]
    for key in order:
        trial = {k: v for k, v in values.items() if k != key}
        try:
            _resolve(trial, [])
        except _Conflict as other:
            if other.reason.split("(")[0] == conflict.reason.split("(")[0]:
                continue  # the same rule still breaks without this key
        return key
    if not order:  # nothing was given, so the catalogue itself broke a rule
        raise RuntimeError(f"catalogue row breaks a rule: {conflict.reason}")
    return order[0]


def load(link: str | Mapping[str, Any] | None = None) -> Parsed:
    """Parse a link strictly.

    Raises:
        ScenarioError: when any value is malformed, out of range or breaks a consistency rule;
            its ``errors`` name each key, the value given and the accepted range.
    """
    parsed = parse(link)
    if parsed.errors:
        raise ScenarioError(list(parsed.errors))
    return parsed


def with_change(params: Mapping[str, Any], key: str, value: Any) -> dict[str, Any]:
    """A link mapping with ``key`` set to ``value`` and every value derived from that key dropped,
    so that choosing another model, card, compute precision or API row brings in its own figures."""
    if key not in KEYS:
        raise KeyError(key)
    if value == CUSTOM and key in ("model", "card"):
        # Going custom starts from the figures in use, not from the default preset's.
        return {**params, key: value}
    out = {k: v for k, v in params.items() if k not in _closure(key)}
    if key == "model":
        # A checkpoint that ships its own formats brings them in, and takes them away when left.
        models = catalogue.models()
        old, new = models.get(str(params.get("model", DEFAULT_MODEL))), models.get(str(value))
        if (old and old.get("weights")) or (new and new.get("weights")):
            for k in ("weights", "weights_experts", "weights_attn", "weights_embed", "layers_full"):
                out.pop(k, None)
    out[key] = value
    # Keep the compute precision only where the new card has units for it.
    if key == "card" and value in catalogue.cards() and \
            catalogue.cards()[value]["peaks"].get(str(out.get("compute", "bf16"))) is None:
            out.pop("compute", None)
    return out


def _closure(key: str) -> set[str]:
    seen: set[str] = set()
    todo = list(DEPENDENTS.get(key, ()))
    while todo:
        k = todo.pop()
        if k not in seen:
            seen.add(k)
            todo.extend(DEPENDENTS.get(k, ()))
    return seen
