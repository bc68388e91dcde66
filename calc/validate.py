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
import re
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np

from . import catalogue
from .accuracy import MIN_BAND_ROWS, region_table
from .engines import (
    CV_CSV,
    ENGINES,
    FAMILIES,
    FIRST_GRAPH_BUILD,
    FIRST_GRAPH_MONTH,
    FIRST_LAYER_SPLIT_MONTH,
    KEPT_OUT_CSV,
    MEASUREMENTS_CSV,
    METRICS,
    ROW_SPLIT_ENGINES,
    VLLM_CARD_DEFAULTS_FROM,
    VLLM_V0_MAX_SEQS,
    backend_of,
    base,
    kept_out_as,
    named_months,
    release_build,
    release_family,
    release_version,
)
from .evaluate import report
from .scenario import UNKNOWN_NAMED, ScenarioError, split_link, split_link_keys, unknown_note
from .words import number_text

COLUMNS = ("id", "engine", "metric", "measured", "link", "source", "notes", "version")


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
    version: str = ""
    file: str = ""  # the name of the file it was read from, "" where not read from one
    line: int = 0    # its line in that file


def _where(file: str, line: int, row_id: str) -> str:
    """A file's row as messages name it: ``mine.csv line 7 (id r1)``."""
    return f"{file} line {line}" + (f" (id {row_id})" if row_id else "")


def named(row: Measurement) -> str:
    """A row as a printout names it: its file and line where read from one ("mine.csv line 7 (id r1)"), else its id."""
    return _where(row.file, row.line, row.id) if row.file else f"id {row.id or '(none)'}"


@dataclass(frozen=True)
class Result:
    """A measurement and what the calculator predicts for it (None when the link cannot give the figure)."""

    row: Measurement
    predicted: float | None
    reason: str = ""  # why there is no prediction (the link's error), or why the one given is in doubt

    @property
    def error_pct(self) -> float | None:
        if self.predicted is None:
            return None
        return (self.predicted - self.row.measured) / self.row.measured * 100


def read_measurements(path=MEASUREMENTS_CSV, skipped: list[tuple[int, str]] | None = None) -> list[Measurement]:
    """The rows of a measurements file (columns :data:`COLUMNS`).

    Raises ValueError for a file without the columns, and for a bad row (naming its line, the field, its value and
    what is accepted) unless ``skipped`` is given: then its line and that message are appended to ``skipped`` and the
    row left out,
    so one bad row of a user's file does not hide the others."""
    path = Path(path)
    out = []
    with path.open(newline="", encoding="utf-8") as f:
        reader = csv.DictReader(f)
        missing = [c for c in COLUMNS[:5] if c not in (reader.fieldnames or [])]
        if missing:
            raise ValueError(f"{path.name}: missing column(s) {', '.join(missing)}")
        for data in reader:
            try:
                out.append(_measurement(data, path.name, reader.line_num))
            except ValueError as exc:
                if skipped is None:
                    raise
                skipped.append((reader.line_num, str(exc)))
    return out


def _measurement(data: dict, file: str, line: int) -> Measurement:
    """One row (line ``line`` of file ``file``) of a measurements file; raises ValueError naming the row, the field,
    its value and what is accepted."""
    where = _where(file, line, (data.get("id") or "").strip())
    metric = (data["metric"] or "").strip()
    if metric not in METRICS:
        raise ValueError(f"{where}: metric={metric!r} is not accepted: metric takes one of {', '.join(METRICS)}")
    text = (data["measured"] or "").strip()
    try:
        measured = float(text)
    except ValueError:
        raise ValueError(f"{where}: measured={text!r} is not a number: measured takes a positive number") from None
    if not (math.isfinite(measured) and measured > 0):
        raise ValueError(f"{where}: measured={text!r} is not accepted: measured takes a positive number")
    return Measurement((data["id"] or "").strip(), (data["engine"] or "").strip(), metric, measured,
                       (data["link"] or "").strip(), data.get("source") or "", data.get("notes") or "",
                       (data.get("version") or "").strip(), file, line)


def source_of(row: Measurement) -> str:
    """The source a row belongs to for cross-validation: its document at its commit, the ``source`` column up to
    the first `` (`` (a table re-measured on a later release, at another commit, is another source)."""
    return row.source.split(" (")[0].strip()


def flattering_pct(metric: str, error_pct: float) -> float:
    """A row's error signed so that a positive one flatters self-hosting: a throughput predicted too high, or a
    step predicted too short (its error turned round)."""
    return -error_pct if metric == "step_ms" else error_pct


def with_keys(link: str, **keys: object) -> str:
    """``link`` with ``keys`` set (replacing the link's own values), as a query string."""
    raw, _ = split_link(link)
    raw.update({k: str(v) for k, v in keys.items()})
    return "&".join(f"{k}={v}" for k, v in raw.items())


#: A llama.cpp row on Apple's Metal backend: the word, a Mac, or an Apple chip (M1, M2 Ultra, M3 Max: an ``M`` and one
#: digit as a word, not ``M.2``), and not a bare-metal host.
APPLE = re.compile(r"(?<!bare-)(?<!bare )\bmetal\b|\bapple\b|\bmac(?:book|\s?studio|\s?mini)?\b|\bm[1-9]\b(?![.\d])")


def row_month(row: Measurement) -> tuple[int, int] | None:
    """The month the release a row was measured on dates from, None where its texts name none.

    The version first, then the source, then the notes. A text naming several months in clauses of their own (split
    at ``;`` and parentheses) that each start with a label, as a document holding tables of several dates does
    (``LLaMA-2 table ... Dec 2023; LLaMA-3 tables May 2024``), gives the month of the clause whose label starts the
    row's notes (``Llama-3 8B | Q4_K_M | ...``); where no label or several match, the earliest month, so that a row
    is never priced with a release later than it may have been."""
    def label(text: str) -> str:
        return re.sub(r"[^a-z0-9]", "", text.lower())
    subject = label(row.notes.split("|")[0])
    for text in (row.version, row.source, row.notes):
        clauses = [c for c in re.split(r"[;()]", text or "") if named_months(c)]
        if len(clauses) == 1:
            return max(named_months(clauses[0]))
        if clauses:
            mine = [c for c in clauses if len(tag := label(c.split()[0])) >= 3 and subject.startswith(tag)]
            return max(named_months(mine[0])) if len(mine) == 1 else min(min(named_months(c)) for c in clauses)
    return None


#: A benchmark run whose requests were all sent at once: no request rate, an infinite one, or "all at once".
_AT_ONCE = re.compile(r"request[ _-]?rate\W*inf|no --request-rate|\bat once\b|\boffline\b")
#: Its request count: ``--num-prompts 320``, ``"num_prompts": 320``, ``5000 prompts``, ``1,000 requests``.
_PROMPTS = re.compile(r"num[ _-]prompts\W*(\d[\d,]*)|\b(\d[\d,]*)\s+(?:prompts|requests)\b")
#: The prompt plus reply tokens a ShareGPT sample may hold: vLLM's benchmark_serving and sglang.bench_serving drop
#: longer pairs (``prompt_len + output_len > 2048``), so the longest reply is this less the prompt.
SHAREGPT_MAX_TOKENS = 2048


def run_from_text(row: Measurement, raw: dict[str, str]) -> dict[str, object]:
    """The finite run a throughput row's texts describe and its link does not state (docs/method.md section 8.1).

    A row whose source or notes name a request count sent all at once (:data:`_PROMPTS`, :data:`_AT_ONCE`:
    ``ShareGPT, 5000 prompts, request rate inf``) was a run of that many requests, not a steady full load:
    ``run_prompts`` is the count, and on ShareGPT the replies spread about their mean (``out_spread=exp``) up to
    what the benchmarks' filter leaves beside the prompt (``out_max``, :data:`SHAREGPT_MAX_TOKENS` less ``in_tok``);
    elsewhere every reply is ``out_tok`` long. Nothing where the link states a run, the row is a step, or no count
    is named."""
    if row.metric != "max_throughput_tok_s" or "run_prompts" in raw:
        return {}
    text = f"{row.source} {row.notes}".lower()
    found = _PROMPTS.search(text)
    if not found or not _AT_ONCE.search(text):
        return {}
    keys: dict[str, object] = {"run_prompts": int((found.group(1) or found.group(2)).replace(",", ""))}
    if "sharegpt" in text and "out_spread" not in raw:
        keys["out_spread"] = "exp"
        if "out_max" not in raw and raw.get("in_tok", "").isdigit():
            keys["out_max"] = max(SHAREGPT_MAX_TOKENS - int(raw["in_tok"]), int(raw.get("out_tok", "0") or 0))
    return keys


def completion_labels(added: dict[str, str]) -> list[str]:
    """Words for the keys :func:`priced_as` added to a row's link (``run_prompts=5000``: "as a finite run of 5000
    requests sent at once"), one label per kind."""
    out = []
    if "run_prompts" in added:
        spread = " with ShareGPT's reply lengths" if added.get("out_spread") == "exp" else ""
        out.append(f"as a finite run of requests sent at once{spread} (run_prompts)")
    if "cuda_graphs" in added:
        out.append("with CUDA graphs" if added["cuda_graphs"] == "1" else "without CUDA graphs (Apple's Metal)")
    if "max_seqs" in added:
        out.append(f"with vLLM V0's cap of {added['max_seqs']} sequences (max_seqs)")
    return out


def priced_as(row: Measurement) -> tuple[str, str | None]:
    """The link a row of the user's is predicted with, and the release family it was moved to (None: its own link).

    A link that names an engine's plain id (or a backend's current build, ``llamacpp-vulkan``) means that engine's
    current release (docs/calibration.md section 3); a
    row measured on an older release says which in its ``version``, ``source`` or ``notes`` (``TensorRT-LLM v0.5.0``,
    ``llama.cpp ... snapshots Dec 2023``, ``-DGGML_VULKAN=1``), and is predicted by the profile of the release family
    that covers it (:func:`calc.engines.release_family`), the version column first. A llama.cpp row on Apple's Metal
    backend (:data:`APPLE`: the word or an Apple chip) runs without CUDA graphs (``cuda_graphs=0``), its custom card
    an Apple GPU (``arch=apple``: Metal's working set of the unified memory), unless its link
    says otherwise, and a CUDA row of the 2023-2024 builds with them (``cuda_graphs=1``) where it names build 2824 or
    later (:data:`calc.engines.FIRST_GRAPH_BUILD`) or, naming no build, a month from May 2024 on
    (:data:`calc.engines.FIRST_GRAPH_MONTH`; the row's own month, :func:`row_month`); a CUDA row of several cards
    dated before January 2024 split its matrices by rows (``split=row``, :func:`_row_split`). A vLLM V0 row is priced
    by ``vllm-v0`` whether or not it ran multi-step scheduling (``--num-scheduler-steps``): the family's host times
    are fitted on such runs (docs/calibration.md section 3)."""
    raw, _ = split_link(row.link)
    engine = raw.get("engine", "")
    if engine not in ENGINES or engine == "roofline" or link_not_read(row.link):
        return row.link, None  # (a link naming an unknown key stays as written, for evaluate to refuse)
    # The current build of a backend (llamacpp-vulkan: "backend vulkan" and no release range) is a plain id too, for
    # that backend's own older families only.
    backend = backend_of(engine)
    if base(engine) != engine and not (backend and "&" not in FAMILIES[engine]["releases"]):
        # A family's own id: only the run its texts describe, and a row split its date implies.
        run = {**_apple_card(row, raw, engine), **_row_split(row, raw, engine), **run_from_text(row, raw)}
        return (with_keys(row.link, **run), None) if run else (row.link, None)
    family = None
    for text in (row.version, row.source, row.notes):
        family = release_family(engine, text) if text else None
        if family and backend and backend_of(family) != backend:
            family = None  # a Vulkan row whose text names no backend stays on its backend
        if family:
            break
    texts = _texts(row)
    keys: dict[str, object] = {}
    if family and family != engine:
        keys["engine"] = family
    if base(engine) == "llamacpp" and APPLE.search(texts) and "cuda_graphs" not in raw:
        keys["cuda_graphs"] = 0
    elif keys.get("engine", engine) == "llamacpp-2024" and "cuda_graphs" not in raw:
        builds = [b for t in (row.version, row.source, row.notes) if t and (b := release_build(engine, t))]
        month = row_month(row)
        if (max(builds) >= FIRST_GRAPH_BUILD) if builds else (month is not None and month >= FIRST_GRAPH_MONTH):
            keys["cuda_graphs"] = 1  # a CUDA build of May 8, 2024 or later: graphs (calc.engines.FIRST_GRAPH_BUILD)
    keys.update(_apple_card(row, raw, engine))
    keys.update(_row_split(row, raw, keys.get("engine", engine)))
    if base(engine) == "vllm" and "max_seqs" not in raw and row.metric == "max_throughput_tok_s":
        version = next((v for t in (row.version, row.source, row.notes) if t and (v := release_version(engine, t))),
                       None)
        if version is not None and version < VLLM_CARD_DEFAULTS_FROM:
            keys["max_seqs"] = VLLM_V0_MAX_SEQS
    keys.update(run_from_text(row, raw))
    return (with_keys(row.link, **keys), keys.get("engine")) if keys else (row.link, None)


def _texts(row: Measurement) -> str:
    """A row's version, source and notes as one lower-case text, where its release, run and machine are read."""
    return " ".join((row.version, row.source, row.notes)).lower()


def _apple_card(row: Measurement, raw: dict[str, str], engine: str) -> dict[str, object]:
    """``{"arch": "apple"}`` for a llama.cpp row on an Apple machine (:data:`APPLE`) whose link gives a custom card
    and no family, so its memory is Metal's working set of the unified memory (calc/memory.py
    ``APPLE_WORKING_SET``); ``{}`` otherwise."""
    texts = _texts(row)
    if base(engine) != "llamacpp" or raw.get("card") != "custom" or "arch" in raw or not APPLE.search(texts):
        return {}
    return {"arch": "apple"}


def _row_split(row: Measurement, raw: dict[str, str], family: str) -> dict[str, object]:
    """``{"split": "row"}`` for a row of several CUDA cards under the llama.cpp builds that split every matrix by rows
    (:data:`calc.engines.ROW_SPLIT_ENGINES`) dated before whole layers became the default
    (:data:`calc.engines.FIRST_LAYER_SPLIT_MONTH`, the row's own month: :func:`row_month`), where its link does not
    say; ``{}`` otherwise (Apple's Metal runs one device)."""
    texts = _texts(row)
    if family not in ROW_SPLIT_ENGINES or "split" in raw or APPLE.search(texts):
        return {}
    try:
        several = int(raw.get("gpus", "1")) > 1
    except ValueError:
        return {}  # a link the scenario will refuse
    month = row_month(row)
    return {"split": "row"} if several and month is not None and month < FIRST_LAYER_SPLIT_MONTH else {}


#: Why a row's prediction is missing or in doubt: its link's set-up does not fit in memory as the engine allocates it.
NOT_FIT = ("the set-up does not fit in memory as linked (its weights and one request's KV cache exceed the share of "
           "the cards' memory the engine takes): check the link's card, cards and formats")
#: Why a row whose weights fit has no prediction: not one request of its length fits the KV cache beside them.
NO_SEQUENCE = ("not one request of the link's length fits the KV cache left beside the weights as the engine "
               "allocates memory, so no batch runs: check the link's card, cards, formats and lengths")
#: The same on a Mac, where a set-up past Metal's working set still runs, paging, which no step model prices.
NOT_FIT_MAC = ("the set-up does not fit in memory as linked: its weights and one request's KV cache exceed Metal's "
               "working set of the Mac's unified memory, where a run pages (slower than any figure here)")


def link_not_read(link: str) -> str:
    """Why a measurement's link cannot stand for its set-up, or "" where it can: a link that is empty, or that names
    a key the link format does not know (a typo such as ``bacth``, or text that is not a link), would be priced as
    the defaults it leaves, which no measurement measured. (The app and the command line drop such a key with a
    warning; a measurement is a claim about one set-up, so here it is refused.)

    Raises:
        ScenarioError: the link is longer than a link may be (:func:`calc.scenario.split_link`)."""
    raw, _, unknown = split_link_keys(link)
    if unknown:
        shown = ", ".join(unknown_note(k) for k in unknown[:UNKNOWN_NAMED])
        more = f" and {len(unknown) - UNKNOWN_NAMED:,} more" if len(unknown) > UNKNOWN_NAMED else ""
        said = f"unknown keys ({len(unknown):,}): {shown}{more}" if len(unknown) > 1 else f"unknown key {shown}"
        return (f"link: {said}; a measurement's link gives its "
                "set-up in the calculator's keys (python -m calc --help lists them), so the row is not priced")
    if not raw:
        return "link: empty; a measurement's link gives its set-up (model=...&card=...&batch=...), so the row is not priced"
    return ""


def evaluate(rows: Iterable[Measurement], engine: str | None = None) -> list[Result]:
    """Each row's prediction from its own link (or under ``engine`` instead of the one it names). A link the
    calculator refuses (:class:`calc.scenario.ScenarioError`, naming the field, its value and the accepted range),
    or one that is empty or names a key the link format does not know (:func:`link_not_read`), gives no
    prediction, and that message as the result's ``reason``."""
    out = []
    for row in rows:
        link = row.link if engine is None else with_keys(row.link, engine=engine)
        try:
            unread = link_not_read(link)
            if unread:
                out.append(Result(row, None, unread))
                continue
            r = report(link)
        except ScenarioError as exc:
            out.append(Result(row, None, str(exc)))
            continue
        value = r[metric_key(row.metric, r["scenario"]["run_prompts"])]
        if not r["fits"]:
            unfit = NOT_FIT_MAC if r["scenario"].get("arch") == "apple" else NOT_FIT
        else:
            unfit = NO_SEQUENCE if value is None and r["max_batch"] == 0 else ""
        out.append(Result(row, None if value is None else float(value),
                          "; ".join(x for x in (unfit, _card_doubt(row, r["scenario"])) if x)))
    return out


def _card_doubt(row: Measurement, scenario: dict) -> str:
    """Why a row's card is in doubt, or "": its texts name an Apple machine (:data:`APPLE`) while its link prices one
    of the catalogue's cards (none is Apple's; a link that names no card takes the default), so the prediction is
    another machine's."""
    found = APPLE.search(_texts(row))
    card = scenario.get("card")
    if not found or card == "custom" or card not in catalogue.cards():
        return ""
    return (f"its text names an Apple machine ({found.group(0).strip()!r}) while its link prices the catalogue's "
            f"{catalogue.cards()[card]['name']} (card={card}); give the machine as card=custom with its memory "
            "(mem_gib) and bandwidth (bw_tbs)")


def metric_key(metric: str, run_prompts: int) -> str:
    """The report key a row's ``metric`` is predicted by: a full-load throughput measured as a finite benchmark run
    (``run_prompts`` requests sent at once, docs/method.md section 8.1) by ``run_throughput_tok_s``, the ramp and
    tail of the run included; else the metric itself."""
    return "run_throughput_tok_s" if metric == "max_throughput_tok_s" and run_prompts else metric


def summarise(results: Sequence[Result], by_engine: bool = True) -> list[dict]:
    """Per engine (or over all rows) and metric: ``n``, ``signed_median_pct`` (positive = flatters self-hosting,
    :func:`flattering_pct`), ``median_pct``, ``p90_pct``, ``max_pct`` of the absolute errors, the most flattering
    row's error (``most_flattering_pct``) and the ids of the rows (rows without a prediction count as missing,
    not as zero error)."""
    groups: dict[tuple[str, str], list[Result]] = {}
    for r in results:
        groups.setdefault((r.row.engine if by_engine else "all", r.row.metric), []).append(r)
    out = []
    order = {e: i for i, e in enumerate(ENGINES)}
    for (engine, metric), rs in sorted(groups.items(),
                                       key=lambda kv: (order.get(kv[0][0], 99), kv[0][0], METRICS.index(kv[0][1]))):
        ok = [r for r in rs if r.error_pct is not None]
        errs = np.array([abs(r.error_pct) for r in ok])
        flat = np.array([flattering_pct(r.row.metric, r.error_pct) for r in ok])
        out.append({"engine": engine, "metric": metric, "n": int(errs.size),
                    "missing": len(rs) - int(errs.size),
                    "signed_median_pct": float(np.median(flat)) if errs.size else None,
                    "median_pct": float(np.median(errs)) if errs.size else None,
                    "p90_pct": float(np.percentile(errs, 90)) if errs.size else None,
                    "max_pct": float(errs.max()) if errs.size else None,
                    "most_flattering_pct": float(flat.max()) if errs.size else None,
                    "rows": [r.row.id for r in rs]})
    return out


def cross_validated_predictions(path=CV_CSV) -> dict[str, float | None]:
    """``{row id: prediction by a fit without the row's source}`` from ``engine_cv.csv`` (written by
    ``scripts/calibrate.py``)."""
    out: dict[str, float | None] = {}
    with Path(path).open(newline="", encoding="utf-8") as f:
        for row in csv.DictReader(f):
            text = (row.get("predicted_cv") or "").strip()
            out[row["id"]] = float(text) if text else None
    return out


def cross_validated_results(rows: Iterable[Measurement]) -> list[Result]:
    """The shipped rows, each with its leave-one-source-out prediction (rows the calibration did not see have
    none)."""
    cv = cross_validated_predictions()
    return [Result(r, cv.get(r.id)) for r in rows]


def kept_out_results(path=KEPT_OUT_CSV) -> list[Result]:
    """The published rows kept out of the fit (``measurements_other.csv``), each predicted by the shipped figures and
    filed under the profile whose figures predicted it (:func:`calc.engines.kept_out_as` of the row's engine:
    ``vllm-2025``'s rows under ``vllm``, ``vllm-v0``'s under its own), as ``engine_errors.csv``'s ``kept-out`` rows
    summarise them."""
    return [Result(replace(r.row, engine=kept_out_as(r.row.engine)), r.predicted, r.reason)
            for r in evaluate(read_measurements(path))]


#: The width of the engine column: the longest profile id.
_ENGINE_W = max(len(e) for e in ENGINES)


def format_results(results: Sequence[Result], cv: Sequence[Result] | None = None) -> str:
    """One line per row: id, engine, metric, measured, predicted, error % (and the cross-validated prediction and
    error where given), the release measured (the row's ``version``, else its source; cut at 32 characters), link.
    Errors are signed as in the tables (:func:`flattering_pct`): + where the prediction
    flatters self-hosting, a step predicted too short or a throughput too high."""
    head = f"{'id':<9} {'engine':<{_ENGINE_W}} {'metric':<21} {'measured':>10} {'predicted':>10} {'error':>8}"
    if cv is not None:
        head += f" {'cross-val':>10} {'cv error':>8}"
    lines = ["Errors signed + where a prediction flatters self-hosting (a step too short, a throughput too high):",
             head + f"  {'release measured':<32}  link"]

    def signed(r: Result) -> str:
        return "-" if r.error_pct is None else f"{flattering_pct(r.row.metric, r.error_pct):+.1f}%"
    for i, r in enumerate(results):
        err = signed(r)
        line = (f"{r.row.id:<9} {r.row.engine:<{_ENGINE_W}} {r.row.metric:<21} {number_text(r.row.measured):>10} "
                f"{number_text(r.predicted):>10} {err:>8}")
        if cv is not None:
            c = cv[i]
            line += f" {number_text(c.predicted):>10} {signed(c):>8}"
        release = r.row.version or source_of(r.row)
        release = release if len(release) <= 32 else release[:31] + "…"
        lines.append(line + f"  {release:<32}  {r.row.link}")
    return "\n".join(lines)


def _pct(x: float | None) -> str:
    return "-" if x is None else f"{x:.1f}%"


def _spct(x: float | None) -> str:
    return "-" if x is None else f"{x:+.1f}%"


#: The error columns every table prints: rows, signed median, median, 90th percentile, worst.
_ERROR_HEAD = f"{'n':>3} {'signed med':>11} {'median':>8} {'p90':>8} {'worst':>8}"


def _errors(s: dict) -> str:
    """A band's :data:`_ERROR_HEAD` columns."""
    return (f"{s['n']:>3} {_spct(s['signed_median_pct']):>11} {_pct(s['median_pct']):>8} {_pct(s['p90_pct']):>8} "
            f"{_pct(s['max_pct']):>8}")


def format_summary(summary: Sequence[dict]) -> str:
    """The error table: per engine and metric, rows, signed median (positive = flatters self-hosting), median,
    90th percentile and worst absolute error, and the most flattering row."""
    lines = [f"{'engine':<{_ENGINE_W}} {'metric':<21} {_ERROR_HEAD} {'most flattering':>16}"]
    for s in summary:
        lines.append(f"{s['engine']:<{_ENGINE_W}} {s['metric']:<21} {_errors(s)} "
                     f"{_spct(s.get('most_flattering_pct')):>16}"
                     + (f"  ({s['missing']} without a prediction)" if s["missing"] else ""))
    return "\n".join(lines)


def format_regions(regions: Sequence[dict]) -> str:
    """The cross-validated error of each measured region of 10 rows or more (calc.accuracy.region_table): its
    rows, signed median, median, 90th percentile and worst absolute error, the engine's 90th percentile beside it,
    and whether the bills of a scenario there are ranged with the region's band."""
    lines = [f"{'engine':<{_ENGINE_W}} {'cards':<15} {'model':<6} {'TP':>3} {'weights':<9} {'metric':<21} "
             f"{_ERROR_HEAD} {'engine p90':>11}  bills use"]
    for r in regions:
        lines.append(f"{r['engine']:<{_ENGINE_W}} {r['card_family']:<15} {r['model_kind']:<6} {r['gpus']:>3} "
                     f"{'packed' if r['packed'] else 'as stored':<9} {r['metric']:<21} {_errors(r)} "
                     f"{_pct(r['engine_p90_pct']):>11}  " + ("the region's" if r["bills_use"] else "the engine's"))
    return "\n".join(lines)


def _fitted_rows(rows: Sequence[Measurement], shipped: Sequence[Measurement]) -> dict[str, str]:
    """Each row of ``rows`` that is one of the ``shipped`` calibration rows (the same id, or the same link, metric
    and measured figure: a user's file may copy published rows), its id -> the shipped row's id."""
    ids = {r.id for r in shipped}
    setups = {(r.link, r.metric, r.measured): r.id for r in shipped}
    out = {}
    for r in rows:
        if r.id in ids:
            out[r.id] = r.id
        elif (r.link, r.metric, r.measured) in setups:
            out[r.id] = setups[(r.link, r.metric, r.measured)]
    return out


def main(path=None, as_linked: bool = False) -> int:
    """Print every row, then two error tables: in-sample (the shipped profiles against the rows) and
    leave-one-source-out (each shipped row predicted by a fit without its source, from ``engine_cv.csv``). For
    a file of the user's own, the rows no fit saw are out of sample, and those that are shipped rows
    (:func:`_fitted_rows`) are counted apart, beside their leave-one-source-out predictions; a row
    whose link names an engine's plain id and whose text names an older release is predicted by that release's
    family (:func:`priced_as`; ``as_linked`` turns that off), and the line says so. A row of the user's file that
    cannot be read or whose link the calculator refuses is listed with the reason, and the others are still predicted.
    0 when every row was predicted, else 1 (a file of no rows too)."""
    own = path is not None
    shipped = read_measurements(MEASUREMENTS_CSV)
    skipped: list[tuple[int, str]] = []
    rows = read_measurements(path, skipped) if own else shipped
    if own and not rows and not skipped:  # a header alone: empty tables would read as a file that was checked
        print(f"{Path(path).name} holds no rows under its header: nothing to predict.")
        return 1
    moved: dict[str, str] = {}
    completed: dict[str, list[str]] = {}
    if own and not as_linked:
        priced = []
        for r in rows:
            link, family = priced_as(r)
            if family:
                moved[r.id] = family
            as_linked_raw = split_link(r.link)[0]
            added = {k: v for k, v in split_link(link)[0].items() if k != "engine" and as_linked_raw.get(k) != v}
            if added:
                completed[r.id] = completion_labels(added)
            # grouped under the profile that priced it, so a table never quotes an older release as the current one
            priced.append(replace(r, engine=family or r.engine, link=link))
        rows = priced
    results = evaluate(rows)
    unpriced = [r for r in results if r.predicted is None] if own else []
    if unpriced:  # a user's row the calculator refused is listed with its reason below, in no table
        results = [r for r in results if r.predicted is not None]
        rows = [r.row for r in results]
        moved = {k: v for k, v in moved.items() if k in {r.id for r in rows}}
        completed = {k: v for k, v in completed.items() if k in {r.id for r in rows}}
    fitted = _fitted_rows(rows, shipped) if own else {}
    if own and fitted:  # a user's file that copies shipped rows: their leave-one-source-out predictions beside
        predictions = cross_validated_predictions()
        cv = [Result(r, predictions.get(fitted.get(r.id, ""))) for r in rows]
    else:
        cv = None if own else cross_validated_results(rows)
    print(format_results(results, cv))
    print()
    if skipped or unpriced:
        print(f"{len(skipped) + len(unpriced)} row{'s' if len(skipped) + len(unpriced) != 1 else ''} of this file "
              "could not be predicted and count in no table:")
        listed = [*skipped, *((r.row.line, f"{named(r.row)}: {r.reason or 'no prediction'}") for r in unpriced)]
        for _, message in sorted(listed, key=lambda item: item[0]):  # the file's order, unreadable and refused alike
            print(f"  {message}")
        print()
    doubtful = [r for r in results if r.predicted is not None and r.reason]
    if doubtful:
        print(f"{len(doubtful)} row{'s' if len(doubtful) != 1 else ''} predicted all the same, but in doubt "
              "(counted in the tables):")
        for r in doubtful:
            print(f"  {named(r.row)}: {r.reason}")
        print()
    if moved:
        counts = Counter(moved.values())
        print(f"{len(moved)} of {len(rows)} rows name an older release or another backend than their link's plain "
              "engine id, and were predicted by that family's profile (the link column shows it; --as-linked "
              "predicts every link as written): " + ", ".join(f"{n} as {f}" for f, n in counts.items()))
        print()
    if completed:
        labels = Counter(label for ls in completed.values() for label in ls)
        print(f"{len(completed)} of {len(rows)} rows' links were completed from what their texts say (the link column "
              "shows it; --as-linked predicts every link as written): "
              + ", ".join(f"{n} {label}" for label, n in labels.items()))
        print()
    if own and fitted:
        print(f"{len(fitted)} of {len(rows)} rows of this file are rows the shipped profiles were fitted to (the same "
              f"id, or the same link and figure, in calc/data/measurements.csv): not an accuracy claim. Their "
              "cross-validated errors are in the last table.")
        unseen = [r for r in results if r.row.id not in fitted]
        if unseen:
            print(f"The other {len(unseen)} row{'s' if len(unseen) != 1 else ''} against the shipped profiles "
                  "(rows the calibration never saw: out of sample). Errors signed + where a prediction flatters "
                  "self-hosting:")
            print(format_summary(summarise(unseen)))
        print("The fitted rows against the shipped profiles (in sample). Errors signed + where a prediction "
              "flatters self-hosting:")
        print(format_summary(summarise([r for r in results if r.row.id in fitted])))
        print("The same rows, each predicted by a fit without its source (leave-one-source-out):")
        print(format_summary(summarise([r for r in cv if r.row.id in fitted])))
    elif own:
        print("These rows against the shipped profiles (rows the calibration never saw: out of sample). "
              "Errors signed + where a prediction flatters self-hosting:")
        print(format_summary(summarise(results)))
    else:
        print("In-sample: the shipped profiles against the rows they were fitted to "
              "(not an accuracy claim). Errors signed + where a prediction flatters self-hosting:")
        print(format_summary(summarise(results)))
    print()
    print(("The shipped rows (calc/data/measurements.csv), cross-validated" if own else "Cross-validated")
          + " (leave-one-source-out): each source's rows predicted by profiles fitted without that source; the error "
          "band every page quotes (a set-up whose own rows were further off is ranged with theirs: the regions below):")
    print(format_summary(summarise(cross_validated_results(shipped) if own else cv)))
    if not own:
        print()
        print(f"By measured region (engine x card family x model kind x cards per replica x weights packed or as "
              f"stored), the regions of {MIN_BAND_ROWS} rows or more, cross-validated as above: where a region's 90th "
              "percentile is wider than its engine's, the bills of a scenario there are ranged with the region's:")
        print(format_regions(region_table()))
        print()
        print("Kept out of the fit (calc/data/measurements_other.csv): published rows the figures never saw, predicted "
              "by the shipped profiles, each under the profile whose figures predicted it (a release family that "
              "shares every figure of its engine counts as the engine); the Validation page's table and every page's "
              "note quote them. --validate calc/data/measurements_other.csv lists each row by the engine it names:")
        print(format_summary(summarise(kept_out_results())))
    return 0 if not skipped and not unpriced and all(r.predicted is not None for r in results) else 1
