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
