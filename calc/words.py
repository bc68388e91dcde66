"""Words and numbers for people: one formatter for money, tokens, volumes and table cells, and the names of
models and cards, used by the pages and the memo alike (a figure reads the same everywhere)."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from . import catalogue, model
from .accuracy import (
    SHARES_FIGURES_WITH,
    accuracy,
    band_text,
    capacity_band,
    kept_out_band_provenance,
    kept_out_source,
)
from .engines import ENGINE_NAMES, METRIC_NAMES, OWN_KEPT_OUT, figures_of
from .notes import display_name, lean_text, region_text
from .scenario import KV_FORMATS, WEIGHT_FORMATS, Scenario
from .units import BILLION, MILLION

# ---------------------------------------------------------------- number formatting


def comm_words(s: Scenario) -> tuple[str, str]:
    """What passes between a replica's cards in a step, (a short name, a phrase): the all-reduces of tensor parallel,
    the activations handed on at the boundaries of whole layers, or the hand-overs of a row split
    (:func:`calc.model.comm_seconds`)."""
    if model.splits_layers(s):
        return "hand-over", "hand-over of the activations from card to card"
    if model.row_split(s):
        return "row-split hand-overs", "row split's hand-overs around every matrix product"
    return "all-reduce", "tensor-parallel all-reduce"


def overlap_words(s: Scenario) -> tuple[str, str]:
    """How a step combines its memory and arithmetic times (:func:`calc.model.overlapped_seconds`), (a legend name, a
    clause): the slower of the two where the engine hides the shorter completely (``overlap`` 1), else the slower plus
    the share of the other the engine does not hide."""
    if s.overlap >= 1:
        return "step (the slower of the two)", "the taller one sets the step"
    share = f"{1 - s.overlap:.0%}"
    return (f"step (the slower of the two, plus {share} of the other)",
            f"the taller one sets the step, plus {share} of the shorter, which this engine does not hide under it "
            f"(overlap {s.overlap:g})")


def sig(x: float | None, digits: int = 2) -> str:
    """``x`` rounded to ``digits`` significant figures with thousands separators.

    343.2 -> "340", 5800 -> "5,800", 273892.8 -> "270,000" (3 digits: "274,000"), 0.001144 -> "0.0011";
    None or NaN -> "—".
    """
    if x is None or not math.isfinite(x):
        return "—"
    if x == 0:
        return "0"
    v = float(f"{x:.{digits}g}")
    decimals = max(0, digits - 1 - math.floor(math.log10(abs(v))))
    return f"{v:,.{decimals}f}"


def short(x: float | None, digits: int = 3) -> str:
    """``x`` for a narrow figure at ``digits`` significant figures: thousands, millions and billions as "484 k",
    "1.48 M" and "2.1 B" from 10,000 up, anything smaller as :func:`sig` gives it ("9,870"); None or NaN -> "—"."""
    if x is None or not math.isfinite(x):
        return "—"
    x = float(f"{x:.{digits}g}")  # rounded first, so 999,999 is "1.00 M", not "1,000 k"
    for scale, unit, start in ((1e9, "B", 1e9), (1e6, "M", 1e6), (1e3, "k", 1e4)):
        if abs(x) >= start:
            return f"{sig(x / scale, digits)} {unit}"
    return sig(x, digits)


def sig_pair(a: float, b: float, digits: int = 2) -> tuple[str, str]:
    """Both numbers at ``digits`` significant figures, or more when that would make two different
    numbers read the same (up to 6)."""
    for d in range(digits, 7):
        sa, sb = sig(a, d), sig(b, d)
        if sa != sb or a == b:
            return sa, sb
    return sa, sb


def span(lo: str, hi: str, joiner: str = " to ") -> str:
    """Two ends of a range already written out, or the one figure when both read the same ("816 k", not
    "816 k to 816 k")."""
    return lo if lo == hi else f"{lo}{joiner}{hi}"


def count(n: int, noun: str) -> str:
    """``n`` things with the noun in the right number: "1 request", "1,000 requests" (a regular plural)."""
    return f"{n:,} {noun}{'' if n == 1 else 's'}"


def volume_text(x: float) -> str:
    """A request volume as the user gave it: 10000 -> "10,000", 12.5 -> "12.5"."""
    if float(x).is_integer():
        return f"{x:,.0f}"
    if abs(x) < 1:  # 0.001 a day is not "0"
        return f"{x:.3g}"
    return f"{x:,.2f}".rstrip("0").rstrip(".")


def per_day(x: float) -> str:
    """A request volume a day in words, in the right number: "1 request a day", "10,000 requests a day"."""
    return f"{volume_text(x)} request{'' if x == 1 else 's'} a day"


def cell(v: Any) -> str:
    """A table cell: integers with separators, other numbers to a sensible precision, None as a dash."""
    if v is None or (isinstance(v, float) and not math.isfinite(v)):
        return "—"
    if isinstance(v, (bool, np.bool_)):
        return "yes" if v else "no"
    if isinstance(v, str):
        return v
    v = float(v)
    if v.is_integer() or abs(v) >= 100:
        return f"{v:,.0f}"
    if abs(v) >= 1:
        return f"{v:,.2f}"
    text = sig(v, 3)
    return text.rstrip("0").rstrip(".") if "." in text else text


def tokens_text(x: float) -> str:
    """A token count for reading: 300000000 -> "300M", 2.7e10 -> "27B", 3e13 -> "30T", 4500 -> "4,500" (never
    e-notation: :func:`number_text` of the millions, billions or trillions)."""
    if x >= 1000 * BILLION:
        return f"{number_text(x / (1000 * BILLION))}T"
    if x >= BILLION:
        return f"{number_text(x / BILLION)}B"
    if x >= MILLION:
        return f"{number_text(x / MILLION)}M"
    return f"{x:,.0f}"


def number_text(x: float | None) -> str:
    """A figure for reading, never in exponent form: whole with thousands separators from 1,000 (9000 -> "9,000"),
    else 4 significant figures (27.5 -> "27.5"); "-" for none."""
    if x is None:
        return "-"
    return f"{x:,.0f}" if abs(x) >= 1000 else f"{x:.4g}"


def usd(v: float | None, digits: int = 2) -> str:
    """A USD amount for a table: separators and ``digits`` decimals, a dash when unknown."""
    return "—" if v is None or not math.isfinite(v) else f"{v:,.{digits}f}"


# ---------------------------------------------------------------- names


def model_name(s: Scenario) -> str:
    """The model's catalogue name ("(modified)" when the link overrides its figures), or "a custom 70B model"."""
    row = catalogue.models().get(s.model)
    return display_name(s, "model") if row else f"a custom {s.params_b:g}B model"


def card_name(s: Scenario) -> str:
    """The card's catalogue name ("(modified)" when the link overrides its datasheet), or "custom"."""
    row = catalogue.cards().get(s.card)
    return display_name(s, "card") if row else "custom"


def cards_text(s: Scenario, count: int | None = None) -> str:
    """"1 H100 SXM 80 GB card", "4 H100 SXM 80 GB cards" (the card name carries its memory label)."""
    n = s.gpus if count is None else count
    return f"{n:,} {card_name(s)} card{'s' if n != 1 else ''}"


def hardware_text(s: Scenario, replicas: int) -> str:
    """What self-hosting needs: "1 H100 SXM 80 GB card", "3 L40S 48 GB cards",
    "2 replicas of 4 H100 SXM 80 GB cards (8 cards)"."""
    if s.gpus == 1:
        return cards_text(s, replicas)
    text = f"{replicas:,} replica{'s' if replicas != 1 else ''} of {cards_text(s)}"
    return text + (f" ({replicas * s.gpus:,} cards)" if replicas > 1 else "")


def weights_text(s: Scenario) -> str:
    """"int4-g128 weights (4.25 bits)", "5-bit weights"."""
    return (f"{s.weights} weights ({WEIGHT_FORMATS[s.weights]:g} bits)" if s.weights in WEIGHT_FORMATS
            else f"{s.weight_bits:g}-bit weights")


def article(word: str) -> str:
    """"a" or "an" before a format's name as it is read aloud, letter by letter ("an fp16", "a bf16", "an nvfp4",
    "an 8 bits")."""
    return "an" if word[:1].lower() in set("aefhilmnorsx8") else "a"


def kv_text(s: Scenario) -> str:
    return f"{s.kv} ({KV_FORMATS[s.kv]:g} bits)" if s.kv in KV_FORMATS else f"{s.kv_bits:g} bits"


def amount(v: float | None) -> str:
    """A USD amount for a table cell, as :func:`money` rounds it but without the unit: whole dollars from 100 up,
    cents below (a light API bill is "0.03", not "0"), and nothing as "0"; a dash when unknown."""
    if v is None or not math.isfinite(v):
        return "—"
    return "0" if v == 0 else money(v).removesuffix(" USD")


def money(x: float | None, digits: int | None = None) -> str:
    """USD for display with the unit, the one way every page and the memo write an amount: whole dollars from
    100 up ("5,800 USD", "343 USD"), cents below ("12.50 USD"), two significant figures below half a cent
    ("0.0012 USD"); ``digits`` forces the decimals. An em dash when
    unknown."""
    if x is None or not math.isfinite(x):
        return "—"
    if digits is None and 0 < abs(x) < 0.005:  # a sum that two decimals would round to nothing
        return f"{sig(x)} USD"
    return usd(x, (0 if abs(x) >= 100 else 2) if digits is None else digits) + " USD"


def money_short(x: float | None) -> str:
    """USD for a narrow headline figure: :func:`money` below a million, millions and billions as :func:`short`
    gives them from a million up ("34.3 M USD"), so a large bill is not cut off; an em dash when unknown."""
    if x is None or not math.isfinite(x) or abs(x) < 1e6:
        return money(x)
    return f"{short(x)} USD"


def price_short(x: float | None) -> str:
    """USD per million tokens for a narrow headline figure: three decimals below 10 USD ("0.081 USD", the
    precision a token price is quoted at), cents below 100 ("64.44 USD": a third decimal there is noise), whole
    dollars below 10,000, and thousands or millions as :func:`short` gives them above ("732 k USD"), so an idle
    replica's enormous price is not cut off; an em dash when unknown."""
    if x is None or not math.isfinite(x):
        return "—"
    if abs(x) < 100:
        return f"{x:,.{3 if abs(x) < 10 else 2}f} USD"
    return f"{x:,.0f} USD" if abs(x) < 1e4 else f"{short(x)} USD"


#: The unit each checked figure is measured and predicted in.
METRIC_UNITS = {"step_ms": "ms", "max_throughput_tok_s": "tok/s"}


def first_upper(text: str) -> str:
    """``text`` with its first letter upper case and the rest as written (``str.capitalize`` lowers the rest: "2 B200
    (HGX) 180 GB cards" became "2 b200 (hgx) 180 gb cards")."""
    return text[:1].upper() + text[1:]


def band_clause(report: dict, s: Scenario) -> str:
    """"; the bills use ±21 %, ..." when the band the bills are ranged with is not the engine's own: its own rests on
    too few rows, so a release family's wider band stands in (calc.accuracy.MIN_BAND_ROWS), or the published rows of
    set-ups like ``s`` were further off (:func:`region_band_text`); "" otherwise."""
    if report.get("capacity_band_pct") is None:
        return ""
    if report.get("capacity_band_region_rows"):
        return (f"; the self-hosting bills are ranged with {band_text(report['capacity_band_pct'])}, the band of "
                f"set-ups like this one: {region_band_text(report, s)}")
    family = report.get("capacity_band_from")
    if family is None:
        return ""
    return (f"; the self-hosting bills are ranged with {band_text(report['capacity_band_pct'])}, the band of "
            f"{band_source_text(report['scenario']['engine'], family)}, as its own rests on too few rows")


def region_band_text(report: dict, s: Scenario) -> str:
    """"the 36 published rows of TensorRT-LLM on Blackwell-SM100 cards with ..., each source predicted by a fit
    without it, which came out a median 9 % too fast (flattering self-hosting) and spread wider than the ±22 % of all
    the engine's rows": whose band the scenario's is where its own region's rows stand in for the engine's
    (calc.accuracy), and which way they lean; "" when they do not."""
    acc = accuracy(s)
    own = acc.region_band
    if own is None:
        return ""
    whole = capacity_band(report["error_band"])
    lean = f" came out {lean_text(own['signed_median_pct'], fast='too fast (flattering self-hosting)')} and"
    return (f"the {own['n']:,} published rows of {region_text(acc.region)}, each source predicted by a fit without "
            f"it, which{lean} spread"
            + (" wider than the engine's" if whole is None else
               f" wider than the {band_text(whole['p90_pct'])} of all the engine's rows"))


def band_source_text(engine: str, source: str) -> str:
    """Whose band stands in for ``engine``'s thin one (calc.accuracy): a release family of the same engine, "the
    widest of its families", or the engine whose figures it shares."""
    name = ENGINE_NAMES.get(source, source)
    if source == SHARES_FIGURES_WITH.get(engine):
        return f"{name}, whose efficiencies it shares"
    return f"its release family {name}, the widest of its families"


def accuracy_text(engine: str, error_band: list | None, kept_out: list | None = None) -> str:
    """How far the engine's figures were from published measurements they were not fitted to, in words: "full-load
    throughput within about 6 % (90 % of rows within 26 %, 5 rows, median signed +6 %: too fast)" per metric,
    each source's rows predicted by profiles fitted without that source; then, from ``kept_out`` (the report's
    ``error_band_kept_out``), how far the shipped figures were from the published rows kept out of the fit."""
    name = ENGINE_NAMES.get(engine, engine)
    if not error_band:
        return (f"{name}: no published measurements of this engine were available to check its figures; "
                "they are not calibrated")

    def side(x: float) -> str:
        return "predicted too fast" if x > 0 else "predicted too slow" if x < 0 else "no bias"

    def rows(n: int) -> str:  # a 90th percentile of a few rows is about the worst of them: said so
        return ("" if n >= 10 else "only ") + f"{n} row{'s' if n != 1 else ''}"

    parts = [f"{METRIC_NAMES.get(b['metric'], b['metric'])} within about {b['median_pct']:.0f} % "
             f"(90 % of rows within {b['p90_pct']:.0f} %, {rows(b['n'])}, "
             f"median {b['signed_median_pct']:+.0f} %: {side(b['signed_median_pct'])})"
             for b in error_band]
    if engine == "roofline":
        return (f"{name}: real engines were measured this far from it — " + "; ".join(parts)
                + "; pick an engine for figures a deployment reaches")
    # A release family that shares every speed figure (vllm-2025, trtllm-2024) quotes its engine's measurements.
    measured = figures_of(engine)
    whose = "" if measured == engine else ", whose speed figures it shares"
    # Rows kept out of another engine's fit count against one that shares its efficiencies (SGLang: vLLM's).
    kept = kept_out_text(kept_out, kept_out_source(engine))
    return (f"{name}: " + "; ".join(parts) + f" of published {ENGINE_NAMES.get(measured, measured)} measurements"
            f"{whose}, each source predicted by figures fitted without it" + (f"; {kept}" if kept else ""))


def kept_out_text(kept_out: list | None, engine: str = "") -> str:
    """How far the shipped figures were from the published rows kept out of the fit (the report's
    ``error_band_kept_out``), per metric: "on 14 published vLLM rows of other set-ups (other models and releases)
    kept out of the fit, full-load throughput came out a median 47 % too fast (worst row 233 % off)"; "" when there
    are none. ``engine``: the profile whose rows they are (:func:`calc.accuracy.kept_out_source`); a family of
    :data:`calc.engines.OWN_KEPT_OUT` says they are of its own releases."""
    name = f"{ENGINE_NAMES.get(engine, engine)} " if engine else ""
    # A family whose own releases' rows are its band (OWN_KEPT_OUT): they are of its releases, not of others.
    of_what = " of its own releases," if engine in OWN_KEPT_OUT else ""

    def origin(b: dict) -> str:  # their releases and sites, so one lab's or an old release's rows read as such
        text = kept_out_band_provenance(engine, b["metric"]) if engine else ""
        return f" ({text})" if text else ""

    return "; ".join(
        f"on {b['n']} published {name}row{'s' if b['n'] != 1 else ''}{of_what} "
        f"kept out of the fit{origin(b)}, "
        f"{METRIC_NAMES.get(b['metric'], b['metric'])} came out {lean_text(b['signed_median_pct'])} "
        f"(worst row {b['max_pct']:.0f} % off)"
        for b in kept_out or ())
