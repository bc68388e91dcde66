"""Which cards to get: the fleet planner (SPEC section 9's options over the catalogue).

For the link's model and traffic, every card preset x cards per replica (1, 2, 4, 8) x each weight format the
user allows is evaluated as its own link (the link with ``card``, ``gpus`` and ``weights`` changed, so every
figure a card brings, its memory, peaks, rent, price and power, comes in as the parser resolves it), and the
set-ups where the model fits and the engine accepts the split are ranked by the cheaper of renting and buying
for the busiest hour, those that meet the latency target and hold at the slow end of the capacity band first. Units: USD a month, USD, cards.

Each set-up is one evaluation of the whole chain (memory, decode, capacity, bill, options); a plan of the
default link is about 80 of them.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from . import catalogue
from .evaluate import evaluate
from .notes import CONSUMER_PREFIX, checkpoint_label
from .scenario import Scenario, parse, with_change
from .traffic import request_beyond_context

#: Cards per replica the planner tries (tensor parallel within one server).
TP_SIZES = (1, 2, 4, 8)


@dataclass(frozen=True)
class PlanRow:
    """One set-up of the plan: a card preset, cards per replica and a weight format, for the link's traffic."""

    card: str
    card_name: str
    gpus: int
    weights: str                     # the weight format, with the parts stored otherwise (notes.checkpoint_label)
    replicas: int
    cards: int
    rent_usd_month: float | None     # the fleet for the busiest hour, rented (None: the card has no rent)
    own_usd_month: float | None      # ... bought (None: no public purchase price or board power)
    own_capex_usd: float | None
    best_usd_month: float            # the cheaper of the two
    best: str                        # "rent" or "own"
    meets_tpot: bool                 # the latency target is met (always, without one)
    memory_caps_batch: bool          # memory holds fewer requests than compute could batch
    max_batch: int                   # requests that fit in memory at once, per replica
    capacity_measured: bool          # a published row measured this engine on this card family, kind and size
    holds_at_band: bool              # the same replicas carry the traffic at the slow end of the capacity band
    link: str                        # the set-up's own link (query string)


#: The planner's money fields, which a table or CSV gives to the cent.
MONEY_FIELDS = ("rent_usd_month", "own_usd_month", "own_capex_usd", "best_usd_month")


def to_cents(row: dict) -> dict:
    """A plan row (as a dict) with its money fields rounded to the cent, as a CSV or a table shows them."""
    return {k: (round(v, 2) if k in MONEY_FIELDS and v is not None else v) for k, v in row.items()}


def plan(s: Scenario, formats: Sequence[str] | None = None,
         sizes: Sequence[int] = TP_SIZES) -> list[PlanRow]:
    """Every card preset x ``sizes`` cards per replica x ``formats`` (default: the scenario's own weight format)
    for the scenario's model and traffic, ranked by :func:`rank_key` (those that meet the latency target and hold at
    the slow end of the capacity band first, then by ``best_usd_month``, then fewer cards). Set-ups that do not
    fit, that the engine refuses (a tensor-parallel size that does not divide the heads) or that neither rent
    nor purchase price can be priced are left out; none where a request is longer than the model's trained context,
    which no card serves (:func:`calc.traffic.request_beyond_context`)."""
    if request_beyond_context(s):
        return []
    base = s.to_params()
    rows = []
    for fmt in dict.fromkeys(formats or [s.weights]):
        with_fmt = base if fmt == s.weights else with_change(base, "weights", fmt)
        for card_id, card in catalogue.cards().items():
            # The link's own card keeps the link's figures for it (a rent quote, buy_lot); another card brings its own.
            with_card = with_fmt if card_id == s.card else with_change(with_fmt, "card", card_id)
            for g in sizes:
                parsed = parse(with_change(with_card, "gpus", g))
                if parsed.errors:
                    continue
                ev = evaluate(parsed)
                r = ev.flat
                if not r["fits"] or r["replicas"] is None:
                    continue
                bills = {k: v for k, v in (("rent", r["rent_usd_month"]), ("own", r["own_usd_month"]))
                         if v is not None}
                if not bills:
                    continue
                best = min(bills, key=lambda k: (bills[k], k != "rent"))
                rows.append(PlanRow(card_id, card["name"], g, checkpoint_label(parsed.scenario), r["replicas"],
                                    r["replicas"] * g, r["rent_usd_month"], r["own_usd_month"], r["own_capex_usd"],
                                    bills[best], best, r["meets_tpot"], r["memory_caps_batch"], r["max_batch"],
                                    r["capacity_measured"],
                                    # the replicas, not the rent bill: a card with no rent is bought, and must hold too
                                    r["replicas_at_band_ends"] is None
                                    or r["replicas_at_band_ends"][1] <= r["replicas"],
                                    parsed.scenario.to_query()))
    return sorted(rows, key=rank_key)


def rank_key(row: PlanRow) -> tuple:
    """The plan's order: set-ups that meet the latency target and still carry the busiest hour at the slow end of
    the capacity band first, then the cheaper bill, then fewer cards. A set-up that is cheapest only while the
    engine runs as fast as its fitted figures (Holds unticked) would need one more replica if it runs at the slow
    end, so it does not rank above one that holds: ranking it first would flatter it."""
    return (not row.meets_tpot, not row.holds_at_band, row.best_usd_month, row.cards, row.card, row.gpus)


def consumer_note(card_ids: Sequence[str]) -> str:
    """A sentence for a plan that ranks consumer cards (names starting with :data:`CONSUMER_PREFIX`): they rank on
    price alone, and their driver's licence excludes datacenter deployment; "" when the plan has none."""
    names = [catalogue.cards()[c]["name"] for c in dict.fromkeys(card_ids)
             if catalogue.cards()[c]["name"].startswith(CONSUMER_PREFIX)]
    if not names:
        return ""
    return (f"{', '.join(names)} {'is a consumer card' if len(names) == 1 else 'are consumer cards'}, ranked here on "
            "price alone: NVIDIA's licence for the GeForce driver excludes datacenter deployment, so check where "
            "they would run (a workstation, an office, a provider that offers them) before planning a fleet on them.")
