"""The engine profiles against published measurements (docs/method.md section 8): ``python -m calc --validate [CSV]``.

Each measurement row is a calculator link naming the engine measured, the report figure it checks (``metric``:
``step_ms`` or ``max_throughput_tok_s``) and the published value. A row is evaluated by running its own link
through :func:`calc.report` unchanged; the error is ``(predicted - measured) / measured`` in per cent. The summary
gives, per engine and metric, the median and the 90th percentile of the absolute errors (numpy's linear
interpolation) and the worst row.
"""

from __future__ import annotations

import csv
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from .engines import MEASUREMENTS_CSV, METRICS
from .evaluate import report
from .scenario import split_link

COLUMNS = ("id", "engine", "metric", "measured", "link", "source", "notes")


@dataclass(frozen=True)
class Measurement:
    """One published measurement: the link that reproduces its set-up and the figure measured."""

    id: str
    engine: str
    metric: str
    measured: float
    link: str
    source: str = ""
    notes: str = ""


@dataclass(frozen=True)
class Result:
    """A measurement and what the calculator predicts for it (None when the link cannot give the figure)."""

    row: Measurement
    predicted: float | None

    @property
    def error_pct(self) -> float | None:
        if self.predicted is None:
            return None
        return (self.predicted - self.row.measured) / self.row.measured * 100


def read_measurements(path=MEASUREMENTS_CSV) -> list[Measurement]:
    """The rows of a measurements file (columns :data:`COLUMNS`); raises ValueError naming a bad row."""
    path = Path(path)
    out = []
    with path.open(newline="", encoding="utf-8") as f:
        reader = csv.DictReader(f)
        missing = [c for c in COLUMNS[:5] if c not in (reader.fieldnames or [])]
        if missing:
            raise ValueError(f"{path.name}: missing column(s) {', '.join(missing)}")
        for data in reader:
            where = f"{path.name} line {reader.line_num}"
            metric = (data["metric"] or "").strip()
            if metric not in METRICS:
                raise ValueError(f"{where}: metric must be one of {', '.join(METRICS)}")
            try:
                measured = float(data["measured"])
            except (TypeError, ValueError):
                raise ValueError(f"{where}: measured is not a number") from None
            if not (math.isfinite(measured) and measured > 0):
                raise ValueError(f"{where}: measured must be a positive number")
            out.append(Measurement((data["id"] or "").strip(), (data["engine"] or "").strip(), metric, measured,
                                   (data["link"] or "").strip(), data.get("source") or "", data.get("notes") or ""))
    return out


def with_keys(link: str, **keys: object) -> str:
    """``link`` with ``keys`` set (replacing the link's own values), as a query string."""
    raw, _ = split_link(link)
    raw.update({k: str(v) for k, v in keys.items()})
    return "&".join(f"{k}={v}" for k, v in raw.items())


def evaluate(rows: Iterable[Measurement], engine: str | None = None) -> list[Result]:
    """Each row's prediction from its own link (or under ``engine`` instead of the one it names)."""
    out = []
    for row in rows:
        link = row.link if engine is None else with_keys(row.link, engine=engine)
        value = report(link)[row.metric]
        out.append(Result(row, None if value is None else float(value)))
    return out


def summarise(results: Sequence[Result], by_engine: bool = True) -> list[dict]:
    """Per engine (or over all rows) and metric: ``n``, ``median_pct``, ``p90_pct``, ``max_pct`` of the absolute
    errors, and the ids of the rows (rows without a prediction count as missing, not as zero error)."""
    groups: dict[tuple[str, str], list[Result]] = {}
    for r in results:
        groups.setdefault((r.row.engine if by_engine else "all", r.row.metric), []).append(r)
    out = []
    for (engine, metric), rs in sorted(groups.items(), key=lambda kv: (kv[0][0], METRICS.index(kv[0][1]))):
        errs = np.array([abs(r.error_pct) for r in rs if r.error_pct is not None])
        out.append({"engine": engine, "metric": metric, "n": int(errs.size),
                    "missing": len(rs) - int(errs.size),
                    "median_pct": float(np.median(errs)) if errs.size else None,
                    "p90_pct": float(np.percentile(errs, 90)) if errs.size else None,
                    "max_pct": float(errs.max()) if errs.size else None,
                    "rows": [r.row.id for r in rs]})
    return out


def _num(x: float | None) -> str:
    return "-" if x is None else f"{x:,.4g}"


def format_results(results: Sequence[Result]) -> str:
    """One line per row: id, engine, metric, measured, predicted, error %, link."""
    lines = [f"{'id':<9} {'engine':<9} {'metric':<21} {'measured':>10} {'predicted':>10} {'error':>8}  link"]
    for r in results:
        err = "-" if r.error_pct is None else f"{r.error_pct:+.1f}%"
        lines.append(f"{r.row.id:<9} {r.row.engine:<9} {r.row.metric:<21} {_num(r.row.measured):>10} "
                     f"{_num(r.predicted):>10} {err:>8}  {r.row.link}")
    return "\n".join(lines)


def format_summary(summary: Sequence[dict]) -> str:
    lines = [f"{'engine':<9} {'metric':<21} {'n':>3} {'median |err|':>13} {'p90 |err|':>10} {'worst':>8}"]
    for s in summary:
        pct = lambda x: "-" if x is None else f"{x:.1f}%"  # noqa: E731
        lines.append(f"{s['engine']:<9} {s['metric']:<21} {s['n']:>3} {pct(s['median_pct']):>13} "
                     f"{pct(s['p90_pct']):>10} {pct(s['max_pct']):>8}"
                     + (f"  ({s['missing']} without a prediction)" if s["missing"] else ""))
    return "\n".join(lines)


def main(path=None) -> int:
    """Print every row and the summary per engine and metric; 0 when every row was predicted."""
    rows = read_measurements(MEASUREMENTS_CSV if path is None else path)
    results = evaluate(rows)
    print(format_results(results))
    print()
    print(format_summary(summarise(results)))
    return 0 if all(r.predicted is not None for r in results) else 1
