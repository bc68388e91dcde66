"""How far a scenario's speeds and costs may be off: the engine's cross-validated error band, whether any
published measurement covered a set-up like it, and the self-hosting bill as a range (docs/calibration.md
sections 5 and 6).

A *measured region* is one engine profile x card family (architecture) x model kind (dense, MoE, MLA) x
tensor-parallel size x whether the weights are packed (stored in fewer than 8 bits or in scaled blocks, which the
kernel unpacks: :func:`calc.scenario.packed_weights`) that at least one row of
``calc/data/measurements.csv`` measured (an engine that no row measured unpacking 4-bit weights has not been
checked on them). A scenario outside every
region is flagged "not measured" and given its engine's widest band. The band that widens the bill is the 90th
percentile of the absolute leave-one-source-out error of the figure that sizes the replicas (full-load
throughput; the decode step where the engine has no throughput rows).
"""

from __future__ import annotations

import csv
import functools
from dataclasses import dataclass, field

from .engines import (
    CROSS_VALIDATED,
    DATA_DIR,
    ENGINES,
    ERRORS_CSV,
    KEPT_OUT,
    KEPT_OUT_CSV,
    MEASUREMENTS_CSV,
    base,
    card_arch,
    error_band,
    family_name,
    figures_of,
    kept_out_as,
    widest_band,
)
from .scenario import CUSTOM, Scenario, load, packed_weights, split_link

#: The leave-one-source-out error by measured region, written by ``scripts/calibrate.py``.
REGION_ERRORS_CSV = DATA_DIR / "region_errors.csv"


def model_kind(s: Scenario) -> str:
    """``"hybrid"`` (layers holding a recurrent state: linear-attention layers beside attention, or a Mamba mixer
    beside attention in a layer), ``"MLA"`` (a latent KV cache), ``"MoE"`` (routed experts) or ``"dense"``."""
    if s.state_layers:
        return "hybrid"
    if s.kv_latent:
        return "MLA"
    return "MoE" if s.experts else "dense"


def region(s: Scenario) -> tuple[str, str, str, int, bool]:
    """(engine, card family, model kind, cards per replica, weights packed) of a scenario; a custom card's family is
    the link's ``arch`` (``"unknown"`` where it gives none)."""
    arch = (family_name(s.arch) or "unknown") if s.card == CUSTOM else card_arch().get(s.card, "unknown")
    return figures_of(s.engine), arch, model_kind(s), int(s.gpus), packed_weights(s.weight_bits)


@functools.cache
def measured_rows() -> tuple[tuple[str, str, Scenario], ...]:
    """``(engine, metric, scenario)`` of every published row of ``measurements.csv``, each link loaded once."""
    with MEASUREMENTS_CSV.open(newline="", encoding="utf-8") as f:
        return tuple((row["engine"].strip(), row["metric"].strip(), load(row["link"]).scenario)
                     for row in csv.DictReader(f))


@functools.cache
def _published_runs() -> tuple[dict, ...]:
    """Every published row, fitted or kept out, with the set-up its link names: ``id``, ``version``, ``metric``,
    ``measured``, ``model``, ``card``, ``gpus`` and the engine's ``base`` (read from the link's own keys)."""
    out = []
    for path in (MEASUREMENTS_CSV, KEPT_OUT_CSV):
        with path.open(newline="", encoding="utf-8") as f:
            for row in csv.DictReader(f):
                raw, _ = split_link(row["link"])
                out.append({"id": row["id"], "version": row["version"], "metric": row["metric"],
                            "measured": float(row["measured"]), "model": raw.get("model", ""),
                            "card": raw.get("card", ""), "gpus": str(raw.get("gpus", "1")),
                            "base": base(str(raw.get("engine", "")))})
    return tuple(out)


def published_runs_of(s: Scenario) -> list[dict]:
    """The published rows (fitted or kept out) that ran the scenario's own set-up: its preset model on as many of its
    preset card under the same engine (any release), so a set-up the memory accounting says does not fit can say a
    measured run of it did; [] for a custom model or card."""
    if s.model == CUSTOM or s.card == CUSTOM:
        return []
    return [r for r in _published_runs() if (r["model"], r["card"], r["gpus"], r["base"])
            == (s.model, s.card, str(s.gpus), base(s.engine))]


@functools.cache
def measured_regions() -> frozenset[tuple[str, str, str, int, bool]]:
    """Every region a published measurement covers (rows on custom cards name no family, so they cover none)."""
    return frozenset(r for r in (region(m) for _, _, m in measured_rows()) if r[1] != "unknown")


@functools.cache
def measured_scope(engine: str) -> tuple[frozenset, frozenset, bool, frozenset]:
    """What the engine's published rows measured: (models, cards, whether any row stores its weights
    packed, metrics)."""
    mine = [(metric, m) for e, metric, m in measured_rows() if e == engine]
    return (frozenset(m.model for _, m in mine), frozenset(m.card for _, m in mine),
            any(packed_weights(m.weight_bits) for _, m in mine), frozenset(metric for metric, _ in mine))


@functools.cache
def region_bands(basis: str = CROSS_VALIDATED) -> dict[tuple, dict]:
    """``{(engine, card family, model kind, cards per replica, weights packed, metric): band}`` from
    ``region_errors.csv``: the leave-one-source-out error of the published rows of each measured region (each
    band: ``n``, ``signed_median_pct``, ``median_pct``, ``p90_pct``, ``max_pct``, ``most_flattering_pct``, in per
    cent of the measured figure); with ``basis`` :data:`KEPT_OUT`, the shipped figures' error on the rows kept out
    of the fit, each under the profile whose kept-out band it files under (:func:`calc.engines.kept_out_as`)."""
    out = {}
    with REGION_ERRORS_CSV.open(newline="", encoding="utf-8") as f:
        for row in csv.DictReader(f):
            if row["basis"] != basis:
                continue
            key = (row["engine"], row["card_family"], row["model_kind"], int(row["gpus"]), row["packed"] == "1",
                   row["metric"])
            out[key] = {"n": int(row["n"]), **{k: float(row[k]) for k in (
                "signed_median_pct", "median_pct", "p90_pct", "max_pct", "most_flattering_pct")},
                "rows": tuple(row["rows"].split())}
    return out


@functools.cache
def _kept_out_origin() -> dict[str, tuple[str, str]]:
    """``{row id: (release, site)}`` of the published rows kept out of the fit: the row's ``version`` column and the
    first word of its ``source`` (the site and repository or page it was read from)."""
    with KEPT_OUT_CSV.open(newline="", encoding="utf-8") as f:
        return {row["id"]: (row["version"].split(" (")[0].strip(), row["source"].split()[0])
                for row in csv.DictReader(f)}


@functools.cache
def _kept_out_band_rows() -> dict[tuple[str, str], tuple[str, ...]]:
    """``{(profile, metric): row ids}`` of the kept-out bands of ``engine_errors.csv``."""
    with ERRORS_CSV.open(newline="", encoding="utf-8") as f:
        return {(row["engine"], row["metric"]): tuple(row["rows"].split())
                for row in csv.DictReader(f) if row["basis"] == KEPT_OUT}


def kept_out_band_provenance(profile: str, metric: str) -> str:
    """:func:`kept_out_provenance` of the rows of ``profile``'s kept-out band of ``metric`` (the profile they file
    under, :func:`kept_out_source`); "" where it has none."""
    return kept_out_provenance(_kept_out_band_rows().get((profile, metric), ()))


def kept_out_provenance(ids: tuple[str, ...]) -> str:
    """Where a band's kept-out rows come from, in words: their releases and sites ("vLLM v0.11.0, from
    github.com/gpustack/gpustack"), so a reader weighs rows of an older release or of a single lab as such; ""
    for rows this file does not hold."""
    origin = _kept_out_origin()
    known = [origin[i] for i in ids if i in origin]
    if not known:
        return ""
    releases = sorted({r for r, _ in known if r})
    sites = sorted({s for _, s in known})
    shown = ", ".join(releases[:3]) + (f" and {len(releases) - 3} more" if len(releases) > 3 else "")
    return f"{shown}, from {' and '.join(sites[:2])}" + (f" and {len(sites) - 2} more sites" if len(sites) > 2 else "")


def kept_out_region_band(s: Scenario) -> dict | None:
    """The shipped figures' error on the published rows kept out of the fit that measured the scenario's own region
    (:func:`region`, its engine the profile whose kept-out band its rows file under: ``vllm-v0``'s own): the band of
    the figure that sizes the replicas (full-load throughput, else the decode step) with its ``metric``; None where
    no such row measured it."""
    where = (kept_out_as(s.engine), *region(s)[1:])
    bands = region_bands(KEPT_OUT)
    for metric in ("max_throughput_tok_s", "step_ms"):
        if (*where, metric) in bands:
            return {"metric": metric, **bands[(*where, metric)]}
    return None


def kept_out_capacity(s: Scenario) -> tuple[dict | None, bool]:
    """(band, from the set-up's own rows): the rows kept out of the fit whose error of the figure that sizes the
    replicas the bills weigh (docs/calibration.md section 6): the engine's kept-out band (:func:`kept_out_bands`),
    or the scenario's own region's (:func:`kept_out_region_band`) where :data:`MIN_BAND_ROWS` rows or more measured
    it and came out further on the flattering side, as a cross-validated region's band stands in for its engine's."""
    band = capacity_band(kept_out_bands(s.engine))
    own = kept_out_region_band(s)
    if (own is not None and band is not None and own["n"] >= MIN_BAND_ROWS and own["metric"] == band["metric"]
            and own["signed_median_pct"] > band["signed_median_pct"]):
        return own, True
    return band, False


def kept_out_beyond_band(s: Scenario) -> bool:
    """Whether the kept-out rows the bills weigh (:func:`kept_out_capacity`) put the figure that sizes the replicas
    further on the flattering side than the capacity band reaches (their signed median beyond the band's 90th
    percentile, :func:`accuracy`): only then is the bill priced at their error as well (docs/calibration.md
    section 5)."""
    band, _ = kept_out_capacity(s)
    width = accuracy(s).band_pct
    return band is not None and width is not None and band["signed_median_pct"] > width


@dataclass(frozen=True)
class Accuracy:
    """The error a scenario's capacity carries (per cent, leave-one-source-out)."""

    measured: bool            # the scenario's region was measured by a published row
    region: tuple             # (engine, card family, model kind, cards per replica, weights packed)
    band_pct: float | None    # 90th percentile of the absolute error of the figure that sizes replicas
    widened_from: str | None = None  # the release family whose wider band stands in for a band of few rows
    # the scenario's own region's band (region_bands), where it stands in (a dict: left out of the hash)
    region_band: dict | None = field(default=None, hash=False)

    @property
    def region_rows(self) -> int | None:
        """The rows of the scenario's own region whose wider band stands in, or None."""
        return None if self.region_band is None else self.region_band["n"]


#: An engine whose efficiencies are another's, fitted on that engine's rows (calc/data/engine_families.csv: SGLang
#: shares vLLM's attention and GEMM libraries): its thin band is widened to that engine's where that one is wider,
#: and the rows kept out of that engine's fit count against it too.
SHARES_FIGURES_WITH = {"sglang": "vllm"}

#: A band from fewer rows than this is thin (its 90th percentile is about its worst row): it is widened to the
#: widest band of the same metric among the engine's release families that rest on at least this many rows. A
#: measured region's own band counts from this many rows too.
MIN_BAND_ROWS = 10


def band_text(band_pct: float) -> str:
    """The capacity band ``band_pct`` (per cent) as its two ends: the band multiplies or divides the busy time per
    request by 1 + b (docs/calibration.md section 6), so a wide band is lopsided and is written "-50 %/+101 %"
    (never "±101 %", a capacity below zero); up to 50 % its ends lie within a few points of "±b %", written so."""
    if band_pct <= 50:
        return f"±{band_pct:.0f} %"
    return f"-{100 - 100 / (1 + band_pct / 100):.0f} %/+{band_pct:.0f} %"


def kept_out_engine(engine: str) -> str:
    """The engine whose rows kept out of the fit count against ``engine``: its own where it has some, else the
    engine whose figures it shares (:data:`SHARES_FIGURES_WITH`), else itself (which then has none)."""
    if error_band(engine, KEPT_OUT) or engine not in SHARES_FIGURES_WITH:
        return engine
    return SHARES_FIGURES_WITH[engine]


def kept_out_source(engine: str) -> str:
    """Whose published rows kept out of the fit count against ``engine``, by name: the profile they file under
    (:func:`calc.engines.kept_out_as`: ``vllm-2025``'s are ``vllm``'s, ``vllm-v0``'s its own), or the engine whose
    figures it shares where it has none (:func:`kept_out_engine`: SGLang's are vLLM's)."""
    return kept_out_engine(kept_out_as(engine))


def kept_out_bands(engine: str) -> list | None:
    """The error bands of the rows kept out of the fit that count against ``engine`` (:func:`kept_out_engine`)."""
    return error_band(kept_out_engine(engine), KEPT_OUT)


def capacity_band(bands: list | None) -> dict | None:
    """Of an engine's error bands (one per metric), the one of the figure that sizes the replicas: full-load
    throughput, else the decode step; None when there is neither."""
    by_metric = {b["metric"]: b for b in bands or []}
    return by_metric.get("max_throughput_tok_s") or by_metric.get("step_ms")


def region_table() -> list[dict]:
    """The measured regions of :data:`MIN_BAND_ROWS` rows or more, widest first: each region's fields
    (``engine``, ``card_family``, ``model_kind``, ``gpus``, ``packed``), ``metric``, its leave-one-source-out
    band (``n``, ``signed_median_pct``, ``median_pct``, ``p90_pct``, ``max_pct``, ``most_flattering_pct``), the
    engine's own 90th percentile of that metric (``engine_p90_pct``) and ``bills_use`` (True where a scenario of
    the region is ranged with this band rather than the engine's, :func:`accuracy`)."""
    out = []
    for (*where, metric), b in region_bands().items():
        if b["n"] < MIN_BAND_ROWS:
            continue
        engine = where[0]
        whole = {x["metric"]: x["p90_pct"] for x in error_band(engine) or []}
        sizes = capacity_band(error_band(engine))
        out.append({"engine": engine, "card_family": where[1], "model_kind": where[2], "gpus": where[3],
                    "packed": where[4], "metric": metric, **b, "engine_p90_pct": whole.get(metric),
                    "bills_use": sizes is not None and sizes["metric"] == metric
                    and _accuracy(engine, tuple(where)).region_rows is not None})
    return sorted(out, key=lambda r: -r["p90_pct"])


def accuracy(s: Scenario) -> Accuracy:
    """The cross-validated band of the scenario's capacity, widened to the engine's widest when no row measured
    its region, and another engine's widest when none measured this engine; where at least
    :data:`MIN_BAND_ROWS` rows measured the scenario's own region and were further off than the engine's band says,
    their band (docs/calibration.md section 6)."""
    return _accuracy(s.engine, region(s))


def _own_region(a: Accuracy, metric: str) -> Accuracy:
    """``a``, or the band of the published rows of its own region for ``metric`` where they rest on at least
    :data:`MIN_BAND_ROWS` rows and reach further than ``a``'s band (in whole per cent, as the pages write it): the
    engine's band is a spread over every set-up its rows measured, and a narrower one is never taken from a region
    (it would flatter the set-ups that the rest of the engine's rows say are harder). A scenario no row measured
    takes the engine's widest band, of its measures and of its regions alike (an unmeasured set-up is never told
    it is closer than a measured one was)."""
    if not a.measured:  # the engine's widest band: of its measures, and of the set-ups its rows measured
        widest = max((b["p90_pct"] for (e, *_), b in region_bands().items() if e == a.region[0]
                      and b["n"] >= MIN_BAND_ROWS), default=None)
        if widest is None or a.band_pct is None or round(widest) <= round(a.band_pct):
            return a
        return Accuracy(False, a.region, widest)
    own = region_bands().get((*a.region, metric))
    # Wider as the pages write bands (whole per cent): a band 0.03 points wider would read "±22 %, wider than ±22 %".
    if own is None or own["n"] < MIN_BAND_ROWS or a.band_pct is None or round(own["p90_pct"]) <= round(a.band_pct):
        return a
    return Accuracy(a.measured, a.region, own["p90_pct"], region_band=own)


@functools.lru_cache(maxsize=256)
def _accuracy(engine: str, r: tuple[str, str, str, int, bool]) -> Accuracy:
    """:func:`accuracy` of a scenario on ``engine`` in region ``r`` (it depends on nothing else)."""
    measured = r in measured_regions()
    bands = error_band(engine, CROSS_VALIDATED) or []
    if not bands:
        widest = widest_band(CROSS_VALIDATED)
        bands = [widest] if widest else []
    if not bands:
        return Accuracy(measured, r, None)
    b = capacity_band(bands) if measured else max(bands, key=lambda x: x["p90_pct"])
    if b["n"] >= MIN_BAND_ROWS:
        return _own_region(Accuracy(measured, r, b["p90_pct"]), b["metric"])
    siblings = [(o["p90_pct"], e) for e in ENGINES if (base(e) == base(engine) or e == SHARES_FIGURES_WITH.get(engine))
                and e != figures_of(engine)
                for o in error_band(e, CROSS_VALIDATED) or [] if o["metric"] == b["metric"]
                and (o["n"] >= MIN_BAND_ROWS or e == SHARES_FIGURES_WITH.get(engine)) and o["p90_pct"] > b["p90_pct"]]
    if not siblings:
        return _own_region(Accuracy(measured, r, b["p90_pct"]), b["metric"])
    p90, family = max(siblings)
    return _own_region(Accuracy(measured, r, p90, family), b["metric"])
