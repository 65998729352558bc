"""Fixtures for Warmfeed's browser tests.

Every test talks to the real `warmfeed` binary (env WARMFEED_BIN, default
.build/debug/warmfeed), started on port 0 in a fresh temporary data folder with
a small demo feed, and to Chromium from Debian (/usr/bin/chromium, env
WARMFEED_CHROMIUM) driven by Playwright.
"""

from __future__ import annotations

import http.client
import os
import shutil
import signal
import subprocess
import tempfile
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qs, urljoin, urlsplit

import pytest
from playwright.sync_api import sync_playwright

from cluster import read_address

ROOT = Path(__file__).resolve().parents[2]
WARMFEED_BIN = os.environ.get("WARMFEED_BIN", str(ROOT / ".build" / "debug" / "warmfeed"))
CHROMIUM = os.environ.get("WARMFEED_CHROMIUM", "/usr/bin/chromium")
# The thin client's folder; the tests can be pointed at another copy of it.
PUBLIC = os.environ.get("WARMFEED_PUBLIC", str(ROOT / "Public"))
DEMO_ITEMS = 400
# The demo origin's pictures, painted once for all tests (painting is
# deterministic); a newcomer's test passes pool=None to paint its own.
SHARED_POOL = os.environ.get("WARMFEED_DEMO_POOL", str(ROOT / ".build" / "browser-demo-pool"))


# --------------------------------------------------------------------------
# The real server
# --------------------------------------------------------------------------

class Server:
    """One `warmfeed serve --port 0` process in its own temporary data folder."""

    def __init__(self, page_size: int, demo_items: int = DEMO_ITEMS, threshold: float = 0.7,
                 prewarm: int = 0, extra_args: tuple[str, ...] = (),
                 env: dict[str, str] | None = None, pool: str | None = SHARED_POOL,
                 data: str | None = None, wrap: tuple[str, ...] = ()):
        """prewarm is off by default: most tests are about pages, not
        thumbnails, and stay light. extra_args go on the command line; env is
        added to the server's environment. pool is the demo origin's pictures'
        folder, shared between tests; None leaves it in the fresh data folder,
        painted before the server listens, as on a newcomer's machine. data,
        a data folder of an earlier server, is used and left in place. wrap
        goes before the command (`taskset -c 0`)."""
        self.page_size = page_size
        self.demo_items = demo_items
        if not os.access(WARMFEED_BIN, os.X_OK):
            pytest.fail(f"no warmfeed binary at {WARMFEED_BIN}: run `swift build --product warmfeed` "
                        "or set WARMFEED_BIN")
        self._own_data = data is None
        self.data = data or tempfile.mkdtemp(prefix="warmfeed-browser-")
        self.log_path = os.path.join(self.data, "server.log")
        self.origin_folder = os.path.join(self.data, "demo-origin")
        self._log = open(self.log_path, "wb")
        try:
            self.proc = subprocess.Popen(
                [*wrap, WARMFEED_BIN, "serve", "--port", "0", "--data", self.data,
                 "--demo-items", str(demo_items), "--page-size", str(page_size),
                 "--threshold", str(threshold),
                 *(("--demo-pool", pool) if pool else ()), "--prewarm", str(prewarm),
                 "--public", PUBLIC, "--templates", str(ROOT / "Templates"), *extra_args],
                stdout=subprocess.PIPE, stderr=self._log, cwd=self.data,
                env={**os.environ, **(env or {})})
        except OSError as e:  # e.g. ETXTBSY while a build is relinking the binary
            self._log.close()
            shutil.rmtree(self.data, ignore_errors=True)
            pytest.fail(f"could not start {WARMFEED_BIN}: {e}")
        self.printed = b""
        self.url = self._read_address(timeout=180)
        # Keep draining stdout so the server never blocks on a full pipe.
        threading.Thread(target=self._drain, daemon=True).start()

    def _read_address(self, timeout: float) -> str:
        url = read_address(self.proc, rb"(http://127\.0\.0\.1:\d+)/", timeout)
        if url is not None:
            return url
        log = self.log()
        self.stop()
        pytest.fail(f"warmfeed did not print its address; log:\n{log}")

    def _drain(self) -> None:
        """Reads what the server prints after its address, keeping the first 64 KB (`printed`)."""
        try:
            while chunk := self.proc.stdout.read1(4096):
                if len(self.printed) < 65536:
                    self.printed += chunk
        except (OSError, ValueError):
            pass

    def log(self) -> str:
        try:
            return Path(self.log_path).read_text(errors="replace")[-4000:]
        except OSError:
            return ""

    def stop(self) -> str | None:
        """SIGTERM, then kill if it has not exited within 10 s. Returns a
        complaint when the shutdown was not clean, else None."""
        problem = None
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
                problem = "warmfeed did not exit within 10 s of SIGTERM and was killed"
            else:
                if self.proc.returncode != 0:
                    problem = f"warmfeed exited with {self.proc.returncode} on SIGTERM"
        else:
            problem = f"warmfeed died during the tests (exit {self.proc.returncode})"
        if problem:
            problem += f"; log:\n{self.log()}"
        self._log.close()
        if self._own_data:
            shutil.rmtree(self.data, ignore_errors=True)
        return problem


def serving(**options):
    s = Server(**options)
    yield s
    problem = s.stop()
    assert problem is None, problem


@pytest.fixture(scope="session")
def server():
    """The feed with 10 rows a page (sentinel after row 7)."""
    yield from serving(page_size=10)


@pytest.fixture(scope="session")
def server5():
    """The feed with 5 rows a page (sentinel after row 4), for the tall viewport."""
    yield from serving(page_size=5)


# --------------------------------------------------------------------------
# A fault-injecting reverse proxy between the browser and the server
# --------------------------------------------------------------------------

HOP_BY_HOP = {"connection", "keep-alive", "proxy-authenticate", "proxy-authorization", "te",
              "trailers", "transfer-encoding", "upgrade", "proxy-connection"}


class FaultProxy:
    """Forwards every request to the real server, except that it answers 500
    (fail_status) to the first `fail_count` requests that match `fail_when(path, query)`.
    With hold(when), requests matching `when` wait until release() before
    they are forwarded (a slow server, without timing anything).
    Records (method, path-with-query, status) of every request it answered."""

    def __init__(self, upstream: str):
        up = urlsplit(upstream)
        self.upstream_host, self.upstream_port = up.hostname, up.port
        self.fail_when = lambda path, query: False
        self.fail_count = 0
        self.fail_status = 500
        self.hold_when = lambda path, query: False
        self.released = threading.Event()
        self.held: list[str] = []
        self.lock = threading.Lock()
        self.log: list[tuple[str, str, int]] = []
        proxy = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):  # quiet
                pass

            def _handle(self):
                parts = urlsplit(self.path)
                query = parse_qs(parts.query)
                with proxy.lock:
                    fail = proxy.fail_count > 0 and proxy.fail_when(parts.path, query)
                    if fail:
                        proxy.fail_count -= 1
                    hold = not fail and proxy.hold_when(parts.path, query)
                    if hold:
                        proxy.held.append(self.path)
                if hold:
                    proxy.released.wait(30)
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length) if length else None
                if fail:
                    payload = b"injected fault\n"
                    status = proxy.fail_status
                    self.send_response(status)
                    self.send_header("Content-Type", "text/plain; charset=utf-8")
                    self.send_header("Content-Length", str(len(payload)))
                    self.send_header("Cache-Control", "no-store")
                    self.end_headers()
                    if self.command != "HEAD":
                        self.wfile.write(payload)
                else:
                    status = self._forward(body)
                with proxy.lock:
                    proxy.log.append((self.command, self.path, status))

            def _forward(self, body):
                conn = http.client.HTTPConnection(proxy.upstream_host, proxy.upstream_port, timeout=30)
                try:
                    headers = {k: v for k, v in self.headers.items() if k.lower() not in HOP_BY_HOP}
                    headers["Host"] = f"{proxy.upstream_host}:{proxy.upstream_port}"
                    conn.request(self.command, self.path, body=body, headers=headers)
                    r = conn.getresponse()
                    data = r.read()
                    self.send_response(r.status, r.reason)
                    for k, v in r.getheaders():
                        if k.lower() not in HOP_BY_HOP and k.lower() != "content-length":
                            self.send_header(k, v)
                    if self.command != "HEAD" and r.status not in (204, 304):
                        self.send_header("Content-Length", str(len(data)))
                    elif r.getheader("Content-Length"):
                        self.send_header("Content-Length", r.getheader("Content-Length"))
                    self.end_headers()
                    if self.command != "HEAD" and r.status not in (204, 304):
                        self.wfile.write(data)
                    return r.status
                except OSError as e:
                    self.send_error(502, f"upstream: {e}")
                    return 502
                finally:
                    conn.close()

            do_GET = do_HEAD = do_POST = do_PUT = do_DELETE = _handle

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()

    def fail(self, count: int, when, status: int = 500) -> None:
        with self.lock:
            self.fail_count = count
            self.fail_when = when
            self.fail_status = status

    def hold(self, when) -> None:
        with self.lock:
            self.released.clear()
            self.hold_when = when

    def release(self) -> None:
        with self.lock:
            self.hold_when = lambda path, query: False
        self.released.set()

    def wait_held(self, count: int = 1, timeout: float = 10) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            with self.lock:
                if len(self.held) >= count:
                    return
            time.sleep(0.02)
        raise AssertionError(f"expected {count} held request(s), got {self.held}")

    def requests(self, path: str = "/fragment"):
        with self.lock:
            return [(p, s) for (_, p, s) in self.log if urlsplit(p).path == path]

    def stop(self) -> None:
        self.released.set()
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture
def proxy(server):
    p = FaultProxy(server.url)
    yield p
    p.stop()


# --------------------------------------------------------------------------
# Chromium
# --------------------------------------------------------------------------

@pytest.fixture(scope="session")
def browser():
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM)
        yield b
        b.close()


class Requests:
    """Every request the page makes, in order."""

    def __init__(self, page):
        self.urls: list[str] = []
        page.on("request", lambda r: self.urls.append(r.url))

    def fragments(self) -> list[str]:
        return [u for u in self.urls if urlsplit(u).path == "/fragment"]

    def pages(self, n: int) -> list[str]:
        return [u for u in self.fragments() if parse_qs(urlsplit(u).query).get("page") == [str(n)]]


class FragmentTraffic:
    """The page's /fragment requests still waiting for an answer, and when that
    last changed. (An answer's headers end the wait: a client that rejects a
    500 need not read its body, and then the request never "finishes".)"""

    def __init__(self, page):
        self.waiting: set = set()
        self.started = 0
        self.changed = time.monotonic()
        page.on("request", self._start)
        for event in ("response", "requestfinished", "requestfailed"):
            page.on(event, self._end)

    @property
    def inflight(self) -> int:
        return len(self.waiting)

    def _start(self, request) -> None:
        if urlsplit(request.url).path == "/fragment":
            self.waiting.add(request)
            self.started += 1
            self.changed = time.monotonic()

    def _end(self, event) -> None:
        request = getattr(event, "request", event)  # a Response, or a Request
        if request in self.waiting:
            self.waiting.discard(request)
            self.changed = time.monotonic()


def new_page(ctx, errors: list[str] | None = None):
    """A page whose fragment traffic `settle` can watch; script errors and
    console errors (a CSP violation, an exception in feed.js) go to `errors`.
    Failed resource loads are left to the tests themselves (the fault tests
    cause them on purpose)."""
    p = ctx.new_page()
    p._warmfeed_fragments = FragmentTraffic(p)
    if errors is not None:
        p.on("pageerror", lambda e: errors.append(f"pageerror: {e}"))
        p.on("console", lambda m: m.type == "error" and not m.text.startswith("Failed to load resource")
             and errors.append(f"console: {m.text}"))
    return p


@pytest.fixture
def make_page(browser):
    """make_page(**context_options) -> a page in a new context; the test fails
    if the page reports a script or console error."""
    contexts, errors = [], []

    def make(**options):
        options.setdefault("viewport", {"width": 1000, "height": 700})
        ctx = browser.new_context(**options)
        ctx.set_default_timeout(10_000)
        contexts.append(ctx)
        return new_page(ctx, errors)

    yield make
    for ctx in contexts:
        ctx.close()
    assert errors == [], f"the page reported errors: {errors}"


@pytest.fixture
def page(make_page):
    return make_page()


# --------------------------------------------------------------------------
# Helpers shared by the tests
# --------------------------------------------------------------------------

def absolute(base: str, url: str) -> str:
    return urljoin(base + "/", url)


# Note: wait_for_function gets arrow functions, never bare expressions: the
# server's Content-Security-Policy (script-src 'self') forbids the eval that
# Playwright uses to poll a bare expression.


def settle(page, quiet: float = 0.5, timeout: float = 20) -> None:
    """Let the feed reach a quiet point: no fragment request in flight or
    started for `quiet` seconds, the feed not busy, and two animation frames
    run (so scroll handlers and IntersectionObserver callbacks have had their
    turn), until nothing more starts. Only fragments count: thumbnails and
    other images may take their time without holding the tests up."""
    traffic = page._warmfeed_fragments
    deadline = time.monotonic() + timeout
    while True:
        while traffic.inflight > 0 or time.monotonic() - traffic.changed < quiet:
            assert time.monotonic() < deadline, \
                f"fragment requests did not settle ({traffic.inflight} in flight)"
            page.wait_for_timeout(50)  # lets Playwright deliver the page's events
        started = traffic.started
        page.wait_for_function(
            "() => document.querySelector('[role=feed]').getAttribute('aria-busy') === 'false'")
        page.evaluate("new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)))")
        page.wait_for_timeout(50)
        if traffic.started == started and traffic.inflight == 0:
            return


def wait_js(page) -> None:
    """The thin client has run (it marks <html class="js">), and the feed is quiet."""
    page.wait_for_function("() => document.documentElement.classList.contains('js')")
    settle(page)


def open_feed(page, url: str) -> None:
    # Not "load": that waits for every image, which is no business of these tests.
    page.goto(url, wait_until="domcontentloaded")
    wait_js(page)


def scroll_to_y(page, y: float) -> None:
    page.evaluate("y => window.scrollTo(0, y)", y)


def scroll_element_to(page, selector: str, viewport_fraction: float) -> None:
    """Scroll so that the (first) element matching selector has its top at
    viewport_fraction × innerHeight."""
    page.evaluate(
        """([sel, f]) => {
            const el = document.querySelector(sel)
            const top = el.getBoundingClientRect().top + scrollY
            window.scrollTo(0, Math.max(0, top - innerHeight * f))
        }""",
        [selector, viewport_fraction])


def last_sentinel_fragment(page) -> str | None:
    return page.evaluate("""() => {
        const s = [...document.querySelectorAll('[role=feed] .sentinel')].pop()
        return s ? s.dataset.fragment : null
    }""")


def rows(page) -> list[dict]:
    return page.evaluate("""() => [...document.querySelectorAll('[role=feed] article')].map(a => ({
        id: a.id, pos: Number(a.getAttribute('aria-posinset')), size: a.getAttribute('aria-setsize'),
        page: a.dataset.page || null, url: a.dataset.url || null,
        tabindex: a.getAttribute('tabindex'), labelledby: a.getAttribute('aria-labelledby'),
        parentRole: a.parentElement.getAttribute('role')}))""")


def scroll_until_pages(page, last_page: int) -> None:
    """Scroll the newest sentinel into view, page after page, until page
    `last_page` has been appended."""
    for _ in range(last_page + 5):
        have = page.locator(f"[role=feed] article[data-page='{last_page}']").count()
        if have:
            return
        count = page.locator("[role=feed] article[data-page]").count()
        frag = last_sentinel_fragment(page)
        assert frag, "no sentinel left to scroll to"
        page.evaluate("""f => {
            const s = [...document.querySelectorAll('[role=feed] .sentinel')]
                .find(s => s.dataset.fragment === f)
            const top = s.getBoundingClientRect().top + scrollY
            window.scrollTo(0, Math.max(0, top - innerHeight / 2))
        }""", frag)
        page.wait_for_function(
            "n => document.querySelectorAll('[role=feed] article[data-page]').length > n", arg=count)
        settle(page)
    raise AssertionError(f"page {last_page} never appeared")
