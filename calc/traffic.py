"""Traffic, capacity and the API comparison (docs/method.md).

A paged KV cache holds only what each request uses, so everything here is evaluated at
``n = in_tok + out_tok`` rather than the worst-case ``ctx``. Request volumes may be numpy arrays:
:func:`monthly_costs` is vectorised over ``req_day`` for the cost-against-volume chart.

Throughput under full load (docs/method.md section 8, ``docs/method.md`` section 8): ``B`` sequences in flight, as many as
memory holds at ``in_tok + out_tok`` tokens each, capped at the engine's ``max_seqs``. They are spread over their
decode, so a step reads each one's cache at the mean context ``in_tok + out_tok/2``; each step also pays the
all-reduces at the profile's ``eff_link``, the fixed time per step (``model.fixed_step_seconds``) and ``tok_us`` of host time per sequence. Each
request's prefill takes ``t_pf = Fp/Fpf`` plus its prompt's all-reduces of the replica's time on its own. Per request cycle of ``out_tok`` steps the
replica emits ``B*out_tok`` tokens, so ``X(B) = B*out_tok / (out_tok*step_load(B) + B*t_pf)``. Replicas are sized
from ``X`` at the serving batch; under ``engine=roofline`` they follow section 6 exactly (each request's cache
read at its final length, no load terms).
"""

from __future__ import annotations

import heapq
import math
from collections.abc import Mapping
from dataclasses import dataclass, replace

import numpy as np
from numpy.typing import ArrayLike, NDArray

from . import catalogue, memory, model
from .scenario import Scenario
from .units import BILLION, HOURS_PER_DAY, MILLION, MS_PER_S, SECONDS_PER_DAY, SECONDS_PER_HOUR, US


def request_context(s: Scenario) -> int:
    """Tokens a request holds in cache at its end, ``in_tok + out_tok``."""
    return s.in_tok + s.out_tok


def serving_batch(s: Scenario) -> tuple[int, bool]:
    """(Bs, meets_tpot): the batch at the request context, capped by memory, at least 1; with a
    ``tpot_ms`` target, the largest batch up to that whose step meets it (docs/method.md section 7).

    The step time never falls as the batch grows, so the search is a bisection over integers.
    """
    n = request_context(s)
    cap = memory.seqs_cap(s, int(memory.max_batch(s, n)))
    bs = max(1, min(memory.batch_used(s, n), cap))
    if s.tpot_ms is None:
        return bs, True

    def ok(b: int) -> bool:
        return float(model.step_seconds(s, b, n)) * MS_PER_S <= s.tpot_ms

    if not ok(1):
        return 1, False
    lo, hi = 1, bs  # ok(lo) holds; find the largest b <= bs with ok(b)
    if ok(hi):
        return hi, True
    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (mid, hi) if ok(mid) else (lo, mid)
    return lo, True


def prefill_flops(s: Scenario) -> float:
    """Prefill FLOPs of one request: ``2*(Pa - Pe)*in_tok*(1 - h) + a*2*(L - Llin)*H*d*in_tok**2*(1 - h**2)`` with
    ``h = prefix_hit`` (causal attention over the attention layers; the cached prefix is neither recomputed nor
    attended again from itself; MLA uses kv_latent for d; docs/method.md sections 7 and 9)."""
    d = s.kv_latent if s.kv_latent else s.head_dim
    h = s.prefix_hit
    return (2 * (s.active_b * BILLION - model.embed_params(s)) * s.in_tok * (1 - h)
            + s.attn * 2 * (s.layers - s.linear_layers) * s.heads * d * s.in_tok**2 * (1 - h**2))


def load_context(s: Scenario) -> float:
    """Mean tokens a sequence in flight holds under full load, ``in_tok + out_tok/2``: sequences are spread
    evenly over their decode, so the step reads each one's cache at this length on average."""
    return s.in_tok + s.out_tok / 2


def throughput_batch(s: Scenario) -> int:
    """Sequences in flight at full load: as many as memory holds at ``in_tok + out_tok`` tokens each (the cache a
    request needs by its end), capped at ``max_seqs``; 0 when not one fits."""
    return memory.seqs_cap(s, int(memory.max_batch(s, request_context(s))))


def load_step_seconds(s: Scenario, B: ArrayLike) -> NDArray:
    """One decode step of ``B`` sequences at full load: the step of docs/method.md section 8 at the mean context
    (:func:`load_context`), its all-reduces at the profile's ``eff_link`` of the link bandwidth, plus ``tok_us``
    of host time per sequence: ``M(t_mem, t_cmp) + t_comm/eff_link + t_fix + B*tok_us*1e-6`` (``M``:
    ``model.overlapped_seconds``, the roofline's max at ``overlap`` 1; ``t_fix``: ``model.fixed_step_seconds``)."""
    B = np.asarray(B, dtype=float)
    p = model.step_parts(s, B, load_context(s))
    comm = model.comm_seconds(s, B, s.eff_link)
    return model.overlapped_seconds(s, p.memory_s, p.compute_s) + comm + p.fixed_s + B * s.tok_us * US


def expert_prefill_seconds(s: Scenario, idle: bool = False) -> float:
    """The fixed time one request's prefill spends on an MoE model's experts beside their FLOPs (docs/method.md
    section 8): every chunk of up to ``T = max_batched_tokens`` tokens runs each expert it routes to (``E*f(tokens)``,
    :func:`calc.model.expert_coverage`) in each of the ``L`` layers at ``expert_us``. Under load the chunks are full
    and shared, so a request pays its ``in_tok*(1 - h)/T`` share of ``L*E*f(T)*expert_us``; on an idle replica
    (``idle``, the TTFT) its own ``ceil(p/T)`` chunks of its ``p = in_tok*(1 - h)`` tokens. 0 for a dense model."""
    if not s.experts or not s.expert_us:
        return 0.0
    T = s.max_batched_tokens
    p = s.in_tok * (1 - s.prefix_hit)
    if idle:
        chunks = math.ceil(p / T) if p > 0 else 0
        touched = s.experts * float(model.expert_coverage(s, min(p, T)))
    else:
        chunks = p / T
        touched = s.experts * float(model.expert_coverage(s, T))
    return chunks * s.layers * touched * s.expert_us * US


def prefill_seconds(s: Scenario, idle: bool = False) -> float:
    """Time of one request's prefill at the effective peak: ``Fp/Fpf`` (``Fpf`` at ``eff_prefill``, times ``eff_fp4``
    at ``compute=fp4``) plus an MoE model's :func:`expert_prefill_seconds` (under load, or on an idle replica)."""
    return prefill_flops(s) / model.peaks(s).prefill + expert_prefill_seconds(s, idle)


def load_prefill_seconds(s: Scenario) -> float:
    """Replica time one request's prefill takes at full load: ``Fp/Fpf`` plus the all-reduces of its ``in_tok``
    prompt tokens at the profile's ``eff_link`` (their bytes only: the prompt's chunks ride in steps that pay the
    all-reduce latency anyway); 0 extra on one card."""
    prompt_comm = model.comm_seconds(s, s.in_tok, s.eff_link) - model.comm_seconds(s, 0, s.eff_link)
    return prefill_seconds(s) + float(prompt_comm)


def load_throughput(s: Scenario, B: ArrayLike) -> NDArray:
    """Output tokens per second one replica sustains with ``B`` sequences in flight (vectorised over ``B``):
    ``X(B) = B*out_tok / (out_tok*step_load(B) + B*t_pf)``. Each of the ``B`` sequences emits ``out_tok`` tokens
    over ``out_tok`` steps, and its prefill takes ``t_pf`` (:func:`load_prefill_seconds`) of the replica's time
    on its own."""
    B = np.asarray(B, dtype=float)
    return B * s.out_tok / (s.out_tok * load_step_seconds(s, B) + B * load_prefill_seconds(s))


def max_throughput(s: Scenario) -> tuple[int, float | None]:
    """(throughput_batch, max_throughput_tok_s): the sequences in flight at full load and the output tokens per
    second one replica then sustains (docs/method.md section 8); ``(0, None)`` when not one request fits."""
    B = throughput_batch(s)
    return (B, float(load_throughput(s, B))) if B > 0 else (0, None)


def busy_seconds_per_request(s: Scenario, bs: int) -> float:
    """Replica-seconds one request takes at serving batch ``bs``: ``out_tok / X(bs)`` from the throughput model
    (docs/method.md section 8); under ``engine=roofline`` section 6's ``out_tok / tok_s(bs) + Fp/Fpf`` at ``in_tok + out_tok``."""
    if s.engine == "roofline":
        n = request_context(s)
        tok_s = bs / float(model.step_seconds(s, bs, n))
        return s.out_tok / tok_s + prefill_seconds(s)
    return s.out_tok / float(load_throughput(s, bs))


@dataclass(frozen=True)
class Capacity:
    """How one replica (``gpus`` cards) serves the traffic."""

    n: int                   # tokens per request held in cache
    max_batch: int           # sequences that fit at n
    serving_batch: int
    meets_tpot: bool
    step_ms: float           # decode step at the serving batch
    tok_s: float             # decode tokens/s of one replica at the serving batch
    ttft_ms: float           # time to first token on an idle replica
    s_req: float             # busy replica-seconds per request
    x_cap: float             # requests per day one replica serves at the peak factor
    serving_tok_s: float     # output tokens/s of one busy replica on the traffic's requests, prompts included

    def slower(self, f: float) -> Capacity:
        """The replica at ``f`` times the busy seconds per request, so ``1 / f`` times the requests a day it serves:
        the capacity at an error of the engine's figures (docs/calibration.md sections 5 and 6)."""
        return replace(self, s_req=self.s_req * f, x_cap=self.x_cap / f)


def capacity(s: Scenario) -> Capacity:
    """Serving batch, step time, TTFT and busy seconds per request (docs/method.md)."""
    n = request_context(s)
    bs, meets = serving_batch(s)
    step = float(model.step_seconds(s, bs, n))
    tok_s = bs / step
    ttft_ms = (max(prefill_seconds(s, idle=True), model.resident_weight_seconds(s)) * MS_PER_S
               + float(model.comm_seconds(s, s.in_tok)) * MS_PER_S + float(model.fixed_step_seconds(s, s.in_tok)) * MS_PER_S)
    s_req = busy_seconds_per_request(s, bs)
    return Capacity(n, int(memory.max_batch(s, n)), bs, meets, step * MS_PER_S, tok_s, ttft_ms, s_req,
                    SECONDS_PER_DAY / (s.peak * s_req), s.out_tok / s_req)


def busiest_in_flight(s: Scenario, cap: Capacity, replicas: int) -> float:
    """Requests one replica holds at once in the busiest hour, by Little's law: ``lambda*T`` with arrivals
    ``lambda = req_day*peak/86400/replicas`` per second, each resident for its TTFT plus ``out_tok`` decode steps,
    which run in the share of the replica's time the prompts leave, ``1 - lambda*t_pf`` (``t_pf``
    :func:`load_prefill_seconds`): ``T = ttft + out_tok*step(Bs)/(1 - lambda*t_pf)``, with the step at the serving
    batch (an upper bound: a smaller batch steps faster). Capped at the serving batch, which it reaches where the
    prompts take the whole replica. Below it, the traffic leaves a replica's steps part-filled even at its busiest
    (docs/method.md section 9.1)."""
    arrivals_s = s.req_day * s.peak / SECONDS_PER_DAY / max(int(replicas), 1)
    decode_share = 1 - arrivals_s * load_prefill_seconds(s)
    if decode_share <= 0:
        return float(cap.serving_batch)
    resident_s = (cap.ttft_ms + s.out_tok * cap.step_ms / decode_share) / MS_PER_S
    return float(min(cap.serving_batch, arrivals_s * resident_s))


def part_filled_batch(s: Scenario, cap: Capacity, replicas: int | None) -> tuple[float, int] | None:
    """Where the busiest hour leaves each replica's serving batch part-filled: the requests a replica then holds
    (:func:`busiest_in_flight`) and the whole batch they make, ``ceil`` of it and at least 1; None where that batch
    is the serving batch, or where nothing is served (``replicas`` None)."""
    if replicas is None:
        return None
    held = busiest_in_flight(s, cap, replicas)
    batch = max(1, math.ceil(held))
    return None if batch >= cap.serving_batch else (held, batch)


def replicas_needed(s: Scenario, s_req: float, req_day: ArrayLike) -> tuple[NDArray, NDArray]:
    """(busy fraction u, replicas) for ``req_day`` requests a day: ``u = R*s_req/(hours*3600)`` with
    ``R = req_day*hours/24``; ``replicas = max(1, ceil(u*peak - 1e-9))``."""
    req_day = np.asarray(req_day, dtype=float)
    u = req_day * s.hours / HOURS_PER_DAY * s_req / (s.hours * SECONDS_PER_HOUR)
    return u, np.maximum(1, np.ceil(u * s.peak - 1e-9))


def requests_month(s: Scenario, req_day: ArrayLike | None = None) -> NDArray:
    """Requests per month, ``R = req_day*hours/24`` (``req_day`` defaults to the scenario's)."""
    return np.asarray(s.req_day if req_day is None else req_day, dtype=float) * s.hours / HOURS_PER_DAY


def api_tier(s: Scenario) -> Mapping | None:
    """The long-prompt tier of the scenario's API row (its catalogue row), or None when it has none."""
    row = catalogue.apis().get(s.api)
    return row if row is not None and row["tier_above_tok"] is not None else None


def api_prices(s: Scenario, row: Mapping | None = None) -> tuple[float, float]:
    """(input, output) USD per 1M tokens that one request of the scenario is billed at.

    A request whose prompt exceeds the row's long-prompt threshold (``in_tok > tier_above_tok``) is
    billed entirely at the tier's prices, as the providers bill it (docs/method.md section 8); the tier comes from
    the catalogue row even when the link sets its own ``api_in``/``api_out``, which price the requests
    at or below the threshold. ``row``: another API price row (catalogue.apis) to bill the same request at,
    with its own prices and tier; None for the scenario's own.
    """
    tier = api_tier(s) if row is None else (row if row["tier_above_tok"] is not None else None)
    if tier is not None and s.in_tok > tier["tier_above_tok"]:
        return tier["tier_api_in"], tier["tier_api_out"]
    return (s.api_in, s.api_out) if row is None else (row["api_in"], row["api_out"])


def api_usd_per_request(s: Scenario, row: Mapping | None = None) -> float:
    """API cost of one request, USD: ``((1 - h)*in_tok*p_in + h*in_tok*api_cached + out_tok*p_out)/1e6`` at
    :func:`api_prices`, ``h = prefix_hit``. ``row``: another API price row to bill the same request at (its
    prices, tier and cached-input price); None for the scenario's own prices.

    The one place the API is priced: the monthly bill, the break-even load, every per-request figure and the
    comparison with the other rows of a model family use it.
    """
    p_in, p_out = api_prices(s, row)
    p_cached = s.api_cached if row is None else catalogue.cached_input_price(row)
    cached = s.prefix_hit * s.in_tok  # billed at the cached-input price (docs/method.md section 9)
    return ((s.in_tok - cached) * p_in + cached * p_cached + s.out_tok * p_out) / MILLION


def api_tier_note(s: Scenario) -> str | None:
    """A plain-language note when the scenario's API row has a long-prompt tier that matters here: the
    prompt is above its threshold, or the link sets its own prices (the tier still applies). None otherwise."""
    tier = api_tier(s)
    if tier is None:
        return None
    above = s.in_tok > tier["tier_above_tok"]
    own = (s.api_in, s.api_out) != (tier["api_in"], tier["api_out"])
    if not (above or own):
        return None
    note = (f"prompts above {tier['tier_above_tok']:,} tokens are billed at {tier['tier_api_in']:g} / "
            f"{tier['tier_api_out']:g} USD per 1M on this row ({s.api})")
    if above:
        note += (f": this scenario's {s.in_tok:,}-token prompts pay those prices for the whole request, "
                 f"not {s.api_in:g} / {s.api_out:g}")
    if own:
        note += "; the api_in / api_out set in the link price only prompts up to that threshold"
    return note


def api_usd_month(s: Scenario, req_day: ArrayLike) -> NDArray:
    """API bill per month: ``R * c_api`` with ``R = req_day*hours/24`` requests and ``c_api`` the cost of one
    request (:func:`api_usd_per_request`; without a long-prompt tier ``(Tin*api_in + Tout*api_out)/1e6``)."""
    return requests_month(s, req_day) * api_usd_per_request(s)


def monthly_costs(s: Scenario, req_day: ArrayLike, cap: Capacity | None = None) -> dict[str, NDArray]:
    """Vectorised over ``req_day``: replicas, self-hosting and API cost per month (USD).

    Self-hosting is NaN where nothing fits or the card has no price.
    """
    cap = cap or capacity(s)
    u, reps = replicas_needed(s, cap.s_req, req_day)
    self_host = model.monthly_usd(s, reps)
    if cap.max_batch == 0:
        self_host = np.full_like(self_host, np.nan)
    return {"req_day": np.asarray(req_day, dtype=float), "busy_fraction": u, "replicas": reps,
            "self_host_usd_month": self_host, "api_usd_month": api_usd_month(s, req_day)}


def _break_even_terms(s: Scenario) -> tuple[float, float]:
    """(k, c_rep): API USD per month per request-per-day, ``c_api*hours/24`` (``c_api`` from
    :func:`api_usd_per_request`), and one replica's monthly rent, ``g*usd_hr*hours`` (docs/method.md section 7).
    Needs a priced card."""
    return api_usd_per_request(s) * s.hours / HOURS_PER_DAY, float(model.monthly_rent_usd(s))


def break_even_req_day(s: Scenario, cap: Capacity | None = None) -> float | None:
    """Requests per day above which self-hosting costs less than the API, or None when it never does.

    With ``k = c_api*hours/24`` per request-per-day, ``c_rep = g*usd_hr*hours`` and one replica's
    capacity ``x_cap``: none when ``k*x_cap <= c_rep``; else ``r = max(1, ceil(upkeep/(k*x_cap - c_rep)))``
    and the answer is ``max((r - 1)*x_cap, (r*c_rep + upkeep)/k)`` (docs/method.md section 7).
    """
    cap = cap or capacity(s)
    if s.usd_hr is None or cap.max_batch == 0:
        return None
    k, c_rep = _break_even_terms(s)
    if k * cap.x_cap <= c_rep:
        return None
    replicas = s.upkeep / (k * cap.x_cap - c_rep)
    if not math.isfinite(replicas):  # a margin too thin to ever pay the upkeep back
        return None
    r = max(1, math.ceil(replicas))
    volume = max((r - 1) * cap.x_cap, (r * c_rep + s.upkeep) / k)
    return volume if math.isfinite(volume) else None


def price_to_flip(s: Scenario, cap: Capacity | None = None) -> float | None:
    """Rent per card-hour (USD) at which self-hosting costs exactly the API at the current volume,
    or None when even free cards lose (upkeep alone exceeds the API bill), nothing fits, or no request can be served
    (:func:`request_beyond_context`: the bills price requests neither side takes, so no rent flips anything)."""
    cap = cap or capacity(s)
    if cap.max_batch == 0 or request_beyond_context(s):
        return None
    reps = float(replicas_needed(s, cap.s_req, s.req_day)[1])
    api = float(api_usd_month(s, s.req_day))
    rent_budget = api - s.upkeep
    if rent_budget <= 0:
        return None
    return rent_budget / (reps * s.gpus * s.hours * (1 - s.discount))  # the quote, before the discount


# ---------------------------------------------------------------- what would flip the verdict


def usd_per_request(s: Scenario, cap: Capacity | None = None) -> tuple[float, float | None]:
    """(API, rent) in USD per request, the two slopes the break-even load compares.

    API: ``c_api`` of :func:`api_usd_per_request` (the long-prompt tier applied). Rent: one replica's monthly
    rent spread over
    the requests it serves when it runs at its busiest-hour capacity, ``c_rep / (x_cap*hours/24)`` with
    ``c_rep = g*usd_hr*hours`` (None when the card has no price or nothing fits). Self-hosting can break
    even only when the API costs more per request than this rent (docs/method.md section 7, ``k*x_cap > c_rep``).
    """
    cap = cap or capacity(s)
    c_api = api_usd_per_request(s)
    if s.usd_hr is None or cap.max_batch == 0:
        return c_api, None
    return c_api, float(model.monthly_rent_usd(s)) / float(requests_month(s, cap.x_cap))


def stays_cheaper_req_day(s: Scenario, cap: Capacity | None = None) -> float | None:
    """Requests per day above which self-hosting is cheaper at every volume, or None when it never is.

    :func:`break_even_req_day` is the first volume where self-hosting gets cheaper. Above it the
    self-hosting cost is a staircase: each added replica adds ``c_rep`` at once while the API bill grows
    smoothly, so the API can win again just after a step. With ``d = k*x_cap - c_rep > 0`` the whole of
    step ``m`` (volumes in ``((m-1)*x_cap, m*x_cap]``, ``m`` replicas) is cheaper once
    ``k*(m-1)*x_cap >= m*c_rep + upkeep``, i.e. from ``m* = max(1, ceil((upkeep + k*x_cap)/d))`` on;
    the API's last stretch ends inside step ``m* - 1`` or at its end:
    ``min((m* - 1)*x_cap, ((m* - 1)*c_rep + upkeep)/k)``. Never below :func:`break_even_req_day`.
    """
    cap = cap or capacity(s)
    first = break_even_req_day(s, cap)
    if first is None:
        return None
    k, c_rep = _break_even_terms(s)
    d = k * cap.x_cap - c_rep
    m = max(1, math.ceil((s.upkeep + k * cap.x_cap) / d - 1e-12))
    last = min((m - 1) * cap.x_cap, ((m - 1) * c_rep + s.upkeep) / k)
    return max(first, last)


@dataclass(frozen=True)
class UnitCosts:
    """USD per million output tokens at the traffic of a scenario (None where it cannot be priced).

    ``rent_at_duty`` and ``rent_at_full`` are the Cost page's formula, ``g*usd_hr/(3600*tok_s*duty)*1e6``
    (:func:`calc.model.cost_per_mtok`, rent only), at the serving batch's decode ``tok_s`` and at the
    implied duty ``duty_traffic`` or at duty 1 (the textbook figure). They count decode time only;
    ``self_host_all_in`` is the whole self-hosting bill (rent of every replica, upkeep) over the month's
    output tokens, which also pays for prefill time and for idle capacity. ``api_all_in`` is the API bill
    (prompt and output tokens) over the same output tokens.
    """

    duty: float | None
    tok_s: float
    rent_at_duty: float | None
    rent_at_full: float | None
    self_host_all_in: float | None
    api_all_in: float


def unit_costs(s: Scenario, cap: Capacity | None = None, costs: dict[str, NDArray] | None = None) -> UnitCosts:
    """Cost per million output tokens at the implied duty, at full duty, and all-in (see :class:`UnitCosts`);
    ``costs``: :func:`monthly_costs` at the link's ``req_day`` and ``cap`` where the caller has it already."""
    cap = cap or capacity(s)
    costs = monthly_costs(s, s.req_day, cap) if costs is None else costs
    tokens_out = float(requests_month(s)) * s.out_tok
    api_all_in = float(costs["api_usd_month"]) / tokens_out * MILLION
    if cap.max_batch == 0:
        return UnitCosts(None, cap.tok_s, None, None, None, api_all_in)
    duty = float(costs["busy_fraction"] / costs["replicas"])
    rent = model.cost_per_mtok(s, cap.tok_s, np.array([duty, 1.0]))[0]
    priced = s.usd_hr is not None
    return UnitCosts(
        duty, cap.tok_s,
        float(rent[0]) if priced else None,
        float(rent[1]) if priced else None,
        float(costs["self_host_usd_month"]) / tokens_out * MILLION if priced else None,
        api_all_in,
    )


# ---------------------------------------------------------------- a finite benchmark run (docs/method.md 8.1)

#: The golden ratio's fractional part: request ``i`` of a run takes the length at quantile ``frac((i + 1) * PHI)``,
#: a low-discrepancy order in which long and short replies arrive interleaved, the same on every evaluation.
PHI = (math.sqrt(5.0) - 1.0) / 2.0


def trained_context(s: Scenario) -> int | None:
    """The model preset's trained context in tokens (``max_position_embeddings`` of its config), or None for a
    custom model or a preset without one: the longest request (``in_tok + out_tok``) engines and APIs accept."""
    return model_context(s.model)


def model_context(model_id: str) -> int | None:
    """Model preset ``model_id``'s trained context in tokens (its ``max_ctx``), None for a custom model or a preset
    without one."""
    preset = catalogue.models().get(model_id)
    return preset.get("max_ctx") or None if preset else None


def request_beyond_context(s: Scenario) -> bool:
    """True where a request (``in_tok + out_tok``) is longer than the model preset's trained context
    (:func:`trained_context`): no engine and no API serves it, however many cards. False for a custom model."""
    return beyond_context(s.model, s.in_tok + s.out_tok)


def beyond_context(model_id: str, request_tok: int) -> bool:
    """True where ``request_tok`` tokens are more than model preset ``model_id``'s trained context (its
    ``max_ctx``); False for a custom model or a preset without one. A report's ``scenario`` gives both."""
    limit = model_context(model_id)
    return limit is not None and request_tok > limit


def run_lengths(s: Scenario) -> NDArray:
    """Output lengths (tokens, int64 array of ``run_prompts``) of a finite run's requests in submission order.

    ``out_spread=none``: every reply is ``out_tok`` tokens (a benchmark run with ``--ignore-eos``). ``exp``: the
    replies of a chat dataset (ShareGPT), modelled as exponential: request ``i`` takes ``min(c*(-ln(1 - q_i)),
    cap)`` at ``q_i = frac((i + 1)*PHI)``, ``c`` set so the mean is ``out_tok`` (bisection), ``cap`` = ``out_max``, or
    where that is 0 what the model's trained context leaves beside the prompt (none for a custom model); rounded, at
    least 1. Raises nothing; an empty array when ``run_prompts`` is 0."""
    n = int(s.run_prompts)
    if n == 0:
        return np.zeros(0, dtype=np.int64)
    if s.out_spread == "none":
        return np.full(n, int(s.out_tok), dtype=np.int64)
    q = np.mod((np.arange(n) + 1) * PHI, 1.0)
    raw = -np.log1p(-q)
    room = (trained_context(s) or 0) - s.in_tok  # the trained context beside the prompt
    cap = float(s.out_max) if s.out_max else float(room) if room >= s.out_tok else math.inf
    mean = min(float(s.out_tok), cap)
    lo, hi = 0.0, mean / max(float(raw.mean()), 1e-12) * 64
    for _ in range(200):  # the mean of min(c*raw, cap) rises with c: bisect for the target mean
        c = (lo + hi) / 2
        lo, hi = (c, hi) if np.minimum(c * raw, cap).mean() < mean else (lo, c)
    return np.maximum(1, np.rint(np.minimum(hi * raw, cap))).astype(np.int64)


def run_schedule(lengths: NDArray, slots: int) -> NDArray:
    """Decode steps a finite run spends with each number of sequences in flight (int64 array, index ``b`` from 0 to
    ``slots``): the requests of ``lengths`` (in submission order) are admitted first come, first served into
    ``slots`` places as earlier ones finish (continuous batching), each emitting one token a step."""
    n = len(lengths)
    steps = np.zeros(slots + 1, dtype=np.int64)
    if n == 0 or slots < 1:
        return steps
    # Each place serves its requests back to back: request j starts when the earliest place frees.
    start = np.empty(n, dtype=np.int64)
    heap = [0] * min(slots, n)
    for j, length in enumerate(lengths.tolist()):
        start[j] = heap[0]
        heapq.heapreplace(heap, heap[0] + length)
    end = start + lengths
    # Sequences in flight at step t: started at or before t, not yet ended; counted between event times.
    times = np.unique(np.concatenate([start, end]))
    active = (np.searchsorted(np.sort(start), times[:-1], side="right")
              - np.searchsorted(np.sort(end), times[:-1], side="right"))
    np.add.at(steps, active, np.diff(times))
    return steps


def run_throughput(s: Scenario) -> float | None:
    """Output tokens per second of a finite run of ``run_prompts`` requests submitted at once (docs/method.md 8.1):
    ``sum(L) / (sum_b k_b*step_load(b) + N*t_pf)``, with ``L`` :func:`run_lengths`, ``k_b`` the steps the run spends
    at ``b`` sequences in flight (:func:`run_schedule`, at most :func:`throughput_batch` places) and ``t_pf``
    :func:`load_prefill_seconds`. The ramp (prompts still being admitted) and the tail (the last long replies decoding
    at small batches) are what set it below :func:`max_throughput`. None when ``run_prompts`` is 0 or not one
    request fits."""
    if not s.run_prompts:
        return None
    slots = throughput_batch(s)
    if slots < 1:
        return None
    lengths = run_lengths(s)
    steps = run_schedule(lengths, slots)
    b = np.arange(1, slots + 1)
    seconds = float(np.sum(steps[1:] * load_step_seconds(s, b))) + len(lengths) * load_prefill_seconds(s)
    return float(lengths.sum()) / seconds
