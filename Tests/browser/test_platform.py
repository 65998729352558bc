"""The web platform's own checkers (issue 25): axe-core (Deque's accessibility
engine, through Playwright) finds no violation on the first page, a page
after scrolling, a deep page, the error pages and the dashboard; httplint
(the linter behind REDbot) finds nothing to warn about on a page, a fragment,
a thumbnail and a static file; the first page is restored from Chromium's
back/forward cache."""

from __future__ import annotations

import http.client
import os
import subprocess
import sys
from pathlib import Path
from urllib.parse import urlsplit

import pytest
from axe_playwright_python.sync_playwright import Axe

from conftest import CHROMIUM, new_page, open_feed, scroll_until_pages, settle

AXE = Axe()


def violations(page) -> list[str]:
    """axe-core's violations on the page as it is now, one line each."""
    result = AXE.run(page)
    return [f"{v['impact']} {v['id']}: {v['help']} at {[n['target'] for n in v['nodes']][:3]}"
            for v in result.response["violations"]]


def admin_token(server) -> str:
    return Path(server.data, "admin-token").read_text().strip()


def test_axe_finds_nothing_on_the_feed_a_deep_page_the_error_pages_and_the_dashboard(page, server):
    open_feed(page, server.url + "/")
    assert violations(page) == [], "the first page"

    scroll_until_pages(page, last_page=3)
    settle(page)
    assert violations(page) == [], "after scrolling through three pages"

    # The last page, with the end of the feed in it.
    page.goto(server.url + "/?page=40", wait_until="domcontentloaded")
    assert page.locator("[role=feed] .end").count() == 1
    assert violations(page) == [], "the last page"

    page.goto(server.url + "/?page=25", wait_until="domcontentloaded")
    assert violations(page) == [], "a deep page"

    for path, status in [("/?page=abc", 400), ("/?page=99999", 404), ("/no/such/place", 404)]:
        response = page.goto(server.url + path, wait_until="domcontentloaded")
        assert response.status == status, path
        assert violations(page) == [], f"the error page of {path}"

    # The dashboard, signed in as a browser does, and again after it read its numbers once more.
    response = page.goto(server.url + "/admin?token=" + admin_token(server), wait_until="domcontentloaded")
    assert response.status == 200 and page.url == server.url + "/admin", "the token was not exchanged for a session"
    assert violations(page) == [], "the dashboard"
    with page.expect_response(lambda r: urlsplit(r.url).path == "/admin" and r.request.resource_type == "fetch", timeout=15_000):
        pass
    page.wait_for_timeout(300)
    # The rows, and the table of every number (as /metrics names them).
    assert page.url == server.url + "/admin" and page.locator("main table").count() == 2
    assert violations(page) == [], "the dashboard after it refreshed its numbers"


def test_the_dashboard_refreshes_its_numbers_without_reloading(page, server):
    page.goto(server.url + "/admin?token=" + admin_token(server), wait_until="domcontentloaded")
    navigations = []
    page.on("framenavigated", lambda frame: navigations.append(frame.url))
    page.evaluate("window.__kept = 1")
    # Every number, opened: it stays open when the numbers are read again.
    page.click("details.numbers summary")
    uptime = page.locator("main th:text-is('Up') + td").inner_text()
    page.wait_for_function(
        "was => document.querySelector('main th + td') && [...document.querySelectorAll('main th')]"
        ".find(t => t.textContent === 'Up').nextElementSibling.textContent !== was", arg=uptime, timeout=20_000)
    assert page.evaluate("window.__kept") == 1, "the page was reloaded"
    assert navigations == []
    assert page.evaluate("document.querySelector('details.numbers').open"), "the table of every number closed on a refresh"
    assert page.locator("details.numbers code:text-is('uptime_seconds')").is_visible()


def test_the_sign_in_form_signs_in_and_the_button_signs_out_and_axe_finds_nothing(page, server):
    # No session: the form, as Chromium shows it.
    response = page.goto(server.url + "/admin", wait_until="domcontentloaded")
    assert response.status == 401 and page.locator("form[action='/admin/sign-in'] input[type=password]").count() == 1
    assert violations(page) == [], "the sign-in form"
    # A wrong token: the form again, saying so, and axe still content.
    page.fill("#token", "not-the-token-" + "x" * 30)
    with page.expect_navigation():
        page.click("form[action='/admin/sign-in'] button")
    assert page.locator("[role=alert]").inner_text() == "That is not the admin token."
    assert violations(page) == [], "the sign-in form after a wrong token"
    # The right one, posted as Chromium posts a form of this site (Origin, Sec-Fetch-Site): the dashboard.
    page.fill("#token", admin_token(server))
    with page.expect_navigation():
        page.click("form[action='/admin/sign-in'] button")
    assert page.url == server.url + "/admin" and page.locator("main table").count() == 2
    assert admin_token(server) not in page.url
    assert violations(page) == [], "the dashboard with its sign-out button"
    # The way out: the session is over on the server, and the form is back.
    cookie = next(c["value"] for c in page.context.cookies() if c["name"] == "wf_admin")
    with page.expect_navigation():
        page.click("form.sign-out button")
    assert page.locator("form[action='/admin/sign-in']").count() == 1
    assert all(c["name"] != "wf_admin" for c in page.context.cookies())
    assert exchange(server, "/admin/cache", {"Cookie": f"wf_admin={cookie}"})[0] == 401


@pytest.mark.parametrize("signed_in", [True, False], ids=["dashboard", "sign-in form"])
def test_httplint_finds_nothing_to_warn_about_on_the_admin_pages(server, signed_in):
    headers = {"Accept": "text/html", "User-Agent": "warmfeed-tests"}
    if signed_in:
        status, raw = exchange(server, "/admin?token=" + admin_token(server), headers)
        assert status == 303
        cookie = next(line for line in raw.decode("latin-1").split("\r\n") if line.lower().startswith("set-cookie:"))
        headers["Cookie"] = cookie.split(":", 1)[1].strip().split(";")[0]
    status, raw = exchange(server, "/admin", headers)
    assert status == (200 if signed_in else 401)
    lint = subprocess.run([str(HTTPLINT), "-n"], input=raw, capture_output=True, timeout=60)
    assert lint.returncode == 0, lint.stderr.decode()
    report = lint.stdout.decode()
    complaints = [line for line in report.splitlines() if "[WARN]" in line or "[BAD]" in line]
    assert complaints == [], f"/admin (signed in: {signed_in}):\n{report}"


HTTPLINT = Path(sys.executable).with_name("httplint")


def exchange(server, target: str, headers: dict[str, str]) -> tuple[int, bytes]:
    """One GET, and its whole response as it came, for httplint."""
    url = urlsplit(server.url)
    conn = http.client.HTTPConnection(url.hostname, url.port, timeout=30)
    try:
        conn.request("GET", target, headers=headers)
        r = conn.getresponse()
        body = r.read()
        head = f"HTTP/1.1 {r.status} {r.reason}\r\n" + "".join(f"{k}: {v}\r\n" for k, v in r.getheaders()) + "\r\n"
        return r.status, head.encode("latin-1") + body
    finally:
        conn.close()


@pytest.mark.parametrize("target, accept", [
    ("/", "text/html"),
    ("/fragment?page=2", "*/*"),
    ("/thumbs/{id}/1x", "image/avif,image/webp,*/*"),
    ("/thumbs/{id}/1x", "image/webp,*/*"),
    ("/thumbs/{id}/2x", "image/webp,*/*"),
    ("static:feed.js", "*/*"),
    ("static:feed.css", "text/css,*/*"),
])
def test_httplint_finds_nothing_to_warn_about(server, target, accept):
    if target.startswith("static:"):
        # The versioned URL the page links to.
        status, raw = exchange(server, "/", {"Accept": "text/html"})
        name = target.split(":", 1)[1]
        html = raw.decode("utf-8", "replace")
        start = html.index(f"/static/{name}?v=")
        target = html[start:html.index('"', start)]
    if "{id}" in target:
        target = target.format(id=400)  # the newest demo item: a real thumbnail, made now or kept
    for gzip in (False, True):
        headers = {"Accept": accept, "User-Agent": "warmfeed-tests"}
        if gzip:
            headers["Accept-Encoding"] = "gzip"
        status, raw = exchange(server, target, headers)
        assert status == 200, f"{target}: {status}"
        lint = subprocess.run([str(HTTPLINT), "-n"], input=raw, capture_output=True, timeout=60)
        report = lint.stdout.decode()
        assert lint.returncode == 0, lint.stderr.decode()
        complaints = [line for line in report.splitlines() if "[WARN]" in line or "[BAD]" in line]
        if accept.startswith("image/avif"):
            complaints = [line for line in complaints if not avif_unknown_to_sniffer(raw, line)]
        assert complaints == [], f"{target} (gzip {gzip}):\n{report}"


def avif_unknown_to_sniffer(raw: bytes, complaint: str) -> bool:
    """Whether `complaint` is httplint's Content-Type mismatch for a body that
    is AVIF: WHATWG MIME Sniffing has no AVIF signature (whatwg/mimesniff#143),
    and sniffpy, which httplint asks, then answers `undefined/undefined` for
    any image it does not know, where the standard returns the type the server
    declared. Only that one line is let go, and only for a body whose own
    header says AVIF (an ISO-BMFF `ftyp` box of brand `avif`) and is declared
    `image/avif`; every other check still runs on it."""
    import sniffpy
    head, _, body = raw.partition(b"\r\n\r\n")
    return ("doesn't match the declared Content-Type" in complaint
            and b"\r\nContent-Type: image/avif\r\n" in head + b"\r\n"
            and body[4:12] == b"ftypavif"
            and str(sniffpy.sniff(body, "image/avif")) == "undefined/undefined")


BFCACHE = """() => new Promise(done => {
  const nav = performance.getEntriesByType('navigation')[0]
  done({ type: nav.type, reasons: nav.notRestoredReasons && JSON.stringify(nav.notRestoredReasons) })
})"""


def test_the_first_page_is_restored_from_the_back_forward_cache(browser, server):
    # Playwright turns the back/forward cache off by default, to keep tests apart; a reader's Chromium has it on.
    chromium = browser.browser_type.launch(executable_path=CHROMIUM, ignore_default_args=["--disable-back-forward-cache"])
    try:
        page = new_page(chromium.new_context(viewport={"width": 1000, "height": 700}))
        restored_from_cache(page, server)
    finally:
        chromium.close()


def restored_from_cache(page, server):
    open_feed(page, server.url + "/")
    page.evaluate("window.__restored = []; addEventListener('pageshow', e => window.__restored.push(e.persisted))")
    page.evaluate("window.__kept = 1")
    # Away to another page of the site, and back.
    page.goto(server.url + "/?page=2", wait_until="load")
    page.go_back(wait_until="load")
    settle(page)
    assert page.evaluate("window.__kept") == 1, (
        "the first page was loaded again, not restored: " + str(page.evaluate(BFCACHE)))
    assert page.evaluate("window.__restored") == [True]
    nav = page.evaluate(BFCACHE)
    assert nav["reasons"] in (None, "null"), nav
