"""The consistency rules between a model's and a card's figures (docs/method.md sections 2-5): one table that the
catalogue loader applies to every preset row and the link parser to every resolved scenario.

Each :class:`Rule` reads a mapping of figures by link key (``kv_heads``, ``heads``, ...) and returns why the
figures break it, or None. ``keys`` are the inputs that may be dropped to repair it, in order; ``name`` is the
key an error names when it is not the first of them. Standard library only: the catalogue imports it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

#: Relative slack of the MoE dense-part rule: the dense part may be negative by this share of ``params_b``
#: (float rounding of presets read from config files), never more.
DENSE_PART_SLACK = 1e-9


def routed_params(params: float, active: float, experts: int, experts_active: int) -> float:
    """Routed-expert parameters of an MoE model, ``M = (P - Pa)/(1 - k/E)`` (docs/method.md sections 2-5): the active
    parameters hold the dense part and ``k`` of ``E`` experts per layer. Any unit (the result has the unit of
    ``params``); 0 for a dense model (``experts = 0``)."""
    if not experts:
        return 0.0
    return (params - active) / (1 - experts_active / experts)


def _g(value: float | int) -> str:
    """A figure as a link writes it: integers without a decimal point, floats in their shortest exact form."""
    if isinstance(value, float) and value.is_integer() and abs(value) < 1e15:
        return str(int(value))
    return repr(value) if isinstance(value, float) else str(value)


@dataclass(frozen=True)
class Rule:
    """One consistency rule: ``broken(values)`` is the reason it fails (None when it holds)."""

    keys: tuple[str, ...]
    broken: Callable[[Mapping[str, Any]], str | None]
    name: str | None = None
    #: Figures the check reads beyond ``keys``.
    reads: tuple[str, ...] = ()


def _dense_part(v: Mapping[str, Any]) -> str | None:
    if not v["experts"]:
        return None
    dense = v["params_b"] - routed_params(v["params_b"], v["active_b"], v["experts"], v["experts_active"]) - v["embed_b"]
    if dense >= -DENSE_PART_SLACK * v["params_b"]:
        return None
    return (f"with params_b={_g(v['params_b'])}, active_b={_g(v['active_b'])}, experts={v['experts']}, "
            f"experts_active={v['experts_active']} and embed_b={_g(v['embed_b'])} the dense part less the embedding "
            f"table would be negative ({dense:.6g} billion)")


def _kv_heads(v: Mapping[str, Any]) -> str | None:
    # Grouped-query attention gives each KV head an equal group of query heads, so heads is a multiple of
    # kv_heads (every engine's attention kernels and checkpoint loaders assume it).
    if v["kv_heads"] > v["heads"]:
        return f"kv_heads ({v['kv_heads']}) must not exceed heads ({v['heads']})"
    if v["heads"] % v["kv_heads"]:
        return (f"heads ({v['heads']}) must be a multiple of kv_heads ({v['kv_heads']}): grouped-query attention "
                "gives each KV head an equal group of query heads")
    return None


#: Parameters a layer holds per hidden width squared, ``rho = (params - embed)/(layers * hidden^2)`` (docs/method.md
#: section 1): a decoder layer holds about 4 h^2 of attention projections (fewer with grouped-query attention) and 2
#: to 3 h^2 per h of MLP width, so the catalogue's 37 models hold 10 to 28 h^2 of active parameters a layer and up to
#: 394 h^2 in all with every expert (gpt-oss-120b). A custom model's width defaults to heads x head_dim with heads =
#: kv_heads (SPEC section 1), so a link that leaves them out gives a narrow width (the seed's 70B: 834 h^2); such a
#: shape is only noted (:data:`SHAPE_RHO_NOTED`). Outside these bounds one figure is wrong by orders of magnitude
#: (70 billion parameters in one layer of width 3: 7.8e9 h^2), and every figure derived from the shape would be.
SHAPE_RHO_MIN = 1e-4
SHAPE_RHO_MAX = 1e7
#: The range a shape is taken as it is, without a note: twice the catalogue's spread of active parameters either side
#: (about 5 to 60 h^2), and every expert at most 1000 h^2.
SHAPE_RHO_NOTED = (5.0, 60.0, 1000.0)


def shape_rho(params_b: float, embed_b: float, layers: int, hidden: int) -> float:
    """Parameters per layer over ``hidden^2`` (:data:`SHAPE_RHO_MIN`); ``params_b``, ``embed_b`` in billions."""
    return (params_b - embed_b) * 1e9 / (layers * hidden ** 2)


def _shape_rhos(v: Mapping[str, Any]) -> tuple[float, float]:
    """(active, every expert) parameters a layer over ``hidden^2`` (:func:`shape_rho`)."""
    return (shape_rho(v["active_b"], v["embed_b"], v["layers"], v["hidden"]),
            shape_rho(v["params_b"], v["embed_b"], v["layers"], v["hidden"]))


def _shape(v: Mapping[str, Any]) -> str | None:
    low, high = _shape_rhos(v)
    if low >= SHAPE_RHO_MIN and high <= SHAPE_RHO_MAX:
        return None
    per_layer = (v["params_b"] - v["embed_b"]) / v["layers"]
    lo_b = SHAPE_RHO_MIN * v["layers"] * v["hidden"] ** 2 / 1e9 + v["embed_b"]
    hi_b = SHAPE_RHO_MAX * v["layers"] * v["hidden"] ** 2 / 1e9 + v["embed_b"]
    return (f"the shape cannot hold the parameters: {v['layers']} layer{'s' if v['layers'] != 1 else ''} of width "
            f"hidden={v['hidden']} would hold {per_layer:.4g} billion parameters each (params_b={_g(v['params_b'])}, "
            f"active_b={_g(v['active_b'])}, embed_b={_g(v['embed_b'])}); a decoder layer holds about 10 to 28 x "
            f"hidden^2, and no shape outside {SHAPE_RHO_MIN:g} to {SHAPE_RHO_MAX:g} x hidden^2 is taken, so this one "
            f"holds {lo_b:.4g} to {hi_b:.4g} billion")


def shape_note(v: Mapping[str, Any]) -> str | None:
    """A note where the shape is possible but unlike any decoder's (:data:`SHAPE_RHO_NOTED`), naming the figures
    that read the width; None otherwise."""
    low, high = _shape_rhos(v)
    lo, hi, every = SHAPE_RHO_NOTED
    if lo <= low <= hi and high <= every:
        return None
    return (f"the model's shape is unlike any decoder's: {v['layers']} layers of width hidden={v['hidden']} hold "
            f"{low:.3g} x hidden^2 of active parameters each (real models: 10 to 28); the figures that read the width "
            "(the engine's activation reserve, the all-reduces) take it as given, so give hidden (and heads) from "
            "the model's config.json")


#: The rules in the order they are checked.
RULES: tuple[Rule, ...] = (
    Rule(("torch_gib", "mem_gib"), lambda v: None if v["torch_gib"] <= v["mem_gib"] else
         f"torch_gib ({_g(v['torch_gib'])}) must not exceed mem_gib ({_g(v['mem_gib'])})"),
    Rule(("kv_heads", "heads"), _kv_heads),
    Rule(("window_layers", "layers"), lambda v: None if v["window_layers"] <= v["layers"] else
         f"window_layers ({v['window_layers']}) must not exceed layers ({v['layers']})"),
    Rule(("linear_layers", "window_layers", "layers"),
         lambda v: None if v["linear_layers"] + (v["window_layers"] if v["window"] else 0) <= v["layers"] else
         f"linear_layers ({v['linear_layers']}) and window_layers ({v['window_layers']}) must not exceed layers "
         f"({v['layers']}) together", reads=("window",)),
    Rule(("state_layers", "linear_layers", "layers"),
         lambda v: None if v["linear_layers"] <= v["state_layers"] <= v["layers"] else
         f"state_layers ({v['state_layers']}) must be from linear_layers ({v['linear_layers']}) to layers "
         f"({v['layers']}): every linear layer holds a state", "state_layers"),
    Rule(("state_kib", "state_layers"), lambda v: None if not v["state_layers"] or v["state_kib"] >= 1 else
         "state_kib must be at least 1 KiB when there are layers holding a state"),
    Rule(("layers_full", "layers"), lambda v: None if v["layers_full"] <= v["layers"] else
         f"layers_full ({v['layers_full']}) must not exceed layers ({v['layers']})"),
    Rule(("experts",), lambda v: None if v["experts"] != 1 else "an MoE layer needs at least 2 experts (0 = dense)"),
    Rule(("experts_active", "experts"),
         lambda v: None if not v["experts"] or 1 <= v["experts_active"] < v["experts"] else
         f"experts_active ({v['experts_active']}) must be from 1 to experts - 1 ({v['experts'] - 1})",
         "experts_active"),
    Rule(("active_b", "params_b"), lambda v: None if v["active_b"] <= v["params_b"] else
         f"active_b ({_g(v['active_b'])}) must not exceed params_b ({_g(v['params_b'])})"),
    Rule(("embed_b", "active_b", "params_b"), lambda v: None if v["embed_b"] < v["active_b"] else
         f"embed_b ({_g(v['embed_b'])}) must be below active_b ({_g(v['active_b'])})"),
    Rule(("active_b", "params_b", "embed_b"), _dense_part, "active_b", reads=("experts", "experts_active")),
    Rule(("hidden", "layers", "params_b", "active_b"), _shape, reads=("embed_b",)),
    # A benchmark run's longest reply (docs/method.md section 8.1) cannot be shorter than its mean reply.
    Rule(("out_max", "out_tok"), lambda v: None if not v.get("out_max") or v["out_max"] >= v["out_tok"] else
         f"out_max ({v['out_max']}) must be 0 (no cap) or at least out_tok ({v['out_tok']}): a run's longest reply "
         "cannot be shorter than its mean one"),
)


def first_broken(values: Mapping[str, Any], keys: set[str] | None = None) -> tuple[Rule, str] | None:
    """The first rule of :data:`RULES` that ``values`` break, with its reason; None when every rule holds.
    ``keys``: check only the rules whose keys are all in it (a card row has no model figures)."""
    for rule in RULES:
        if keys is not None and not {*rule.keys, *rule.reads} <= keys:
            continue
        reason = rule.broken(values)
        if reason:
            return rule, reason
    return None
