"""Run every speed and load script and print one Markdown table of figure vs target, with the machine.

    .venv/bin/python bench/run_all.py [--seconds 60] [--out FILE]

Each script runs in its own process (bench_calc.py, bench_pages.py, first_visit.py, load.py --seconds N) so that one
does not warm the caches of the next. The figures are printed, never asserted; the exit status is 1
only when a script failed or the load run counted errors. ``--out`` also writes the Markdown to FILE.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import time
from importlib import metadata
from pathlib import Path

BENCH = Path(__file__).resolve().parent
ROOT = BENCH.parent


def machine() -> dict:
    cpu = "unknown"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    ram = "unknown"
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal:"):
                ram = f"{int(line.split()[1]) / 1024 / 1024:.1f} GiB"
                break
    except OSError:
        pass

    def version(pkg):
        try:
            return metadata.version(pkg)
        except metadata.PackageNotFoundError:
            return "not installed"

    try:
        chromium = subprocess.run(["/usr/bin/chromium", "--version"], capture_output=True, text=True,
                                  timeout=30).stdout.strip() or "unknown"
    except (OSError, subprocess.TimeoutExpired):
        chromium = "not found"
    return {
        "nproc": len(os.sched_getaffinity(0)),
        "cpu": cpu,
        "ram": ram,
        "os": platform.platform(),
        "python": platform.python_version(),
        "streamlit": version("streamlit"),
        "numpy": version("numpy"),
        "pandas": version("pandas"),
        "pydantic": version("pydantic"),
        "playwright": version("playwright"),
        "chromium": chromium,
    }


def run_json(script: str, *args: str, timeout: float = 900) -> tuple[dict | None, str]:
    cmd = [sys.executable, str(BENCH / script), *args, "--json"]
    out = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT, timeout=timeout)
    lines = [ln for ln in out.stdout.splitlines() if ln.startswith("{")]
    if not lines:
        return None, f"{script} exited {out.returncode}: {out.stderr[-2000:]}"
    return json.loads(lines[-1]), ""


def ok(value, target, below=True) -> str:
    if value is None:
        return "n/a"
    return "yes" if (value < target if below else value <= target) else "**no**"


def table(calc: dict | None, pages: dict | None, load: dict | None, first: dict | None = None) -> list[str]:
    rows = ["| figure | measured | target | met |", "|---|---:|---:|:---:|"]
    if calc:
        rows.append(f"| `calc.report` of the default link, median | {calc['report_link_ms']:.3f} ms | < 1 ms | "
                    f"{ok(calc['report_link_ms'], 1)} |")
        rows.append(f"| `calc.report()` (no link), median | {calc['report_empty_ms']:.3f} ms | < 1 ms | "
                    f"{ok(calc['report_empty_ms'], 1)} |")
        rows.append(f"| `calc.tables.cost_surface` {calc['surface_shape'][1]:,} x {calc['surface_shape'][0]}, median "
                    f"| {calc['surface_ms']:.2f} ms | < 10 ms | {ok(calc['surface_ms'], 10)} |")
    if pages:
        for name, p in pages["pages"].items():
            rows.append(f"| page rerun under AppTest after an input change: {name}, median | "
                        f"{p['median_ms']:.0f} ms | < 300 ms | {ok(p['median_ms'], 300)} |")
        rows.append(f"| cold start: `streamlit run app.py` to healthy `/_stcore/health`, median of "
                    f"{len(pages['cold_start_s'])} | {pages['cold_start_median_s']:.2f} s | < 5 s | "
                    f"{ok(pages['cold_start_median_s'], 5)} |")
        if pages.get("cold_first_page_s") is not None:
            rows.append(f"| cold start to the first page drawn in Chromium | {pages['cold_first_page_s']:.2f} s | "
                        "(none) | |")
    if first:
        rows.append(f"| first visit to /decision in a fresh browser, first figure: app / Streamlit's one-metric floor "
                    f"| {first['app']['first_figure_s']:.2f} / {first['floor']['first_figure_s']:.2f} s "
                    f"(ratio {first['ratio']:.2f}) | ratio <= {first['target_ratio']:g} | "
                    f"{ok(first['ratio'], first['target_ratio'], below=False)} |")
        rows.append(f"| first visit to /decision, whole page (charts and tables included) | "
                    f"{first['app']['page_done_s']:.2f} s | (none) | |")
    if load:
        n, secs = load["sessions"], load["seconds"]
        rows.append(f"| load, {n} sessions x {secs:g} s, errors | {load['errors']} | 0 | "
                    f"{'yes' if load['errors'] == 0 else '**no**'} |")
        rows.append(f"| load: input changes completed | {load['changes']:,} | (~{n * secs:g} asked) | |")
        for what, key in (("address bar", "to_url"), ("new figures", "to_figures")):
            med, p95 = load[f"{key}_median_ms"], load[f"{key}_p95_ms"]
            if med is not None:
                rows.append(f"| load: change to {what}, median / p95 | {med:,.0f} / {p95:,.0f} ms | (none) | |")
        c = load.get("cpu_seconds") or {}
        if c:
            rows.append(f"| load: CPU seconds over the timed run, server / browsers (of {load['cores'] * secs:g} "
                        f"available) | {c.get('server', 0):.1f} / {c.get('browser', 0):.1f} s | (none) | |")
        m = load["memory"]
        if m.get("after_run_mib") is not None:
            rows.append(f"| load: server RSS (process tree) idle / peak / after the run / after the sessions left | "
                        f"{m['idle_mib']:.0f} / {m['peak_mib']:.0f} / {m['after_run_mib']:.0f} / "
                        f"{m['after_leave_mib']:.0f} MiB | (none) | |")
    return rows


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seconds", type=float, default=60, help="length of the load run (default 60)")
    ap.add_argument("--out", help="also write the Markdown to this file")
    args = ap.parse_args(argv)
    failures = []
    t0 = time.time()
    print("running bench_calc.py ...", file=sys.stderr)
    calc, err = run_json("bench_calc.py")
    failures += [err] if err else []
    print("running bench_pages.py ...", file=sys.stderr)
    pages, err = run_json("bench_pages.py")
    failures += [err] if err else []
    print("running first_visit.py ...", file=sys.stderr)
    first, err = run_json("first_visit.py")
    failures += [err] if err else []
    print(f"running load.py --seconds {args.seconds:g} ...", file=sys.stderr)
    load, err = run_json("load.py", "--seconds", f"{args.seconds:g}", timeout=args.seconds + 600)
    failures += [err] if err else []

    m = machine()
    lines = [f"Measured {time.strftime('%Y-%m-%d %H:%M', time.localtime(t0))} "
             f"({time.time() - t0:.0f} s for the whole run).", "",
             f"Machine: {m['nproc']} cores ({m['cpu']}), {m['ram']} RAM, {m['os']}; Python {m['python']}, "
             f"Streamlit {m['streamlit']}, NumPy {m['numpy']}, pandas {m['pandas']}, pydantic {m['pydantic']}, "
             f"Playwright {m['playwright']}, {m['chromium']}.", ""]
    lines += table(calc, pages, load, first)
    if calc and calc.get("profile"):
        lines += ["", "calc.report missed 1 ms; cProfile by own time:", "", "```", calc["profile"].rstrip(), "```"]
    if failures:
        lines += ["", "Failures:", ""] + [f"- {f}" for f in failures]
    text = "\n".join(lines)
    print(text)
    if args.out:
        Path(args.out).write_text(text + "\n")
    return 1 if failures or (load and load["errors"]) else 0


if __name__ == "__main__":
    sys.exit(main())
