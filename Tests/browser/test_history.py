"""The URL follows the page in view (history.replaceState), and reload and
back/forward land where the reader was."""

import time

import pytest

from conftest import absolute, open_feed, rows, scroll_element_to, scroll_until_pages, settle, wait_js


def location(page) -> str:
    return page.evaluate("location.pathname + location.search")


def wait_location(page, url: str) -> None:
    page.wait_for_function("u => location.pathname + location.search === u", arg=url)


def top_row(page) -> dict:
    """The article at the top of the viewport, just below the sticky masthead."""
    return page.evaluate("""() => {
        const y = document.querySelector('.masthead').getBoundingClientRect().bottom + 2
        const a = document.elementFromPoint(innerWidth / 2, y).closest('article')
        return a && {id: a.id, pos: Number(a.getAttribute('aria-posinset')), top: a.getBoundingClientRect().top}
    }""")


def in_view(page, element_id: str) -> dict:
    return page.evaluate("""id => {
        const a = document.getElementById(id)
        if (!a) return null
        const r = a.getBoundingClientRect()
        const head = document.querySelector('.masthead').getBoundingClientRect().bottom
        return {top: r.top, bottom: r.bottom, visible: r.bottom > head && r.top < innerHeight}
    }""", element_id)


def assert_landed(page, url3, top):
    assert location(page) == url3
    seen = in_view(page, top["id"])
    assert seen is not None, f"row {top['id']} is not in the document after returning"
    assert seen["visible"], f"row {top['id']} was at the top of the viewport, now it is at {seen['top']:.0f}px"
    # Where it was, give or take the rounding of the stored offset.
    assert abs(seen["top"] - top["top"]) <= 40, \
        f"row {top['id']} was at {top['top']:.0f}px from the top of the viewport, now at {seen['top']:.0f}px"


def scroll_and_dispatch(page, selector: str, viewport_fraction: float) -> None:
    """Like scroll_element_to, but returns only once the scroll event has been
    dispatched (so the client's own scroll listener has run): with the page's
    clock paused, the test must not advance the clock before that."""
    page.evaluate(
        """([sel, f]) => new Promise(done => {
            addEventListener('scroll', () => done(), {once: true})
            const el = document.querySelector(sel)
            window.scrollTo(0, Math.max(0, el.getBoundingClientRect().top + scrollY - innerHeight * f))
        })""",
        [selector, viewport_fraction])


def feed_with_four_pages(page, server) -> dict:
    """Open the feed, scroll until page 4 is appended; the document URL of each page."""
    open_feed(page, server.url + "/")
    scroll_until_pages(page, last_page=4)
    return {r["page"]: r["url"] for r in rows(page) if r["page"]}


def scroll_into_page3(page, server):
    urls = feed_with_four_pages(page, server)
    # Into page 2, then page 3, then back to page 1: the URL follows.
    scroll_element_to(page, "article[aria-posinset='13']", 0.1)
    wait_location(page, urls["2"])
    scroll_element_to(page, "article[aria-posinset='23']", 0.1)
    wait_location(page, urls["3"])
    page.evaluate("window.scrollTo(0, 0)")
    wait_location(page, "/")
    # Deep into page 3 (row 27 of rows 21-30), so that landing at the top of
    # page 3 instead would leave the row at the top out of view.
    scroll_element_to(page, "article[aria-posinset='27']", 0.1)
    wait_location(page, urls["3"])
    settle(page)
    top = top_row(page)
    assert top and top["pos"] >= 26, f"test setup: row at the top is {top}"
    return urls, top


def test_url_follows_the_page_in_view_and_reload_lands_there(page, server):
    urls, top = scroll_into_page3(page, server)
    assert urls["3"].startswith("/?page=3&after=")

    page.reload(wait_until="domcontentloaded")
    wait_js(page)
    assert page.url == absolute(server.url, urls["3"])
    first = rows(page)[0]
    assert first["page"] == "3" and first["pos"] == 21, f"reload did not land on page 3: {first}"
    assert_landed(page, urls["3"], top)


def test_back_lands_where_the_reader_was(page, server):
    urls, top = scroll_into_page3(page, server)

    page.goto(server.url + "/static/feed.css", wait_until="domcontentloaded")
    page.go_back(wait_until="domcontentloaded")
    wait_js(page)
    assert page.url == absolute(server.url, urls["3"])
    assert_landed(page, urls["3"], top)


# Two places a reader used to be brought back to wrongly (found by these tests,
# fixed in feed.js): a reload just after scrolling, and a spot near a page's end.

def test_reload_after_scrolling_within_a_page_lands_there(page, server):
    """The client writes the URL at once when the page in view changes, but the
    offset into the same page only now and then. Once the reader stops
    scrolling, the place they stopped at must be recorded. The page's clock is
    paused so the second scroll is certainly within the same second as the
    first; then two seconds are let run (any trailing write) before the reload."""
    page.clock.install()
    urls = feed_with_four_pages(page, server)

    page.clock.pause_at(time.time() + 1)
    page.clock.run_for(1500)  # any frame still pending runs; the last write is > 1 s ago
    scroll_and_dispatch(page, "article[aria-posinset='21']", 0.1)
    page.clock.run_for(50)
    assert location(page) == urls["3"]
    scroll_and_dispatch(page, "article[aria-posinset='26']", 0.1)  # 50 ms later
    page.clock.run_for(50)
    top = top_row(page)
    assert top["pos"] >= 25, top  # well away from the top of page 3
    page.clock.run_for(2000)  # the reader has stopped scrolling
    page.clock.resume()

    page.reload(wait_until="domcontentloaded")
    wait_js(page)
    assert rows(page)[0]["page"] == "3"
    assert_landed(page, urls["3"], top)


def test_back_lands_where_the_reader_was_near_the_end_of_a_page(page, server):
    urls = feed_with_four_pages(page, server)
    scroll_element_to(page, "article[aria-posinset='21']", 0.1)
    wait_location(page, urls["3"])
    # Row 29 of page 3 (rows 21-30) at the top: page 3's first row is still
    # above the top third, so the URL stays on page 3.
    scroll_element_to(page, "article[aria-posinset='29']", 0.1)
    settle(page)
    assert location(page) == urls["3"]
    top = top_row(page)
    assert top["pos"] >= 28, top

    page.goto(server.url + "/static/feed.css", wait_until="domcontentloaded")  # pagehide records the offset
    page.go_back(wait_until="domcontentloaded")
    wait_js(page)
    assert rows(page)[0]["page"] == "3", "test setup: back should load page 3's document"
    assert_landed(page, urls["3"], top)
