"""First visit: how long a fresh browser waits for the first figure of /decision, beside Streamlit's own floor.

Two servers run side by side on this machine: the app (`streamlit run app.py`) and Streamlit's floor
(`bench/floor_app.py`: one page, one `st.metric`). Each visit is a new browser context (no cookies, no cache, no
session), so every one is a first visit; visits alternate between the two servers so that the machine's load falls
on both alike. A visit's time runs from the navigation's start to the first metric value painted
(`[data-testid=stMetricValue]`, timed in the page: PAINT_CLOCK); the whole page (a session's first run draws the verdict and the headline
figures, and the browser then asks for the charts and tables: pages/_ui/frame.py ``details``) is printed beside it. Both servers are warmed by
one visit that is not counted (the first visit after a server start also pays for Python's imports). Prints the
medians and their ratio, never asserts. Target (issue 11): app / floor <= 1.8.

    .venv/bin/python bench/first_visit.py [--visits 9] [--json]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

BENCH = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH))
from bench_pages import start_server, stop_server  # noqa: E402

CHROMIUM = "/usr/bin/chromium"
ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
        "--disable-sync", "--no-first-run"]
TARGET_RATIO = 1.8
FIRST_FIGURE = "[data-testid=stMetricValue]"
#: The whole page: the script has stopped and the first draw's marker (pages/_ui/links.py LOADING_KEY) is gone.
DONE = """() => !document.querySelector('.st-key-calc-loading-details')
    && document.querySelector('[data-testid=stApp][data-test-script-state=notRunning]')"""


#: Timed in the page: when the first figure enters the document (a MutationObserver) and the animation frame that
#: paints it, in ms from the navigation's start. Playwright's own wait polls the page from outside and, while the
#: browser is busy drawing what follows, reports the figure up to a second after it was painted.
PAINT_CLOCK = """
window.__firstFigurePaintedMs = undefined;
new MutationObserver((changes, observer) => {
  if (document.querySelector('FIRST_FIGURE')) {
    observer.disconnect();
    requestAnimationFrame(() => { window.__firstFigurePaintedMs = performance.now(); });
  }
}).observe(document, {subtree: true, childList: true});
""".replace("FIRST_FIGURE", FIRST_FIGURE)


def visit(browser, url: str) -> tuple[float, float]:
    """Seconds from navigation to the first figure painted (timed in the page, :data:`PAINT_CLOCK`), and to the
    script's end, in a fresh browser context."""
    ctx = browser.new_context(viewport={"width": 1280, "height": 900})
    ctx.add_init_script(PAINT_CLOCK)
    try:
        page = ctx.new_page()
        t0 = time.perf_counter()
        page.goto(url, wait_until="commit")
        page.wait_for_function("window.__firstFigurePaintedMs !== undefined", timeout=120_000)
        first = page.evaluate("window.__firstFigurePaintedMs") / 1000
        page.wait_for_function(DONE, timeout=120_000)
        return first, time.perf_counter() - t0
    finally:
        ctx.close()


def main(argv: list[str] | None = None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--visits", type=int, default=9, help="visits per server (after one uncounted warm-up each)")
    ap.add_argument("--json", action="store_true", help="print the figures as JSON")
    args = ap.parse_args(argv)
    from playwright.sync_api import sync_playwright

    app, app_url, _ = start_server()
    floor, floor_url, _ = start_server(script="bench/floor_app.py")
    times: dict[str, list[tuple[float, float]]] = {"app": [], "floor": []}
    try:
        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=CHROMIUM, args=ARGS)
            try:
                urls = {"app": f"{app_url}/decision", "floor": floor_url}
                for url in urls.values():
                    visit(browser, url)  # warm-up, not counted
                for _ in range(args.visits):
                    for name, url in urls.items():
                        times[name].append(visit(browser, url))
            finally:
                browser.close()
    finally:
        stop_server(app)
        stop_server(floor)
    out = {name: {"first_figure_s": statistics.median(t[0] for t in ts),
                  "page_done_s": statistics.median(t[1] for t in ts),
                  "first_figure_all_s": [round(t[0], 3) for t in ts]} for name, ts in times.items()}
    out["ratio"] = out["app"]["first_figure_s"] / out["floor"]["first_figure_s"]
    out["target_ratio"] = TARGET_RATIO
    if args.json:
        print(json.dumps(out))
    else:
        print(f"first visit, median of {args.visits} fresh browser contexts each, alternating:")
        print(f"  Streamlit's floor (one st.metric): first figure {out['floor']['first_figure_s']:.2f} s, "
              f"whole page {out['floor']['page_done_s']:.2f} s")
        print(f"  app /decision:                     first figure {out['app']['first_figure_s']:.2f} s, "
              f"whole page {out['app']['page_done_s']:.2f} s")
        print(f"  ratio app / floor (first figure): {out['ratio']:.2f}  (target <= {TARGET_RATIO})")
    return out


if __name__ == "__main__":
    main()
