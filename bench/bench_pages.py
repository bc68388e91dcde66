"""Speed of the pages: a full rerun of each page under AppTest, and the cold start of `streamlit run app.py`.

Prints figures, never asserts. Targets: a page rerun < 300 ms (median), cold start to a healthy
/_stcore/health < 5 s (median).

A "rerun" here is what happens when a user changes an input: the context (ctx) is set to a new value
(a value never used before, so the cached report misses) and the whole script runs again: app.py's
frame (link <-> widgets, the sidebar of ~40 inputs, the header) and then the page with its tables
and charts. AppTest runs the script in process, so this is the server's share of an update; the
browser's drawing is measured by bench/load.py.

    .venv/bin/python bench/bench_pages.py [--reruns 15] [--starts 3] [--json]
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import signal
import socket
import statistics
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

PAGES = ["pages/decision.py", "pages/fit.py", "pages/speed.py", "pages/cost.py", "pages/catalogue.py"]
RERUN_TARGET_MS = 300.0
START_TARGET_S = 5.0


def page_reruns(page: str, reruns: int) -> dict:
    from streamlit.testing.v1 import AppTest
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120)
    at.run()
    at.switch_page(page).run()
    if at.exception:
        raise RuntimeError(f"{page}: {at.exception[0].value}")
    at.run()  # warm: imports, caches of the catalogue
    times = []
    for i in range(reruns):
        # The prompt length moves the context (ctx follows the traffic), so memory, step and bill all change.
        at.select_slider(key="in_tok").set_value((1500, 2000, 3000)[i % 3])
        t0 = time.perf_counter()
        at.run()
        times.append((time.perf_counter() - t0) * 1e3)
        if at.exception:
            raise RuntimeError(f"{page}: {at.exception[0].value}")
    times.sort()
    return {"median_ms": statistics.median(times), "max_ms": times[-1], "min_ms": times[0], "runs": reruns}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_server(port: int | None = None, log=subprocess.DEVNULL, options: tuple[str, ...] = (),
                 script: str = "app.py") -> tuple[subprocess.Popen, str, float]:
    """Start `python -m streamlit run <script>` (default app.py) from the repository root in its own process
    group; return the process, its base URL and the seconds it took to answer 'ok' on /_stcore/health.
    ``options`` are extra Streamlit options such as ``--runner.postScriptGC=false``."""
    port = port or free_port()
    base = f"http://localhost:{port}"
    t0 = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-m", "streamlit", "run", script, "--server.port", str(port),
                             "--server.headless", "true", *options], cwd=ROOT, stdout=log, stderr=subprocess.STDOUT,
                            start_new_session=True)
    try:
        while True:
            if proc.poll() is not None:
                raise RuntimeError(f"streamlit exited with {proc.returncode}")
            try:
                with urllib.request.urlopen(f"{base}/_stcore/health", timeout=1) as r:
                    if r.read().strip() == b"ok":
                        return proc, base, time.perf_counter() - t0
            except OSError:
                pass
            if time.perf_counter() - t0 > 120:
                raise RuntimeError("streamlit not healthy after 120 s")
            time.sleep(0.02)
    except BaseException:
        stop_server(proc)
        raise


def stop_server(proc: subprocess.Popen) -> None:
    """Stop the server started by :func:`start_server` (its own process group only)."""
    try:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(timeout=15)
    except ProcessLookupError:
        pass
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()


def cold_start() -> float:
    """Seconds from spawning `python -m streamlit run app.py` to an 'ok' from /_stcore/health."""
    proc, _, seconds = start_server()
    stop_server(proc)
    return seconds


CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
                 "--disable-sync", "--no-first-run"]


def cold_first_page() -> float | None:
    """Seconds from spawning the server to the first page (/) drawn in Chromium with its figures
    (the browser is started beforehand and not counted). None without Chromium."""
    if not os.access(CHROMIUM, os.X_OK):
        return None
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:  # a dev requirement: `make install-dev`
        return None
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        page = browser.new_page()
        page.goto("about:blank")
        t0 = time.perf_counter()
        proc, base, _ = start_server()
        try:
            page.goto(base + "/")
            page.wait_for_selector("[data-testid=stApp][data-test-script-state=notRunning]", timeout=120_000)
            page.wait_for_selector("[data-testid=stMain] [data-testid=stMetricValue]", timeout=120_000)
            return time.perf_counter() - t0
        finally:
            stop_server(proc)
            browser.close()


def run(reruns: int = 15, starts: int = 3) -> dict:
    logging.getLogger("streamlit").setLevel(logging.ERROR)
    out = {"pages": {}, "cold_start_s": []}
    for page in PAGES:
        out["pages"][Path(page).stem] = page_reruns(page, reruns)
    for _ in range(starts):
        out["cold_start_s"].append(cold_start())
    out["cold_start_median_s"] = statistics.median(out["cold_start_s"])
    out["cold_first_page_s"] = cold_first_page()
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reruns", type=int, default=15, help="timed reruns per page (default 15)")
    ap.add_argument("--starts", type=int, default=3, help="cold starts of the server (default 3)")
    ap.add_argument("--json", action="store_true", help="print the figures as one JSON object")
    args = ap.parse_args(argv)
    f = run(args.reruns, args.starts)
    if args.json:
        print(json.dumps(f))
        return 0
    for name, p in f["pages"].items():
        print(f"page rerun {name:<10} median {p['median_ms']:7.1f} ms  (min {p['min_ms']:.1f}, max {p['max_ms']:.1f}, "
              f"{p['runs']} runs)  target < {RERUN_TARGET_MS:g} ms")
    starts = ", ".join(f"{s:.2f}" for s in f["cold_start_s"])
    print(f"cold start to healthy   median {f['cold_start_median_s']:.2f} s  ({starts})  target < {START_TARGET_S:g} s")
    if f["cold_first_page_s"] is not None:
        print(f"cold start to the first page drawn in Chromium  {f['cold_first_page_s']:.2f} s  (no target)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
