"""The report: every figure of SPEC sections 3, 5, 6 and 7 for one link, as a JSON-ready dict."""

from __future__ import annotations

import math
from typing import Any, Mapping, Optional, Union

from . import catalogue, engines, model, traffic
from .scenario import CARD_FIGURES, MODEL_FIGURES, Parsed, Scenario, load

Link = Union[str, Mapping[str, Any], None]


def _f(x: Any) -> Optional[float]:
    value = float(x)
    return None if math.isnan(value) else value


def modified_preset_keys(s: Scenario) -> dict[str, list[str]]:
    """Which figures of a preset model or card the scenario overrides (explicit keys win over presets).

    Returns ``{"model": [...], "card": [...]}``; empty lists for custom entries or untouched presets. A card's
    peak counts as modified when it differs from the card's peak at the scenario's compute precision.
    """
    out: dict[str, list[str]] = {"model": [], "card": []}
    m = catalogue.models().get(s.model)
    if m:
        out["model"] = [k for k in MODEL_FIGURES if getattr(s, k) != m[k]]
    c = catalogue.cards().get(s.card)
    if c:
        datasheet = {"mem_gib": c["mem_gib"], "bw_tbs": c["bw_tbs"], "tflops": c["peaks"].get(s.compute)}
        out["card"] = [k for k in CARD_FIGURES if datasheet[k] is not None and getattr(s, k) != datasheet[k]]
    return out


def display_name(s: Scenario, what: str = "model") -> str:
    """The model's or card's name for people: the preset's, marked when its figures were changed."""
    table = catalogue.models() if what == "model" else catalogue.cards()
    ident = getattr(s, what)
    if ident not in table:
        return "custom model" if what == "model" else "custom card"
    return table[ident]["name"] + (" (modified)" if modified_preset_keys(s)[what] else "")


def scenario_warnings(s: Scenario) -> list[str]:
    """Plain-language notes on a scenario that is valid but deserves a second look."""
    out = []
    mb = int(model.max_batch(s, s.ctx))
    if model.free_bytes(s) <= 0:
        need = (model.weight_bytes(s) / model.GiB + s.overhead_gib * s.gpus)
        out.append(f"the weights do not fit: {need:,.1f} GiB needed with overhead, "
                   f"{s.gpus * s.mem_gib:,.1f} GiB on {s.gpus} card(s)")
    elif mb == 0:
        out.append(f"the weights fit but not one sequence of {s.ctx:,} tokens does")
    if s.batch != "auto" and int(s.batch) > mb:
        out.append(f"batch {s.batch} exceeds the {mb:,} sequences memory holds at {s.ctx:,} tokens")
    preset = catalogue.models().get(s.model)
    if preset and preset.get("max_ctx") and s.ctx > preset["max_ctx"]:
        out.append(f"ctx {s.ctx:,} is beyond {preset['name']}'s trained context of {preset['max_ctx']:,} tokens")
    request = s.in_tok + s.out_tok
    if preset and preset.get("max_ctx") and request > preset["max_ctx"]:
        out.append(f"a request holds {request:,} tokens, beyond {preset['name']}'s trained context of "
                   f"{preset['max_ctx']:,} tokens")
    if request > s.ctx:
        out.append(f"a request holds {request:,} tokens (prompt + output), more than the {s.ctx:,}-token context "
                   "the Fit, Speed and Cost figures assume")
    changed = modified_preset_keys(s)
    if changed["model"]:
        out.append(f"{preset['name']} preset with its own figures: {', '.join(changed['model'])} differ from the preset")
    if changed["card"]:
        out.append(f"{catalogue.cards()[s.card]['name']} preset with its own figures: "
                   f"{', '.join(changed['card'])} differ from the datasheet")
    tier_note = traffic.api_tier_note(s)
    if tier_note:
        out.append(tier_note)
    if preset and s.api == preset["api_ref"] and preset.get("api_ref_note"):
        out.append(f"API price: {preset['api_ref_note']}; pick a closer row or type your own prices")
    card = catalogue.cards().get(s.card)
    if s.usd_hr is None:
        out.append(f"no reference rent for {card['name'] if card else 'this card'}: "
                   "set usd_hr (USD per card-hour) to price it")
    if card and card.get("link_gbs") is None and s.gpus > 1:
        out.append(f"{card['name']}: interconnect bandwidth is not in the catalogue; "
                   f"link_gbs {s.link_gbs:g} GB/s is an assumption")
    if not s.experts and s.experts_active:
        out.append("experts_active has no effect: the model is dense (experts = 0)")
    if not s.experts and s.active_b != s.params_b:
        out.append("active_b differs from params_b on a dense model (experts = 0): decode reads every weight")
    if s.window and not s.window_layers:
        out.append("window has no effect: window_layers is 0")
    if s.window_layers and not s.window:
        out.append("window_layers has no effect: window is 0")
    copies = model.kv_copy_factor(s)
    if copies > 1:
        held = (f"every card holds the whole latent" if s.kv_latent else
                f"each card holds {model.kv_heads_per_card(s)} of the {s.kv_heads} KV heads (a head is copied, "
                "never split)")
        out.append(f"tensor parallel over {s.gpus} cards keeps {copies:g}x the KV cache: {held}, so memory and "
                   "each step's cache read count the copies")
    if s.experts and s.weights_experts != s.weights:
        out.append(f"weights per part: routed experts in {s.weights_experts}, the rest in {s.weights}")
    if not s.experts and s.weights_experts != s.weights:
        out.append("weights_experts has no effect: the model is dense (experts = 0)")
    if s.kv_latent:
        out.append("MLA cache sized as the compressed latent (engines such as vLLM and SGLang cache it); "
                   "an engine that expands keys and values needs the plain formula")
    return out


def build(parsed: Parsed) -> dict[str, Any]:
    """The report of a parsed link (see :func:`report`)."""
    s = parsed.scenario
    n = s.ctx
    W = model.weight_bytes(s)
    mb = int(model.max_batch(s, n))
    be = model.break_even(s, n)
    batch = model.batch_used(s, n)
    parts = model.step_parts(s, batch, n)
    step_s = float(parts.step_s)
    tok_s = batch / step_s
    rent, upkeep = model.cost_per_mtok(s, tok_s, s.duty)

    cap = traffic.capacity(s)
    costs = traffic.monthly_costs(s, s.req_day, cap)
    fits_traffic = cap.max_batch > 0
    priced = s.usd_hr is not None
    self_host = _f(costs["self_host_usd_month"][()]) if fits_traffic and priced else None
    api_month = float(costs["api_usd_month"][()])
    if not fits_traffic:
        verdict: Optional[str] = "does not fit"
    elif self_host is None:
        verdict = None
    else:
        verdict = "self-host" if self_host < api_month else "api"
    R = float(traffic.requests_month(s))

    return _finite({
        "weights_gib": W / model.GiB,
        "kv_bytes_per_token": float(model.kv_bytes_per_token(s)),
        "kv_gib_per_sequence": float(model.cache_bytes(s, n)) / model.GiB,
        "kv_copy_factor": model.kv_copy_factor(s),
        "kv_heads_per_card": model.kv_heads_per_card(s),
        "free_gib": model.free_bytes(s) / model.GiB,
        "fits": bool(model.free_bytes(s) > 0),
        "max_batch": mb,
        "break_even_batch": be,
        "batch": batch,
        "step_ms": step_s * 1e3,
        "tok_s": tok_s,
        "tok_s_per_seq": 1 / step_s,
        "usd_per_mtok_rent": _f(rent),
        "usd_per_mtok_upkeep": float(upkeep),
        "usd_per_mtok": _f(rent + upkeep),
        "monthly_usd": _f(model.monthly_usd(s)),
        "memory_caps_batch": bool(be is None or mb < be),
        "comm_ms": float(parts.comm_s) * 1e3,
        "weights_read_gib_per_step": float(model.weight_bytes_read(s, batch)) / model.GiB,
        "kv_read_gib_per_step": s.attn * batch * float(model.cache_bytes(s, n)) / model.GiB,
        "serving_batch": cap.serving_batch,
        "meets_tpot": cap.meets_tpot,
        "ttft_ms": cap.ttft_ms,
        "requests_month": R,
        "tokens_in_month": R * s.in_tok,
        "tokens_out_month": R * s.out_tok,
        "busy_fraction": float(costs["busy_fraction"][()]),
        "replicas": int(costs["replicas"][()]) if fits_traffic else None,
        "duty_traffic": float(costs["busy_fraction"][()] / costs["replicas"][()]) if fits_traffic else None,
        "self_host_usd_month": self_host,
        "api_usd_month": api_month,
        "verdict": verdict,
        "break_even_req_day": traffic.break_even_req_day(s, cap),
        **engines.report_keys(s),  # SPEC section 7
        "warnings": list(parsed.warnings) + scenario_warnings(s),
        "scenario": s.as_dict(),
    })


def _finite(out: dict[str, Any]) -> dict[str, Any]:
    """Replace any figure that overflowed to infinity or NaN by None, and say which (never invalid JSON)."""
    bad = [k for k, v in out.items() if isinstance(v, float) and not math.isfinite(v)]
    for k in bad:
        out[k] = None
    if bad:
        out["warnings"].append(f"{', '.join(bad)} out of numeric range at these inputs: shown as null")
    return out


def report(link: Link = None) -> dict[str, Any]:
    """The report of SPEC section 3 (with ``comm_ms`` of section 5 and the keys of section 6).

    Args:
        link: a whole URL, a query string, or a mapping of link keys to values (str or numbers);
            None gives the defaults. A report's own ``scenario`` is a valid input.

    Returns:
        A JSON-ready dict; floats are not rounded; figures that cannot exist are None
        (``break_even_batch`` without a knee, USD figures of an unpriced card, self-hosting figures
        when nothing fits).

    Raises:
        ScenarioError: a value is malformed, out of range or breaks a consistency rule; its
            ``errors`` name the key, the value given and the accepted range.
    """
    return build(load(link))
