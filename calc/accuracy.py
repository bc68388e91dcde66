"""How far a scenario's speeds and costs may be off: the engine's cross-validated error band, whether any
published measurement covered a set-up like it, and the self-hosting bill as a range (docs/calibration.md
sections 5 and 6).

A *measured region* is one engine profile x card family (architecture) x model kind (dense, MoE, MLA) x
tensor-parallel size that at least one row of ``calc/data/measurements.csv`` measured. A scenario outside every
region is flagged "not measured" and given its engine's widest band. The band that widens the bill is the 90th
percentile of the absolute leave-one-source-out error of the figure that sizes the replicas (full-load
throughput; the decode step where the engine has no throughput rows).
"""

from __future__ import annotations

import csv
import functools
from dataclasses import dataclass

from .engines import CROSS_VALIDATED, DATA_DIR, MEASUREMENTS_CSV, error_band, widest_band
from .scenario import CUSTOM, Scenario, load

CARD_ARCH_CSV = DATA_DIR / "card_arch.csv"


@functools.cache
def card_arch() -> dict[str, str]:
    """``{card preset id: architecture family}`` from ``card_arch.csv`` (vendor architecture names)."""
    with CARD_ARCH_CSV.open(newline="", encoding="utf-8") as f:
        return {row["card"].strip(): row["arch"].strip() for row in csv.DictReader(f)}


def model_kind(s: Scenario) -> str:
    """``"MLA"`` (a latent KV cache), ``"MoE"`` (routed experts) or ``"dense"``."""
    if s.kv_latent:
        return "MLA"
    return "MoE" if s.experts else "dense"


def region(s: Scenario) -> tuple[str, str, str, int]:
    """(engine, card family, model kind, cards per replica) of a scenario; a custom card's family is
    ``"unknown"``."""
    arch = "unknown" if s.card == CUSTOM else card_arch().get(s.card, "unknown")
    return s.engine, arch, model_kind(s), int(s.gpus)


@functools.cache
def measured_regions() -> frozenset[tuple[str, str, str, int]]:
    """Every region a published measurement of ``measurements.csv`` covers (rows on custom cards name no
    family, so they cover none)."""
    out = set()
    with MEASUREMENTS_CSV.open(newline="", encoding="utf-8") as f:
        for row in csv.DictReader(f):
            r = region(load(row["link"]).scenario)
            if r[1] != "unknown":
                out.add(r)
    return frozenset(out)


@dataclass(frozen=True)
class Accuracy:
    """The error a scenario's figures carry (per cent, leave-one-source-out)."""

    measured: bool            # the scenario's region was measured by a published row
    region: tuple             # (engine, card family, model kind, cards per replica)
    band_pct: float | None    # 90th percentile of the absolute error of the figure that sizes replicas
    metric: str | None        # that figure's metric
    median_pct: float | None
    signed_median_pct: float | None
    n: int
    from_engine: str | None   # the engine whose band it is (another one's for an uncalibrated engine)

    @property
    def note(self) -> str:
        """One sentence for people."""
        engine, arch, kind, gpus = self.region
        where = f"{engine} on {arch} cards, a {kind} model, {gpus} card{'s' if gpus != 1 else ''} per replica"
        if self.band_pct is None:
            return f"No published measurement checks these figures ({where})."
        band = (f"±{self.band_pct:.0f} % (90th percentile of {self.n} rows predicted by profiles fitted without "
                f"their source; median {self.median_pct:.0f} %)")
        if self.measured:
            return f"Capacity measured within {band} on set-ups like this one ({where})."
        return (f"Not measured: no published row covers this set-up ({where}); the figures carry the engine's "
                f"widest band, {band}.")


def accuracy(s: Scenario) -> Accuracy:
    """The cross-validated band of the scenario's capacity, widened to the engine's widest when no row measured
    its region (docs/calibration.md section 6)."""
    r = region(s)
    bands = error_band(s.engine, CROSS_VALIDATED) or []
    measured = r in measured_regions()
    source = s.engine
    if not bands:
        widest = widest_band(CROSS_VALIDATED)
        bands = [widest] if widest else []
        source = widest["engine"] if widest else None
    if not bands:
        return Accuracy(measured, r, None, None, None, None, 0, None)
    by_metric = {b["metric"]: b for b in bands}
    if measured:
        b = by_metric.get("max_throughput_tok_s") or by_metric["step_ms"]
    else:
        b = max(bands, key=lambda x: x["p90_pct"])
    return Accuracy(measured, r, b["p90_pct"], b["metric"], b["median_pct"], b["signed_median_pct"], b["n"], source)
