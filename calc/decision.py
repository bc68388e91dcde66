"""The decision: self-host or API for the link's traffic, and what would flip it (docs/method.md section 7).

Every figure here is computed once, from a scenario and its replica capacity, by :func:`decide`; the
wording of the decision lives in :mod:`calc.memo` and its number formatting in :mod:`calc.words`.
Units: USD per month, requests per day, USD per card-hour, USD per request.
"""

from __future__ import annotations

from dataclasses import dataclass

from . import model, notes, procure, traffic
from .scenario import Scenario


@dataclass(frozen=True)
class Decision:
    """Every figure the verdict rests on (see :func:`decide`)."""

    scenario: Scenario
    report: dict                      # the flat report of the same evaluation
    cap: traffic.Capacity
    fits: bool                        # at least one request of in_tok + out_tok tokens fits beside the weights
    priced: bool                      # the card has a rent (usd_hr)
    verdict: str | None            # "self-host", "api", "does not fit", or None (no rent)
    api_usd_month: float
    self_host_usd_month: float | None
    replicas: int | None
    duty: float | None             # duty_traffic
    break_even: float | None       # first volume where self-hosting is cheaper
    stays_cheaper: float | None    # volume above which self-hosting is cheaper at every volume
    price_to_flip: float | None    # rent per card-hour where both cost the same at this volume
    api_per_request: float
    rent_per_request: float | None  # one replica's rent per request when it runs at its busiest-hour capacity
    units: traffic.UnitCosts
    break_even_batch: float | None  # at the request's context, in_tok + out_tok (None: compute never binds)
    memory_caps_batch: bool           # memory holds fewer requests than the break-even batch, at that context
    cheaper_api: tuple[str, float] | None  # the cheapest API row for the model and its bill, when 5 % cheaper
    self_host_low: float | None = None     # the self-hosting bill at the capacity band's fast end (USD/month)
    self_host_high: float | None = None    # ... and at its slow end
    marginal: bool = False                 # the API bill lies inside that range
    capacity_measured: bool = True         # a published row measured this engine x card family x kind x TP
    capacity_band_pct: float | None = None  # the band, per cent (leave-one-source-out, 90th percentile)
    capacity_band_from: str | None = None   # the release family whose wider band stands in for a band of few rows
    capacity_band_region_rows: int | None = None  # the rows of the scenario's own region whose wider band stands in
    kept_out_pct: float | None = None      # the rows kept out of the fit: that figure's error beyond the band
    self_host_kept_out: float | None = None  # ... and the self-hosting bill at it (USD/month)
    api_in_price: float = 0.0              # USD per 1M prompt tokens billed (a long-prompt tier applied)
    api_out_price: float = 0.0             # USD per 1M output tokens billed

    @property
    def capacity_cards(self) -> int | None:
        """Cards in all for the busiest hour (replicas × gpus), None when nothing fits."""
        return None if self.replicas is None else self.replicas * self.scenario.gpus


def decide(s: Scenario, cap: traffic.Capacity, report: dict, units: traffic.UnitCosts) -> Decision:
    """The decision for scenario ``s`` with replica capacity ``cap``, its flat ``report`` (which holds the
    verdict, the two monthly bills and the break-even volume, docs/method.md section 7) and the per-million costs
    the evaluation worked out (``traffic.unit_costs``), read here rather than worked out a second time."""
    api_req, rent_req = traffic.usd_per_request(s, cap)
    return Decision(
        scenario=s, report=report, cap=cap, fits=cap.max_batch > 0, priced=s.usd_hr is not None,
        verdict=report["verdict"], api_usd_month=report["api_usd_month"],
        self_host_usd_month=report["self_host_usd_month"], replicas=report["replicas"],
        duty=report["duty_traffic"], break_even=report["break_even_req_day"],
        stays_cheaper=report["stays_cheaper_req_day"], price_to_flip=report["rent_to_flip_usd_hr"],
        api_per_request=api_req, rent_per_request=rent_req, units=units,
        break_even_batch=(be := model.break_even(s, cap.n)), memory_caps_batch=be is None or cap.max_batch < be,
        cheaper_api=(None if report["cheaper_api"] is None
                     else (report["cheaper_api"], report["cheaper_api_usd_month"])),
        self_host_low=report["self_host_usd_month_low"], self_host_high=report["self_host_usd_month_high"],
        marginal=report["verdict_marginal"], capacity_measured=report["capacity_measured"],
        capacity_band_pct=report["capacity_band_pct"], capacity_band_from=report["capacity_band_from"],
        capacity_band_region_rows=report["capacity_band_region_rows"],
        kept_out_pct=report["capacity_kept_out_pct"], self_host_kept_out=report["self_host_usd_month_kept_out"],
        api_in_price=traffic.api_prices(s)[0], api_out_price=traffic.api_prices(s)[1],
    )


#: Two monthly totals closer than this share of the larger are a tie for a decision: the engine figures behind
#: the self-hosting bill were measured within about 10 to 30 % of published rows (docs/calibration.md).
TIE_SHARE = 0.10


#: The ways to serve the traffic of SPEC section 9 that are neither renting nor the API alone.
OTHER_WAYS = ("own", "hybrid", "hybrid_own")


def recommendation(s: Scenario, verdict: str | None, self_host: float | None, api: float,
                   cheaper_bill: float | None, best: str | None = None, best_usd: float | None = None,
                   no_rent_flips: bool = False) -> str | None:
    """The answer a reader is given (the Decision page's and the memo's headline, the report's ``recommendation``).

    ``verdict`` is renting against the API row priced in the link (SPEC section 6). Where the cheapest way of
    section 9, ``best`` (monthly bill ``best_usd``, USD), is buying or a fleet with the API taking the overflow, that
    way is the answer (one of :data:`OTHER_WAYS`): a reader told "call the API" while buying is cheaper is told the
    wrong thing. ``"api-cheaper-row"`` where the catalogue's cheapest row for the model (``cheaper_bill``) bills more
    than :data:`TIE_SHARE` less than the self-hosting the answer would rest on, while the row priced in the link
    leaves it at self-hosting or a tie (a verdict must not rest on a price nobody has to pay), unless the data may
    not leave (``why=residency``). A card without a rent (``verdict`` None) whose purchase prices buying is answered
    the same way by ``best``; one whose upkeep alone is above the API bill (``no_rent_flips``: no rent, however low,
    makes renting cheaper, :func:`calc.traffic.price_to_flip` None) and that nothing else beats is answered ``"api"``:
    no rent is needed to decide; any other without a rent is :data:`NO_RENT_WORD` (a rent would decide). Else
    ``verdict``. Where a request is longer than the model's trained context, which no
    way serves, :data:`BEYOND_CONTEXT_WORD` whatever the bills."""
    if traffic.request_beyond_context(s):
        return BEYOND_CONTEXT_WORD

    def cheaper_row_beats(host: float) -> bool:
        return (cheaper_bill is not None and not procure.data_stays(s.why)
                and cheaper_bill < (1 - TIE_SHARE) * host)

    if verdict is None and best in ("own", "hybrid_own") and best_usd is not None:
        # No rent for the card, but its purchase price prices buying, and buying beats the API: that is the answer
        # (a reader who opens a buy-only card's link is told what it costs), unless a cheaper row beats it too.
        return "api-cheaper-row" if cheaper_row_beats(best_usd) else best
    if verdict is None and no_rent_flips and best in (None, "api"):
        return "api"
    if verdict is None:  # it runs, but only a rent would decide between renting and the API: why there is no answer
        return NO_RENT_WORD
    if verdict not in ("api", "self-host") or self_host is None:
        return verdict
    # Renting as the cheapest way where the verdict is the API's: the day's profile autoscales the rented fleet,
    # which section 6's fixed fleet for the busiest hour does not.
    other = best if (best in OTHER_WAYS or (best == "rent" and verdict == "api")) and best_usd is not None else None
    host = best_usd if other else self_host
    if (other or verdict == "self-host" or _tied(self_host, api)) and cheaper_row_beats(host):
        return "api-cheaper-row"
    return other or verdict


def _tied(self_host: float | None, api: float | None) -> bool:
    """True when both monthly totals (USD) are known and within :data:`TIE_SHARE` of the larger."""
    return (self_host is not None and api is not None and max(self_host, api) > 0
            and abs(self_host - api) / max(self_host, api) < TIE_SHARE)


def is_tie(d: Decision) -> bool:
    """True when both totals are known and within :data:`TIE_SHARE` of each other."""
    return _tied(d.self_host_usd_month, d.api_usd_month)


#: A table's verdict for requests longer than the model's trained context: neither the cards nor the API take them.
BEYOND_CONTEXT_WORD = "beyond context"
#: The answer for a set-up that runs on a card without a rent where a rent would decide it.
NO_RENT_WORD = "no rent"


def verdict_word(d: Decision) -> str:
    """The verdict in one word for a table: :data:`BEYOND_CONTEXT_WORD` where a request is longer than the model's
    trained context (no bill serves it, however many cards: calc.notes.beyond_trained_context), "tie" where the two
    bills lie within :data:`TIE_SHARE` of each other, else the verdict ("self-host", "api", "does not fit"), or
    "no rent" for a card without one."""
    if notes.beyond_trained_context(d.scenario):
        return BEYOND_CONTEXT_WORD
    return "tie" if d.verdict in ("api", "self-host") and is_tie(d) else d.verdict or NO_RENT_WORD
