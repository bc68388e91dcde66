"""One typed evaluation of a link: every figure of the report computed once, in parts.

:func:`evaluate` parses nothing itself: it takes a :class:`~calc.scenario.Parsed` link and returns a frozen
:class:`Evaluation` made of per-part results (memory, decode step, unit cost, traffic capacity, the monthly
bills, the decision). :meth:`Evaluation.report` flattens it to the JSON report of docs/method.md;
the pages, the memo and the command line all read an Evaluation, so each figure has one formula
(``docs/method.md``).
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Mapping
from dataclasses import dataclass, fields
from functools import cached_property
from typing import Any

from . import catalogue, engines, memory, model, procure, traffic
from .accuracy import accuracy, kept_out_bands, kept_out_beyond_band, kept_out_capacity, kept_out_source
from .decision import Decision, decide, recommendation
from .notes import cheaper_api_row, latency_missed, scenario_warnings, what_if
from .scenario import CUSTOM, Parsed, Scenario, load
from .units import MS_PER_S

Link = str | Mapping[str, Any] | None


@dataclass(frozen=True)
class Memory:
    """Memory of one replica at the worst-case context ``ctx`` (docs/method.md section 2). GiB = 2**30 bytes."""

    weights_gib: float               # resident weights, every part in its format
    kv_bytes_per_token: float        # the model's own cache per token, every layer full, no copies
    kv_gib_per_sequence: float       # one sequence over the whole replica, tensor-parallel copies counted
    kv_copy_factor: float            # replica cache over the model's own (1: no copies)
    kv_heads_per_card: int
    ctx_used: int                    # tokens per sequence the figures use: the link's ctx, or in_tok + out_tok (auto)
    free_gib: float                  # left for the cache over all cards (negative: the weights do not fit)
    fits: bool
    max_batch: int                   # sequences that fit at ctx
    # docs/method.md section 8.2, worded as the engines print them at start-up.
    weights_loaded_gib: float        # per card, as the engine loads them (its kernels' padding included)
    kv_cache_gib: float              # the KV cache the engine allocates, all cards (vLLM: "Available KV cache memory" x g)
    kv_cache_gib_per_card: float
    kv_tokens: int                   # vLLM's "GPU KV cache size", SGLang's max_total_num_tokens, llama.cpp's cells
    max_concurrency: float           # vLLM's "Maximum concurrency for ctx tokens per request"
    reserve_gib_per_card: dict       # the engine's reserve block by block, GiB per card (llama.cpp: "compute buffer")


@dataclass(frozen=True)
class Decode:
    """The decode step at the batch used (docs/method.md sections 3 to 5)."""

    break_even_batch: float | None
    batch: int
    step_ms: float
    tok_s: float
    tok_s_per_seq: float


@dataclass(frozen=True)
class UnitCost:
    """Cost per million tokens at the link's duty cycle, and the monthly bill of one replica
    (docs/method.md section 6). USD."""

    usd_per_mtok_rent: float | None
    usd_per_mtok_upkeep: float
    usd_per_mtok: float | None
    monthly_usd: float | None
    monthly_rent_usd: float | None   # one replica's rent for the month, busy or not
    duty_used: float                 # the link's duty, or the traffic's implied duty (duty=auto, SPEC section 10)
    upkeep_replicas: int             # the replicas whose tokens share the upkeep in usd_per_mtok_upkeep


@dataclass(frozen=True)
class StepDetail:
    """What bounds the step and what it reads."""

    memory_caps_batch: bool
    comm_ms: float
    weights_read_gib_per_step: float
    kv_read_gib_per_step: float


@dataclass(frozen=True)
class Bill:
    """The link's traffic served both ways, per month (docs/method.md section 7)."""

    serving_batch: int | None         # null where nothing can be served (and the four below)
    # Output tokens a second one busy replica delivers on the traffic's requests at the serving batch, prompts
    # included (traffic.Capacity.serving_tok_s): what sizes the replicas, max_throughput_tok_s where memory binds.
    serving_tok_s: float | None
    serving_tpot_ms: float | None        # the decode step at the serving batch: each sequence's time per output token
    meets_tpot: bool | None
    ttft_ms: float | None
    requests_month: float
    tokens_in_month: float
    tokens_out_month: float
    busy_fraction: float
    replicas: int | None
    duty_traffic: float | None
    self_host_usd_month: float | None
    api_usd_month: float
    # Each bill over the month's output tokens, USD per 1M (prompts and idle capacity paid for): the Cost page's
    # "All-in per 1M output"; usd_per_mtok above is one replica's decode steps only (SPEC section 2).
    self_host_usd_per_mtok_out: float | None
    api_usd_per_mtok_out: float
    verdict: str | None           # "self-host", "api", "does not fit", or None (the card has no rent)
    break_even_req_day: float | None
    stays_cheaper_req_day: float | None  # above it self-hosting is cheaper at every volume (None: never)
    rent_to_flip_usd_hr: float | None    # the card-hour rent (quote) at which both bills are equal at this volume
    cheaper_api: str | None       # the catalogue's cheapest API row for the model, when 5 % below the link's row
    cheaper_api_usd_month: float | None  # ... and its bill for this traffic
    recommendation: str | None    # the verdict; "own"/"hybrid"/"hybrid_own" where that way is cheapest;
    #                               "api-cheaper-row" where that row beats self-hosting


@dataclass(frozen=True)
class Engine:
    """The engine profile the figures use and what one replica sustains under full load (docs/method.md
    section 8)."""

    engine: str
    engine_profile: dict             # each figure used, and whether it came from the profile or the link
    max_throughput_tok_s: float | None
    throughput_batch: int | None
    run_throughput_tok_s: float | None  # a finite benchmark run's output tok/s (run_prompts; None without one)
    error_band: list | None          # the engine's measured error on the published rows, per metric
    error_band_from: str | None       # whose fitted rows that error is of (a family sharing every figure: its engine)
    error_band_kept_out: list | None  # the shipped figures' error on the published rows kept out of the fit
    error_band_kept_out_from: str | None  # whose rows kept out of the fit those are (vllm-v0: its own)


@dataclass(frozen=True)
class Band:
    """The self-hosting bill as a range from the engine's cross-validated error (docs/calibration.md section 6):
    the replicas sized at capacity ``1 + b`` and ``1 / (1 + b)`` times the model's, ``b`` the band."""

    capacity_measured: bool                 # a row measured this engine x card family x kind x TP x packed weights
    capacity_band_pct: float | None         # b in per cent (90th percentile, leave-one-source-out)
    capacity_band_from: str | None          # the release family whose band stands in for a band of few rows
    capacity_band_region_rows: int | None   # the rows of the scenario's own region whose wider band stands in
    self_host_usd_month_low: float | None   # at capacity x (1 + b)
    self_host_usd_month_high: float | None  # at capacity / (1 + b)
    replicas_at_band_ends: list | None      # the replicas for the busiest hour at capacity x (1 + b) and / (1 + b)
    verdict_marginal: bool                  # the API bill lies inside that range
    break_even_req_day_low: float | None    # the break-even volume at capacity x (1 + b) (None: never, or no band)
    break_even_req_day_high: float | None   # ... at capacity / (1 + b)
    best_at_band_ends: list | None          # the best option (SPEC section 9) at capacity x (1 + b) and / (1 + b)
    best_marginal: bool                     # it differs from the best at the model's capacity
    capacity_kept_out_pct: float | None     # the kept-out rows' signed median error of that figure, where it
    #                                         flatters beyond b (docs/calibration.md section 5; else None)
    capacity_kept_out_rows: int | None      # how many rows that error is of (None where there is none)
    capacity_kept_out_region: bool          # they are the rows of the scenario's own set-up (10 or more, further off)
    self_host_usd_month_kept_out: float | None  # the bill at capacity / (1 + that error)
    break_even_req_day_kept_out: float | None   # the break-even volume at that capacity (None: never, or no such error)
    rent_median_quote_usd_hr: float | None      # the median on-demand quote for the card (catalogue), USD/card-hour
    self_host_usd_month_median_rent: float | None  # the bill at that rent, where the link's rent is below it


@dataclass(frozen=True)
class Speculation:
    """Speculative decoding at the batch used and the context ``ctx`` (docs/method.md section 9); with
    ``spec_k = 0`` the plain step's figures (speed-up 1)."""

    spec_tok_s: float
    spec_tpot_ms: float
    spec_speedup: float


#: The report's parts in the report's key order.
PARTS = (Memory, Decode, UnitCost, StepDetail, Bill, Engine, Band, Speculation, procure.Options)


def _copied(value: Any) -> Any:
    """``value`` with its nested dicts and lists copied (the parts hold plain JSON values only, so this is
    ``copy.deepcopy`` without its memo, several times faster)."""
    if isinstance(value, dict):
        return {k: _copied(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_copied(v) for v in value]
    return value


def _plain(part: Any) -> dict[str, Any]:
    """A part's fields as a dict, its nested dicts and lists copied (``dataclasses.asdict`` without its
    recursion into every value: the parts hold no dataclass inside)."""
    return {f.name: _copied(getattr(part, f.name)) for f in fields(part)}


@dataclass(frozen=True)
class Evaluation:
    """Every figure of one link, computed once. Read the parts; :meth:`report` flattens them."""

    parsed: Parsed
    memory: Memory
    decode: Decode
    cost: UnitCost
    step: StepDetail
    bill: Bill
    engine: Engine
    band: Band
    speculation: Speculation
    procurement: procure.Options
    capacity: traffic.Capacity
    units: traffic.UnitCosts
    warnings: tuple[str, ...]

    @property
    def scenario(self) -> Scenario:
        return self.parsed.scenario

    @cached_property
    def flat(self) -> dict[str, Any]:
        """The report as a dict (see :meth:`report`), built once; do not change it."""
        out: dict[str, Any] = {}
        for part in (self.memory, self.decode, self.cost, self.step, self.bill, self.engine, self.band, self.procurement,
                     self.speculation):
            out.update(_plain(part))
        out["warnings"] = list(self.warnings)
        out["scenario"] = self.scenario.as_dict()
        return out

    def report(self) -> dict[str, Any]:
        """The JSON report (docs/method.md): a fresh dict the caller may change."""
        return {**self.flat, "warnings": list(self.warnings), "scenario": self.scenario.as_dict()}

    @cached_property
    def decision(self) -> Decision:
        """The verdict and what would flip it."""
        return decide(self.scenario, self.capacity, self.flat, self.units)


#: Cards beyond which a flat upkeep is named as too small a figure: a few racks of eight-card servers.
LARGE_FLEET_CARDS = 256


def upkeep_replicas(s: Scenario, replicas: float | None) -> int:
    """The replicas whose tokens share the upkeep in a cost per million tokens (:func:`calc.model.cost_per_mtok`):
    the traffic's ``replicas`` where the duty follows the traffic (``duty=auto``, each replica at the traffic's
    implied duty, so the fleet's decode tokens carry the upkeep once, as the bill does; SPEC section 10), else 1 (a
    what-if duty prices one replica alone, SPEC section 2)."""
    return int(replicas) if s.duty is None and replicas else 1


def evaluate(parsed: Parsed) -> Evaluation:
    """Evaluate a parsed link.

    Args:
        parsed: the outcome of :func:`calc.parse` or :func:`calc.load`.

    Returns:
        The :class:`Evaluation`. A figure that overflows to infinity or NaN at extreme inputs is None, and a
        warning names it (the report is always valid JSON).
    """
    s = parsed.scenario
    n = s.ctx
    mb = int(memory.max_batch(s, n))
    be = model.break_even(s, n)
    batch = memory.batch_used(s, n)
    parts = model.step_parts(s, batch, n)
    step_s = float(parts.step_s)
    tok_s = batch / step_s
    spec = model.speculative(s, batch, n)
    mem = memory.memory(s)
    free = mem.kv_cache_bytes

    cap = traffic.capacity(s)
    costs = traffic.monthly_costs(s, s.req_day, cap)
    fits_traffic = cap.max_batch > 0
    # duty=auto: the traffic's implied duty per replica (1 where nothing fits; SPEC section 10).
    implied = float(costs["busy_fraction"][()] / costs["replicas"][()]) if fits_traffic else 1.0
    duty = s.duty if s.duty is not None else min(1.0, max(implied, 1e-9))
    sharing = upkeep_replicas(s, costs["replicas"][()] if fits_traffic else None)
    rent, upkeep = model.cost_per_mtok(s, tok_s, duty, sharing)
    self_host = model.none_if_nan(costs["self_host_usd_month"][()]) if fits_traffic and s.usd_hr is not None else None
    api_month = float(costs["api_usd_month"][()])
    units = traffic.unit_costs(s, cap, costs)
    if not fits_traffic:
        verdict: str | None = "does not fit"
    elif self_host is None:
        verdict = None
    else:
        verdict = "self-host" if self_host < api_month else "api"
    R = float(traffic.requests_month(s))
    thr_batch, thr_tok_s = traffic.max_throughput(s)
    acc = accuracy(s)
    # The capacity band's two ends (docs/calibration.md section 6): the busy time per request at 1/(1 + b) and
    # 1 + b times the model's, and the replicas and bills that follow; the bill's range and the best option there.
    band_ends = []
    if fits_traffic and acc.band_pct is not None:
        widen = 1 + acc.band_pct / 100
        for f in (1 / widen, widen):
            cap_f = cap.slower(f)
            band_ends.append((cap_f, traffic.monthly_costs(s, s.req_day, cap_f)))
    # The published rows kept out of the fit, where they put the figure that sizes the replicas (full-load
    # throughput, else the decode step) further on the flattering side than the band: the bill at that error.
    # (the scenario's own set-up's where 10 or more kept-out rows measured it and put it further off)
    kept_band, kept_region = kept_out_capacity(s)
    kept_pct = kept_usd = be_kept = None
    if kept_out_beyond_band(s):
        kept_pct = kept_band["signed_median_pct"]
        if fits_traffic and self_host is not None:
            kept_cap = cap.slower(1 + kept_pct / 100)
            kept_usd = float(traffic.monthly_costs(s, s.req_day, kept_cap)["self_host_usd_month"][()])
            be_kept = traffic.break_even_req_day(s, kept_cap)
    low = high = be_low = be_high = None
    if self_host is not None and band_ends:
        low, high = (float(c["self_host_usd_month"][()]) for _, c in band_ends)
        be_low, be_high = (traffic.break_even_req_day(s, c) for c, _ in band_ends)
    cache_gib = float(model.cache_bytes(s, n)) / model.GiB
    # The rent the link gives against the catalogue's on-demand quotes for the card: the bill at their median where
    # the link's rent is below it (a verdict resting on the cheapest quote is said to, docs/method.md section 7).
    quotes = catalogue.on_demand_quotes(s.card)
    median_rent = float(statistics.median(quotes)) if quotes else None
    median_usd = None
    if median_rent is not None and self_host is not None and s.usd_hr is not None and s.usd_hr < median_rent:
        median_usd = float(traffic.monthly_costs(s.model_copy(update={"usd_hr": median_rent}), s.req_day,
                                                 cap)["self_host_usd_month"][()])

    values: dict[str, Any] = {
        "weights_gib": model.weight_bytes(s) / model.GiB,
        "kv_bytes_per_token": float(model.kv_bytes_per_token(s)),
        "kv_gib_per_sequence": cache_gib,
        "kv_copy_factor": model.kv_copy_factor(s),
        "kv_heads_per_card": model.kv_heads_per_card(s),
        "ctx_used": int(n),
        "free_gib": free / model.GiB,
        "fits": bool(free > 0),
        "max_batch": mb,
        "weights_loaded_gib": mem.weights_loaded_gib,
        "kv_cache_gib": max(0.0, mem.allocated_bytes) / model.GiB,
        "kv_cache_gib_per_card": max(0.0, mem.allocated_gib),
        "kv_tokens": memory.kv_tokens(s, mem),
        "max_concurrency": memory.max_concurrency(s, mem),
        "reserve_gib_per_card": {b.name: b.gib for b in mem.reserve},
        "break_even_batch": be,
        "batch": batch,
        "step_ms": step_s * MS_PER_S,
        "tok_s": tok_s,
        "tok_s_per_seq": 1 / step_s,
        "usd_per_mtok_rent": model.none_if_nan(rent),
        "usd_per_mtok_upkeep": float(upkeep),
        "usd_per_mtok": model.none_if_nan(rent + upkeep),
        "monthly_usd": model.none_if_nan(model.monthly_usd(s)),
        "monthly_rent_usd": model.none_if_nan(model.monthly_rent_usd(s)),
        "duty_used": duty,
        "upkeep_replicas": sharing,
        "memory_caps_batch": bool(be is None or mb < be),
        "comm_ms": float(parts.comm_s) * MS_PER_S,
        "weights_read_gib_per_step": float(model.weight_bytes_read(s, batch)) / model.GiB,
        "kv_read_gib_per_step": s.attn * batch * float(model.cache_bytes_read(s, n)) / model.GiB,
        # What serving the traffic takes: null where nothing can be served (SPEC section 6 nulls every self-hosting
        # figure there; a latency met by a replica that cannot run would read as a set-up that works).
        "serving_batch": cap.serving_batch if fits_traffic else None,
        "serving_tok_s": cap.serving_tok_s if fits_traffic else None,
        "serving_tpot_ms": cap.step_ms if fits_traffic else None,
        "meets_tpot": cap.meets_tpot if fits_traffic else None,
        "ttft_ms": cap.ttft_ms if fits_traffic else None,
        "requests_month": R,
        "tokens_in_month": R * s.in_tok,
        "tokens_out_month": R * s.out_tok,
        "busy_fraction": float(costs["busy_fraction"][()]),
        "replicas": int(costs["replicas"][()]) if fits_traffic else None,
        "duty_traffic": float(costs["busy_fraction"][()] / costs["replicas"][()]) if fits_traffic else None,
        "self_host_usd_month": self_host,
        "api_usd_month": api_month,
        "self_host_usd_per_mtok_out": units.self_host_all_in if self_host is not None else None,
        "api_usd_per_mtok_out": units.api_all_in,
        "verdict": verdict,
        "break_even_req_day": traffic.break_even_req_day(s, cap),
        # The memo's and the Decision page's two other answers, worked out once here (docs/method.md section 7).
        "stays_cheaper_req_day": traffic.stays_cheaper_req_day(s, cap),
        "rent_to_flip_usd_hr": traffic.price_to_flip(s, cap),
        "cheaper_api": (cheaper := cheaper_api_row(s)) and cheaper[0],
        "cheaper_api_usd_month": cheaper and cheaper[1],
        # docs/method.md section 8: the engine, each figure used and where it came from, full load, the error band.
        "engine": s.engine,
        "engine_profile": engines.figures_used(s),
        "max_throughput_tok_s": thr_tok_s,
        "throughput_batch": thr_batch if thr_tok_s is not None else None,
        "run_throughput_tok_s": traffic.run_throughput(s),
        "error_band": (band := engines.error_band(s.engine)),
        "error_band_from": engines.figures_of(s.engine) if band else None,
        "error_band_kept_out": (kept := kept_out_bands(s.engine)),
        "error_band_kept_out_from": kept_out_source(s.engine) if kept else None,
        "capacity_measured": acc.measured,
        "capacity_band_pct": acc.band_pct,
        "capacity_band_from": acc.widened_from,
        "capacity_band_region_rows": acc.region_rows,
        "self_host_usd_month_low": low,
        "self_host_usd_month_high": high,
        "replicas_at_band_ends": [int(c["replicas"][()]) for _, c in band_ends] if band_ends else None,
        # Marginal where the API's bill lies within the band's range, or between it and the bill at the error of the
        # rows kept out of the fit where those put the capacity further on the flattering side (docs/calibration.md 6).
        "verdict_marginal": bool(low is not None and verdict in ("self-host", "api")
                                 and low <= api_month <= max(high, kept_usd if kept_usd is not None else high)),
        "break_even_req_day_low": be_low,
        "break_even_req_day_high": be_high,
        "capacity_kept_out_pct": kept_pct,
        "capacity_kept_out_rows": kept_band["n"] if kept_pct is not None else None,
        "capacity_kept_out_region": kept_region and kept_pct is not None,
        "self_host_usd_month_kept_out": kept_usd,
        "break_even_req_day_kept_out": be_kept,
        "rent_median_quote_usd_hr": median_rent,
        "self_host_usd_month_median_rent": median_usd,
        "spec_tok_s": float(spec.tok_s),
        "spec_tpot_ms": float(spec.tpot_s) * MS_PER_S,
        "spec_speedup": float(spec.tok_s) / tok_s,
    }
    reps = int(costs["replicas"][()]) if fits_traffic else None
    opts, own_missing = procure.options(s, cap, reps, implied if fits_traffic else None, self_host, api_month)
    values.update({f.name: getattr(opts, f.name) for f in fields(procure.Options)})
    bills = {"rent": opts.rent_usd_month, "own": opts.own_usd_month, "hybrid": opts.hybrid_usd_month,
             "hybrid_own": opts.hybrid_own_usd_month}
    values["recommendation"] = recommendation(s, verdict, self_host, api_month, cheaper and cheaper[1], opts.best,
                                              bills.get(opts.best),
                                              fits_traffic and values["rent_to_flip_usd_hr"] is None)
    # The best option at either end of the capacity band (docs/calibration.md section 6): marginal when it differs.
    values["best_at_band_ends"] = None
    if band_ends and opts.best is not None:
        ends = []
        for cap_f, c in band_ends:
            reps_f = int(c["replicas"][()])
            sh = model.none_if_nan(c["self_host_usd_month"][()]) if s.usd_hr is not None else None
            ends.append(procure.options(s, cap_f, reps_f, float(c["busy_fraction"][()]) / reps_f, sh,
                                        api_month)[0].best)
        values["best_at_band_ends"] = ends
    values["best_marginal"] = bool(values["best_at_band_ends"] and any(b != opts.best
                                                                       for b in values["best_at_band_ends"]))
    warnings = [*what_if(s, implied if fits_traffic else None), *parsed.warnings, *scenario_warnings(s)]
    fleet_cards = int(costs["replicas"][()]) * s.gpus if fits_traffic else 0
    if fleet_cards >= LARGE_FLEET_CARDS and s.upkeep > 0:
        warnings.append(f"a fleet of {fleet_cards:,} cards: the upkeep ({s.upkeep:,.0f} USD a month) is one flat "
                        "figure whatever the fleet's size, so it leaves out the staff, power, space and network a "
                        "fleet this large needs; set upkeep to your own figure before trusting the bill")
    if fits_traffic and not cap.meets_tpot and s.tpot_ms is not None:
        warnings.append(latency_missed(s, cap.step_ms))
    ignored = [k for k, v in (("out_spread", s.out_spread != "none"), ("out_max", bool(s.out_max))) if v]
    if ignored and not s.run_prompts:
        one = len(ignored) == 1
        warnings.append(f"{' and '.join(ignored)} describe{'s' if one else ''} a benchmark run and "
                        f"change{'s' if one else ''} nothing without run_prompts (the requests sent at once); every bill uses steady load")
    elif s.out_max and s.out_spread == "none":
        warnings.append("out_max is the longest reply of an 'exp' spread and changes nothing with out_spread=none "
                        "(every reply out_tok tokens)")
    if fits_traffic and own_missing:
        why = {"card_usd": "(a custom card has no purchase price: give card_usd, USD a card)" if s.card == CUSTOM
               else "(the card preset has no public price)",
               "power_w": "(a custom card has no datasheet power: give power_w, watts a card)"}[own_missing]
        warnings.append(f"owning is not priced: the link has no {own_missing} {why}")
    bad = [k for k, v in values.items() if isinstance(v, float) and not math.isfinite(v)]
    for k in bad:
        values[k] = None
    if bad:
        warnings.append(f"{', '.join(bad)} out of numeric range at these inputs: shown as null")
    made = [part(**{f.name: values.pop(f.name) for f in fields(part)}) for part in PARTS]
    assert not values, f"figures without a part: {sorted(values)}"
    return Evaluation(parsed, *made, capacity=cap, units=units, warnings=tuple(warnings))


def build(parsed: Parsed) -> dict[str, Any]:
    """The report of a parsed link (see :func:`report`)."""
    return evaluate(parsed).report()


def report(link: Link = None) -> dict[str, Any]:
    """The report of docs/method.md section 1 (with the keys of sections 5, 6 and 7).

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
