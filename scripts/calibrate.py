"""Fit one set of engine-profile figures per engine to the published measurements, and write them.

    .venv/bin/python scripts/calibrate.py            # fit, print figures and residuals, write the data files
    .venv/bin/python scripts/calibrate.py --dry-run  # fit and print only

Reads ``calc/data/measurements.csv`` only (each row a calculator link naming the engine measured, the metric
``step_ms`` or ``max_throughput_tok_s`` and the published value). For each engine with rows it minimises the sum of
squared log errors ``sum(w * log(predicted / measured)^2)`` over that engine's rows (every card, model and metric
together: one set of figures per engine, never per row), where ``w`` is ``OVER_WEIGHT`` (2) for a row predicted
faster than measured and 1 otherwise: a figure that flatters self-hosting costs twice what a cautious one does.
Plus a weak pull of each figure towards its prior
(``PRIOR``; weight ``PRIOR_WEIGHT``) so that a figure no row constrains stays at the prior instead of drifting.
Every figure is kept inside physical bounds (``BOUNDS``: no efficiency above 1, no negative time or memory) by a
logistic map, and the search is a coarse grid of starting points followed by a Nelder-Mead simplex written here
with numpy (no scipy). The same data give the same figures on every run.

Writes ``calc/data/engines.csv`` (every figure of every engine with its basis and source) and
``calc/data/engine_errors.csv`` (each profile's error per metric on the rows: n, median, 90th percentile and worst
absolute error in per cent). SGLang has no rows: it gets vLLM's figures, marked as copied. Roofline is docs/method.md
sections 2, 5 and 6 by definition; its error on every row is written for comparison.

The fit evaluates rows with a fast vectorised copy of the model (``FastRows``); before writing, every row is
evaluated again through ``calc.report`` with the written figures and the two must agree to 1e-9.
"""

from __future__ import annotations

import argparse
import csv
import datetime as dt
import math
import re
import sys
from dataclasses import dataclass
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from calc import engines, load, model, traffic  # noqa: E402
from calc.engines import ENGINES, FIGURES, ROOFLINE  # noqa: E402
from calc.validate import Measurement, evaluate, read_measurements, summarise  # noqa: E402

SCRIPT = "scripts/calibrate.py"
DATA = "calc/data/measurements.csv"

#: Bounds of every fitted figure (both ends allowed). 5 ms per step is above the largest fixed cost the batch-1 rows
#: call for (llama.cpp's, about 3.8 ms); a larger one would make batch-1 decoding of small models slower than any
#: row measures.
BOUNDS = {"eff_bw": (0.02, 1.0), "eff_kv": (0.02, 1.0), "eff_flops": (0.02, 1.0), "eff_link": (0.02, 1.0),
          "step_us": (0.0, 5000.0), "tok_us": (0.0, 100.0), "mem_util": (0.5, 1.0), "overhead_gib": (0.0, 16.0),
          "layer_us": (0.0, 500.0), "eff_dequant": (0.3, 1.0)}
#: Where a figure stays when no row constrains it: the docs/method.md's roofline efficiency (0.7) and no extra time.
PRIOR = {"eff_bw": 0.7, "eff_kv": 0.7, "eff_flops": 0.7, "eff_link": 0.7, "step_us": 0.0, "tok_us": 0.0,
         "mem_util": 1.0, "overhead_gib": 4.0, "layer_us": 0.0, "eff_dequant": 1.0}
#: Scale of the pull towards the prior: efficiencies in log units, times in these microseconds, memory in GiB.
PRIOR_SCALE = {"step_us": 1000.0, "tok_us": 10.0, "overhead_gib": 4.0, "mem_util": 0.1, "layer_us": 100.0}
PRIOR_WEIGHT = 1e-3
#: Log error charged for a row the figures make impossible (nothing fits): a factor of about 20.
MISS = 3.0
#: Weight of a squared log error where the prediction is faster than the measurement (1 where it is slower).
OVER_WEIGHT = 2.0

#: The figures fitted for each engine with rows; the others are fixed below.
FITTED = {
    "vllm": ("eff_bw", "eff_kv", "eff_flops", "step_us", "tok_us"),
    "trtllm": ("eff_bw", "eff_kv", "eff_flops", "step_us", "tok_us", "eff_link", "overhead_gib"),
    "llamacpp": ("eff_bw", "layer_us", "eff_dequant"),
}
#: Figures fitted as one: batch-1 steps at short contexts read little cache, so llama.cpp's rows cannot tell the
#: bandwidth reached on the cache from the bandwidth reached on the weights.
TIED = {"llamacpp": {"eff_kv": "eff_bw"}}
#: Figures taken from the engines' documentation or from the measurements' own notes, with their sources.
#: (vLLM's reserve is derived from a row's note in :func:`vllm_overhead`.)
FIXED = {
    "vllm": {
        "layer_us": (0.0, "vLLM replays its decode steps as CUDA graphs, so launch costs do not grow with the layers; "
                          "its rows (one model) cannot tell a per-layer time from step_us either"),
        "mem_util": (0.9, "vLLM's default gpu_memory_utilization 0.9, the setting the silybench rows name"),
        "max_seqs": (256, "vLLM's default max_num_seqs 256; the silybench rows' throughput is the same at "
                          "concurrency 256 (be8873da: 13,567 tok/s) and 384 (c47fbca0: 13,591 tok/s)"),
    },
    "trtllm": {
        "layer_us": (0.0, "TensorRT-LLM replays its decode steps as CUDA graphs (cuda_graph_config in the rows' "
                          "set-up), so launch costs do not grow with the layers"),
        "eff_dequant": (1.0, "one row only (9072b5c5, NVFP4) stores its weights below 8 bits: a figure fitted "
                             "to it would be tuned to one row, so none is fitted (1, no loss)"),
        "mem_util": (1.0, "TensorRT-LLM sizes its KV cache as a fraction (0.9 to 0.95) of the memory left after "
                          "the weights (kv_cache_free_gpu_mem_fraction; perf-overview.md), expressed here as the "
                          "whole card less a fitted reserve"),
        "max_seqs": (2048, "TensorRT-LLM's default max_batch_size 2048 (trtllm-bench caps its own at 4096)"),
    },
    "llamacpp": {
        "step_us": (0.0, "llama.cpp's fixed time grows with the layers (its rows hold 32- and 80-layer models): it "
                         "is fitted per layer (layer_us), launching each layer's kernels one by one"),
        "mem_util": (1.0, "llama.cpp allocates the cache it is told to (no memory fraction)"),
        "overhead_gib": (4.0, "not constrained by the rows (batch-1 steps do not depend on memory): the docs/method.md's "
                              "default reserve, conservative for llama.cpp's compute buffers"),
        "max_seqs": (4, "llama-server's default of 4 parallel slots (--parallel auto; ggml-org/llama.cpp issue "
                        "17989)"),
    },
}
#: Engines measured on several cards lend their all-reduce efficiency to engines that were not (the same
#: interconnects and collective libraries carry every engine's all-reduces).
LINK_DONOR = "trtllm"


def vllm_overhead(rows: list[Measurement], mem_util: float) -> tuple[float, str]:
    """vLLM's reserve per card from a row whose note gives the KV-cache capacity vLLM reported: the memory it
    takes (``mem_util`` of the card) less the weights and that cache, in GiB."""
    for row in rows:
        m = re.search(r"KV cache capacity ([\d,]+) tokens", row.notes)
        if row.engine == "vllm" and m:
            s = load(row.link).scenario
            tokens = int(m.group(1).replace(",", ""))
            cache = tokens * float(model.cache_bytes(s, 1))
            reserve = mem_util * s.mem_gib - (model.weight_bytes(s) + cache) / model.GiB / s.gpus
            return round(reserve, 2), (f"row {row.id}'s note: vLLM reported a KV cache of {tokens:,} tokens at "
                                       f"gpu_memory_utilization {mem_util:g}; the card's share less the weights "
                                       f"and that cache leaves {reserve:.2f} GiB")
    raise SystemExit("no vLLM row reports its KV-cache capacity")


# ---------------------------------------------------------------- a fast copy of the model, vectorised over rows


@dataclass
class FastRows:
    """Every figure-independent quantity of an engine's rows, so that a set of figures is evaluated on all rows
    in one numpy expression. It repeats docs/method.md section 8 (model.step_parts, traffic.load_throughput) term by term;
    :func:`check_against_report` proves it agrees with ``calc.report``."""

    rows: list[Measurement]

    def __post_init__(self):
        self.scenarios = [load(r.link).scenario for r in self.rows]
        self.measured = np.array([r.measured for r in self.rows])
        self.is_step = np.array([r.metric == "step_ms" for r in self.rows])
        cols: dict[str, list[float]] = {k: [] for k in (
            "gbw", "gT", "mem", "g", "W", "C_end", "Wd", "Wm", "q", "C_ctx", "fl", "B_step", "comm_step",
            "C_load", "fl_load", "cb", "cl", "O", "I", "Fp", "L", "sub8_d", "sub8_m")}
        for row, s in zip(self.rows, self.scenarios, strict=False):
            g = s.gpus
            M, D = model.moe_split(s)
            cols["gbw"].append(g * s.bw_tbs * 1e12)
            cols["gT"].append(g * s.tflops * 1e12)
            cols["mem"].append(s.mem_gib)
            cols["g"].append(g)
            cols["W"].append(model.weight_bytes(s))
            cols["C_end"].append(float(model.cache_bytes(s, traffic.request_context(s))))
            cols["Wd"].append((D - model.embed_params(s)) * s.weight_bits / 8)
            cols["Wm"].append(M * s.expert_weight_bits / 8)
            cols["q"].append(1 - s.experts_active / s.experts if s.experts else 1.0)
            if row.metric == "step_ms":
                if s.batch == "auto":
                    raise SystemExit(f"row {row.id}: a step_ms row needs an explicit batch")
                B = int(s.batch)
                cols["B_step"].append(B)
                cols["C_ctx"].append(s.attn * B * float(model.cache_bytes(s, s.ctx)))
                cols["fl"].append(B * float(model._flops_per_token(s, s.ctx)))
                cols["comm_step"].append(float(model.comm_seconds(s, B)))
            else:
                cols["B_step"].append(0)
                cols["C_ctx"].append(0.0)
                cols["fl"].append(0.0)
                cols["comm_step"].append(0.0)
            n_load = traffic.load_context(s)
            cols["C_load"].append(s.attn * float(model.cache_bytes(s, n_load)))
            cols["fl_load"].append(float(model._flops_per_token(s, n_load)))
            cols["cb"].append(2 * s.layers * 2 * (g - 1) / g * s.hidden * 2 / (s.link_gbs * 1e9) if g > 1 else 0.0)
            cols["cl"].append(2 * s.layers * s.link_us * 1e-6 if g > 1 else 0.0)
            cols["O"].append(s.out_tok)
            cols["I"].append(s.in_tok)
            cols["Fp"].append(traffic.prefill_flops(s))
            cols["L"].append(s.layers)
            cols["sub8_d"].append(float(s.weight_bits < 8))
            cols["sub8_m"].append(float(s.expert_weight_bits < 8))
        for k, v in cols.items():
            setattr(self, k, np.array(v, dtype=float))

    def predict(self, f: dict) -> np.ndarray:
        """Each row's metric under figures ``f`` (NaN where nothing fits)."""
        GiB = model.GiB
        # Weights below 8 bits are read at eff_dequant of eff_bw; the fixed time is per step and per layer.
        bw_d = self.gbw * f["eff_bw"] * np.where(self.sub8_d > 0, f["eff_dequant"], 1.0)
        bw_m = self.gbw * f["eff_bw"] * np.where(self.sub8_m > 0, f["eff_dequant"], 1.0)
        fixed = (f["step_us"] + self.L * f["layer_us"]) * 1e-6
        # step_ms rows: the decode step of docs/method.md section 8 at the row's batch and context.
        step = (np.maximum(self.Wd / bw_d + self.Wm * (1 - self.q ** self.B_step) / bw_m
                           + self.C_ctx / (self.gbw * f["eff_kv"]),
                           self.fl / (self.gT * f["eff_flops"]))
                + self.comm_step + fixed) * 1e3
        # max_throughput rows: traffic.load_throughput at traffic.throughput_batch.
        free = self.g * (f["mem_util"] * self.mem - f["overhead_gib"]) * GiB - self.W
        B = np.floor(np.maximum(0.0, free) / self.C_end)
        if f["max_seqs"] is not None:
            B = np.minimum(B, f["max_seqs"])
        tau = (np.maximum(self.Wd / bw_d + self.Wm * (1 - self.q ** B) / bw_m
                          + B * self.C_load / (self.gbw * f["eff_kv"]),
                          B * self.fl_load / (self.gT * f["eff_flops"]))
               + B * self.cb / f["eff_link"] + self.cl + fixed + B * f["tok_us"] * 1e-6)
        with np.errstate(invalid="ignore", divide="ignore"):
            thr = B * self.O / (self.O * tau + B * (self.Fp / (self.gT * f["eff_flops"])
                                                     + self.I * self.cb / f["eff_link"]))
        thr = np.where(B > 0, thr, np.nan)
        return np.where(self.is_step, step, thr)

    def log_errors(self, f: dict) -> np.ndarray:
        e = np.log(self.predict(f) / self.measured)
        return np.where(np.isfinite(e), e, MISS)


# ---------------------------------------------------------------- the search


def nelder_mead(fun, x0: np.ndarray, step: float = 0.5, iters: int = 2000, tol: float = 1e-12):
    """Minimise ``fun`` from ``x0`` with the Nelder-Mead simplex (reflection 1, expansion 2, contraction 1/2,
    shrink 1/2). Returns (x, f(x))."""
    n = len(x0)
    pts = [np.asarray(x0, float)] + [np.asarray(x0, float) + step * np.eye(n)[i] for i in range(n)]
    vals = [fun(p) for p in pts]
    for _ in range(iters):
        order = np.argsort(vals)
        pts, vals = [pts[i] for i in order], [vals[i] for i in order]
        if abs(vals[-1] - vals[0]) <= tol * (abs(vals[0]) + tol):
            break
        centre = np.mean(pts[:-1], axis=0)
        xr = centre + (centre - pts[-1])
        fr = fun(xr)
        if fr < vals[0]:
            xe = centre + 2 * (centre - pts[-1])
            fe = fun(xe)
            pts[-1], vals[-1] = (xe, fe) if fe < fr else (xr, fr)
        elif fr < vals[-2]:
            pts[-1], vals[-1] = xr, fr
        else:
            xc = centre + 0.5 * (pts[-1] - centre)
            fc = fun(xc)
            if fc < vals[-1]:
                pts[-1], vals[-1] = xc, fc
            else:
                pts = [pts[0]] + [pts[0] + 0.5 * (p - pts[0]) for p in pts[1:]]
                vals = [vals[0]] + [fun(p) for p in pts[1:]]
    i = int(np.argmin(vals))
    return pts[i], vals[i]


def to_figure(name: str, z: float) -> float:
    lo, hi = BOUNDS[name]
    return lo + (hi - lo) * 0.5 * (1 + math.tanh(z / 2))  # the logistic function, without overflow


def to_z(name: str, x: float) -> float:
    lo, hi = BOUNDS[name]
    p = min(max((x - lo) / (hi - lo), 1e-6), 1 - 1e-6)
    return math.log(p / (1 - p))


def prior_penalty(f: dict, names) -> float:
    total = 0.0
    for k in names:
        if k in PRIOR_SCALE:
            total += ((f[k] - PRIOR[k]) / PRIOR_SCALE[k]) ** 2
        else:
            total += math.log(f[k] / PRIOR[k]) ** 2
    return PRIOR_WEIGHT * total


def fit_engine(fast: FastRows, fixed: dict, names: tuple, tied: dict) -> dict:
    """The figures ``names`` minimising the weighted squared log errors on ``fast``'s rows, the others at ``fixed``
    (``tied``: figure -> the fitted figure it equals)."""

    def figures(z) -> dict:
        f = {**fixed, **{k: to_figure(k, zi) for k, zi in zip(names, z, strict=False)}}
        return {**f, **{k: f[v] for k, v in tied.items()}}

    def objective(z) -> float:
        f = figures(z)
        e = fast.log_errors(f)
        return float(np.sum(np.where(e > 0, OVER_WEIGHT, 1.0) * e ** 2)) + prior_penalty(f, names)

    best = None
    # Coarse grid of starting points over the figures that matter most, the rest at their priors.
    grid = {"eff_bw": (0.4, 0.8), "eff_flops": (0.3, 0.7), "step_us": (200.0, 1500.0), "layer_us": (20.0, 150.0)}
    starts = [{}]
    for k, options in grid.items():
        if k in names:
            starts = [{**s, k: v} for s in starts for v in options]
    for start in starts:
        z0 = np.array([to_z(k, start.get(k, PRIOR[k] if PRIOR[k] > BOUNDS[k][0] else BOUNDS[k][0] + 1e-3))
                       for k in names])
        z, val = nelder_mead(objective, z0)
        if best is None or val < best[1]:
            best = (z, val)
    for _ in range(3):  # restart from the best point with a fresh, smaller simplex
        z, val = nelder_mead(objective, best[0], step=0.1)
        if val < best[1] - 1e-12:
            best = (z, val)
        else:
            break
    return figures(best[0])


def constrained(fast: FastRows, f: dict, name: str) -> bool:
    """True when some row's prediction moves by more than 0.1 % as ``name`` moves by 10 % (or 100 µs / 1 GiB)."""
    lo, hi = BOUNDS.get(name, (0.0, math.inf))
    shift = {"step_us": 100.0, "tok_us": 1.0, "overhead_gib": 1.0, "layer_us": 10.0}.get(name)
    base = fast.predict(f)
    moved = []
    for sign in (-1, 1):
        x = f[name] + sign * shift if shift else f[name] * (1.1 if sign > 0 else 1 / 1.1)
        if lo <= x <= hi or shift is None:
            moved.append(fast.predict({**f, name: x}))
    rel = max(np.nanmax(np.abs(m / base - 1)) for m in moved)
    return bool(rel > 1e-3)


def on_bound(name: str, x: float) -> str:
    lo, hi = BOUNDS[name]
    if abs(x - lo) <= 1e-3 * max(1.0, abs(hi - lo)):
        return "lower"
    if abs(x - hi) <= 1e-3 * max(1.0, abs(hi - lo)):
        return "upper"
    return ""


def rounded(name: str, x):
    if x is None:
        return None
    if name in ("step_us", "tok_us", "layer_us"):
        return round(x, 1)
    if name == "overhead_gib":
        return round(x, 2)
    if name == "max_seqs":
        return int(x)
    return round(x, 4)


# ---------------------------------------------------------------- output


def write_engines(path: Path, table: dict, date: str) -> None:
    with path.open("w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh, lineterminator="\n")
        w.writerow(["engine", "figure", "value", "basis", "source", "fitted_on"])
        for e in ENGINES:
            for name in FIGURES:
                value, basis, source = table[e][name]
                w.writerow([e, name, "" if value is None else value, basis, source, date])


def write_errors(path: Path, bands: list[dict], date: str) -> None:
    with path.open("w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh, lineterminator="\n")
        w.writerow(["engine", "metric", "n", "median_pct", "p90_pct", "max_pct", "rows", "fitted_on", "source"])
        for b in bands:
            w.writerow([b["engine"], b["metric"], b["n"], round(b["median_pct"], 2), round(b["p90_pct"], 2),
                        round(b["max_pct"], 2), " ".join(b["rows"]), date, b["source"]])


def check_against_report(fasts: dict, table: dict) -> None:
    """Every row through ``calc.report`` with the figures now in ``engines.csv`` equals the fast copy."""
    for name in ("_table", "profiles", "_bands"):
        getattr(engines, name).cache_clear()
    for e, fast in fasts.items():
        f = {k: table[e][k][0] for k in FIGURES}
        quick = fast.predict(f)
        slow = np.array([r.predicted if r.predicted is not None else np.nan for r in evaluate(fast.rows)])
        if not np.allclose(quick, slow, rtol=1e-9, equal_nan=True):
            bad = [(r.id, q, s) for r, q, s in zip(fast.rows, quick, slow, strict=False) if not math.isclose(q, s, rel_tol=1e-9)]
            raise SystemExit(f"{e}: the fast copy and calc.report disagree: {bad}")


def build_table(rows: list[Measurement], data_name: str) -> tuple[dict, dict]:
    """Fit every engine with rows; returns ``({engine: {figure: (value, basis, source)}}, {engine: FastRows})``."""
    table: dict[str, dict[str, tuple]] = {"roofline": {
        k: (ROOFLINE[k], "definition", "docs/method.md (eff = 0.7 for every part, no fixed costs, the "
                                       "whole card less 4 GiB, no cap on sequences)") for k in FIGURES}}
    fasts: dict[str, FastRows] = {}
    order = [e for e in ("trtllm", "vllm", "llamacpp") if e in FITTED]  # the link donor first
    for e in order:
        mine = [r for r in rows if r.engine == e]
        if not mine:
            continue
        fast = fasts[e] = FastRows(mine)
        ids = " ".join(r.id for r in mine)
        fixed_notes = dict(FIXED[e])
        if e == "vllm":
            fixed_notes["overhead_gib"] = vllm_overhead(rows, FIXED[e]["mem_util"][0])
        fixed = {k: v for k, (v, _) in fixed_notes.items()}
        for k in FIGURES:
            if k not in fixed and k not in FITTED[e]:
                fixed[k] = PRIOR[k]
        if "eff_link" not in FITTED[e]:
            fixed["eff_link"] = table[LINK_DONOR]["eff_link"][0] if LINK_DONOR in table else PRIOR["eff_link"]
        tied = TIED.get(e, {})
        fitted = fit_engine(fast, fixed, FITTED[e], tied)
        fitted = {k: rounded(k, v) for k, v in fitted.items()}
        entry = {}
        for k in FIGURES:
            if k in FITTED[e] and constrained(fast, fitted, k):
                bound = on_bound(k, fitted[k])
                note = f" (on its {bound} bound {BOUNDS[k][0 if bound == 'lower' else 1]:g})" if bound else ""
                entry[k] = (fitted[k], "fitted", f"{SCRIPT} on {data_name} rows {ids}{note}")
            elif k in tied:
                entry[k] = (fitted[k], "fitted", f"{SCRIPT}: the same figure as {tied[k]} (the rows cannot tell "
                                                 "the two apart)")
            elif k in fixed_notes:
                entry[k] = (fitted[k], "fixed", fixed_notes[k][1])
            elif k == "eff_link":
                entry[k] = (fitted[k], "copied", f"no {e} row runs on several cards: {LINK_DONOR}'s fitted figure")
            else:
                entry[k] = (PRIOR[k], "prior", f"no {e} row constrains it: the prior of {SCRIPT}")
                fitted[k] = PRIOR[k]
        table[e] = entry
    table["sglang"] = {k: (v[0], "copied", "not fitted: measurements.csv has no SGLang row; vLLM's figure, "
                                           f"conservative for an engine of the same design ({v[1]})")
                       for k, v in table["vllm"].items()}
    return table, fasts


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--data", default=str(ROOT / DATA), help="measurements file (default: %(default)s)")
    p.add_argument("--dry-run", action="store_true", help="fit and print, write nothing")
    p.add_argument("--date", default=dt.date.today().isoformat(), help="fit date written with each figure")
    args = p.parse_args(argv)

    rows = read_measurements(args.data)
    path = Path(args.data).resolve()
    data_name = str(path.relative_to(ROOT)) if path.is_relative_to(ROOT) else args.data
    table, fasts = build_table(rows, data_name)

    # Print the figures and the residuals.
    for e in ENGINES:
        print(f"{e}:")
        for k in FIGURES:
            v, basis, source = table[e][k]
            print(f"  {k:<13} {'none' if v is None else f'{v:g}':>8}  {basis:<10} {source[:110]}")
    date = args.date
    if args.dry_run:
        for e, fast in fasts.items():
            pred = fast.predict({k: table[e][k][0] for k in FIGURES})
            for r, x in zip(fast.rows, pred, strict=False):
                print(f"{r.id} {e:<9} {r.metric:<21} {r.measured:>10.4g} {x:>10.4g} {100 * (x / r.measured - 1):+6.1f}%")
            for metric in ("step_ms", "max_throughput_tok_s"):
                err = np.array([abs(x / r.measured - 1) * 100 for r, x in zip(fast.rows, pred, strict=False) if r.metric == metric])
                if err.size:
                    print(f"{e} {metric}: n {err.size} median {np.median(err):.1f}% p90 {np.percentile(err, 90):.1f}% "
                          f"worst {err.max():.1f}%")
        return 0

    write_engines(ROOT / "calc" / "data" / "engines.csv", table, date)
    check_against_report(fasts, table)
    results = evaluate(rows)
    bands = [dict(b, source=f"{SCRIPT}: each row's own link against its measured figure")
             for b in summarise(results) if b["engine"] in fasts]
    roofline = [dict(b, engine="roofline", source=f"{SCRIPT}: every row's link with engine=roofline (for comparison)")
                for b in summarise(evaluate(rows, engine="roofline"), by_engine=False)]
    write_errors(ROOT / "calc" / "data" / "engine_errors.csv", roofline + bands, date)
    for name in ("_table", "profiles", "_bands"):
        getattr(engines, name).cache_clear()

    from calc.validate import format_results, format_summary
    print()
    print(format_results(results))
    print()
    print(format_summary(summarise(results)))
    print(f"\nwrote calc/data/engines.csv and calc/data/engine_errors.csv (fit date {date})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
