"""Procurement (SPEC section 9): rent, buy, call the API, or run a fleet for the base load and send the overflow to
the API, each as a monthly total, from the capacity the traffic model worked out.

Units: USD, months, hours. Every figure here sits beside the rent-or-API verdict of section 6, which it does not
change. Owning pays the cards and their servers off as an annuity over the service life (capital recovery
factor), plus the power they draw at the replicas' duty and any rack space; mixing serves, hour by hour of the
day's profile, what a fleet of N replicas can and sends the rest to the API, at the N with the smallest total.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike

from . import model, traffic
from .scenario import Scenario, day_weights
from .units import HOURS_PER_DAY, SECONDS_PER_HOUR

#: The options in the order a tie is broken (SPEC section 9).
OPTIONS = ("api", "rent", "own", "hybrid", "hybrid_own")


@dataclass(frozen=True)
class Options:
    """The monthly total of each way to serve the traffic, and what the best one is (SPEC section 9). USD a month
    unless named otherwise; None where an option cannot be priced or has nothing to do."""

    rent_usd_month: float | None
    own_usd_month: float | None
    own_capex_usd: float | None          # cards and servers bought at the start
    own_capital_usd_month: float | None  # bought*K: the purchase as an annuity, less the resale value
    own_power_usd_month: float | None    # replicas*g*E at the replicas' duty, plus the spare cards' idle power
    own_cards_bought: int | None         # replicas*g rounded up to whole units of buy_lot
    payback_months_rent: float | None
    payback_months_api: float | None
    hybrid_replicas: int | None
    hybrid_usd_month: float | None
    hybrid_api_share: float | None
    hybrid_own_replicas: int | None
    hybrid_own_usd_month: float | None
    best: str | None


def capital_recovery(wacc: float, years: float) -> float:
    """Capital recovery factor ``wacc*(1+wacc)^years / ((1+wacc)^years - 1)``, ``1/years`` at ``wacc = 0``: the
    share of a sum paid each year to repay it with interest over ``years``."""
    if wacc == 0:
        return 1 / years
    # (1+wacc)^years - 1 through expm1/log1p, exact for a tiny rate too
    return wacc * (1 + wacc) ** years / math.expm1(years * math.log1p(wacc))


def capital_per_card_month(s: Scenario) -> float | None:
    """``K = (C - S*(1+wacc)^-years) * CRF / 12`` with ``C = card_usd*(1 + server_frac)`` paid per card and
    ``S = residual*C`` recovered at the end; None without a ``card_usd``."""
    if s.card_usd is None:
        return None
    paid = s.card_usd * (1 + s.server_frac)
    back = s.residual * paid * (1 + s.wacc) ** (-s.years)
    return (paid - back) * capital_recovery(s.wacc, s.years) / 12


def power_per_card_month(s: Scenario, duty: float) -> float | None:
    """``E = power_w/1000 * (idle_frac + (1 - idle_frac)*duty) * pue * usd_kwh * hours`` USD a month at the
    replicas' ``duty``; None without a ``power_w``."""
    if s.power_w is None:
        return None
    return s.power_w / 1000 * (s.idle_frac + (1 - s.idle_frac) * duty) * s.pue * s.usd_kwh * s.hours


def own_missing(s: Scenario) -> str | None:
    """The key owning needs and the scenario lacks (``card_usd``, else ``power_w``), or None where it is priced."""
    return "card_usd" if s.card_usd is None else "power_w" if s.power_w is None else None


def is_mix(fleet_replicas: int | None, replicas: int) -> bool:
    """Whether the cheapest fleet beside the API (SPEC section 9) mixes the two: neither none (the API alone) nor
    the whole fleet (the fleet alone), which are options of their own."""
    return fleet_replicas not in (None, 0, replicas)


def cards_bought(s: Scenario, cards_used: ArrayLike) -> np.ndarray:
    """The cards bought for ``cards_used`` cards in use (array): rounded up to whole units of ``buy_lot`` (an SXM or
    OAM card is sold on its baseboard, docs/method.md section 7.8)."""
    lot = s.buy_lot
    return np.ceil(np.asarray(cards_used, dtype=float) / lot - 1e-9) * lot


def own_month(s: Scenario, cards_used: ArrayLike, duty: ArrayLike) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """What owning costs a month for ``cards_used`` cards in use at ``duty`` (arrays of one shape), before the
    upkeep: ``(total, capital, power)`` in USD. The cards bought (:func:`cards_bought`) pay their capital ``K`` and
    rack space; those in use their power at the duty, the spare ones of a unit their idle power (they sit in the same
    powered server). Needs ``card_usd`` and ``power_w`` (capital_per_card_month, power_per_card_month)."""
    used = np.asarray(cards_used, dtype=float)
    bought = cards_bought(s, used)
    capital = bought * capital_per_card_month(s)
    power = used * power_per_card_month(s, duty) + (bought - used) * power_per_card_month(s, 0.0)
    return capital + power + bought * s.colo_usd, capital, power


def data_stays(why: str | None) -> bool:
    """True when the link's reasons (``why``) say the data may not leave the company (``residency``): the API
    and the mixed options are then not allowed."""
    return why is not None and "residency" in why.split(",")


#: The options left when the data may not leave.
IN_HOUSE = ("rent", "own")


def hour_demand(s: Scenario, cap: traffic.Capacity) -> tuple[float, np.ndarray | None]:
    """(requests one replica serves in an hour, ``3600 / s_req``; the requests of each hour of the day, shape (24,),
    ``req_day * w_h / sum(w)`` from the day's ``profile``, or None without one)."""
    weights = day_weights(s.profile)
    per_hour = SECONDS_PER_HOUR / cap.s_req
    return per_hour, None if weights is None else s.req_day * np.asarray(weights, dtype=float) / sum(weights)


def replicas_on(s: Scenario, r_h: np.ndarray, per_hour: float, replicas: ArrayLike) -> np.ndarray:
    """Replicas running in each hour of a rented fleet of ``replicas``: all of them, or under ``autoscale`` the
    fewest that serve the hour, ``min(replicas, max(min_replicas, ceil(r_h / per_hour)))`` (SPEC section 9).
    ``r_h`` has shape (24,); ``replicas`` a number, or a column (n, 1) of fleet sizes for an (n, 24) result."""
    replicas = np.asarray(replicas, dtype=float)
    if not s.autoscale:
        return replicas * np.ones_like(r_h, dtype=float)
    need = np.ceil(r_h / per_hour - 1e-9)
    return np.minimum(replicas, np.maximum(s.min_replicas, need))


@dataclass(frozen=True)
class Hours:
    """The day hour by hour (SPEC section 9), arrays of shape (24,): requests an hour, what the fleet sized for the
    busiest hour serves (its replicas on, times what one serves), and what the cheapest mixed fleet serves and sends
    to the API."""

    requests: np.ndarray
    replicas_on: np.ndarray
    fleet_capacity: np.ndarray
    hybrid_capacity: np.ndarray | None   # None: no mixed option (it would be all API or the whole fleet)
    api_overflow: np.ndarray | None


def hours(s: Scenario, cap: traffic.Capacity, replicas: int | None, hybrid_replicas: int | None,
          owned: bool = False) -> Hours | None:
    """The day hour by hour for a link with a ``profile`` (None without one, or when nothing fits); the mixed fleet
    of ``hybrid_replicas`` is rented (under ``autoscale`` it runs the replicas each hour needs, at most all of them)
    or ``owned`` (bought cards, all on)."""
    if replicas is None or cap.max_batch == 0:
        return None
    per_hour, r_h = hour_demand(s, cap)
    if r_h is None:
        return None
    on = replicas_on(s, r_h, per_hour, replicas)
    if hybrid_replicas in (None, 0, replicas):
        hyb = overflow = None
    else:
        hyb = (np.full(len(r_h), float(hybrid_replicas)) if owned
               else replicas_on(s, r_h, per_hour, hybrid_replicas)) * per_hour
        overflow = np.maximum(0.0, r_h - hyb)
    return Hours(r_h, on, on * per_hour, hyb, overflow)


def _beside_api(s: Scenario, r_h: np.ndarray, per_hour: float, n: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """For fleets of ``n`` replicas (int array, shape (m,)) each serving what it can of each hour's requests ``r_h``
    (24,) and the API the rest: the requests each fleet serves in each hour, shape (m, 24), and the API's part of the
    monthly bill for the rest, USD, shape (m,)."""
    served = np.minimum(r_h[None, :], n[:, None] * per_hour)
    api_part = s.hours / HOURS_PER_DAY * (r_h[None, :] - served).sum(axis=1) * traffic.api_usd_per_request(s)
    return served, api_part


def _cheapest_owned_mix(s: Scenario, r_h: np.ndarray, per_hour: float, replicas: int,
                        edges: np.ndarray) -> tuple[int, float]:
    """The owned fleet of 0 to ``replicas`` replicas beside the API with the least monthly bill (SPEC section 9;
    the smallest such fleet where several tie) and that bill, USD. ``r_h`` (24,) the requests of each hour,
    ``per_hour`` what one replica serves in an hour, ``edges`` the sorted fleet sizes where the bill bends with the
    traffic (between two of them every hour is served in full or by every replica: the bill is linear there).

    Cards are bought in whole ``buy_lot`` units, so the bill also steps up where the fleet needs one unit more.
    The steps repeat every ``P = buy_lot / gcd(gpus, buy_lot)`` replicas (the spare cards of the last unit come
    round again), so between two edges the bill of the sizes ``N, N + P, N + 2P, ...`` is linear and least at the
    first or last of them: the first and last ``P`` sizes between each pair of edges are priced, at most a few
    thousand whatever the fleet, and no size that could be cheapest is left out."""
    g = s.gpus
    period = s.buy_lot // math.gcd(g, s.buy_lot)
    lo, hi = edges[:-1, None], edges[1:, None]
    step = np.arange(period)[None, :]
    n = np.concatenate([edges, np.clip(lo + step, lo, hi).ravel(), np.clip(hi - step, lo, hi).ravel()])
    n = np.unique(np.clip(n, 0, replicas).astype(np.int64))
    served, api_part = _beside_api(s, r_h, per_hour, n)
    with np.errstate(invalid="ignore", divide="ignore"):
        duty_n = np.where(n >= 1, served.sum(axis=1) / (HOURS_PER_DAY * n * per_hour), 0.0)
    total = own_month(s, n * g, duty_n)[0] + (n >= 1) * s.upkeep + api_part
    i = int(np.argmin(total))
    return int(n[i]), float(total[i])


def options(s: Scenario, cap: traffic.Capacity, replicas: int | None, duty_traffic: float | None,
            self_host_usd_month: float | None, api_usd_month: float) -> tuple[Options, str | None]:
    """Every option of SPEC section 9 for the scenario, given the traffic's capacity ``cap`` (section 6), the
    replicas for the busiest hour and their duty, and the section-6 bills (``self_host_usd_month`` None when
    unpriced); with the key an owned option needs and the link lacks (``card_usd``, ``power_w``), or None."""
    residency = data_stays(s.why)
    # A request longer than the model's trained context is served by no option: the bills are priced as if it were
    # (the pages say so loudly), but none is the best.
    beyond = traffic.request_beyond_context(s)
    if cap.max_batch == 0 or replicas is None:
        return Options(*([None] * 13), best=None if residency or beyond else "api"), None
    g, hours = s.gpus, s.hours
    rent_hr = model.rent_usd_hr(s)
    priced = s.usd_hr is not None
    per_hour, r_h = hour_demand(s, cap)

    rent = self_host_usd_month
    if priced and r_h is not None and s.autoscale:
        replica_hours = float(replicas_on(s, r_h, per_hour, replicas).sum())
        rent = replica_hours * hours / HOURS_PER_DAY * g * rent_hr + s.upkeep

    missing = own_missing(s)
    own = capex = capital = power = pay_rent = pay_api = bought = None
    if missing is None:
        total, capital_a, power_a = own_month(s, replicas * g, duty_traffic)
        bought = int(cards_bought(s, replicas * g))
        own = float(total) + s.upkeep
        capex = bought * s.card_usd * (1 + s.server_frac)
        capital, power = float(capital_a), float(power_a)
        running = own - capital
        if rent is not None and rent - running > 0:
            pay_rent = capex / (rent - running)
        if api_usd_month - running > 0:
            pay_api = capex / (api_usd_month - running)

    hyb = hyb_n = share = hyb_own = hyb_own_n = None
    if r_h is not None:
        # Every fleet size from none to the replicas could be priced, but the rented bill is linear in N between the
        # sizes that just serve one hour's requests (r_h / per_hour, rounded either way), so its least is at one of
        # those, at an end or at one replica (where the upkeep starts): only they are priced (np.argmin then finds
        # the smallest size of the least bill, as over every size), and millions of replicas cost no memory. (The
        # owned bill also steps by the baseboard: _cheapest_owned_mix prices more sizes between these.)
        # Under autoscale a rented fleet of N runs min(N, max(min_replicas, ceil(need))) replicas an hour, the fleet
        # sized for the busiest hour being the autoscaled rent; its bill bends at min_replicas too.
        edges = np.concatenate(([0, 1, replicas, s.min_replicas], np.floor(r_h / per_hour), np.ceil(r_h / per_hour)))
        N = np.unique(np.clip(edges, 0, replicas).astype(np.int64))  # sorted
        if priced:
            served, api_part = _beside_api(s, r_h, per_hour, N)
            rented_hours = replicas_on(s, r_h, per_hour, N[:, None]).sum(axis=1) * hours / HOURS_PER_DAY
            total = rented_hours * g * rent_hr + (N >= 1) * s.upkeep + api_part
            best_i = int(np.argmin(total))
            hyb_n = int(N[best_i])
            hyb, share = float(total[best_i]), float((r_h - served[best_i]).sum() / r_h.sum())
        if missing is None:
            hyb_own_n, hyb_own = _cheapest_owned_mix(s, r_h, per_hour, replicas, N)

    bills = {"api": api_usd_month, "rent": rent, "own": own,
             "hybrid": hyb if is_mix(hyb_n, replicas) else None,
             "hybrid_own": hyb_own if is_mix(hyb_own_n, replicas) else None}
    allowed = IN_HOUSE if residency else OPTIONS
    candidates = [(bills[o], i, o) for i, o in enumerate(OPTIONS) if o in allowed and bills[o] is not None
                  and math.isfinite(bills[o])]
    best = min(candidates)[2] if candidates and not beyond else None
    return Options(rent, own, capex, capital, power, bought, pay_rent, pay_api, hyb_n, hyb, share, hyb_own_n,
                   hyb_own, best), missing
