"""Speed of the arithmetic: calc.report for the default link, the 1,024 x 100 cost surface, and the fleet planner.

Prints figures, never asserts. Targets: calc.report < 1 ms (median), cost surface < 10 ms (median), the planner
of the default link < 300 ms (median, with calc's per-scenario memory cache cleared before each run, so every
set-up is computed afresh), printed beside the single report it repeats for every set-up.
When calc.report misses its target, a cProfile of many calls is printed to show where the time goes;
``--profile`` prints it regardless.

    .venv/bin/python bench/bench_calc.py [--runs 3000] [--profile] [--json]
"""

from __future__ import annotations

import argparse
import cProfile
import io
import json
import pstats
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from calc import build, memory, parse, planner, report, tables

REPORT_TARGET_MS = 1.0
SURFACE_TARGET_MS = 10.0
PLAN_TARGET_MS = 300.0


def median_ms(fn, runs: int, warmup: int = 20) -> tuple[float, float]:
    """Median and 95th percentile of ``runs`` timed calls, in milliseconds."""
    for _ in range(warmup):
        fn()
    times = []
    for _ in range(runs):
        t0 = time.perf_counter_ns()
        fn()
        times.append((time.perf_counter_ns() - t0) / 1e6)
    times.sort()
    return statistics.median(times), times[int(0.95 * (len(times) - 1))]


def profile(fn, calls: int, top: int = 18) -> str:
    prof = cProfile.Profile()
    prof.enable()
    for _ in range(calls):
        fn()
    prof.disable()
    out = io.StringIO()
    pstats.Stats(prof, stream=out).sort_stats("tottime").print_stats(top)
    return out.getvalue()


def run(runs: int = 3000, force_profile: bool = False) -> dict:
    default_link = parse(None).scenario.to_query()  # the link the app's address bar holds on first visit
    parsed = parse(default_link)
    s = parsed.scenario
    figures = {}
    figures["report_empty_ms"], figures["report_empty_p95_ms"] = median_ms(lambda: report(None), runs)
    figures["report_link_ms"], figures["report_link_p95_ms"] = median_ms(lambda: report(default_link), runs)
    figures["parse_link_ms"], _ = median_ms(lambda: parse(default_link), runs)
    figures["build_ms"], _ = median_ms(lambda: build(parsed), runs)
    total, _, _ = tables.cost_surface(s)
    figures["surface_shape"] = list(total.shape)
    figures["surface_ms"], figures["surface_p95_ms"] = median_ms(lambda: tables.cost_surface(s), max(200, runs // 10))
    def cold_plan():
        memory.memory.cache_clear()
        return planner.plan(s)

    figures["plan_rows"] = len(cold_plan())
    figures["plan_ms"], figures["plan_p95_ms"] = median_ms(cold_plan, max(5, runs // 300), warmup=2)
    figures["profile"] = None
    if force_profile or figures["report_link_ms"] >= REPORT_TARGET_MS:
        figures["profile"] = profile(lambda: report(default_link), calls=2000)
    return figures


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=3000, help="timed calls per figure (default 3000)")
    ap.add_argument("--profile", action="store_true", help="print a cProfile of calc.report even when on target")
    ap.add_argument("--json", action="store_true", help="print the figures as one JSON object")
    args = ap.parse_args(argv)
    f = run(args.runs, args.profile)
    if args.json:
        print(json.dumps(f))
        return 0
    print(f"calc.report(None)            median {f['report_empty_ms']:.3f} ms  p95 {f['report_empty_p95_ms']:.3f} ms"
          f"  (target < {REPORT_TARGET_MS:g} ms)")
    print(f"calc.report(<default link>)  median {f['report_link_ms']:.3f} ms  p95 {f['report_link_p95_ms']:.3f} ms"
          f"  (target < {REPORT_TARGET_MS:g} ms)")
    print(f"  of which parse             median {f['parse_link_ms']:.3f} ms")
    print(f"  of which build             median {f['build_ms']:.3f} ms")
    print(f"tables.cost_surface {f['surface_shape'][1]:,} x {f['surface_shape'][0]}  median {f['surface_ms']:.3f} ms"
          f"  p95 {f['surface_p95_ms']:.3f} ms  (target < {SURFACE_TARGET_MS:g} ms)")
    print(f"planner.plan(<default link>) median {f['plan_ms']:.1f} ms  p95 {f['plan_p95_ms']:.1f} ms for "
          f"{f['plan_rows']} set-ups  (target < {PLAN_TARGET_MS:g} ms; a single report above: "
          f"{f['report_link_ms']:.3f} ms)")
    if f["profile"]:
        print("\ncProfile of 2,000 calls of calc.report(<default link>), by own time:\n")
        print(f["profile"])
    return 0


if __name__ == "__main__":
    sys.exit(main())
