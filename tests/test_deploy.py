"""The company-wide deployment, end to end: two replicas of the image's start command behind a real reverse proxy
(Debian's nginx) on loopback ports, driven in Debian's Chromium (`make deploy-check`; README, "Serving it to a
company").

The proxy routes a session by a cookie it sets on the first response (``calc_route``, hashed over the replicas),
so a session's page, websocket and downloads reach the same replica; it adds the security headers and says which
replica answered (``X-Calc-Upstream``, for this test). Skipped unless ``CALC_DEPLOY_CHECK=1`` (it starts three
servers and a browser: about a minute), so ``make test`` leaves it to ``make deploy-check``.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

# The same port and stop helpers as the benchmarks and the browser tests.
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "bench"))
from bench_pages import free_port, stop_server
from calc.scenario import LINK_ACCEPTED

ROOT = Path(__file__).resolve().parent.parent
NGINX = shutil.which("nginx") or "/usr/sbin/nginx"
CHROMIUM = "/usr/bin/chromium"
WAIT_MS = 90_000

pytestmark = [
    pytest.mark.deploy,
    pytest.mark.skipif(os.environ.get("CALC_DEPLOY_CHECK") != "1", reason="make deploy-check runs it"),
    pytest.mark.skipif(not os.access(NGINX, os.X_OK), reason="nginx not found (scripts/ensure_nginx.sh)"),
    pytest.mark.skipif(not os.access(CHROMIUM, os.X_OK), reason="chromium not found (scripts/ensure_chromium.sh)"),
]

#: The image's settings (Dockerfile ENV) and a cookie secret every replica shares, from the environment.
REPLICA_ENV = {"STREAMLIT_SERVER_HEADLESS": "true", "STREAMLIT_SERVER_RUN_ON_SAVE": "false",
               "STREAMLIT_SERVER_FILE_WATCHER_TYPE": "none", "STREAMLIT_BROWSER_GATHER_USAGE_STATS": "false",
               "STREAMLIT_SERVER_COOKIE_SECRET": "deploy-check-shared-secret"}
#: The security headers the proxy sets (README): what a page may load and run, and no framing by other sites.
CSP = ("default-src 'self'; script-src 'self' 'unsafe-inline' 'unsafe-eval' blob:; style-src 'self' 'unsafe-inline'; "
       "img-src 'self' data: blob:; font-src 'self' data:; connect-src 'self' ws: wss:; frame-ancestors 'none'; "
       "base-uri 'self'; form-action 'self'")
#: What the proxy says for a link too long to pass (the app's own words for the same limit: calc.scenario).
TOO_LONG = f"link is not accepted: the calculator reads links of {LINK_ACCEPTED}; open the calculator and set the inputs there"
NGINX_CONF = """
{user}worker_processes 1;
pid {tmp}/nginx.pid;
error_log {tmp}/error.log warn;
events {{ worker_connections 512; }}
http {{
    access_log {tmp}/access.log;
    client_body_temp_path {tmp}/body; proxy_temp_path {tmp}/proxy; fastcgi_temp_path {tmp}/fastcgi;
    uwsgi_temp_path {tmp}/uwsgi; scgi_temp_path {tmp}/scgi;
    map $http_upgrade $connection_upgrade {{ default upgrade; '' close; }}
    # Sticky sessions: a browser without the cookie gets a random route, kept in the cookie from then on.
    map $cookie_calc_route $calc_route {{ "" $request_id; default $cookie_calc_route; }}
    upstream calc {{
        hash $calc_route consistent;
        server 127.0.0.1:{port_a};
        server 127.0.0.1:{port_b};
    }}
    server {{
        listen 127.0.0.1:{port};
        large_client_header_buffers 4 128k;  # links up to the app's limit (100,000 characters) reach it
        # A longer one is refused here, in words (the app names those between 100,000 and the buffer).
        error_page 414 /link-too-long.txt;
        location = /link-too-long.txt {{ internal; default_type text/plain; return 200 "{too_long}\n"; }}
        add_header Set-Cookie "calc_route=$calc_route; Path=/; HttpOnly; SameSite=Lax" always;
        add_header Content-Security-Policy "{csp}" always;
        add_header X-Frame-Options "DENY" always;
        add_header X-Content-Type-Options "nosniff" always;
        add_header Referrer-Policy "same-origin" always;
        add_header X-Calc-Upstream $upstream_addr always;
        # Streamlit's cache metrics stay inside: scrape a replica's own port if you want them.
        location = /_stcore/metrics {{ return 404; }}
        location / {{
            proxy_pass http://calc;
            proxy_http_version 1.1;
            proxy_set_header Upgrade $http_upgrade;
            proxy_set_header Connection $connection_upgrade;
            proxy_set_header Host $host;
            proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;
            proxy_set_header X-Forwarded-Proto $scheme;
            proxy_read_timeout 1h;
        }}
    }}
}}
"""


def _healthy(url: str, proc: subprocess.Popen, what: str) -> None:
    t0 = time.monotonic()
    while time.monotonic() - t0 < 120:
        if proc.poll() is not None:
            raise RuntimeError(f"{what} exited with {proc.returncode}")
        try:
            with urllib.request.urlopen(url, timeout=1) as r:
                if r.status == 200:
                    return
        except OSError:
            time.sleep(0.1)
    raise RuntimeError(f"{what} not healthy after 120 s")


@pytest.fixture(scope="module")
def proxy(tmp_path_factory):
    """Two replicas of the image's start command and nginx in front; yields (proxy URL, replica addresses)."""
    tmp = tmp_path_factory.mktemp("deploy")
    ports = [free_port(), free_port()]
    procs = []
    env = {**os.environ, **REPLICA_ENV}
    try:
        for port in ports:  # the Dockerfile's ENTRYPOINT, on a loopback port
            log = open(tmp / f"replica-{port}.log", "wb")  # noqa: SIM115 (closed with the process)
            procs.append(subprocess.Popen(
                [sys.executable, "-m", "streamlit", "run", "app.py", f"--server.port={port}",
                 "--server.address=127.0.0.1"], cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT,
                start_new_session=True))
        for port, proc in zip(ports, procs, strict=True):
            _healthy(f"http://127.0.0.1:{port}/_stcore/health", proc, f"replica on {port}")
        port = free_port()
        conf = tmp / "nginx.conf"
        conf.write_text(NGINX_CONF.format(user="user root;\n" if os.geteuid() == 0 else "", tmp=tmp, port=port,
                                          port_a=ports[0], port_b=ports[1], csp=CSP,
                                          too_long=TOO_LONG))
        nginx = subprocess.Popen([NGINX, "-e", str(tmp / "error.log"), "-p", str(tmp), "-c", str(conf),
                                  "-g", "daemon off;"], start_new_session=True)
        procs.append(nginx)
        _healthy(f"http://127.0.0.1:{port}/_stcore/health", nginx, "nginx")
        yield f"http://127.0.0.1:{port}", {f"127.0.0.1:{p}" for p in ports}
    finally:
        for proc in procs:
            stop_server(proc)


@pytest.fixture(scope="module")
def browser():
    from playwright.sync_api import sync_playwright
    with sync_playwright() as pw:
        b = pw.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox", "--disable-gpu"])
        try:
            yield b
        finally:
            b.close()


def _settle(page) -> None:
    page.wait_for_selector("[data-testid=stMain] h1", timeout=WAIT_MS)
    page.wait_for_function("""() => !document.querySelector('.st-key-calc-loading-details')
        && document.querySelector('[data-testid=stApp][data-test-script-state=notRunning]')""", timeout=WAIT_MS)


def _session(browser, base: str, link: str):
    """A fresh browser context on ``base/decision?link``: (context, page, the replica that served it)."""
    ctx = browser.new_context(viewport={"width": 1280, "height": 900}, accept_downloads=True)
    ctx.set_default_timeout(WAIT_MS)
    page = ctx.new_page()
    page.csp_errors = []
    page.on("console", lambda m: page.csp_errors.append(m.text) if "Content Security Policy" in m.text else None)
    response = page.goto(f"{base}/decision?{link}")
    _settle(page)
    return ctx, page, response.headers["x-calc-upstream"], response.headers


def _walk(page, base: str) -> None:
    """Move a slider, switch pages and come back, download the memo: every step through the proxy."""
    from playwright.sync_api import expect
    thumb = page.locator("[data-testid=stSlider]", has_text="Requests per day").get_by_role("slider")
    expect(thumb).to_have_attribute("aria-valuetext", "200,000")
    thumb.focus()
    thumb.press("ArrowRight")
    page.wait_for_url(re.compile(r"[?&]req_day=300000(&|#|$)"), timeout=WAIT_MS)
    _settle(page)
    page.get_by_role("link", name="Fit", exact=True).click()
    page.wait_for_url(re.compile(r"/fit\?.*req_day=300000"), timeout=WAIT_MS)
    _settle(page)
    expect(page.locator("[data-testid=stMain] h1")).to_have_text("Does it fit?")
    page.get_by_role("link", name="Decision", exact=True).click()
    page.wait_for_url(re.compile(r"/decision\?.*req_day=300000"), timeout=WAIT_MS)
    _settle(page)
    with page.expect_download(timeout=WAIT_MS) as dl:
        page.get_by_role("button", name="Download the memo (Markdown)").click()
    memo = Path(dl.value.path()).read_text()
    links = re.findall(r"<(http[^>]+)>", memo)
    assert links and all(link.startswith(f"{base}/decision?") for link in links), links
    assert "req_day=300000" in links[0]
    assert not page.locator("[data-testid=stException]").count()


def test_two_sessions_through_the_proxy_each_on_its_own_replica(proxy, browser):
    base, replicas = proxy
    link = "req_day=200000&in_tok=1500&out_tok=300"
    first_ctx, first, served, headers = _session(browser, base, link)
    assert served in replicas
    assert headers["x-frame-options"] == "DENY" and "frame-ancestors 'none'" in headers["content-security-policy"]
    with pytest.raises(urllib.error.HTTPError) as closed:
        urllib.request.urlopen(f"{base}/_stcore/metrics", timeout=10)
    assert closed.value.code == 404
    with pytest.raises(urllib.error.HTTPError) as long_link:  # past the proxy's buffer: refused in words
        urllib.request.urlopen(f"{base}/decision?model=llama-3.1-8b&pad={'x' * 140_000}", timeout=10)
    assert long_link.value.code == 414 and TOO_LONG in long_link.value.read().decode()
    _walk(first, base)
    assert not first.csp_errors, first.csp_errors
    # A second session: new browsers until the proxy's random route lands on the other replica.
    for _ in range(16):
        ctx, second, other, _ = _session(browser, base, link)
        if other != served:
            break
        ctx.close()
    else:
        pytest.fail("16 new sessions all reached the same replica: the proxy does not spread sessions")
    _walk(second, base)
    assert not second.csp_errors, second.csp_errors
    # Each session stayed on its replica throughout (its cookie routes it).
    assert first.evaluate("() => fetch('/_stcore/health').then(r => r.headers.get('x-calc-upstream'))") == served
    assert second.evaluate("() => fetch('/_stcore/health').then(r => r.headers.get('x-calc-upstream'))") == other
    first_ctx.close()
    ctx.close()
