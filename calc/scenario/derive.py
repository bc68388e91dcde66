"""Defaults worked out from other figures: each function is named by its key's row in :data:`KEY_TABLE`
(``derive=``) and called by the one resolving loop (calc/scenario/resolve.py) as ``derive(r, base)``.

``r`` is the scenario being resolved (:class:`Resolving`): ``r.get(key)`` resolves another key, ``r.given(key)``
says whether the link gave it, ``r.row(source)`` is the preset's row (None for a custom model or card) and
``r.base_row(source)`` the preset's row or, for a custom entry, the default preset's. ``base`` is what the key's
row alone gives: the link's value, else the preset's figure, else the table's default. The formulas are those of
docs/method.md (sections named at each function).
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping
from typing import Any, Protocol

from .. import catalogue
from ..engines import (
    card_arch,
    default_batched_tokens,
    default_cuda_graphs,
    default_flash_attn,
    default_max_seqs,
    engine_weights,
    family_share,
    format_rule,
)

#: Vocabulary assumed for a custom model with a tied embedding table (Llama 4 and gpt-oss sizes bracket it).
DEFAULT_VOCAB = 131072
#: Interconnect assumed where neither the link nor the card preset gives one: PCIe 5.0 x16, GB/s one direction.
CUSTOM_LINK_GBS = 64.0
#: What an empty value means, for keys that may be empty.
AUTO = "auto"


class Conflict(Exception):
    """A broken consistency rule: ``keys`` are the inputs that may be dropped to repair it, in order;
    ``name`` is the key the error names (docs/method.md sections 2-5); ``rule`` the broken rule of
    :data:`calc.rules.RULES`, where it is one (its reason quotes figures that change as keys are dropped)."""

    def __init__(self, keys: tuple[str, ...], reason: str, name: str | None = None, rule: object = None,
                 accepted: str | None = None):
        super().__init__(reason)
        self.keys, self.reason, self.name, self.rule = keys, reason, name, rule
        self.accepted = accepted  # what the named key takes beside the other inputs, where narrower than its range


class Resolving(Protocol):
    def get(self, key: str) -> Any: ...
    def given(self, key: str) -> bool: ...
    def refused(self, key: str) -> bool: ...
    def row(self, source: str) -> Mapping[str, Any] | None: ...
    def base_row(self, source: str) -> Mapping[str, Any]: ...


Derive = Callable[[Resolving, Any], Any]


def unless_given(key: str) -> Callable[[Derive], Derive]:
    """A derivation that leaves the link's own value of ``key`` alone."""
    def wrap(f: Derive) -> Derive:
        @functools.wraps(f)
        def derive(r: Resolving, base: Any) -> Any:
            return base if r.given(key) else f(r, base)
        return derive
    return wrap


def profile_if_refused(key: str) -> Callable[[Derive], Derive]:
    """A derivation that keeps a printed link of before ``key`` existed at its numbers (the link gives the figures
    ``key`` is worked out beside, not ``key``), except where the link gave ``key`` and it was refused: then ``key`` is
    the profile's figure, its stated default, and the bills do not move to the old links' value."""
    def wrap(f: Derive) -> Derive:
        @functools.wraps(f)
        def derive(r: Resolving, base: Any) -> Any:
            return base if r.refused(key) else f(r, base)
        return derive
    return wrap


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


# --------------------------------------------------------------------------- the model (docs/method.md 2-5)

@unless_given("active_b")
def active_b(r: Resolving, base: Any) -> Any:
    """An MoE preset's active parameters; otherwise (dense, custom) the total."""
    return base if r.row("model") is not None and r.get("experts") else r.get("params_b")


@unless_given("heads")
def heads(r: Resolving, base: Any) -> Any:
    """A custom model given only its KV heads has as many query heads (plain multi-head attention)."""
    return r.get("kv_heads") if r.row("model") is None and r.given("kv_heads") else base


@unless_given("hidden")
def hidden(r: Resolving, base: Any) -> Any:
    """A custom model's width: heads x head_dim."""
    return base if base is not None else r.get("heads") * r.get("head_dim")


@unless_given("vocab")
def vocab(r: Resolving, base: Any) -> Any:
    """The preset's vocabulary, else the untied table's rows (embed_b / hidden), else a common 2025 size."""
    if base is not None:
        return base
    embed_b = r.get("embed_b")
    return round(embed_b * 1e9 / r.get("hidden")) if embed_b > 0 else DEFAULT_VOCAB


@unless_given("state_layers")
def state_layers(r: Resolving, base: Any) -> Any:
    """The preset's (its linear layers) while its layout is the preset's; else the link's linear_layers: each
    linear-attention layer holds a state (docs/method.md section 2.7)."""
    return base if base is not None and not r.given("linear_layers") else r.get("linear_layers")


@unless_given("state_kib")
def state_kib(r: Resolving, base: Any) -> Any:
    """A hybrid preset's state while its width is the preset's; else hidden / 2 KiB per layer holding a state (the
    shape of Mamba2 and Gated DeltaNet states, docs/method.md section 2.7)."""
    preset = r.row("model")
    if preset is not None and preset["linear_layers"] and not r.given("hidden"):
        return base
    return r.get("hidden") / 2 if r.get("state_layers") else 0.0


# --------------------------------------------------------------------------- the card

@unless_given("torch_gib")
def torch_gib(r: Resolving, base: Any) -> Any:
    """What CUDA reports: the preset's while the link keeps the preset's memory, else mem_gib."""
    card = r.row("card")
    return card_torch_gib(card, r.get("mem_gib"), card is not None and not r.given("mem_gib"))


def buy_lot(r: Resolving, base: Any) -> Any:
    """Cards bought as one unit: the link's, else the preset card's baseboard (catalogue.buy_lot), else 1."""
    if base is not None:
        return base
    card = r.row("card")
    return 1 if card is None else catalogue.buy_lot(r.get("card"))


def card_peak(r: Resolving) -> float:
    """The card's dense peak at the compute precision (a custom card: the default card's); raises
    :class:`Conflict` on ``compute`` when the card has no units for it."""
    peak = r.base_row("card")["peaks"].get(r.get("compute"))
    if peak is None:
        raise Conflict(("compute",), f"{r.base_row('card')['name']} has no dense {r.get('compute')} peak"
                       + ("" if r.row("card") is not None else "; give tflops"))
    return peak


@unless_given("tflops")
def tflops(r: Resolving, base: Any) -> Any:
    """The card's dense peak at the compute precision (:func:`card_peak`)."""
    return card_peak(r)


@unless_given("link_gbs")
def link_gbs(r: Resolving, base: Any) -> Any:
    """The card's interconnect; PCIe 5.0 x16 where the catalogue has none (as for a custom card)."""
    return CUSTOM_LINK_GBS if base is None else base


#: A card whose family the link does not give (a custom card): no family's share applies.
UNKNOWN_FAMILY = "unknown"


def arch(r: Resolving, base: Any) -> Any:
    """The card's family: a preset card's own (calc/data/card_arch.csv), a custom card's from the link, else
    unknown. Raises :class:`Conflict` on ``arch`` where a link names another family for a preset card."""
    own = card_arch().get(r.get("card")) if r.row("card") is not None else None
    if own is None:
        return base if r.given("arch") else UNKNOWN_FAMILY
    if r.given("arch") and base != own.lower():
        article = "an" if own[0] in "AEIOU" else "a"
        raise Conflict(("arch",), f"{r.row('card')['name']} is {article} {own} card: arch names a custom card's "
                                  "family")
    return own.lower()


@unless_given("eff_card")
def eff_card(r: Resolving, base: Any) -> Any:
    """The share of the profile's bandwidth the card's family reaches (docs/method.md section 8; calibration.md
    section 3): the link's, else 1 for the roofline (its 0.7 is every card's by definition), else the family's under
    the engine (1 for an unknown family, or an engine its share does not cover). It multiplies eff_bw and eff_kv
    whether they are the profile's or the link's (eff)."""
    if r.get("engine") == "roofline":
        return 1.0
    return family_share(r.get("arch"), r.get("engine"))


# --------------------------------------------------------------------------- the checkpoint (docs/method.md 2.1, 8)

def _shipped(r: Resolving) -> Mapping[str, Any] | None:
    """The preset's row when its checkpoint ships formats of its own and the weights are its format: the link
    chooses no other (a link that names the preset's own format, weights=fp8 for the 405B FP8 release, keeps its
    parts), and the engine loads it (llama.cpp runs a GGUF conversion of the 405B FP8 release, in q8_0 whole)."""
    preset = r.row("model")
    if preset is None or preset.get("weights") is None:
        return None
    return preset if r.get("weights") == preset["weights"] else None


#: The format an integer checkpoint (GPTQ, AWQ, W8A8: the weight formats of kind ``integer``) keeps its embedding table
#: and LM head in: their quantizers skip both (an ``lm_head`` and ``embed_tokens`` left in 16 bits; TensorRT-LLM's
#: int8 weight-only engine of issue #1188 printed them in fp16, tests/fixtures/memory_cases.csv).
INTEGER_EMBED_FORMAT = "bf16"


def plain_embed_format(weights: str) -> str:
    """The format a checkpoint in ``weights`` keeps its embeddings and LM head in: ``INTEGER_EMBED_FORMAT`` under an
    integer format (GPTQ, AWQ, W8A8), else the weight format itself."""
    fmt = catalogue.weight_formats().get(str(weights))
    return INTEGER_EMBED_FORMAT if fmt is not None and fmt.get("kind") == "integer" else str(weights)


def plain_checkpoint(weights: str) -> dict[str, Any]:
    """The part formats of a checkpoint shipped whole in ``weights``, as link keys: every part in that format (the
    embeddings and LM head as :func:`plain_embed_format` says) and no block kept at 16 bits. The Fit page's format
    table and the Levers page's weight formats both price each format this way."""
    return {"weights": weights, "weights_experts": weights, "weights_attn": weights,
            "weights_embed": plain_embed_format(weights), "layers_full": 0}


def _part(key: str) -> Derive:
    @unless_given(key)
    def derive(r: Resolving, base: Any) -> Any:
        shipped = _shipped(r)
        if shipped is None or shipped[key] is None:
            return plain_embed_format(r.get("weights")) if key == "weights_embed" else r.get("weights")
        return engine_weights(r.get("engine"), shipped[key])
    derive.__doc__ = (f"{key}: the shipped checkpoint's, else the weight format"
                      + (" (16 bits under an integer format)." if key == "weights_embed" else "."))
    return derive


weights_experts, weights_attn, weights_embed = _part("weights_experts"), _part("weights_attn"), _part("weights_embed")


@unless_given("layers_full")
def layers_full(r: Resolving, base: Any) -> Any:
    """Blocks a shipped checkpoint keeps at 16 bits; 0 otherwise."""
    shipped = _shipped(r)
    return shipped["layers_full"] if shipped is not None else 0


# --------------------------------------------------------------------------- the traffic (SPEC sections 9-10)

def ctx(r: Resolving, base: Any) -> Any:
    """auto: a request of the traffic, prompt plus output tokens (SPEC section 10)."""
    return max(1, r.get("in_tok") + r.get("out_tok")) if base == AUTO else base


def duty(r: Resolving, base: Any) -> Any:
    """auto: the traffic's implied duty, known once the traffic is evaluated (None in the scenario)."""
    return None if base == AUTO else base


def peak(r: Resolving, base: Any) -> Any:
    """A day's profile sets the peak factor: its busiest hour over its mean hour (SPEC section 9)."""
    weights = day_weights(r.get("profile"))
    return base if weights is None else max(weights) / (sum(weights) / 24)


@unless_given("api")
def api(r: Resolving, base: Any) -> Any:
    """A custom model is compared with the API row of the catalogue model nearest its active parameters
    (catalogue.nearest_model), not the default model's: a 7B model priced at a 70B model's API would make
    self-hosting look cheaper than it is."""
    if r.row("model") is not None:
        return base
    return catalogue.models()[catalogue.nearest_model(r.get("active_b"))]["api_ref"]


@unless_given("api_cached")
def api_cached(r: Resolving, base: Any) -> Any:
    """The row's cached-input price, else the input price in use (docs/method.md section 9)."""
    return catalogue.cached_input_price({**r.base_row("api"), "api_in": r.get("api_in")})


# --------------------------------------------------------------------------- the engine (docs/method.md 8)

def _efficiency(key: str) -> Derive:
    @unless_given(key)
    def derive(r: Resolving, base: Any) -> Any:
        return r.get("eff") if r.given("eff") else base
    derive.__doc__ = f"{key}: the link's eff, else the engine profile's."
    return derive


eff_bw, eff_kv, eff_flops = _efficiency("eff_bw"), _efficiency("eff_kv"), _efficiency("eff_flops")


@unless_given("eff_fp4")
@profile_if_refused("eff_fp4")
def eff_fp4(r: Resolving, base: Any) -> Any:
    """The profile's, except beside a link's own eff_flops or eff, which then sets the arithmetic's share at every
    precision (a printed link of before eff_fp4 existed keeps its numbers; docs/calibration.md section 7)."""
    return 1.0 if r.given("eff_flops") or r.given("eff") else base


@unless_given("eff_fp8")
@profile_if_refused("eff_fp8")
def eff_fp8(r: Resolving, base: Any) -> Any:
    """The profile's, except beside a link's own eff_flops or eff, which then sets a decode step's arithmetic share at
    every precision (a printed link of before eff_fp8 existed keeps its numbers; docs/calibration.md section 7)."""
    return 1.0 if r.given("eff_flops") or r.given("eff") else base


@unless_given("overlap")
@profile_if_refused("overlap")
def overlap(r: Resolving, base: Any) -> Any:
    """The profile's, except beside a link's own eff_flops or eff, which then prices the step as the roofline's
    max of its memory and arithmetic times (a printed link of before overlap existed keeps its numbers;
    docs/calibration.md section 7)."""
    return 1.0 if r.given("eff_flops") or r.given("eff") else base


@unless_given("eff_prefill")
@profile_if_refused("eff_prefill")
def eff_prefill(r: Resolving, base: Any) -> Any:
    """The profile's, except beside a link's own eff_flops (then that figure) or eff (then eff): a link that sets the
    arithmetic's share sets it for prefill too (a printed link of before eff_prefill existed keeps its numbers;
    docs/calibration.md section 7)."""
    if r.given("eff_flops"):
        return r.get("eff_flops")
    return r.get("eff") if r.given("eff") else base


@unless_given("max_batched_tokens")
def max_batched_tokens(r: Resolving, base: Any) -> Any:
    """The engine's default for the card (docs/method.md section 8.2)."""
    return default_batched_tokens(r.get("engine"), r.get("card"), r.get("torch_gib"))


def weights_refusal(engine: str, weights: str) -> str | None:
    """Why ``engine`` cannot load weights in format ``weights`` (calc/engines.py ``format_rule`` with the format's
    kind from the catalogue), or None when it can."""
    fmt = catalogue.weight_formats().get(weights)
    return format_rule(engine, weights, fmt and fmt.get("kind"))


def formats_loaded(engine: str) -> str:
    """The weight formats ``engine`` loads, in the words of a key's accepted range ("one of ..., or bits per
    weight from 1 to 32"): the catalogue's formats less those :func:`weights_refusal` refuses."""
    names = [f for f in catalogue.weight_formats() if weights_refusal(engine, f) is None]
    return "one of " + ", ".join(names) + ", or bits per weight from 1 to 32"


@unless_given("weights")
def weights(r: Resolving, base: Any) -> Any:
    """The model's or the default format, in the type the engine loads (llama.cpp: its GGUF counterpart)."""
    return engine_weights(r.get("engine"), base)


def _pinned_with_layer_us(r: Resolving, base: Any) -> Any:
    """The profile's, except beside a link's own ``layer_us``: a link that pins the time per layer pins all of it
    (a printed link of before ``eager_us`` and ``layer_ghz`` existed keeps its numbers; docs/calibration.md
    section 7)."""
    return 0.0 if r.given("layer_us") else base


eager_us = unless_given("eager_us")(_pinned_with_layer_us)
layer_ghz = unless_given("layer_ghz")(_pinned_with_layer_us)


@unless_given("dequant_q8")
def dequant_q8(r: Resolving, base: Any) -> Any:
    """1, except beside a link's own ``eff_dequant``: a link printed before the loss on packed weights reached
    8-bit blocks with their own scales (Q8_0) pins that loss and read such blocks at the full bandwidth share, so
    it keeps its numbers (docs/calibration.md section 7)."""
    return 0 if r.given("eff_dequant") else base


@unless_given("expert_us")
@profile_if_refused("expert_us")
def expert_us(r: Resolving, base: Any) -> Any:
    """The profile's, except beside a link's own ``step_us``: a link that pins the engine's fixed times pins this one
    too (a printed link of before ``expert_us`` existed keeps its numbers; docs/calibration.md section 7)."""
    return 0.0 if r.given("step_us") else base


@unless_given("cuda_graphs")
def cuda_graphs(r: Resolving, base: Any) -> Any:
    """The engine's default: 0 for builds that capture no CUDA graphs (calc/engines.py ``default_cuda_graphs``)."""
    return default_cuda_graphs(r.get("engine"))


@unless_given("flash_attn")
def flash_attn(r: Resolving, base: Any) -> Any:
    """The engine's default: 0 for builds that run without flash attention (calc/engines.py ``default_flash_attn``)."""
    return default_flash_attn(r.get("engine"))


@unless_given("max_seqs")
def max_seqs(r: Resolving, base: Any) -> Any:
    """The engine's default cap for the card and its step size, else the profile's."""
    return default_max_seqs(r.get("engine"), r.get("card"), r.get("torch_gib"), r.get("max_batched_tokens"), base)
