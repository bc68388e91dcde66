"""The decision: the verdict in one sentence, the tables behind it, and a Markdown memo that reproduces it.

Everything here derives from one resolved :class:`calc.Scenario` (docs/method.md) and is
deterministic: no clock, no randomness, no state. The Decision page and ``python -m calc --memo "<link>"``
call the same functions, so the same link gives the same sentence and the same memo, character for
character. Units: USD, requests per day, tokens, milliseconds, GiB (2**30 bytes).
"""

from __future__ import annotations

import math
import os
from collections.abc import Iterable, Sequence
from typing import Any

import pandas as pd

from . import catalogue, engines, memory, model, procure, tables, traffic
from .accuracy import (
    MIN_BAND_ROWS,
    band_text,
    kept_out_band_provenance,
    kept_out_bands,
    kept_out_capacity,
    kept_out_engine,
    kept_out_provenance,
)
from .decision import OTHER_WAYS, TIE_SHARE, Decision, is_tie
from .evaluate import Evaluation, evaluate
from .notes import (
    LATENCY_MISSED,
    api_stand_in,
    beyond_trained_context,
    checkpoint_part_words,
    context_refusal,
    fallback_clause,
    latency_missed,
    mean_context_note,
    other_vllm_release_fits,
    outside_measurements,
    published_run_note,
)
from .scenario import CUSTOM, KEY_TABLE, KEYS, WEIGHT_FORMATS, Parsed, Scenario
from .words import (
    ENGINE_NAMES,
    METRIC_NAMES,
    accuracy_text,
    amount,
    article,
    band_source_text,
    card_name,
    cards_text,
    cell,
    count,
    first_upper,
    hardware_text,
    kv_text,
    model_name,
    money,
    per_day,
    region_band_text,
    sig,
    sig_pair,
    span,
    tokens_text,
    usd,
    volume_text,
    weights_text,
)

#: Where the memo's link points when ``CALC_BASE_URL`` is not set.
DEFAULT_BASE_URL = "http://localhost:8501"


#: Reasons to self-host that no cost figure captures: (id, text). The ids ticked on the Decision page are kept in
#: the link's ``why`` key; the memo lists every reason, ticked ones checked.
REASONS: tuple[tuple[str, str], ...] = (
    ("residency", "Data cannot go to an API provider (data residency, contracts, regulation): only cards we rent "
                  "or own may serve it."),
    ("finetune", "We need a fine-tuned or in-house model that no API provider serves."),
    ("latency", "We need a latency that a network round trip to a provider cannot meet."),
    ("capacity", "We need predictable capacity: no provider rate limits, quotas, outages or model retirements."),
)

# ---------------------------------------------------------------- sentences


def _sentence(text: str) -> str:
    """``text`` with its first letter raised, unless its first word is a name written in lower case on purpose (it
    holds a digit or a hyphen: "gpt-oss-120b", "q4_k_m")."""
    first = text.split(" ", 1)[0]
    if any(c.isdigit() or c in "-_" for c in first):
        return text
    return text[0].upper() + text[1:]


def checkpoint_text(s: Scenario) -> str:
    """The weights as stored, part by part: "bf16 weights (16 bits)", or where parts of the checkpoint are in other
    formats (:func:`calc.notes.checkpoint_part_words`) "int4-g128 weights (4.25 bits; embeddings and LM head in bf16)"; an
    MoE checkpoint whose routed experts are stored otherwise names them first, "mxfp4 routed experts (4.25 bits) and
    bf16 weights elsewhere (16 bits)"."""
    weights = weights_text(s)
    # The routed experts hold most of an MoE checkpoint's bytes: named first, not as an aside to the rest's format.
    lead = bool(s.experts) and s.weights_experts != s.weights and s.weights_experts in WEIGHT_FORMATS
    parts = checkpoint_part_words(s, experts=not lead)
    if lead:
        weights = (f"{s.weights_experts} routed experts ({WEIGHT_FORMATS[s.weights_experts]:g} bits) and "
                   + weights.replace(" weights (", " weights elsewhere (", 1))
    if parts and weights.endswith(")"):
        weights = weights[:-1] + "; " + ", ".join(parts) + ")"
    return weights


def not_served_text(d: Decision) -> str:
    """Why no self-hosting bill exists, in a clause: the requests are longer than the model's trained context, or
    the model (or one request) does not fit as set up."""
    return ("the requests are longer than the model's trained context" if beyond_trained_context(d.scenario)
            else "the model does not fit as set up")


def _does_not_fit(d: Decision) -> str:
    s, r = d.scenario, d.report
    refusal = context_refusal(s)
    if refusal:  # the requests are the reason; memory is beside the point
        return (_sentence(refusal) + ". No bill serves such requests: more cards or memory would "
                f"hold one, but {model_name(s)} would not take it. Shortened to its trained context (the "
                "Levers page's 'Requests within' lever), they can be priced.")
    tail = (f"so self-hosting is not possible as set up; at {per_day(s.req_day)} the API "
            f"costs {money(d.api_usd_month)} a month.")
    fits_named = other_vllm_release_fits(s, d.cap.n)
    if fits_named is not None:  # the unnamed release is charged the leaner accounting: the other one may hold it
        rid, words, kv_gib, held = fits_named
        tail += (f" Under {words} it fits: {kv_gib:,.2f} GiB of KV cache per card, "
                 f"{count(held, 'request')} of {d.cap.n:,} tokens at once; if that is the release you run, name it "
                 f"(engine={rid}).")
    ran = published_run_note(s)
    if ran:  # a measured run of this very set-up says it did fit, at some release: the verdict is in doubt
        tail += f" {ran}."
    if not r["fits"]:
        mem = memory.memory(s)
        larger = mem.larger_share_text()
        return _sentence(f"{model_name(s)} does not fit on {cards_text(s)} with {checkpoint_text(s)}: the weights as "
                         f"loaded and the engine's reserve need {mem.needed_gib:,.1f} GiB per card, more than it "
                         f"takes ({mem.share_text}), " + tail
                         + (f" A larger share of the card would hold it: {larger}." if larger else ""))
    return _sentence(f"{model_name(s)} loads on {cards_text(s)}, but not one request of {d.cap.n:,} tokens fits "
                     f"in the {r['free_gib']:,.1f} GiB left beside the weights, " + tail)


def volume_sentence(d: Decision) -> str:
    """The request volume at which the verdict changes, in words (what to enter where renting is not priced; empty
    where nothing fits). The volumes are against the API row priced in the link, which the sentence says where the
    catalogue's cheaper row is the answer (as the rent bullet does)."""
    text = _volume_sentence(d)
    if text and d.priced and cheaper_api_wins(d):
        text = f"Against the API row priced in the link ({money(d.api_usd_month)} a month), {text[0].lower()}{text[1:]}"
    return text


def _volume_sentence(d: Decision) -> str:
    s = d.scenario
    if not d.fits:
        return ""
    if not d.priced:
        bought = "own_usd_month" in tables.volume_table(d, ())
        return ("Enter a rent to find renting's break-even volume"
                + ("; the monthly cost by volume gives buying's bill beside the API's at each volume." if bought
                   else "."))
    if d.break_even is None:
        a, b = sig_pair(d.api_per_request, d.rent_per_request)
        who = "Renting" if d.report["recommendation"] in BEST_HEADLINE else "Self-hosting"
        # Where the engine's cap on sequences per step binds before memory, that cap is what the verdict rests on.
        held = d.cap.max_batch  # the sequences memory holds at the request's context
        capped = (f", at most {s.max_seqs:,} sequences a step, the engine's cap (max_seqs; memory would hold "
                  f"{held:,})" if s.max_seqs is not None and s.max_seqs < held else "")
        return (f"{who} never breaks even, at any volume: through the API a request costs about {a} USD, "
                f"while card rent alone comes to {b} USD a request even on a replica kept as busy as the busiest "
                f"hour allows{capped}" + (" (a fleet that runs all day: the autoscaled rent above is the day's own)"
                                          if s.autoscale and s.profile else "") + "." + break_even_band_text(d))
    if d.break_even == 0:
        return "Self-hosting is cheaper at every volume."
    be, st = sig(d.break_even, 3), sig(d.stays_cheaper, 3)
    steps = st != be
    text = f"Self-hosting {'first ' if steps else ''}breaks even at about {be} requests a day"
    if steps:
        text += f" and is cheaper at every volume above about {st}"
    if d.verdict == "api" and s.req_day >= d.break_even:
        text += "; at this volume the replica just added tips it back to the API"
    elif d.verdict == "self-host" and not steps:
        text += "; below that the API is cheaper"
    return text + "." + break_even_band_text(d) + break_even_kept_out_text(d)


def break_even_kept_out_text(d: Decision) -> str:
    """Where the published rows kept out of the fit put the capacity further on the flattering side than the band
    (:func:`kept_out_sentence`), the break-even volume at their median error, as a sentence; "" otherwise. A volume
    bullet that said "cheaper at every volume above" beside a verdict that self-hosting costs more than the API at
    that error read as two answers."""
    if d.kept_out_pct is None or d.self_host_kept_out is None or d.break_even is None:
        return ""
    be = d.report["break_even_req_day_kept_out"]
    if be is not None and sig(be, 3) == sig(d.break_even, 3):
        return ""  # the same volume, to the figure shown: nothing to add
    where = ("it would never break even" if be is None else
             f"it would break even at about {sig(be, 3)} requests a day")
    return (f" At the median error of the published rows kept out of the fit (capacity predicted "
            f"{d.kept_out_pct:.0f} % too high), {where}.")


def break_even_band_text(d: Decision) -> str:
    """The break-even volume at the two ends of the capacity band, as a sentence (" At the capacity error
    ... "), or "" without a band; a thin margin shows as an end that never breaks even."""
    if d.capacity_band_pct is None or d.self_host_low is None:
        return ""
    ends = [d.report["break_even_req_day_low"], d.report["break_even_req_day_high"]]
    if ends[0] == ends[1] == d.break_even:
        return ""
    if d.break_even is None:  # never at the model's own figures: only the fast end may break even
        return ("" if ends[0] is None else
                f" At the fast end of the capacity error ({band_text(d.capacity_band_pct)}) it would break even "
                f"at about {sig(ends[0], 3)} requests a day: the margin is too thin to rule self-hosting out at "
                "a higher volume.")
    fast, slow = ("it never breaks even" if v is None else f"about {sig(v, 3)} requests a day" for v in ends)
    return (f" Within the capacity error ({band_text(d.capacity_band_pct)}) the break-even volume is {fast} "
            f"with the replicas at the fast end and {slow} at the slow end"
            + (": the margin is too thin for the figure to be relied on" if ends[1] is None else "") + ".")


def latency_sentence(d: Decision) -> str:
    """A plain note when the latency target cannot be met (empty otherwise)."""
    s = d.scenario
    if not d.fits or d.cap.meets_tpot or s.tpot_ms is None:
        return ""
    return first_upper(latency_missed(s, d.cap.step_ms)) + "."


def in_flight(d: Decision) -> tuple[float, int, float] | None:
    """Where the busiest hour leaves each replica's serving batch part-filled (:func:`calc.traffic.part_filled_batch`):
    the requests a replica then holds, the whole batch that makes, and the time per output token at it (ms); None
    otherwise. The capacity figures are at the serving batch, the most a replica is sized to hold."""
    found = traffic.part_filled_batch(d.scenario, d.cap, d.replicas) if d.fits else None
    if found is None:
        return None
    held, batch = found
    return held, batch, float(model.step_seconds(d.scenario, batch, d.cap.n)) * 1e3


def in_flight_sentence(d: Decision) -> str:
    """:func:`in_flight` in words; "" where the busiest hour fills the serving batch."""
    found = in_flight(d)
    if found is None:
        return ""
    held, batch, step_ms = found
    return (f"At this traffic's busiest hour a replica holds about {held:,.1f} requests at once (Little's law), "
            f"not the {d.cap.serving_batch:,} it is sized for: with {batch:,} in a step, a reply takes about "
            f"{step_ms:,.1f} ms per output token.")


def margin_sentence(d: Decision) -> str:
    """When the two monthly totals are within :data:`TIE_SHARE` of each other, a sentence saying that the
    verdict is a tie at the figures' accuracy (empty otherwise)."""
    if not is_tie(d):
        return ""
    sh, api = d.self_host_usd_month, d.api_usd_month
    gap = abs(sh - api) / max(sh, api)
    return (f"The two differ by {gap:.1%}, inside the {TIE_SHARE:.0%} within which two bills count as a tie here "
            "(the engine's own capacity error, below, may be wider): treat it as a tie, and let the reasons beyond "
            "cost, or a lever on the Levers page, decide.")


def kept_out_whose(engine: str) -> str:
    """Whose figures the rows kept out of the fit tested, as a possessive: "this engine's", or the engine's whose
    efficiencies it shares (calc.accuracy.kept_out_engine)."""
    source = kept_out_engine(engine)
    return "this engine's" if source == engine else f"{ENGINE_NAMES[source]}'s (whose efficiencies it shares)"


def kept_out_sentence(d: Decision) -> str:
    """When the published rows kept out of the fit put the engine's capacity figure (full-load throughput, else the
    decode step) further on the flattering side than the band reaches, what the self-hosting bill would be at their
    median error (docs/calibration.md section 5); "" otherwise."""
    if d.kept_out_pct is None:
        return ""
    b, region = kept_out_capacity(d.scenario)  # the rows of set-ups like this one, where they stand in
    own = d.report["error_band_kept_out_from"] in engines.OWN_KEPT_OUT  # its own releases
    n = d.report["capacity_kept_out_rows"]
    origin = (kept_out_provenance(b.get("rows", ())) if region else
              kept_out_band_provenance(d.report["error_band_kept_out_from"], b["metric"]))
    lead = (f" On {n:,} published row{'s' if n != 1 else ''} "
            f"{'of set-ups like this one ' if region else 'of its own releases ' if own else ''}kept out of the fit "
            f"({origin + '; ' if origin else ''}Validation page), {kept_out_whose(d.scenario.engine)} {METRIC_NAMES.get(b['metric'], b['metric'])} "
            "came out a median "
            f"{d.kept_out_pct:.0f} % too fast, beyond that band")
    if d.self_host_kept_out is None or d.self_host_usd_month is None:
        return lead + ": expect self-hosting to cost more than the band's upper end."
    if d.self_host_kept_out <= d.self_host_usd_month:
        return lead + f"; even at that error the same replicas carry the traffic ({money(d.self_host_usd_month)} a month)."
    flips = d.verdict == "self-host" and d.self_host_kept_out > d.api_usd_month
    return (lead + f"; at that error self-hosting would cost {money(d.self_host_kept_out)} a month"
            + (f", more than the API's {money(d.api_usd_month)}." if flips else "."))


def rent_quote_title(d: Decision) -> str:
    """The heading of :func:`rent_quote_sentence` on the page: below every on-demand quote, or at their low end."""
    quotes = catalogue.on_demand_quotes(d.scenario.card)
    below_all = bool(quotes) and d.scenario.usd_hr is not None and d.scenario.usd_hr < quotes[0]
    return "A rent below every on-demand quote" if below_all else "A rent at the low end of the quotes"


def rent_quote_sentence(d: Decision) -> str:
    """Where self-hosting wins at a rent below the catalogue's median on-demand quote for the card, and would lose to
    the API at that median: a sentence saying so, with the bill there (the report's
    ``self_host_usd_month_median_rent``); "" otherwise. A default rent is a preset, often the cheapest quote."""
    r, s = d.report, d.scenario
    bill, median = r.get("self_host_usd_month_median_rent"), r.get("rent_median_quote_usd_hr")
    if d.verdict != "self-host" or bill is None or bill < d.api_usd_month:
        return ""
    count = len(catalogue.on_demand_quotes(s.card))
    return (f"The rent, {s.usd_hr:,.2f} USD per card-hour, is below the catalogue's median on-demand quote for this "
            f"card ({median:,.2f} USD, {count} quote{'s' if count != 1 else ''}): at that rent self-hosting would cost "
            f"{money(bill)} a month, more than the API's {money(d.api_usd_month)}, so the verdict rests on a rent at "
            "the low end of the quotes.")


def band_sentence(d: Decision) -> str:
    """The self-hosting bill as a range from the engine's cross-validated capacity error, and whether the API's
    bill lies inside it (the verdict is then marginal); empty when it cannot be priced."""
    if d.self_host_low is None or d.self_host_high is None or d.capacity_band_pct is None:
        return ""
    # Which set-up no row measured is said once, with the accuracy (the page's note, the memo's assumptions).
    measured = kept_out_sentence(d)
    widest = "" if d.capacity_measured else ", the engine's widest: no row the figures were fitted to measured such a set-up"
    widened = ("" if d.capacity_band_from is None else
               f"; its own rests on fewer than {MIN_BAND_ROWS} rows, so the band is that of "
               + band_source_text(d.scenario.engine, d.capacity_band_from))
    lead = (f"At the capacity error of set-ups like this one ({band_text(d.capacity_band_pct)}: "
            f"{region_band_text(d.report, d.scenario)}), self-hosting costs " if d.capacity_band_region_rows else
            f"At the engine's capacity error ({band_text(d.capacity_band_pct)}, each source predicted by a fit without "
            f"it{widened}{widest}), self-hosting costs ")
    rng = lead + (f"{money(d.self_host_low)} a month at either end (the same replicas)."
                  if d.self_host_low == d.self_host_high else
                  f"{money(d.self_host_low)} to {money(d.self_host_high)} a month.")
    if d.marginal and d.api_usd_month <= d.self_host_high:
        return rng + f" The API's {money(d.api_usd_month)} lies inside that range: the verdict is marginal." + measured
    if d.marginal:  # beyond the band, within the error of the rows kept out of the fit (said next)
        return (rng + f" The API's {money(d.api_usd_month)} lies above that range but below the bill at the error of "
                "the published rows kept out of the fit: the verdict is marginal." + measured)
    if cheaper_api_wins(d):
        side = "self-hosting" if d.verdict == "self-host" else "the API"
        return (rng + f" Against the link's API row ({money(d.api_usd_month)}), {side} stays the cheaper across that "
                "range." + measured)
    if beyond_trained_context(d.scenario):  # bills priced as if served, with no verdict resting on them
        return rng + " No verdict rests on it: " + not_served_text(d) + "." + measured
    if d.report["recommendation"] in BEST_HEADLINE:  # the answer is another way: this range weighs renting only
        held = (f" Renting stays {'cheaper' if d.verdict == 'self-host' else 'dearer'} than the API across that "
                "range.")
    else:
        held = " The verdict holds across that range."
    return rng + held + measured


def price_stand_in_note(s) -> str:
    """The preset's note when the link's API row is another model's price standing in for the scenario's model,
    or the custom model's stand-in note (:func:`calc.notes.api_stand_in`); "" when the row prices the model."""
    preset = catalogue.models().get(s.model)
    if preset and s.api == preset["api_ref"] and preset.get("api_ref_note"):
        return preset["api_ref_note"]
    return api_stand_in(s)


def stand_in_clause(s: Scenario) -> str:
    """Where the link's API row prices another model standing in for this one (:func:`price_stand_in_note`), a
    parenthesis for the API bill that says whose price it is: " (gpt-oss-120b's price, standing in: the price list
    has no row for GLM-4.5)"; "" when the row prices the model itself."""
    row = catalogue.apis().get(s.api)
    if row is None or not price_stand_in_note(s):
        return ""
    return (f" ({_priced_model(row).split('/')[-1]}'s price, standing in: the price "
            f"list has no row for {model_name(s)})")


def _priced_model(row: dict) -> str:
    """The model an API price row prices, without its provider's prefix ("meta-llama/Meta-Llama-3.1-70B...")."""
    return row["model"].removeprefix(row["provider"] + "/")


def cheaper_row_model(d: Decision) -> str:
    """Whose price the catalogue's cheaper API row is: "this model", or the stand-in model that row prices."""
    if d.cheaper_api is None or not price_stand_in_note(d.scenario):
        return "this model"
    row = catalogue.apis()[d.cheaper_api[0]]
    return f"the stand-in model ({_priced_model(row)})"


def cheaper_api_sentence(d: Decision) -> str:
    """When the catalogue lists a cheaper API row for the same model, a sentence naming it (empty otherwise, and
    where no request can be served: calc.notes.beyond_trained_context)."""
    found = d.cheaper_api
    if found is None or beyond_trained_context(d.scenario):
        return ""
    api_id, bill = found
    row = catalogue.apis()[api_id]
    # The bill the answer would otherwise rest on: renting's, or buying's where the card has no rent.
    host, what = ((d.self_host_usd_month, "self-hosting's") if d.self_host_usd_month is not None
                  else (d.report.get("own_usd_month"), "buying's"))
    wins = (f", less than {what} {money(host)}: at that row the API is the cheaper way to serve this model"
            if cheaper_api_wins(d) and host is not None else "")
    return (f"The catalogue's cheapest row for {cheaper_row_model(d)}, {row['provider']} at {row['api_in']:g} / "
            f"{row['api_out']:g} USD per 1M (api={api_id}), would bill {money(bill)} a month{wins}.")


def cheaper_api_callout(d: Decision) -> tuple[str, str] | None:
    """When the catalogue lists a cheaper API row for the same model, (a sentence for the top of the Decision page
    that says what it bills and whether it changes the verdict, its API id); None otherwise, and where no request
    can be served (a cheaper row for requests no API takes would be advice on a bill nobody can run up), or where the
    data may not leave (why=residency: no API is an option)."""
    found = d.cheaper_api
    if found is None or beyond_trained_context(d.scenario) or residency(d):  # no API is advice where data stays
        return None
    api_id, bill = found
    row = catalogue.apis()[api_id]
    sh = d.self_host_usd_month
    flips = cheaper_api_wins(d) or (sh is not None and d.verdict == "self-host" and bill <= sh)
    best = d.report.get("best")
    below = option_bills(d.report)[best] if best in OTHER_WAYS else None
    if flips and below is not None and below < bill:  # renting loses to the row, the answer (buying, a mix) does not
        after = (f" At that price the API is cheaper than renting the cards ({money(sh)}), but not than "
                 f"{OPTION_WORDS[best]} ({money(below)}), the cheapest way to serve this traffic.")
    elif sh is None and below is not None:  # no rent: buying is what the row is weighed against
        after = (f" {first_upper(OPTION_WORDS[best])} costs {money(below)} a month, "
                 + ("less than that row: it stays the cheapest way to serve this traffic." if below < bill else
                    "more than that row."))
    else:
        after = (" At that price the API is cheaper than self-hosting." if flips else
                 f" Self-hosting costs {money(sh)}." if sh is not None else "")
    note = price_stand_in_note(d.scenario)
    if note:  # the link's row stands in for another model's price, and so does the cheaper row: say whose
        what = f"**A cheaper API row for {cheaper_row_model(d)}:**"
        if d.scenario.model == CUSTOM:  # the custom model's note is a sentence of its own: name the model priced
            near = catalogue.models()[catalogue.nearest_model(d.scenario.active_b)]
            whose = f"{near['name']}'s price, the catalogue model nearest its size"
        else:
            whose = note.removeprefix("stand-in: ")
        after += f" Neither row prices this model itself: the link's is {whose}."
    else:
        what = "**A cheaper API for this model:**"
    return (f"{what} {row['provider']} at {row['api_in']:g} / {row['api_out']:g} USD per "
            f"1M would bill {money(bill)} a month, against {money(d.api_usd_month)} at the row priced here.{after}",
            api_id)


def verdict_sentence(d: Decision) -> str:
    """The verdict in plain words, with the two monthly totals (money to 2 significant figures,
    volumes to 3; more digits only where two different totals would otherwise read the same).

    Example (the defaults): "The API is cheaper: at 10,000 requests a day it costs about 340 USD a month,
    while self-hosting needs 1 H100 SXM 80 GB card and costs about 5,800 USD a month including upkeep.
    Self-hosting first breaks even at about 274,000 requests a day and is cheaper at every volume above
    about 326,000."
    """
    s = d.scenario
    if d.verdict == "does not fit":
        return _does_not_fit(d)
    hw = hardware_text(s, d.replicas)
    bought = d.report["recommendation"] == "own" or (cheaper_api_wins(d) and d.report.get("best") == "own")
    if not d.priced and bought:
        # No rent, but a purchase price: buying is the bill the answer rests on, so it leads.
        r = d.report
        text = (f"{'At the API row priced in the link, b' if cheaper_api_wins(d) else 'B'}uying the cards is cheaper "
                f"than the API: at {per_day(s.req_day)} the API costs {money(d.api_usd_month)} a month, while "
                f"{hw} bought cost {money(r['own_usd_month'])} a month"
                + (f" ({r['own_cards_bought']:,} bought, in units of {s.buy_lot:,})"
                   if r["own_cards_bought"] != d.capacity_cards else "")
                + " (capital, power and upkeep; "
                f"{money(r['own_capex_usd'])} to buy). The catalogue has no rent for this card, so renting is not "
                "priced")
        text += ("." if d.price_to_flip is None else
                 f": renting would cost less than the API below about {d.price_to_flip:,.2f} USD per card-hour "
                 "(enter one in usd_hr to compare).")
        parts = [text]
    elif not d.priced:
        text = (f"At {per_day(s.req_day)} the API costs {money(d.api_usd_month)} a month; self-hosting needs "
                f"{hw}, and the catalogue has no rent for this card.")
        if d.price_to_flip is not None:
            text += (" Enter a rent per card-hour (usd_hr) to compare: self-hosting costs less than the API below "
                     f"about {d.price_to_flip:,.2f} USD per card-hour.")
        else:
            text += (f" No rent is needed to decide: upkeep alone ({sig(s.upkeep)} USD a month) is more than the API "
                     "bill, so no rent would make self-hosting cheaper at this volume.")
        parts = [text]
    else:
        sh, api = money(d.self_host_usd_month), money(d.api_usd_month) + " a month" + stand_in_clause(s)
        if d.verdict == "api" and d.report["recommendation"] in BEST_HEADLINE:  # said after: a cheaper way than both
            first = (f"The API is cheaper than renting: at {per_day(s.req_day)} it costs {api}, while "
                     f"renting needs {hw} and costs {sh} a month including upkeep.")
        elif d.verdict == "api":
            first = (f"The API is cheaper: at {per_day(s.req_day)} it costs {api}, while "
                     f"self-hosting needs {hw} and costs {sh} a month including upkeep.")
        else:
            first = (f"Self-hosting is cheaper: at {per_day(s.req_day)} it needs {hw} and costs {sh} a month "
                     f"including upkeep, while the API costs {api}.")
        rent = d.report.get("rent_usd_month")
        if s.autoscale and rent is not None and d.self_host_usd_month is not None \
                and abs(rent - d.self_host_usd_month) > 0.5:  # SPEC section 6's fleet runs all day; section 9's scales
            cheaper = rent < d.api_usd_month
            crossed = ("" if cheaper == (d.self_host_usd_month < d.api_usd_month) else
                       f", {'less' if cheaper else 'more'} than the API: autoscaled, renting is the "
                       f"{'cheaper' if cheaper else 'dearer'} of the two")
            first = first[:-1] + (f" (a fleet for the busiest hour, all day; scaled to the day's profile, renting "
                                  f"costs {money(rent)} a month{crossed}).")
        if cheaper_api_wins(d):
            first = "At the API row priced in the link, " + first[0].lower() + first[1:]
        if beyond_trained_context(s):  # the bills price requests nobody serves: said as such, not as advice
            first = ("Priced as if they could be served, " + first[0].lower() + first[1:]).replace(
                " is cheaper", " would be cheaper", 1)
        parts = [first, margin_sentence(d), rent_quote_sentence(d), band_sentence(d), volume_sentence(d)]
    parts.insert(0, residency_sentence(d))
    beyond = beyond_trained_context(s)
    if beyond:  # the requests themselves cannot be served: said before any bill (the headline says so)
        parts.insert(0, beyond[0].upper() + beyond[1:] + ".")
    if not (not d.priced and bought):  # else said first, above
        parts.append(options_sentence(d))
    if cheaper_api_wins(d):  # the answer rests on that row: it comes first, the link's row's comparison after
        parts.insert(2 if beyond else 1, cheaper_api_sentence(d))  # after what is said first (residency, context)
    else:
        parts.append(cheaper_api_sentence(d))
    parts.append(latency_sentence(d))
    parts.append(assumed_sentence(d))
    return " ".join(p for p in parts if p)


#: The options of SPEC section 9 in words.
OPTION_WORDS = {"api": "calling the API", "rent": "renting the cards", "own": "buying the cards",
                "hybrid": "a rented fleet for the base load with the API taking the overflow",
                "hybrid_own": "an owned fleet for the base load with the API taking the overflow"}


def residency(d: Decision) -> bool:
    """True when the link says the data may not leave the company's own infrastructure (``why=residency``)."""
    return procure.data_stays(d.scenario.why)


def residency_sentence(d: Decision) -> str:
    """Said first when the data may not leave: the API is not an option, whatever it costs."""
    if not residency(d):
        return ""
    return ("The data may not go to an API provider (why=residency), so the API is not an option: the "
            "comparison with it below is for reference only.")


def marginal_best_text(r: dict, after_cheaper_row: bool = False) -> str:
    """" (marginal: ... )" when the cheapest option differs at an end of the capacity band, else "". The options
    are priced against the link's API row, so ``after_cheaper_row`` (the text follows "the catalogue's cheapest row
    ... bills less than any other way", :func:`cheaper_row_beats_text`) words it as about those others: "; of those,
    X is the cheapest, and within the capacity error Y would be"."""
    if not r.get("best_marginal"):
        return ""
    others = " or ".join(OPTION_WORDS[o] for o in sorted({b for b in r["best_at_band_ends"] if b != r["best"]},
                                                          key=procure.OPTIONS.index))
    if after_cheaper_row:
        return (f"; of those, {OPTION_WORDS[r['best']]} is the cheapest, and at an end of the capacity error {others} "
                "would be the cheapest of them")
    return f" (marginal: within the capacity error, {others} would be cheaper)"


def cheaper_row_beats_text(d: Decision) -> str:
    """": the catalogue's cheapest row ... bills less" where the catalogue's cheapest API row for the model beats every
    way priced against the link's row (the headline's answer, :func:`cheaper_api_wins`), else ""."""
    if not cheaper_api_wins(d) or d.cheaper_api is None:
        return ""
    api_id, bill = d.cheaper_api
    return (f": the catalogue's cheapest row for {cheaper_row_model(d)} ({api_id}) bills {money(bill)} a month, less "
            "than any other way (the others are priced against the API row in the link)")


def ticked_best_text(d: Decision, ticked: str | None) -> str:
    """What follows the option the options table ticks (``ticked``: its key) as the cheapest: where the catalogue's
    cheapest API row wins, why (:func:`cheaper_row_beats_text`); where the tick is that row but the report's ``best``
    is another (the options are priced against the link's row), that the others are; then the marginal remark about
    the options as priced (:func:`marginal_best_text`), so that it never reads as about the ticked row."""
    r = d.report
    row_wins = cheaper_row_beats_text(d)
    if row_wins:
        return row_wins + marginal_best_text(r, True)
    if ticked is not None and ticked != r["best"]:
        return " (the others are priced against the API row in the link)" + marginal_best_text(r, True)
    return marginal_best_text(r)


def option_bills(r: dict) -> dict[str, float | None]:
    """The monthly bill (USD) of each self-hosting option of SPEC section 9 in a report: ``rent``, ``own``,
    ``hybrid``, ``hybrid_own`` (None where it is not priced)."""
    return {"rent": r["rent_usd_month"], "own": r["own_usd_month"], "hybrid": r["hybrid_usd_month"],
            "hybrid_own": r["hybrid_own_usd_month"]}


def options_sentence(d: Decision) -> str:
    """The cheapest of every way to serve the traffic (SPEC section 9), when it is neither of the two compared, or
    when another option would be cheapest within the capacity band."""
    r = d.report
    best = r.get("best")
    if best is None or ((best == "api" or (best == "rent" and d.verdict == "self-host"))
                        and not r.get("best_marginal")):
        return ""
    if best == "api" or (best == "rent" and d.verdict == "self-host"):
        return f"Of every way to serve this traffic, {OPTION_WORDS[best]} is the cheapest{marginal_best_text(r)}."
    bills = option_bills(r)
    row_wins = cheaper_api_wins(d)
    if row_wins:  # not the answer: the cheapest only beside the link's row, which the cheaper row undercuts
        text = (f"Against the API row in the link alone ({money(d.api_usd_month)} a month), the cheapest way to serve "
                f"this traffic would be {OPTION_WORDS[best]}, at {money(bills[best])} a month")
    else:
        text = (f"Of every way to serve this traffic, the cheapest {'allowed ' if residency(d) else ''}is "
                f"{OPTION_WORDS[best]}, at {money(bills[best])} a month")
    if best == "own" and r["own_capex_usd"] is not None:
        text += f" ({money(r['own_capex_usd'])} to buy"
        text += (f", paid back against renting in {r['payback_months_rent']:,.1f} months)"
                 if r["payback_months_rent"] is not None else ")")
    if row_wins:
        text += f", more than the cheaper API row's {money(d.cheaper_api[1])}"
    if residency(d) and best == "rent" and bills["own"] is not None:
        # Rented cards serve only the company, in a cloud it chooses; a rule that keeps the data on its own premises
        # leaves buying.
        text += (f" (rented cards serve the company alone; if the data may not leave the company's own premises, "
                 f"buying them is the option, at {money(bills['own'])} a month)")
    return text + marginal_best_text(r) + "." + (buying_caveats(d) if best in ("own", "hybrid_own") else "")


def buying_caveats(d: Decision) -> str:
    """What the bill of buying assumes, where buying is the answer: rack space at 0 unless ``colo_usd`` is set, power
    counted for the cards and not their servers (SPEC section 9), and the cards bought in whole units of
    ``buy_lot`` (the spare ones of a unit charged too)."""
    s, r = d.scenario, d.report
    out = []
    if not s.colo_usd:
        out.append("rack space and hosting at 0 (set colo_usd for a colocation rate)")
    out.append("power counted for the cards, not their servers")
    used, bought = (r.get("replicas") or 0) * s.gpus, r.get("own_cards_bought")
    if bought is not None and bought > used:
        out.append(f"{bought:,} cards bought in units of {s.buy_lot:,} (buy_lot) for the {used:,} in use, the "
                   f"{bought - used:,} spare paying their capital, rack space and idle power")
    return " Buying is priced with " + "; ".join(out) + "."


def procurement_section(d: Decision) -> list[str]:
    """The memo's section for a procurement thread (SPEC section 9): every way to serve the traffic side by side,
    the cheapest allowed, what buying costs up front and to run, its payback, and the figures owning rests on."""
    r, s = d.report, d.scenario
    if not d.fits:
        return []
    opts = tables.options_table(r)
    why_not = (" (serves no request: beyond the model's trained context)" if beyond_trained_context(s)
               else " (not allowed: the data may not go to an API)")
    rows = [(o.option + ("" if o.allowed else why_not),
             None if o.usd_month is None else amount(o.usd_month),
             None if o.usd_per_mtok_out is None else usd(o.usd_per_mtok_out, 3),
             None if o.replicas is None or o.replicas != o.replicas else f"{int(o.replicas):,}",
             None if o.capex_usd is None or o.capex_usd != o.capex_usd else usd(o.capex_usd, 0),
             o.sensitive_to if isinstance(o.sensitive_to, str) else None)
            for o in opts.itertuples()]
    out = ["## Every way to serve it: the API, renting, buying, or a fleet plus the API", "",
           md_table(["Option", "USD per month", "USD per 1M output tokens", "Replicas", "Purchase (USD)",
                     "Moves most with (each input 10 % higher)"], rows, [False, True, True, True, True, False]), ""]
    ticked = opts[opts["best"]]  # the table's tick: the cheaper API row where it bills least
    lines = []
    if len(ticked):
        best = ticked.iloc[0]
        words = OPTION_WORDS.get(best["key"], best["option"])
        lines.append(f"**Cheapest{' allowed' if residency(d) else ''}:** {words[0].lower() + words[1:]}, "
                     f"{money(best['usd_month'])} a month"
                     f"{marginal_best_text(r) if best['key'] == r['best'] else ' (the others are priced against the API row in the link)' + marginal_best_text(r, True)}.")
    if r["own_usd_month"] is not None:
        running = r["own_usd_month"] - r["own_capital_usd_month"]
        life = s.years * 12
        pay = [f"against {what} in {m:,.1f} months" + (f" (beyond the {life:g}-month service life)" if m > life else "")
               for what, m in (("renting", r["payback_months_rent"]), ("the API", r["payback_months_api"]))
               if m is not None]
        bought, used = r["own_cards_bought"], d.capacity_cards
        lines.append(f"**Buying:** {money(r['own_capex_usd'])} up front for "
                     + (f"{bought:,} cards and their servers" if bought != 1 else "1 card and its server")
                     + (f" ({used:,} in use: bought in units of {s.buy_lot:,}, buy_lot)" if bought > used else "")
                     + f", then {money(running)} a month to run (power {money(r['own_power_usd_month'])}, "
                     f"rack space, upkeep); paid back {' and '.join(pay) if pay else 'against neither renting nor the API'}.")
        card = catalogue.cards().get(s.card)
        source = ("typed in the link" if card is None or card.get("card_usd") != s.card_usd else
                  f"{card['card_usd_source']} (read {card['card_usd_date']})")
        lines.append(f"**Owning rests on:** {money(s.card_usd)} a card ({source}), servers at {s.server_frac:.0%} of "
                     f"the cards, {s.years:g} years of service at {s.wacc:.0%} a year cost of capital, "
                     f"{s.residual:.0%} resale value, {s.power_w:g} W a card idling at {s.idle_frac:.0%}, PUE "
                     f"{s.pue:g}, {s.usd_kwh:g} USD per kWh, "
                     + (f"{money(s.colo_usd)} a card-month of rack space." if s.colo_usd else "no rack-space charge."))
    elif r["replicas"]:
        lines.append("**Buying** is not priced: the card has no public purchase price or board power (Owning the "
                     "cards: card_usd, power_w).")
    if r["hybrid_usd_month"] is None and r["hybrid_own_usd_month"] is None:
        lines.append("A fleet plus the API needs the day's traffic, hour by hour (profile), and a fleet smaller "
                     "than the busiest hour's.")
    return out + [f"- {x}" for x in lines] + [""]


def rent_text(s: Scenario) -> str:
    """The rent priced and how it compares with the catalogue's on-demand quotes for the card:
    "2.50 USD per card-hour, below every on-demand quote in the catalogue (2.69 to 12.29 USD, 8 quotes)"."""
    if s.usd_hr is None:
        return "no rent (none set)"
    text = f"{s.usd_hr:,.2f} USD per card-hour"
    if s.discount:
        text += (f" less a {s.discount:.0%} commitment discount ({model.rent_usd_hr(s):,.2f} USD, paid whether "
                 "the traffic comes or not)")
    quotes = catalogue.on_demand_rents(s.card)
    if quotes is None:
        return text + " (the catalogue has no on-demand quote for this card)"
    lo, hi, count = quotes
    where = ("below every on-demand quote" if s.usd_hr < lo else "above every on-demand quote" if s.usd_hr > hi
             else "within the range of the on-demand quotes")
    return (text + f", {where} in the catalogue ({span(f'{lo:,.2f}', f'{hi:,.2f}')} USD, "
            f"{count} quote{'s' if count != 1 else ''})")


def assumed_sentence(d: Decision) -> str:
    """The assumptions that move the verdict most, said with it: the weight and cache formats priced and the
    rent against the catalogue's quotes."""
    s = d.scenario
    if d.verdict == "does not fit":
        return ""
    weights = checkpoint_text(s)
    text = (f"Priced with {weights}, {article(kv_text(s))} {kv_text(s)} KV cache and {rent_text(s)}, under the "
            f"{ENGINE_NAMES.get(s.engine, s.engine)} engine profile.")
    if api_stand_in(s):
        row = catalogue.apis()[s.api]
        text += (f" The API side uses {row['provider']} · {row['model']} prices as a stand-in for this custom model:"
                 " choose the row of the model you would call.")
    return text


def cheaper_api_wins(d: Decision) -> bool:
    """True when the catalogue's cheapest row for the model bills clearly less than self-hosting (by more than
    :data:`TIE_SHARE`) while the row priced in the link leaves the verdict at self-hosting or a tie: the report's
    ``recommendation`` (:func:`calc.decision.recommendation`), worked out once for the pages, memo and CLI."""
    return d.report["recommendation"] == "api-cheaper-row"


#: Headlines where the cheapest way to serve the traffic (SPEC section 9) is neither renting nor the API alone.
BEST_HEADLINE = {"rent": "Rent the cards, scaled to the day", "own": "Buy the cards",
                 "hybrid": "Rent for the base load, the API for the overflow",
                 "hybrid_own": "Buy for the base load, the API for the overflow"}


def headline(d: Decision) -> str:
    """A two-to-six word verdict for a heading; a margin inside the figures' accuracy is called a tie. A self-host
    or a tie at the link's API row that a cheaper row for the same model turns into the API's says so: a verdict
    must not rest on a price nobody has to pay."""
    if beyond_trained_context(d.scenario):
        return "No request can be served as set"
    if residency(d) and d.verdict in ("api", "self-host"):
        best = d.report.get("best")
        return {"own": "Buy the cards (the data may not go to an API)"}.get(best, "Self-host (the data may not go to an API)")
    if cheaper_api_wins(d):
        return "Call the API, at the cheaper provider below"
    best = d.report["recommendation"]
    if best in BEST_HEADLINE:
        # The verdict is renting against the API (SPEC section 6); a cheaper way of section 9 is what to do.
        if d.report.get("best_marginal"):
            return f"Marginal ({OPTION_WORDS[best]}, inside the capacity error)"
        return BEST_HEADLINE[best] + (" (renting loses to the API)" if d.verdict == "api" and best == "own" else "")
    if d.verdict in ("api", "self-host") and is_tie(d):
        return f"Too close to call ({'self-hosting' if d.verdict == 'self-host' else 'the API'} by a hair)"
    if d.verdict in ("api", "self-host") and d.marginal:
        return f"Marginal ({'self-hosting' if d.verdict == 'self-host' else 'the API'}, inside the capacity error)"
    if d.verdict is None and best == "api":
        # No rent could make renting cheaper (upkeep alone is above the API bill): no rent is needed to decide.
        return "Call the API (no rent would change it)"
    if d.verdict == "does not fit" and (named := other_vllm_release_fits(d.scenario, d.cap.n)) is not None:
        return f"Does not fit (it does under {named[1]})"
    return {"api": "Call the API", "self-host": "Self-host", "does not fit": "Does not fit"}.get(
        d.verdict or "", "Enter a rent to decide")


def rent_flip_text(d: Decision) -> str:
    """The rent per card-hour at which the verdict flips, in words."""
    s = d.scenario
    if not d.fits or beyond_trained_context(s):  # (requests beyond the context: priced as if served, yet none is)
        return f"No rent changes it: {not_served_text(d)}."
    p = d.price_to_flip
    if cheaper_api_wins(d) and p is not None and d.priced:
        return (f"Against the API row priced in the link ({money(d.api_usd_month)} a month), "
                + ("the API becomes cheaper above" if d.verdict == "self-host" else "self-hosting becomes cheaper below")
                + f" {p:,.2f} USD per card-hour (now {s.usd_hr:,.2f}); the cheaper row above is cheaper than "
                "self-hosting at this rent already.")
    if p is None:
        return (f"No rent makes self-hosting cheaper at this volume: upkeep alone ({money(s.upkeep)} a month) is "
                f"more than the API bill ({money(d.api_usd_month)} a month).")
    if not d.priced:
        return f"Self-hosting costs less than the API below {p:,.2f} USD per card-hour (no rent is set)."
    if d.verdict == "self-host":
        return f"The API becomes cheaper above {p:,.2f} USD per card-hour (now {s.usd_hr:,.2f})."
    return f"Self-hosting becomes cheaper below {p:,.2f} USD per card-hour (now {s.usd_hr:,.2f})."


# ---------------------------------------------------------------- tables (page and memo)


def monthly_table(d: Decision) -> pd.DataFrame:
    """Monthly cost at the scenario's volume: columns ``option``, ``usd_month``, ``how``."""
    s = d.scenario
    R = float(traffic.requests_month(s))
    p_in, p_out = traffic.api_prices(s)
    api_how = (f"{tokens_text(R * s.in_tok)} prompt tokens × {p_in:g} + {tokens_text(R * s.out_tok)} output tokens "
               f"× {p_out:g} USD per 1M")
    if s.prefix_hit:
        api_how = (f"{tokens_text(R * s.in_tok * (1 - s.prefix_hit))} prompt tokens × {p_in:g} + "
                   f"{tokens_text(R * s.in_tok * s.prefix_hit)} cached prompt tokens × {s.api_cached:g} + "
                   f"{tokens_text(R * s.out_tok)} output tokens × {p_out:g} USD per 1M")
    if (p_in, p_out) != (s.api_in, s.api_out):
        api_how += f" (prompts above {traffic.api_tier(s)['tier_above_tok']:,} tokens: the long-prompt tier)"
    if not d.fits:
        sh_how = ("no request can be served: beyond the model's trained context" if beyond_trained_context(s)
                  else "does not fit")
    elif not d.priced:
        sh_how = f"{count(d.replicas, 'replica')} × {count(s.gpus, 'card')} × (no rent) × {s.hours:g} h + {s.upkeep:,.0f} upkeep"
    else:
        rent = (f"{s.usd_hr:,.2f} USD/h" if not s.discount else
                f"{s.usd_hr:,.2f} USD/h × (1 − {s.discount:g} commitment discount)")
        sh_how = f"{count(d.replicas, 'replica')} × {count(s.gpus, 'card')} × {rent} × {s.hours:g} h + {s.upkeep:,.0f} upkeep"
    rows = [("Self-hosting", d.self_host_usd_month, sh_how), ("API", d.api_usd_month, api_how)]
    own = d.report.get("own_usd_month")
    if not d.priced and d.fits and own is not None:
        # No rent for the card, but a price to buy it: the bill the answer rests on.
        bought = d.report["own_cards_bought"]
        cards = (f"{count(d.replicas, 'replica')} × {count(s.gpus, 'card')}" if bought == d.capacity_cards else
                 f"{count(bought, 'card')} bought in units of {s.buy_lot:,} for {count(d.capacity_cards, 'card')} "
                 "in use,")
        rows.insert(1, ("Buying the cards", own,
                        f"{cards} paid off over {s.years:g} years at {s.wacc:.0%} + "
                        f"power + {s.upkeep:,.0f} upkeep ({money(d.report['own_capex_usd'])} to buy)"))
    if d.cheaper_api is not None and not beyond_trained_context(s):
        # The catalogue's cheaper row for the model: the verdict may rest on it, so its bill is a row of its own.
        api_id, bill = d.cheaper_api
        row = catalogue.apis()[api_id]
        rows.append((tables.cheapest_api_name(api_id), bill,
                     f"the same tokens at {row['api_in']:g} / {row['api_out']:g} USD per 1M"))
    autoscaled = d.report.get("rent_usd_month")
    if s.autoscale and d.priced and autoscaled is not None and autoscaled != d.self_host_usd_month:
        # SPEC section 9: the verdict stays the fleet for the busiest hour; the autoscaled rent sits beside it.
        rows.insert(1, ("Self-hosting, autoscaled", autoscaled,
                        f"{span(f'{min(s.min_replicas, d.replicas):,}', f'{d.replicas:,}')} replica{'' if d.replicas == 1 else 's'}, hour by hour as the profile needs, "
                        f"rented while they run + {s.upkeep:,.0f} upkeep"))
    return pd.DataFrame({"option": [r[0] for r in rows], "usd_month": [r[1] for r in rows],
                         "how": [r[2] for r in rows]})


def capacity_table(d: Decision) -> pd.DataFrame:
    """How one replica serves the traffic and how many the busiest hour needs: ``figure``, ``value``, ``unit``."""
    s, c = d.scenario, d.cap
    rows = [
        ("Tokens a request holds in cache (prompt + output)", c.n, "tokens"),
        ("Requests that fit in memory at once, per replica", c.max_batch, "requests"),
    ]
    if d.fits:
        rows += [
            ("Serving batch", c.serving_batch, "requests"),
            ("Time per output token (TPOT) at the serving batch", c.step_ms, "ms"),
            ("Latency target (tpot_ms)", s.tpot_ms if s.tpot_ms is not None else "none",
             "ms" if s.tpot_ms is not None else ""),
            ("Target met", "yes" if c.meets_tpot else "no", ""),
            ("Time to first token (TTFT) on an idle replica", c.ttft_ms, "ms"),
            ("Decode tokens per second at the serving batch (decode steps only)", c.tok_s, "tokens/s"),
            ("Output tokens per second serving the traffic (prompts processed too)", c.serving_tok_s, "tokens/s"),
            ("Busy replica-seconds per request", c.s_req, "s"),
            ("Requests per day one replica serves at the peak factor", c.x_cap, "requests/day"),
            ("Replicas for the busiest hour", d.replicas, "replicas"),
            # SPEC section 6 sizes replicas to the busiest hour's load with no headroom for queueing: said, so that a
            # load near 100 % reads as waits that lengthen, not as spare capacity.
            ("Busiest-hour load per replica (no headroom for queueing is added)",
             float(s.req_day / (c.x_cap * d.replicas)) if c.x_cap else None, "fraction"),
            ("Cards in all", d.replicas * s.gpus, "cards"),
            ("Implied duty per replica (busy fraction of the month)", d.duty, "fraction"),
        ]
    return pd.DataFrame(rows, columns=["figure", "value", "unit"])


def capacity_text(d: Decision) -> pd.DataFrame:
    """:func:`capacity_table` with its values written out for reading (fractions as per cent)."""
    ct = capacity_table(d)
    shown = [f"{v:.1%}" if u == "fraction" and v is not None else cell(v) for v, u in zip(ct["value"], ct["unit"], strict=True)]
    return ct.assign(value=shown, unit=["" if u == "fraction" else u for u in ct["unit"]])


def unit_cost_table(d: Decision) -> pd.DataFrame:
    """USD per million output tokens, self-hosting at full and implied duty and all-in, and the API:
    columns ``basis``, ``usd_per_mtok_out``."""
    u = d.units
    duty = "" if u.duty is None else f" of {u.duty:.1%}"  # none where nothing is served
    return pd.DataFrame({
        "basis": ["Self-hosting, one replica busy 100% of the time (rent only, the textbook figure)",
                  f"Self-hosting at the implied duty{duty} (rent only)",
                  "Self-hosting, whole monthly bill over the output tokens (all replicas, upkeep, prompt time)",
                  "API, whole monthly bill over the output tokens (prompt and output prices)"],
        "usd_per_mtok_out": [u.rent_at_full, u.rent_at_duty, u.self_host_all_in, u.api_all_in],
    })


def inputs_table(s: Scenario) -> pd.DataFrame:
    """The inputs the verdict rests on: ``input``, ``value``, ``key`` (the link key)."""
    api = catalogue.apis().get(s.api)
    rows = [
        ("model", model_name(s) + ("" if s.model == "custom" else f" ({s.model})")),
        ("card", card_name(s) + ("" if s.card == "custom" else f" ({s.card})")),
        ("gpus", f"{s.gpus} per replica ("
                 + ("whole layers per card" if model.splits_layers(s) else "every matrix split by rows"
                    if s.split == "row" else "tensor parallel") + ")"),
        ("engine", f"{ENGINE_NAMES.get(s.engine, s.engine)} ({s.engine})"),
        ("weights", checkpoint_text(s)),
        ("kv", kv_text(s)),
        ("compute", f"{s.compute}, {s.tflops:g} TFLOP/s dense per card"),
        ("ctx", f"{s.ctx:,} tokens, a request of the traffic (prompt + output)" if "ctx" in s.follows_traffic
         else f"{s.ctx:,} tokens (a what-if; the traffic's requests hold {s.in_tok + s.out_tok:,})"),
        ("batch", str(s.batch)),
        ("req_day", per_day(s.req_day)),
        ("in_tok", f"{s.in_tok:,} tokens"),
        ("out_tok", f"{s.out_tok:,} tokens"),
        ("peak", f"{s.peak:g} × the average hour"),
        ("tpot_ms", "none" if s.tpot_ms is None else f"{s.tpot_ms:g} ms"),
        ("api", f"{api['provider']} · {api['model']}" if api else s.api),
        ("api_in", f"{s.api_in:g} USD per 1M prompt tokens"),
        ("api_out", f"{s.api_out:g} USD per 1M output tokens"),
        ("usd_hr", "not set (no quote)" if s.usd_hr is None else f"{s.usd_hr:,.2f} USD per card-hour"),
        ("discount", f"{s.discount:.0%} (a commitment, paid whether the traffic comes or not)" if s.discount
         else "none (on-demand)"),
        ("prefix_hit", f"{s.prefix_hit:.0%} of prompt tokens (cached input at {s.api_cached:g} USD per 1M)"
         if s.prefix_hit else "none"),
        ("spec_k", f"{s.spec_k} draft tokens, acceptance {s.spec_alpha:g}, draft step {s.spec_c:g} of a target step"
         if s.spec_k else "off"),
        ("upkeep", f"{s.upkeep:,.0f} USD a month"),
        ("hours", f"{s.hours:g} hours a month"),
        ("profile", "none (every hour as the peak factor says)" if s.profile is None
         else (f"{s.profile}" if s.profile in catalogue.profiles() else "24 hourly weights of the link's own")),
        ("autoscale", "on: a rented fleet runs, each hour, the replicas that hour needs" if s.autoscale
         else "off: the rented fleet runs all day"),
        ("why", "none given" if not s.why else ", ".join(s.why.split(","))),
    ]
    if s.layer_ghz:  # the engine's time per layer follows the card's clock (docs/method.md section 3.4)
        after_engine = [k for k, _ in rows].index("engine") + 1
        rows.insert(after_engine, ("clock_ghz", "unknown: the time per layer as the profile states it"
                                   if s.clock_ghz is None else f"{s.clock_ghz:g} GHz boost clock per card"))
    # Every other figure a preset brings that is not its shape (the card's interconnect, price and power, and any
    # figure a new key reads from a preset), in the key table's words.
    listed = {k for k, _ in rows}
    rows += [(k.key, _figure_text(k.unit, getattr(s, k.key))) for k in KEY_TABLE
             if k.preset in ("model", "card") and not k.shape and k.key not in listed]
    return pd.DataFrame([(KEYS[k].label, v, k) for k, v in rows], columns=["input", "value", "key"])


#: Units named in the plural that a count of one takes in the singular.
_PLURAL_UNITS = ("cards", "hours", "replicas", "requests", "sequences", "tokens", "years")


def _figure_text(unit: str, value: object) -> str:
    """A preset's figure for the inputs table: the number and its unit, or that the preset has none."""
    if value is None:
        return "not known (the preset has no figure; give it in the link)"
    if isinstance(value, (int, float)):
        if value == 1 and unit in _PLURAL_UNITS:  # one card, not "1 cards"
            unit = unit[:-1]
        return f"{value:,g} {unit}".strip()
    return str(value)


def assumptions(s: Scenario) -> list[str]:
    """The assumptions and sources behind the figures, one line each."""
    models, cards, apis = catalogue.models(), catalogue.cards(), catalogue.apis()
    outside = outside_measurements(s)
    out = [
        (f"Engine: {ENGINE_NAMES.get(s.engine, s.engine)} profile: weights read at {s.eff_bw:.0%} of datasheet "
         f"bandwidth, the KV cache at {s.eff_kv:.0%}, arithmetic at {s.eff_flops:.0%} of the dense peak"
         + (f" in a decode step and {s.eff_prefill:.0%} in a prefill (eff_prefill)" if s.eff_prefill != s.eff_flops
            else "")
         + (f" (at FP4, {s.eff_fp4:g} of those: eff_fp4)" if s.compute == "fp4" and s.eff_fp4 < 1 else "")
         + (f" (a decode step at FP8, {s.eff_fp8:g} of its share: eff_fp8)" if s.compute == "fp8" and s.eff_fp8 < 1
            else "")
         + f", {s.step_us:,.0f} µs fixed per step"
         + (f" and {s.layer_us:,.0f} µs per layer" if s.layer_us else "")
         + (f" at {s.layer_ghz:g} GHz ({s.layer_us * model.layer_clock_factor(s):,.0f} µs at this card's "
            f"{s.clock_ghz:g} GHz boost clock; layer_ghz, clock_ghz)" if s.layer_us and s.layer_ghz and s.clock_ghz
            else f" at {s.layer_ghz:g} GHz (the card's clock unknown: clock_ghz)" if s.layer_us and s.layer_ghz
            else "")
         + (f", {s.eager_us:,.0f} µs more per layer without CUDA graphs (cuda_graphs=0)"
            if s.eager_us and not s.cuda_graphs else "")
         + (f", weights {'below 8 bits or in scaled blocks' if s.dequant_q8 else 'below 8 bits'} read at "
            f"{s.eff_dequant:.0%} of that bandwidth" if s.eff_dequant < 1 else "")
         + (f", the KV cache read {model.kv_read_factor(s):g} times a step (one read per query head)"
            if model.kv_read_factor(s) > 1 else "")
         + (f", {1 - s.overlap:.0%} of a step's shorter time (memory or arithmetic) added to the longer (overlap)"
            if s.overlap < 1 else "")
         # Why the share is what it is (the family's measured share, or the link's) is the Notes section's.
         + (f", both bandwidth shares times {s.eff_card:g} on a {engines.family_name(s.arch) or 'custom'} card "
            "(eff_card)" if s.eff_card != 1 else "")
         + f", {s.mem_util:.0%} of each card's memory"
         + (f", at most {s.max_seqs:,} sequences per step" if s.max_seqs else "")
         + " (eff_bw, eff_kv, eff_flops, step_us, layer_us, eager_us, eff_dequant, dequant_q8, kv_reread, mem_util, "
           "max_seqs); "
         + accuracy_text(s.engine, engines.error_band(s.engine), kept_out_bands(s.engine))
         + (f"; {outside}" if outside else "") + "."),
        memory.memory(s).sentence() + (" (overhead_gib set in the link)" if s.overhead_gib is not None
                                       and s.engine in engines.MODELLED_RESERVE else ""),
        f"Engineering upkeep of {s.upkeep:,.0f} USD a month, all cards together (upkeep).",
        f"A month is {s.hours:g} hours (hours): rented cards are paid for every one of them, busy or not, and the "
        "month's requests are the requests a day times its days.",
        f"The busiest hour carries {s.peak:g} times the average hour's requests; replicas are sized for it (peak).",
        "A paged KV cache holds what each request uses: capacity is computed at prompt + output tokens "
        f"({s.in_tok + s.out_tok:,})" + (", a request of the traffic (ctx=auto)." if "ctx" in s.follows_traffic
                                         else f", not at the link's context ({s.ctx:,}, a what-if of the Fit, "
                                              "Speed and Cost pages)."),
        "Attention's KV-cache reads and FLOPs are counted in each decode step (attn=1)." if s.attn else
        "Attention is left out of the decode step (attn=0, the weights-only textbook model).",
    ]
    api = apis.get(s.api)
    if api:
        line = (f"API prices: {api['provider']} · {api['model']}, {api['api_in']:g} / {api['api_out']:g} USD per 1M "
                f"prompt / output tokens; source: {api['source']}, read {api['read_on']}.")
        if (s.api_in, s.api_out) != (api["api_in"], api["api_out"]):
            line += f" The link sets {s.api_in:g} / {s.api_out:g} instead."
        if api["tier_above_tok"] is not None:
            line += (f" A request whose prompt exceeds {api['tier_above_tok']:,} tokens is billed entirely at "
                     f"{api['tier_api_in']:g} / {api['tier_api_out']:g} USD per 1M (long-prompt tier; source: "
                     f"{api['tier_source']}, read {api['tier_read_on']}).")
        out.append(line)
    card = cards.get(s.card)
    if card:
        quote = (f"{card['usd_hr']:,.2f} USD per card-hour from {card['usd_hr_source']}, read {card['usd_hr_date']}"
                 if card["usd_hr"] is not None else "no rent quote in the catalogue")
        if s.usd_hr is None or (card["usd_hr"] is not None and s.usd_hr == card["usd_hr"]):
            out.append(f"Card rent: {quote}.")
        else:
            out.append(f"Card rent: {s.usd_hr:,.2f} USD per card-hour, set in the link (catalogue: {quote}).")
        out.append(f"Rent priced against the market: {rent_text(s)}.")
        out.append(f"Card figures ({card['name']}: {memory.gib_text(s.mem_gib)} GiB, {s.bw_tbs:g} TB/s, {s.tflops:g} dense TFLOP/s "
                   f"at {s.compute}): {card['source']}, read {card['read_on']}.")
        out.append(f"Card memory ({card['name']}): {catalogue.memory_text(card)}; source: "
                   f"{card['mem_source']}, read {card['mem_read_on']}.")
    else:
        rent = "not set" if s.usd_hr is None else f"{s.usd_hr:,.2f} USD per card-hour"
        out.append(f"Custom card: {memory.gib_text(s.mem_gib)} GiB, {s.bw_tbs:g} TB/s, {s.tflops:g} dense TFLOP/s, "
                   f"{s.link_gbs:g} GB/s link, rent {rent}, all from the link.")
    m = models.get(s.model)
    if m:
        out.append(f"Model shape ({m['name']}): {m['source']}, read {m['read_on']}.")
    else:
        out.append(f"Custom model: {s.params_b:g}B parameters ({s.active_b:g}B active), {s.layers} layers, "
                   f"{s.heads} heads, {s.kv_heads} KV heads of {s.head_dim}, all from the link.")
    return out


# ---------------------------------------------------------------- the memo


def _md_escape(text: str) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def md_table(headers: Sequence[str], rows: Iterable[Sequence[Any]], right: Sequence[bool] = ()) -> str:
    """A Markdown table; ``right`` flags the columns to right-align (numbers)."""
    right = list(right) + [False] * (len(headers) - len(right))
    lines = ["| " + " | ".join(headers) + " |",
             "|" + "|".join("---:" if r else "---" for r in right) + "|"]
    for row in rows:
        lines.append("| " + " | ".join(_md_escape(cell(v)) for v in row) + " |")
    return "\n".join(lines)


def link(s: Scenario, base_url: str | None = None) -> str:
    """The Decision page's link that reproduces scenario ``s``: ``{base_url}/decision?{query}``."""
    base = (base_url if base_url is not None else os.environ.get("CALC_BASE_URL", DEFAULT_BASE_URL)).rstrip("/")
    return f"{base}/decision?{s.to_query()}"


def memo(ev: Evaluation | Parsed, base_url: str | None = None, refused: Sequence[Any] = ()) -> str:
    """The decision memo of an evaluated (or parsed) link, in Markdown.

    Deterministic: it depends only on the scenario (and on rejected values, if any), never on the time or on
    anything random, so the page's download and ``python -m calc --memo "<link>"`` agree.

    Args:
        ev: a :class:`calc.Evaluation` (a :class:`calc.Parsed` is evaluated first).
        base_url: where the app is served; defaults to ``$CALC_BASE_URL`` or ``http://localhost:8501``.
            The memo's link is ``{base_url}/decision?{scenario.to_query()}``.
        refused: values refused before the scenario was parsed (the page's inputs and opened link: each a
            :class:`calc.scenario.FieldError`), listed with the link's own, so a memo never rests on a default unsaid.

    Returns:
        The memo text (no trailing newline).
    """
    if isinstance(ev, Parsed):
        ev = evaluate(ev)
    parsed, s, d = ev.parsed, ev.scenario, ev.decision
    url = link(s, base_url)
    # The page's verdict line first, in its words, then the sentence it rests on (the Decision page's box).
    out: list[str] = [f"# Self-host or API: {model_name(s)} on {card_name(s)}", "",
                      f"**{headline(d)}.** {verdict_sentence(d)}", ""]

    errors = list(parsed.errors) + [e for e in refused if e.key not in {x.key for x in parsed.errors}]
    if errors:
        out += ["Values in the link that could not be used (each fell back to its default; the link below holds the "
                "defaults used):", ""]
        out += [f"- {e.message}{fallback_clause(e.key, s)}" for e in errors] + [""]

    out += ["## What would change the verdict", "",
            f"- **Rent:** {rent_flip_text(d)}",
            f"- **Volume:** {volume_sentence(d) or _sentence(not_served_text(d)) + '.'}",
            "", "Cost per million output tokens at this volume:", "",
            md_table(["Basis", "USD per 1M output tokens"],
                     [(r.basis, usd(r.usd_per_mtok_out, 3) if r.usd_per_mtok_out is not None else None)
                      for r in unit_cost_table(d).itertuples()], [False, True]),
            ""]
    u = d.units
    if None not in (u.self_host_all_in, u.rent_at_duty) and u.self_host_all_in < u.rent_at_duty:
        out += [mean_context_note(s, "The whole bill per 1M comes out below the rent-only figures above it"), ""]

    out += [f"## Monthly cost at {per_day(s.req_day)}", "",
            md_table(["Option", "USD per month", "How"],
                     [(r.option, amount(r.usd_month) if r.usd_month is not None else None, r.how)
                      for r in monthly_table(d).itertuples()], [False, True, False]), ""]

    out += procurement_section(d)
    out += ["## Capacity for the busiest hour", ""]
    if not d.fits:
        out += [_does_not_fit(d), ""]
    elif not d.cap.meets_tpot:
        out += [latency_sentence(d), ""]
    out += [md_table(["Figure", "Value", "Unit"], capacity_text(d).itertuples(index=False), [False, True, False]), ""]

    vt = tables.volume_table(d)
    cheapest, own = int("api_cheapest_usd_month" in vt), int("own_usd_month" in vt)
    out += ["## Monthly cost by volume", "",
            md_table(["Requests a day", "Replicas", "Cards", "Renting USD/month"]
                     + (["Buying USD/month"] if own else []) + ["API USD/month"]
                     + (["Cheapest API row USD/month"] if cheapest else []) + ["Cheapest"],
                     [(volume_text(r.req_day) + (" (this scenario)" if r.current else ""),
                       None if pd.isna(r.replicas) else int(r.replicas), None if pd.isna(r.cards) else int(r.cards),
                       None if math.isnan(r.self_host_usd_month) else amount(r.self_host_usd_month),
                       *([amount(r.own_usd_month)] if own else []),
                       amount(r.api_usd_month), *([amount(r.api_cheapest_usd_month)] if cheapest else []), r.cheaper)
                      for r in vt.itertuples()],
                     [False, True, True, True] + [True] * own + [True] + [True] * cheapest + [False]), ""]

    out += ["## Inputs", "",
            md_table(["Input", "Value", "Link key"],
                     [(r.input, r.value, f"`{r.key}`") for r in inputs_table(s).itertuples()]), ""]

    out += ["## Assumptions and sources", ""] + [f"- {a}" for a in assumptions(s)] + [""]
    # Every note the pages show (the report's warnings), but the missed latency target, said above in its own words.
    notes = [w for w in d.report["warnings"] if not w.startswith(LATENCY_MISSED)]
    if notes:
        out += ["## Notes", ""] + [f"- {n}" for n in notes] + [""]

    out += ["## Reasons to self-host that no cost figure captures", "",
            "Any of these can justify self-hosting at a higher cost; tick the ones that apply.", ""]
    ticked = (s.why or "").split(",")
    out += [f"- [{'x' if rid in ticked else ' '}] {text}" for rid, text in REASONS] + [""]

    out += ["## Reproduce", "",
            "Every figure above follows from this link (open it in the app):", "", f"<{url}>", "",
            "or on the command line:", "", "```", f'python -m calc --memo "{url}"', "```"]
    return "\n".join(out)
