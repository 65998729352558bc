"""Issue 11, part 7: a slow origin never stalls the feed itself.

Over HTTP/1.1 Chromium opens six connections to one host. With the origin at
3 s and pre-warm off, every thumbnail the browser asks for holds a connection
for about 3 s; a reader flinging at 5,000 px/s used to get four pages and then
none: the fetch for the next page waited behind thumbnail requests holding
every connection. The thin client now keeps its thumbnail loads in flight
bounded (nearest the viewport first), so a page fetch always finds a free
connection.

Counted, never timed: pages appended, error rows, and how many thumbnail
requests were in flight (asked for, not yet answered) whenever a fragment
request went out. Six or more in flight means the fragment had to queue
behind them.
"""

from __future__ import annotations

from urllib.parse import urlsplit

import pytest

from conftest import open_feed, serving

PAGES = 8            # pages appended by the fling (pages 2..9)
CONNECTIONS = 6      # Chromium's HTTP/1.1 connections to one host


@pytest.fixture(scope="module")
def slow_origin_server():
    yield from serving(page_size=10, extra_args=("--origin-latency", "3000"))


class Thumbs:
    """Thumbnail requests in flight, and that count each time a fragment request goes out."""

    def __init__(self, page):
        self.inflight: set = set()
        self.most = 0
        self.at_fragment: list[int] = []
        page.on("request", self._start)
        for event in ("requestfinished", "requestfailed"):
            page.on(event, self._end)

    def _start(self, request) -> None:
        path = urlsplit(request.url).path
        if path.startswith("/thumbs/"):
            self.inflight.add(request)
            self.most = max(self.most, len(self.inflight))
        elif path == "/fragment":
            self.at_fragment.append(len(self.inflight))

    def _end(self, request) -> None:
        self.inflight.discard(request)


# Every page whose first row has been in the document (the client may take
# rows far from the viewport out again).
PAGES_SEEN = """
window.__pages = new Set()
new MutationObserver(ms => { for (const m of ms) for (const n of m.addedNodes)
  if (n.nodeType === 1 && n.matches('article[data-page]')) window.__pages.add(n.dataset.page) })
  .observe(document, {childList: true, subtree: true})
"""


def pages_appended(page) -> int:
    return page.evaluate("window.__pages.size") - 1


def test_a_fling_gets_every_page_while_the_origin_is_slow(make_page, slow_origin_server):
    page = make_page()
    thumbs = Thumbs(page)
    page.add_init_script(PAGES_SEEN)
    open_feed(page, slow_origin_server.url + "/")
    # The reader flings: 250 px every 50 ms, as far as the document goes.
    page.evaluate("() => { window.fling = setInterval(() => scrollBy(0, 250), 50) }")
    seen = []
    for _ in range(600):  # up to ~3 minutes on a loaded machine; the count is what matters
        seen.append(pages_appended(page))
        if seen[-1] >= PAGES or page.locator(".feed-error").count():
            break
        page.wait_for_timeout(300)
    page.evaluate("() => clearInterval(window.fling)")

    assert page.locator(".feed-error").count() == 0, "an error row appeared during the fling"
    assert seen[-1] >= PAGES, f"only {seen[-1]} of {PAGES} pages arrived (pages appended, every 0.3 s: {seen[-30:]})"
    queued = [n for n in thumbs.at_fragment if n >= CONNECTIONS]
    print(f"thumbnail requests in flight at each fragment request: {thumbs.at_fragment}, most at once: {thumbs.most}")
    assert queued == [], \
        f"{len(queued)} of {len(thumbs.at_fragment)} fragment requests went out behind {CONNECTIONS}+ " \
        f"thumbnail requests in flight (all of the host's connections): {thumbs.at_fragment}"

    # The reader stops: every thumbnail in view ends up loaded.
    page.wait_for_function("""() => {
        const near = [...document.querySelectorAll('[role=feed] .thumb img')].filter(i => {
            const r = i.getBoundingClientRect()
            return r.bottom > 0 && r.top < innerHeight })
        return near.length > 0 && near.every(i => i.complete && i.naturalWidth > 0)
    }""", timeout=120_000)
    visible = page.evaluate("""() => [...document.querySelectorAll('[role=feed] .thumb img')].filter(i => {
        const r = i.getBoundingClientRect(); return r.bottom > 0 && r.top < innerHeight }).length""")
    print(f"{visible} thumbnails in view, all loaded")


@pytest.fixture
def fresh_slow_origin_server():
    """A slow origin with nothing fetched yet, so every thumbnail holds its
    connection for the origin's 3 s."""
    yield from serving(page_size=10, extra_args=("--origin-latency", "3000"))


# Thumbnails not loaded yet within two screens of the viewport, by where they
# stand: passed (above it), in view, or ahead (below it).
WAITING = """() => {
    const out = { passed: [], inView: [], ahead: [] }
    for (const i of document.querySelectorAll('[role=feed] .thumb img')) {
        if (i.getAttribute('src')) continue
        const r = i.getBoundingClientRect(), H = innerHeight
        if (r.bottom < -2 * H || r.top > 3 * H) continue
        out[r.bottom < 0 ? 'passed' : r.top > H ? 'ahead' : 'inView'].push(new URL(i.dataset.src, location).pathname)
    }
    return out
}"""


def test_thumbnails_ahead_of_the_reader_load_before_those_passed(make_page, fresh_slow_origin_server):
    """Five thumbnails load at a time; when the reader has moved on, the ones
    waiting are started nearest first, but every one ahead of the reader
    comes before any they have already passed (nearest first alone mixed the
    two, and a fast reader on a phone found blanks ahead). Counted, not
    timed: the order in which the waiting ones are asked for."""
    page = make_page()
    asked: list[str] = []
    page.on("request", lambda r: asked.append(urlsplit(r.url).path.replace("/2x", "/1x"))
            if "/thumbs/" in r.url else None)
    open_feed(page, fresh_slow_origin_server.url + "/")
    # Three pages in the document (each sentinel's fragment comes at once),
    # while the first screen's thumbnails hold their connections for 3 s.
    for _ in range(100):
        if page.locator("[role=feed] article").count() >= 30:
            break
        page.evaluate("() => scrollTo(0, document.body.scrollHeight)")
        page.wait_for_timeout(100)
    assert page.locator("[role=feed] article").count() >= 30
    # The reader comes back to the top and reads down past page 1's rows.
    page.evaluate("() => scrollTo(0, 0)")
    page.wait_for_timeout(100)
    row = page.evaluate("() => document.querySelectorAll('[role=feed] article')[9].getBoundingClientRect().bottom + scrollY")
    for y in range(0, int(row) + 1, 200):
        page.evaluate("y => scrollTo(0, y)", y)
        page.wait_for_timeout(30)
    page.evaluate("y => scrollTo(0, y)", row + 1)
    page.wait_for_timeout(200)
    waiting = page.evaluate(WAITING)
    before = len(asked)
    assert waiting["passed"] and waiting["ahead"], waiting

    # The waiting ones are asked for five at a time as the origin answers.
    wanted = set(waiting["passed"] + waiting["inView"] + waiting["ahead"])
    for _ in range(400):
        if wanted <= set(asked[before:]):
            break
        page.wait_for_timeout(100)
    order = [p for p in asked[before:] if p in wanted]
    print(f"waiting: {waiting}; asked in this order: {order}")
    first_passed = min(order.index(p) for p in waiting["passed"] if p in order) if any(
        p in order for p in waiting["passed"]) else len(order)
    late_ahead = [p for p in waiting["ahead"] + waiting["inView"] if p not in order[:first_passed]]
    assert late_ahead == [], f"asked for after a thumbnail the reader had passed: {late_ahead} (order: {order})"
