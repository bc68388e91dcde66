"""The scenario: every input of the calculator, parsed from a link and resolved against the catalogue.

A scenario is a URL query string (SPEC section 1). This module turns a query string, a whole URL
or a mapping into a validated, fully resolved :class:`Scenario` and back into a link. Bad values
never raise from :func:`parse`: each becomes a :class:`FieldError` naming the key, the value given
and the accepted range, and that key falls back to its default. :func:`load` is the strict form
that raises :class:`ScenarioError` instead (the command line uses it).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from typing import Annotated, Any, Literal, Mapping, Optional, Union
from urllib.parse import parse_qsl, urlencode, urlsplit

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from . import catalogue

DEFAULT_MODEL = "llama-3.1-70b"
DEFAULT_CARD = "h100-sxm"
CUSTOM = "custom"

#: Bits per weight of each named weight format, scales included (SPEC sections 1 and 7), with the source of each
#: figure in ``calc/data/weight_formats.csv``.
WEIGHT_FORMATS: dict[str, float] = {name: row["bits"] for name, row in catalogue.weight_formats().items()}
DEFAULT_WEIGHTS = "int4-g128"
#: Bits per element of each named KV-cache format (SPEC section 1).
KV_FORMATS: dict[str, float] = {"fp16": 16, "bf16": 16, "fp8": 8, "int8": 8, "int4": 4}
#: Precisions the matrix units can run at (SPEC section 5).
COMPUTE_PRECISIONS = ("bf16", "fp16", "fp8", "int8", "fp4")


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


#: Accepted range of every numeric key, both ends included: (type, lowest, highest). The lowest values
#: keep every division in the model finite; the app's number inputs use the same ranges.
RANGES: dict[str, tuple[type, float, float]] = {
    "params_b": (float, 1e-6, 1e5), "active_b": (float, 1e-6, 1e5), "layers": (int, 1, 10_000),
    "heads": (int, 1, 100_000), "kv_heads": (int, 1, 100_000), "head_dim": (int, 1, 100_000),
    "hidden": (int, 1, 10_000_000_000), "experts": (int, 0, 100_000), "experts_active": (int, 0, 100_000),
    "kv_latent": (int, 0, 1_000_000), "window": (int, 0, 100_000_000), "window_layers": (int, 0, 10_000),
    "embed_b": (float, 0, 1e5), "mem_gib": (float, 0.001, 1e5), "bw_tbs": (float, 0.001, 1e4),
    "tflops": (float, 0.001, 1e6), "gpus": (int, 1, 64), "link_gbs": (float, 0.001, 1e5),
    "link_us": (float, 0, 1e6), "ctx": (int, 1, 100_000_000), "batch": (int, 1, 1_000_000),
    "eff": (float, 0.001, 1), "overhead_gib": (float, 0, 1e5), "usd_hr": (float, 0, 1e4),
    "duty": (float, 0.001, 1), "upkeep": (float, 0, 1e9), "hours": (float, 1, 744),
    "req_day": (float, 0.001, 1e12), "in_tok": (int, 0, 10_000_000), "out_tok": (int, 1, 10_000_000),
    "peak": (float, 1, 1000), "tpot_ms": (float, 0.001, 1e6), "api_in": (float, 0, 1000),
    "api_out": (float, 0, 1000),
}


def _range_text(key: str, extra: str = "") -> str:
    kind, lo, hi = RANGES[key]
    what = "an integer" if kind is int else "a number"
    return f"{what} from {_fmt(float(lo))} to {_fmt(float(hi))}{extra}"


@dataclass(frozen=True)
class KeySpec:
    """One link key: what it means, its unit, what it accepts, and how the app labels it."""

    key: str
    label: str
    accepted: str
    help: str
    group: str


def _spec(key: str, label: str, accepted: str, help: str, group: str) -> KeySpec:
    return KeySpec(key, label, accepted, help, group)


#: Every link key in link order (SPEC sections 1, 5 and 6). Keys are never renamed or re-purposed.
KEYS: dict[str, KeySpec] = {k.key: k for k in [
    _spec("model", "Model", "a model preset id or 'custom'", "Preset model; its shape fills the fields below.", "model"),
    _spec("params_b", "Total parameters (billions)", _range_text("params_b"), "All weights held in memory, MoE experts included.", "model"),
    _spec("active_b", "Active parameters per token (billions)", _range_text("active_b", ", and <= params_b"), "Parameters one token uses; equals the total for a dense model.", "model"),
    _spec("layers", "Layers", _range_text("layers"), "Transformer blocks.", "model"),
    _spec("heads", "Query heads", _range_text("heads"), "Attention (query) heads per layer.", "model"),
    _spec("kv_heads", "KV heads (GQA)", _range_text("kv_heads", ", and <= heads"), "Key/value heads per layer; fewer than query heads under grouped-query attention.", "model"),
    _spec("head_dim", "Head dimension", _range_text("head_dim"), "Width of one attention head.", "model"),
    _spec("hidden", "Model width (hidden size)", _range_text("hidden"), "Residual-stream width; sets the tensor-parallel all-reduce size.", "model"),
    _spec("experts", "Routed experts per MoE layer", "0 (dense) or an integer from 2 to 100000", "0 for a dense model.", "model"),
    _spec("experts_active", "Routed experts per token", "an integer with 1 <= experts_active < experts (0 when dense)", "Experts each token is routed to.", "model"),
    _spec("kv_latent", "MLA latent width per layer", "0 (no MLA) or an integer from 1 to 1000000", "kv_lora_rank + qk_rope_head_dim for multi-head latent attention; 0 = plain KV cache.", "model"),
    _spec("window", "Sliding window (tokens)", "0 (none) or an integer from 1 to 100000000", "Attention window of the windowed layers; 0 = no window.", "model"),
    _spec("window_layers", "Layers using the window", "an integer from 0 to layers", "How many layers attend only within the window.", "model"),
    _spec("embed_b", "Input-embedding parameters (billions)", _range_text("embed_b", ", and < active_b"), "Untied input-embedding table, which a decode step does not read; 0 when tied.", "model"),
    _spec("card", "Accelerator", "a card preset id or 'custom'", "Preset card; its datasheet figures fill the fields below.", "hardware"),
    _spec("mem_gib", "Memory per card (GiB)", _range_text("mem_gib"), "Device memory as the driver reports it (nvidia-smi total; the card preset records it, not the label), GiB = 2^30 bytes.", "hardware"),
    _spec("bw_tbs", "Memory bandwidth per card (TB/s)", _range_text("bw_tbs"), "Datasheet memory bandwidth, 1 TB/s = 1e12 bytes/s.", "hardware"),
    _spec("tflops", "Dense peak per card (TFLOP/s)", _range_text("tflops"), "Dense (not 'with sparsity') peak at the compute precision.", "hardware"),
    _spec("gpus", "Cards (tensor parallel)", _range_text("gpus"), "Cards one model replica is split over.", "hardware"),
    _spec("compute", "Compute precision", "one of bf16, fp16, fp8, int8, fp4, and a precision the card has", "Precision the matrix units run at; picks the card's dense peak.", "hardware"),
    _spec("link_gbs", "Interconnect per card (GB/s, one direction)", _range_text("link_gbs"), "NVLink / Infinity Fabric / PCIe bandwidth used by the all-reduces.", "hardware"),
    _spec("link_us", "All-reduce latency (µs)", _range_text("link_us"), "Fixed cost of one all-reduce.", "hardware"),
    _spec("weights", "Weight format", "one of " + ", ".join(WEIGHT_FORMATS) + ", or bits per weight from 1 to 32", "Bits per weight, scales included (int4-g128 = 4.25).", "precision"),
    _spec("weights_experts", "Routed-expert weight format", "one of " + ", ".join(WEIGHT_FORMATS) + ", or bits per weight from 1 to 32", "Format of the routed-expert weights of an MoE model (gpt-oss ships them in mxfp4); default: the weight format.", "precision"),
    _spec("kv", "KV-cache format", "one of " + ", ".join(KV_FORMATS) + ", or bits from 1 to 32", "Precision of cached keys and values.", "precision"),
    _spec("ctx", "Context (tokens per sequence)", _range_text("ctx"), "Tokens held in the KV cache per sequence (worst case).", "precision"),
    _spec("batch", "Batch (sequences per step)", "'auto' or " + _range_text("batch"), "Concurrent sequences per decode step; auto = largest useful batch.", "precision"),
    _spec("eff", "Efficiency (fraction of peak)", _range_text("eff"), "Fraction of peak compute and bandwidth kernels reach.", "advanced"),
    _spec("overhead_gib", "Reserved memory per card (GiB)", _range_text("overhead_gib"), "Activations, workspace, fragmentation.", "advanced"),
    _spec("usd_hr", "Rent per card-hour (USD)", _range_text("usd_hr"), "Your hourly quote per card.", "money"),
    _spec("duty", "Duty cycle (busy fraction)", _range_text("duty"), "Fraction of the month the cards do useful work.", "money"),
    _spec("upkeep", "Upkeep per month (USD)", _range_text("upkeep"), "Engineering time on serving, all cards together; does not fall with volume.", "money"),
    _spec("hours", "Hours in a month", _range_text("hours"), "Hours the cards are rented per month.", "money"),
    _spec("attn", "Count attention in the step", "1 or 0", "1 counts KV-cache reads and attention FLOPs; 0 reproduces the weights-only textbook tables.", "advanced"),
    _spec("req_day", "Requests per day", _range_text("req_day"), "Average daily request volume.", "traffic"),
    _spec("in_tok", "Prompt tokens per request", _range_text("in_tok"), "Input tokens per request.", "traffic"),
    _spec("out_tok", "Output tokens per request", _range_text("out_tok"), "Generated tokens per request.", "traffic"),
    _spec("peak", "Peak-hour factor", _range_text("peak"), "Busiest hour's request rate over the average hour's.", "traffic"),
    _spec("tpot_ms", "Latency target: time per output token (ms)", _range_text("tpot_ms", ", or empty for none"), "Longest acceptable time per output token; empty = no target.", "traffic"),
    _spec("api", "API price row", "an API price id from the catalogue", "Provider and model to compare with.", "traffic"),
    _spec("api_in", "API input price (USD per 1M tokens)", _range_text("api_in"), "Price per million prompt tokens.", "traffic"),
    _spec("api_out", "API output price (USD per 1M tokens)", _range_text("api_out"), "Price per million output tokens.", "traffic"),
]}

#: The figures a model preset supplies (its shape) and a card preset's datasheet figures.
MODEL_FIGURES = ("params_b", "active_b", "layers", "heads", "kv_heads", "head_dim", "hidden", "experts",
                 "experts_active", "kv_latent", "window", "window_layers", "embed_b")
CARD_FIGURES = ("mem_gib", "bw_tbs", "tflops")

#: Keys whose default comes from another key: changing the parent drops them (in the app).
DEPENDENTS: dict[str, tuple[str, ...]] = {
    "model": (*MODEL_FIGURES, "api", "api_in", "api_out"),
    "card": (*CARD_FIGURES, "link_gbs", "usd_hr"),
    "compute": ("tflops",),
    "api": ("api_in", "api_out"),
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


def _Num(key: str) -> Any:
    """The pydantic type of a numeric key: its type and range from :data:`RANGES`, finite only."""
    kind, lo, hi = RANGES[key]
    if kind is int:
        return Annotated[int, Field(ge=lo, le=hi)]
    return Annotated[float, Field(ge=lo, le=hi, allow_inf_nan=False)]


class LinkInputs(BaseModel):
    """The raw inputs of one link, each optional and checked on its own (ranges of SPEC sections 1, 5, 6)."""

    model_config = ConfigDict(extra="forbid", str_strip_whitespace=True, protected_namespaces=())

    model: Optional[str] = None
    params_b: Optional[_Num("params_b")] = None
    active_b: Optional[_Num("active_b")] = None
    layers: Optional[_Num("layers")] = None
    heads: Optional[_Num("heads")] = None
    kv_heads: Optional[_Num("kv_heads")] = None
    head_dim: Optional[_Num("head_dim")] = None
    hidden: Optional[_Num("hidden")] = None
    experts: Optional[_Num("experts")] = None
    experts_active: Optional[_Num("experts_active")] = None
    kv_latent: Optional[_Num("kv_latent")] = None
    window: Optional[_Num("window")] = None
    window_layers: Optional[_Num("window_layers")] = None
    embed_b: Optional[_Num("embed_b")] = None
    card: Optional[str] = None
    mem_gib: Optional[_Num("mem_gib")] = None
    bw_tbs: Optional[_Num("bw_tbs")] = None
    tflops: Optional[_Num("tflops")] = None
    gpus: Optional[_Num("gpus")] = None
    compute: Optional[Literal["bf16", "fp16", "fp8", "int8", "fp4"]] = None
    link_gbs: Optional[_Num("link_gbs")] = None
    link_us: Optional[_Num("link_us")] = None
    weights: Optional[str] = None
    weights_experts: Optional[str] = None
    kv: Optional[str] = None
    ctx: Optional[_Num("ctx")] = None
    batch: Optional[Union[Literal["auto"], _Num("batch")]] = None
    eff: Optional[_Num("eff")] = None
    overhead_gib: Optional[_Num("overhead_gib")] = None
    usd_hr: Optional[_Num("usd_hr")] = None
    duty: Optional[_Num("duty")] = None
    upkeep: Optional[_Num("upkeep")] = None
    hours: Optional[_Num("hours")] = None
    attn: Optional[Literal[0, 1]] = None
    req_day: Optional[_Num("req_day")] = None
    in_tok: Optional[_Num("in_tok")] = None
    out_tok: Optional[_Num("out_tok")] = None
    peak: Optional[_Num("peak")] = None
    tpot_ms: Optional[_Num("tpot_ms")] = None
    api: Optional[str] = None
    api_in: Optional[_Num("api_in")] = None
    api_out: Optional[_Num("api_out")] = None

    @field_validator("model", "card", "api", mode="before")
    @classmethod
    def _lower_id(cls, v: Any) -> Any:
        return v.strip().lower() if isinstance(v, str) else v

    @field_validator("model")
    @classmethod
    def _known_model(cls, v: Optional[str]) -> Optional[str]:
        if v is not None and v != CUSTOM and v not in catalogue.models():
            raise ValueError("unknown model")
        return v

    @field_validator("card")
    @classmethod
    def _known_card(cls, v: Optional[str]) -> Optional[str]:
        if v is not None and v != CUSTOM and v not in catalogue.cards():
            raise ValueError("unknown card")
        return v

    @field_validator("api")
    @classmethod
    def _known_api(cls, v: Optional[str]) -> Optional[str]:
        if v is not None and v not in catalogue.apis():
            raise ValueError("unknown api")
        return v

    @field_validator("weights", "weights_experts", mode="before")
    @classmethod
    def _weights(cls, v: Any) -> Any:
        return None if v is None else _bits(v, WEIGHT_FORMATS, "weights")

    @field_validator("kv", mode="before")
    @classmethod
    def _kv(cls, v: Any) -> Any:
        return None if v is None else _bits(v, KV_FORMATS, "kv")

    @field_validator("compute", "batch", mode="before")
    @classmethod
    def _lower_word(cls, v: Any) -> Any:
        return v.strip().lower() if isinstance(v, str) else v

    @field_validator("attn", mode="before")
    @classmethod
    def _attn(cls, v: Any) -> Any:
        if isinstance(v, bool):
            return int(v)
        if isinstance(v, str) and v.strip() in ("0", "1"):
            return int(v.strip())
        if isinstance(v, (int, float)) and v in (0, 1):
            return int(v)
        raise ValueError("attn must be 0 or 1")

    @field_validator("tpot_ms", mode="before")
    @classmethod
    def _empty_none(cls, v: Any) -> Any:
        return None if isinstance(v, str) and v.strip().lower() in ("", "none") else v


class Scenario(BaseModel):
    """A complete, resolved scenario: every link key with the value used (SPEC sections 1, 5, 6).

    Billions for parameters, GiB for memory, TB/s for bandwidth, dense TFLOP/s for compute,
    GB/s and microseconds for the interconnect, USD for money, tokens for context and traffic.
    Optional values are None when absent (``tpot_ms``) or unknown (``usd_hr`` of an unpriced card).
    """

    model_config = ConfigDict(frozen=True, extra="forbid", protected_namespaces=())

    model: str
    params_b: float
    active_b: float
    layers: int
    heads: int
    kv_heads: int
    head_dim: int
    hidden: int
    experts: int
    experts_active: int
    kv_latent: int
    window: int
    window_layers: int
    embed_b: float
    card: str
    mem_gib: float
    bw_tbs: float
    tflops: float
    gpus: int
    compute: str
    link_gbs: float
    link_us: float
    weights: str
    weights_experts: str
    kv: str
    ctx: int
    batch: Union[int, Literal["auto"]]
    eff: float
    overhead_gib: float
    usd_hr: Optional[float]
    duty: float
    upkeep: float
    hours: float
    attn: int
    req_day: float
    in_tok: int
    out_tok: int
    peak: float
    tpot_ms: Optional[float]
    api: str
    api_in: float
    api_out: float

    @property
    def weight_bits(self) -> float:
        """Bits per weight, scales included."""
        return WEIGHT_FORMATS.get(self.weights) or float(self.weights)

    @property
    def expert_weight_bits(self) -> float:
        """Bits per routed-expert weight, scales included (SPEC section 7)."""
        return WEIGHT_FORMATS.get(self.weights_experts) or float(self.weights_experts)

    @property
    def kv_bits(self) -> float:
        """Bits per cached key/value element."""
        return KV_FORMATS.get(self.kv) or float(self.kv)

    def to_params(self) -> dict[str, str]:
        """Every key as link text, in link order; absent optional values are left out."""
        out = {}
        for key in KEYS:
            value = getattr(self, key)
            if value is not None:
                out[key] = _fmt(value)
        return out

    def to_query(self) -> str:
        """The complete link query string (no leading '?')."""
        return urlencode(self.to_params(), safe="-_.")

    def as_dict(self) -> dict[str, Any]:
        """Every key with its typed value (None where absent), in link order."""
        return {key: getattr(self, key) for key in KEYS}


@dataclass(frozen=True)
class FieldError:
    """A rejected input: the key, the value given, and what the key accepts."""

    key: str
    value: str
    accepted: str
    reason: str = ""

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


#: The most a link may hold: the app's server (Streamlit) ignores a whole query string with more fields or
#: characters than these, so the command line refuses the same links rather than read what the app cannot.
MAX_LINK_FIELDS = 1000
MAX_LINK_CHARS = 512 * 1024
#: The pseudo-key of an error about the link as a whole.
LINK = "link"
LINK_ACCEPTED = f"at most {MAX_LINK_FIELDS:,} fields and {MAX_LINK_CHARS:,} characters"


def link_too_long(fields: int, chars: int) -> Optional[FieldError]:
    """The error for a query string of ``fields`` fields (``&``-separated) and ``chars`` characters that the
    app's server would ignore whole, or None when it is within the limits."""
    if fields <= MAX_LINK_FIELDS and chars <= MAX_LINK_CHARS:
        return None
    return FieldError(LINK, f"{fields:,} fields, {chars:,} characters", LINK_ACCEPTED,
                      "the app's server ignores a link this large whole, so every figure would be the default's; "
                      "give each key once")


def split_link(link: Union[str, Mapping[str, Any], None]) -> tuple[dict[str, Any], list[str]]:
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
    # Empty values mean "not given", except where empty has a meaning of its own (no latency target).
    raw = {k: v for k, v in raw.items() if not (isinstance(v, str) and v.strip() == "" and k != "tpot_ms")}
    return raw, warnings


def _shown(value: Any) -> str:
    text = _fmt(value) if not isinstance(value, str) else value
    return text if len(text) <= 60 else text[:60] + "…"


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
                errors.append(FieldError(key, _shown(raw[key]), KEYS[key].accepted))
                values.pop(key, None)
            continue
        return inputs.model_dump(exclude_none=True), errors
    raise RuntimeError("link validation did not settle")  # pragma: no cover


class _Conflict(Exception):
    """A broken consistency rule: ``keys`` are the inputs that may be dropped to repair it, in order;
    ``name`` is the key the error names (SPEC section 5), with the value in use ``shown``."""

    def __init__(self, keys: tuple[str, ...], reason: str, name: Optional[str] = None, shown: Any = None):
        self.keys, self.reason, self.name, self.shown = keys, reason, name, shown


def _resolve(v: dict[str, Any], warnings: list[str]) -> Scenario:
    """Fill every key from presets and defaults (contract rules); raise _Conflict on a broken rule."""
    models, cards, apis = catalogue.models(), catalogue.cards(), catalogue.apis()
    model_id = v.get("model", DEFAULT_MODEL)
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
    if "active_b" in v:
        active_b = v["active_b"]
    elif experts and preset:
        active_b = base["active_b"]
    else:
        active_b = params_b

    card_id = v.get("card", DEFAULT_CARD)
    card = cards[card_id] if card_id != CUSTOM else cards[DEFAULT_CARD]
    compute = v.get("compute", "bf16")
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

    # Formats (SPEC section 7): the link's; else the formats the preset's checkpoint ships in; else the default.
    # Experts take the weight format when only that is given.
    shipped = preset and base.get("weights") is not None
    if "weights" in v:
        weights = v["weights"]
        weights_experts = v.get("weights_experts", weights)
    elif shipped:
        weights = base["weights"]
        weights_experts = v.get("weights_experts", base["weights_experts"])
    else:
        weights = DEFAULT_WEIGHTS
        weights_experts = v.get("weights_experts", weights)

    api_id = v.get("api", base["api_ref"])
    api = apis[api_id]

    # Consistency rules of SPEC section 5, each naming a key.
    if kv_heads > heads:
        raise _Conflict(("kv_heads", "heads"), f"kv_heads ({kv_heads}) must not exceed heads ({heads})")
    if window_layers > layers:
        raise _Conflict(("window_layers", "layers"), f"window_layers ({window_layers}) must not exceed layers ({layers})")
    if experts == 1:
        raise _Conflict(("experts",), "an MoE layer needs at least 2 experts (0 = dense)")
    if experts:
        if not 1 <= experts_active < experts:
            raise _Conflict(("experts_active", "experts"), f"experts_active ({experts_active}) must be from 1 to experts - 1 ({experts - 1})",
                            "experts_active", experts_active)
    if active_b > params_b:
        raise _Conflict(("active_b", "params_b"), f"active_b ({_fmt(active_b)}) must not exceed params_b ({_fmt(params_b)})")
    if embed_b >= active_b:
        raise _Conflict(("embed_b", "active_b", "params_b"), f"embed_b ({_fmt(embed_b)}) must be below active_b ({_fmt(active_b)})")
    if experts:
        routed = (params_b - active_b) / (1 - experts_active / experts)
        if params_b - routed - embed_b < -1e-9 * params_b:
            raise _Conflict(("active_b", "params_b", "embed_b"),
                            f"with params_b={_fmt(params_b)}, active_b={_fmt(active_b)}, experts={experts}, "
                            f"experts_active={experts_active} and embed_b={_fmt(embed_b)} the dense part less the "
                            f"embedding table would be negative ({params_b - routed - embed_b:.6g} billion)",
                            "active_b", active_b)

    return Scenario(
        model=model_id, params_b=params_b, active_b=active_b, layers=layers, heads=heads, kv_heads=kv_heads,
        head_dim=head_dim, hidden=hidden, experts=experts, experts_active=experts_active, kv_latent=kv_latent,
        window=window, window_layers=window_layers, embed_b=embed_b,
        card=card_id, mem_gib=v.get("mem_gib", card["mem_gib"]), bw_tbs=v.get("bw_tbs", card["bw_tbs"]),
        tflops=tflops, gpus=v.get("gpus", 1), compute=compute, link_gbs=link_gbs, link_us=v.get("link_us", 10.0),
        weights=weights, weights_experts=weights_experts, kv=v.get("kv", "fp16"), ctx=v.get("ctx", 8192),
        batch=v.get("batch", "auto"), eff=v.get("eff", 0.7), overhead_gib=v.get("overhead_gib", 4.0),
        usd_hr=usd_hr, duty=v.get("duty", 0.3), upkeep=v.get("upkeep", 4000.0), hours=v.get("hours", 720.0),
        attn=v.get("attn", 1), req_day=v.get("req_day", 10000.0), in_tok=v.get("in_tok", 1000),
        out_tok=v.get("out_tok", 300), peak=v.get("peak", 3.0), tpot_ms=v.get("tpot_ms"),
        api=api_id, api_in=v.get("api_in", api["api_in"]), api_out=v.get("api_out", api["api_out"]),
    )


def parse(link: Union[str, Mapping[str, Any], None] = None) -> Parsed:
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
                # The rule names a key of its own (SPEC section 5) and the link gave it: name it.
                named, shown = conflict.name, _shown(raw[conflict.name])
                reason = f"{conflict.reason}; {culprit} falls back to its default"
            else:
                named, shown, reason = culprit, _shown(raw.get(culprit, values[culprit])), conflict.reason
            errors.append(FieldError(named, shown, KEYS[named].accepted, reason))
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


def load(link: Union[str, Mapping[str, Any], None] = None) -> Parsed:
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
            out.pop("weights", None)
            out.pop("weights_experts", None)
    out[key] = value
    if key == "card" and value in catalogue.cards():
        # Keep the compute precision only where the new card has units for it.
        if catalogue.cards()[value]["peaks"].get(str(out.get("compute", "bf16"))) is None:
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
