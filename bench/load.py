"""Load: 10 browser sessions using the app at once, each changing an input every second.

One Chromium (Debian's, /usr/bin/chromium), one browser context per session, driven by Playwright's
asyncio API. Each session opens a page (default /cost), then once a second changes one sidebar input,
in turn the context (ctx), the batch and the duty cycle, to values that always differ from the
current ones. For every change it times:

* to the address bar: until the URL carries the new value (the server has run the frame), and
* to the figures: until the script run is over and the text of the page's metrics has changed.

Errors (must be 0): exception boxes, error boxes, uncaught JavaScript errors and updates that time out.
When the script starts the server itself it also reports the resident memory (RSS) of the server's
process tree, read from /proc: idle, at its peak, right after the run, and once the sessions have left.

    .venv/bin/python bench/load.py [--seconds 60] [--sessions 10] [--url http://host:port] [--page cost] [--json]

Exit status 1 when any error was counted. Not a unit test.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import sys
import time
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

BENCH = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH))
sys.path.insert(0, str(BENCH.parent))

from bench_pages import CHROMIUM, CHROMIUM_ARGS, start_server, stop_server  # noqa: E402

UPDATE_TIMEOUT_S = 30.0
LABELS = {"ctx": "Context (tokens per sequence)", "batch": "Batch (sequences per step)",
          "duty": "Duty cycle (busy fraction)"}
METRICS_JS = """() => [...document.querySelectorAll('[data-testid=stMain] [data-testid=stMetric]')]
    .map(m => m.textContent).join(' | ')"""
CHANGED_JS = """(old) => {
    const app = document.querySelector('[data-testid=stApp]');
    if (!app || app.dataset.testScriptState !== 'notRunning') return false;
    const now = [...document.querySelectorAll('[data-testid=stMain] [data-testid=stMetric]')]
        .map(m => m.textContent).join(' | ');
    return now !== '' && now !== old;
}"""


# ---------------------------------------------------------------- memory of the server


def _children() -> dict[int, list[int]]:
    kids: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as fh:
                stat = fh.read()
        except OSError:
            continue
        ppid = int(stat.rsplit(")", 1)[1].split()[1])
        kids.setdefault(ppid, []).append(int(entry))
    return kids


def tree_rss_mib(root: int) -> float:
    """Resident memory of a process and all its descendants, MiB (VmRSS from /proc/<pid>/status)."""
    kids, todo, total = _children(), [root], 0
    while todo:
        pid = todo.pop()
        todo.extend(kids.get(pid, []))
        try:
            with open(f"/proc/{pid}/status") as fh:
                for line in fh:
                    if line.startswith("VmRSS:"):
                        total += int(line.split()[1])
                        break
        except OSError:
            pass
    return total / 1024


TICK = os.sysconf("SC_CLK_TCK")


def tree_pids(root: int, kids: dict[int, list[int]] | None = None) -> list[int]:
    kids = _children() if kids is None else kids
    out, todo = [], [root]
    while todo:
        pid = todo.pop()
        out.append(pid)
        todo.extend(kids.get(pid, []))
    return out


def cpu_seconds(pids: list[int]) -> float:
    """User + system CPU time of the given processes and of their reaped children, seconds."""
    total = 0
    for pid in pids:
        try:
            with open(f"/proc/{pid}/stat") as fh:
                fields = fh.read().rsplit(")", 1)[1].split()
            # utime, stime, and cutime, cstime: the time of exited children (renderers of closed tabs) stays counted
            total += int(fields[11]) + int(fields[12]) + int(fields[13]) + int(fields[14])
        except (OSError, IndexError, ValueError):
            pass
    return total / TICK


def cpu_split(server_pid: int | None) -> dict[str, float]:
    """CPU seconds so far of the server's tree and of the browser's tree (Playwright's driver and Chromium)."""
    kids = _children()
    server = set(tree_pids(server_pid, kids)) if server_pid else set()
    mine = [p for p in tree_pids(os.getpid(), kids) if p not in server and p != os.getpid()]
    return {"server": cpu_seconds(sorted(server)), "browser": cpu_seconds(mine)}


# ---------------------------------------------------------------- one session


def link_value(key: str, value: str) -> str:
    """The value as the app writes it in the link (duty 0.50 -> 0.5)."""
    return repr(float(value)) if key == "duty" else value


def plan(i: int, keys: tuple[str, ...] = ("ctx", "batch", "duty")) -> list[tuple[str, str]]:
    """Session i's cycle of changes; consecutive values of a key always differ, and sessions differ."""
    # Every set-up fits the default link's card: memory holds 11 sequences at 8,192 tokens, about 22 at 4,096.
    first = {"ctx": str(1024 + 256 * i), "batch": str(2 + i), "duty": f"{0.40 + 0.01 * i:.2f}"}
    second = {"ctx": "4096", "batch": str(6 + i), "duty": "0.30"}
    return [(k, first[k]) for k in keys] + [(k, second[k]) for k in keys]


class Gate:
    """Start the timed run once every session has drawn its first page (or failed to)."""

    def __init__(self, sessions: int, seconds: float):
        self.left, self.seconds = sessions, seconds
        self.open = asyncio.Event()
        self.start_at = self.stop_at = 0.0

    def arrive(self) -> None:
        self.left -= 1
        if self.left == 0 and not self.open.is_set():
            loop = asyncio.get_running_loop()
            self.start_at = loop.time() + 1
            self.stop_at = self.start_at + self.seconds
            self.open.set()


async def session(i: int, browser, base: str, page_path: str, gate: Gate, out: dict,
                  keys: tuple[str, ...]) -> None:
    ctx = await browser.new_context(viewport={"width": 1280, "height": 900})
    page = await ctx.new_page()
    js_errors: list[str] = []
    page.on("pageerror", lambda exc: js_errors.append(str(exc)))
    rec = {"to_url_ms": [], "to_figures_ms": [], "timeouts": 0, "exceptions": 0, "error_boxes": 0,
           "changes": 0, "late": 0, "first_page_s": None}
    out[i] = rec
    loop = asyncio.get_running_loop()
    arrived = False
    try:
        t0 = loop.time()
        await page.goto(base + page_path, timeout=120_000)
        await page.wait_for_selector("[data-testid=stApp][data-test-script-state=notRunning]", timeout=120_000)
        await page.wait_for_selector("[data-testid=stMain] [data-testid=stMetricValue]", timeout=120_000)
        rec["first_page_s"] = loop.time() - t0
        # Number boxes, not sliders: a typed context turns its input into a slider (a what-if) otherwise.
        await page.get_by_text("Exact entry", exact=True).click()
        await page.wait_for_selector("[data-testid=stApp][data-test-script-state=notRunning]", timeout=120_000)
        await page.get_by_label(LABELS[keys[0]], exact=True).wait_for(timeout=120_000)
        gate.arrive()
        arrived = True
        await gate.open.wait()
        start_at, stop_at = gate.start_at, gate.stop_at
        await asyncio.sleep(max(0.0, start_at - loop.time()))
        steps = plan(i, keys)
        k = 0
        while loop.time() < stop_at:
            key, value = steps[k % len(steps)]
            tick = start_at + k + 1  # one change a second
            k += 1
            old = await page.evaluate(METRICS_JS)
            box = page.get_by_label(LABELS[key], exact=True)
            t_change = time.perf_counter()
            try:
                await box.fill(value, timeout=UPDATE_TIMEOUT_S * 1000)
                await box.press("Enter", timeout=UPDATE_TIMEOUT_S * 1000)
                want = link_value(key, value)
                await page.wait_for_url(
                    lambda u, key=key, want=want: parse_qs(urlsplit(u).query).get(key, [""])[-1] == want,
                    timeout=UPDATE_TIMEOUT_S * 1000)
                t_url = time.perf_counter()
                await page.wait_for_function(CHANGED_JS, arg=old, timeout=UPDATE_TIMEOUT_S * 1000)
                t_fig = time.perf_counter()
            except Exception:  # a Playwright timeout: the update never showed
                rec["timeouts"] += 1
                continue
            rec["changes"] += 1
            rec["to_url_ms"].append((t_url - t_change) * 1e3)
            rec["to_figures_ms"].append((t_fig - t_change) * 1e3)
            rec["exceptions"] += await page.locator("[data-testid=stException]").count()
            rec["error_boxes"] += await page.locator("[data-testid=stAlertContentError]").count()
            wait = tick - loop.time()
            if wait > 0:
                await asyncio.sleep(wait)
            else:
                rec["late"] += 1
    finally:
        if not arrived:
            gate.arrive()
        rec["js_errors"] = js_errors
        await ctx.close()


# ---------------------------------------------------------------- the run


def pct(values: list[float], q: float) -> float | None:
    if not values:
        return None
    v = sorted(values)
    return v[min(len(v) - 1, round(q * (len(v) - 1)))]


async def drive(base: str, sessions: int, seconds: float, page_path: str, server_pid: int | None,
                keys: tuple[str, ...] = ("ctx", "batch", "duty")) -> dict:
    from playwright.async_api import async_playwright
    memory = {"idle_mib": None, "peak_mib": None, "after_run_mib": None, "after_leave_mib": None}
    if server_pid:
        memory["idle_mib"] = tree_rss_mib(server_pid)
    results: dict = {}
    async with async_playwright() as pw:
        browser = await pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        gate = Gate(sessions, seconds)  # sessions open together; the timed run starts once all are drawn

        async def sample():
            while True:
                if server_pid:
                    rss = tree_rss_mib(server_pid)
                    memory["peak_mib"] = max(memory["peak_mib"] or 0, rss)
                await asyncio.sleep(1)

        sampler = asyncio.create_task(sample())
        cpu: dict = {}

        async def cpu_at_start_and_stop():
            await gate.open.wait()
            await asyncio.sleep(max(0.0, gate.start_at - asyncio.get_running_loop().time()))
            cpu["start"] = cpu_split(server_pid)
            await asyncio.sleep(max(0.0, gate.stop_at - asyncio.get_running_loop().time()))
            cpu["end"] = cpu_split(server_pid)

        cpu_task = asyncio.create_task(cpu_at_start_and_stop())
        tasks = [asyncio.create_task(session(i, browser, base, page_path, gate, results, keys))
                 for i in range(sessions)]
        await asyncio.gather(*tasks, return_exceptions=True)
        cpu_task.cancel()
        if server_pid:
            memory["after_run_mib"] = tree_rss_mib(server_pid)
        sampler.cancel()
        await browser.close()
    if server_pid:
        await asyncio.sleep(3)
        memory["after_leave_mib"] = tree_rss_mib(server_pid)
    for i, t in enumerate(tasks):
        if t.exception() is not None:
            results.setdefault(i, {}).setdefault("crashed", repr(t.exception()))
    to_url = [x for r in results.values() for x in r.get("to_url_ms", [])]
    to_fig = [x for r in results.values() for x in r.get("to_figures_ms", [])]
    errors = {
        "timeouts": sum(r.get("timeouts", 0) for r in results.values()),
        "exception_boxes": sum(r.get("exceptions", 0) for r in results.values()),
        "error_boxes": sum(r.get("error_boxes", 0) for r in results.values()),
        "js_errors": sum(len(r.get("js_errors", [])) for r in results.values()),
        "crashed_sessions": sum(1 for r in results.values() if "crashed" in r or r.get("first_page_s") is None),
    }
    firsts = [r["first_page_s"] for r in results.values() if r.get("first_page_s") is not None]
    used = {k: cpu["end"][k] - cpu["start"][k] for k in cpu["end"]} if "end" in cpu else {}
    return {
        "sessions": sessions, "seconds": seconds, "page": page_path, "keys": list(keys),
        "cpu_seconds": used, "cores": len(os.sched_getaffinity(0)),
        "changes": len(to_fig), "late_ticks": sum(r.get("late", 0) for r in results.values()),
        "errors": sum(errors.values()), "error_kinds": errors,
        "to_url_median_ms": pct(to_url, 0.5), "to_url_p95_ms": pct(to_url, 0.95),
        "to_figures_median_ms": pct(to_fig, 0.5), "to_figures_p95_ms": pct(to_fig, 0.95),
        "to_figures_max_ms": max(to_fig) if to_fig else None,
        "first_page_median_s": statistics.median(firsts) if firsts else None,
        "first_page_max_s": max(firsts) if firsts else None,
        "memory": memory,
        "js_error_samples": [e for r in results.values() for e in r.get("js_errors", [])][:3],
        "crashes": [r["crashed"] for r in results.values() if "crashed" in r][:3],
    }


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seconds", type=float, default=60, help="length of the run (default 60)")
    ap.add_argument("--sessions", type=int, default=10, help="concurrent browser sessions (default 10)")
    ap.add_argument("--url", help="use a running server (e.g. http://localhost:8501) instead of starting one")
    ap.add_argument("--page", default="cost", help="page to use (url path without '/', default cost)")
    ap.add_argument("--keys", default="ctx,batch,duty",
                    help="inputs to change in turn (default ctx,batch,duty; each must move the page's metrics: "
                         "on /fit use ctx,batch)")
    ap.add_argument("--server-option", action="append", default=[], metavar="--SECTION.NAME=VALUE",
                    help="extra option for the server this script starts, "
                         "e.g. --server-option=--runner.postScriptGC=false")
    ap.add_argument("--json", action="store_true", help="print the figures as one JSON object")
    args = ap.parse_args(argv)
    keys = tuple(k.strip() for k in args.keys.split(",") if k.strip())
    if not keys or any(k not in LABELS for k in keys):
        ap.error(f"--keys takes a comma-separated subset of {', '.join(LABELS)}")
    if not os.access(CHROMIUM, os.X_OK):
        print(f"load: {CHROMIUM} not found (install Debian's chromium)", file=sys.stderr)
        return 2
    try:
        import playwright.async_api  # noqa: F401
    except ImportError:
        print("load: the playwright package is missing (a dev requirement: make install-dev)", file=sys.stderr)
        return 2
    proc = None
    if args.url:
        base, pid = args.url.rstrip("/"), None
    else:
        proc, base, _ = start_server(options=tuple(args.server_option))
        pid = proc.pid
    try:
        r = asyncio.run(drive(base, args.sessions, args.seconds, "/" + args.page.strip("/"), pid, keys))
    finally:
        if proc is not None:
            stop_server(proc)
    if args.json:
        print(json.dumps(r))
    else:
        def ms(x):
            return "n/a" if x is None else f"{x:,.0f} ms"
        print(f"{r['sessions']} sessions x {r['seconds']:g} s on {r['page']}: {r['changes']} input changes "
              f"({r['late_ticks']} started late: the previous update took over a second)")
        print(f"errors: {r['errors']}  {r['error_kinds']}")
        print(f"change -> address bar   median {ms(r['to_url_median_ms'])}  p95 {ms(r['to_url_p95_ms'])}")
        print(f"change -> new figures   median {ms(r['to_figures_median_ms'])}  p95 {ms(r['to_figures_p95_ms'])}"
              f"  max {ms(r['to_figures_max_ms'])}")
        if r["first_page_median_s"] is not None:
            print(f"first page, {r['sessions']} opened at once: median {r['first_page_median_s']:.1f} s, "
                  f"slowest {r['first_page_max_s']:.1f} s")
        if r["cpu_seconds"]:
            c = r["cpu_seconds"]
            print(f"CPU over the timed run ({r['cores']} cores x {r['seconds']:g} s = "
                  f"{r['cores'] * r['seconds']:g} s): server {c.get('server', 0):.1f} s, "
                  f"browser (Chromium + driver) {c.get('browser', 0):.1f} s")
        m = r["memory"]
        if m["after_run_mib"] is not None:
            print(f"server RSS (process tree): idle {m['idle_mib']:.0f} MiB, peak {m['peak_mib']:.0f} MiB, "
                  f"after the run {m['after_run_mib']:.0f} MiB, after the sessions left {m['after_leave_mib']:.0f} MiB")
        for sample in r["js_error_samples"] + r["crashes"]:
            print(f"  sample: {sample[:300]}")
    return 1 if r["errors"] else 0


if __name__ == "__main__":
    sys.exit(main())
