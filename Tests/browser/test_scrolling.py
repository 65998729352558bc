"""Scrolling the feed: sentinels fetch the next page when, and only when, they
come into view; pages are appended in order, each fetched once; a tall
viewport fills up and then stops."""

from collections import Counter

import pytest

from conftest import (Requests, absolute, open_feed, rows, scroll_to_y, scroll_until_pages, settle,
                      serving)


def sentinel_box(page, index=0):
    return page.evaluate("""i => {
        const s = document.querySelectorAll('[role=feed] .sentinel')[i]
        const r = s.getBoundingClientRect()
        return {top: r.top, absTop: r.top + scrollY, fragment: s.dataset.fragment, innerHeight}
    }""", index)


def test_page_two_is_requested_only_once_the_sentinel_is_in_view(page, server):
    req = Requests(page)
    open_feed(page, server.url + "/")

    s = sentinel_box(page)
    assert s["top"] > s["innerHeight"], "test setup: page 1's sentinel should start below the fold"
    assert req.fragments() == [], "a fragment was requested before the sentinel came into view"

    # Just short of the fold: still nothing.
    scroll_to_y(page, s["absTop"] - s["innerHeight"] - 40)
    settle(page)
    s2 = sentinel_box(page)
    assert s2["top"] > s2["innerHeight"], "test setup: the sentinel should still be below the fold"
    assert req.fragments() == [], "a fragment was requested while the sentinel was still below the fold"

    # The sentinel in view: page 2, once.
    scroll_to_y(page, s["absTop"] - s["innerHeight"] / 2)
    page.wait_for_selector("[role=feed] article[data-page='2']", state="attached")
    settle(page)
    assert req.pages(2) == [absolute(server.url, s["fragment"])]
    assert req.fragments() == req.pages(2), f"unexpected fragment requests: {req.fragments()}"
    # Page 2 is appended right after page 1: rows 1..20.
    assert [r["pos"] for r in rows(page)] == list(range(1, 21))


def test_five_pages_appended_in_order_without_duplicates(page, server):
    req = Requests(page)
    open_feed(page, server.url + "/")
    scroll_until_pages(page, last_page=6)
    settle(page)

    rs = rows(page)
    n = len(rs)
    assert n == 60, f"expected 6 pages × 10 rows, got {n} rows"
    assert [r["pos"] for r in rs] == list(range(1, n + 1)), "rows are not in order 1..N"
    ids = [r["id"] for r in rs]
    assert len(set(ids)) == len(ids), f"duplicate rows: {[i for i, c in Counter(ids).items() if c > 1]}"
    # Newest first, across page boundaries too.
    times = page.eval_on_selector_all("[role=feed] article time", "ts => ts.map(t => t.getAttribute('datetime'))")
    assert len(times) == n and times == sorted(times, reverse=True), "rows are not newest first"
    assert [(r["pos"], r["page"]) for r in rs if r["page"]] == [(1 + 10 * k, str(k + 1)) for k in range(6)]

    # The sentinel sits after row ⌈0.7 × 10⌉ = 7 of every page, appended pages too
    # (per page, not a share of the total height).
    after = page.eval_on_selector_all(
        "[role=feed] .sentinel", "ss => ss.map(s => Number(s.previousElementSibling.getAttribute('aria-posinset')))")
    assert after == [10 * k + 7 for k in range(6)], f"sentinels follow rows {after}"

    fragments = req.fragments()
    counts = Counter(fragments)
    assert all(c == 1 for c in counts.values()), f"a fragment was requested twice: {counts}"
    sentinels = page.eval_on_selector_all("[role=feed] .sentinel", "ss => ss.map(s => s.dataset.fragment)")
    assert len(sentinels) == 6, "one sentinel per page"
    # The sentinels of pages 1..5 were followed, in order; page 6's is not (it was never in view).
    assert fragments == [absolute(server.url, f) for f in sentinels[:5]]


@pytest.fixture
def tall_page(make_page):
    return make_page(viewport={"width": 1280, "height": 3000})


def test_tall_viewport_fills_up_then_stops(tall_page, server5):
    page = tall_page
    req = Requests(page)
    open_feed(page, server5.url + "/")

    # Wait until the feed is quiet twice in a row with the same number of fragment requests.
    before = -1
    for _ in range(40):
        settle(page)
        now = len(req.fragments())
        if now == before:
            break
        before = now
    page.wait_for_timeout(1500)
    settle(page)
    assert len(req.fragments()) == before, "fragment requests kept growing: runaway"

    counts = Counter(req.fragments())
    assert all(c == 1 for c in counts.values()), f"a fragment was requested twice: {counts}"
    assert page.evaluate("scrollY") == 0
    sentinels = page.evaluate("""() => [...document.querySelectorAll('[role=feed] .sentinel')]
        .map(s => ({top: s.getBoundingClientRect().top, fragment: s.dataset.fragment}))""")
    height = 3000
    # It filled: at 5 rows a page, several pages are needed for 3000 px.
    assert len(req.fragments()) >= 3, f"only {len(req.fragments())} pages appended in a 3000 px viewport"
    assert sentinels[-1]["top"] >= height - 1, "the last sentinel is in view but its page was not fetched"
    fetched = set(req.fragments())
    for s in sentinels:
        url = absolute(server5.url, s["fragment"])
        if s["top"] < height - 1:
            assert url in fetched, f"sentinel at {s['top']:.0f}px is in view but was not followed"
        elif s["top"] > height + 1:
            assert url not in fetched, f"sentinel at {s['top']:.0f}px is below the fold but was fetched"
    rs = rows(page)
    assert [r["pos"] for r in rs] == list(range(1, len(rs) + 1))
    assert len(rs) == 5 * (len(fetched) + 1)


@pytest.fixture(scope="module")
def short_server():
    """25 items, 10 a page: pages of 10, 10 and a short last page of 5."""
    yield from serving(page_size=10, demo_items=25)


def test_the_end_of_the_feed_stops_the_fetching(page, short_server):
    req = Requests(page)
    open_feed(page, short_server.url + "/")
    for _ in range(10):
        if page.locator("[role=feed] .end").count():
            break
        page.evaluate("window.scrollTo(0, document.documentElement.scrollHeight)")
        settle(page)
    end = page.locator("[role=feed] .end")
    assert end.count() == 1 and end.is_visible()
    page.evaluate("window.scrollTo(0, document.documentElement.scrollHeight)")
    settle(page)
    rs = rows(page)
    assert [r["pos"] for r in rs] == list(range(1, 26))
    assert {r["size"] for r in rs} == {"25"}
    assert len(set(r["id"] for r in rs)) == 25
    assert [len(req.pages(n)) for n in (2, 3)] == [1, 1]
    assert len(req.fragments()) == 2, f"fetching went on past the end: {req.fragments()}"
    assert page.locator("[role=feed] .sentinel").count() == 2, "the last page has no sentinel"
    assert page.locator("[role=feed] > :last-child").get_attribute("class") == "end"


def test_a_deep_link_continues_from_its_page(page, server):
    req = Requests(page)
    open_feed(page, server.url + "/?page=3")
    first = rows(page)[0]
    assert first["page"] == "3" and first["pos"] == 21
    assert page.locator("a", has_text="Newer items").count() == 1
    scroll_until_pages(page, last_page=5)
    settle(page)
    rs = rows(page)
    assert [r["pos"] for r in rs] == list(range(21, 51))
    assert len(set(r["id"] for r in rs)) == 30
    assert [len(req.pages(n)) for n in (4, 5)] == [1, 1]



@pytest.fixture
def short_page(make_page):
    return make_page(viewport={"width": 800, "height": 240})


def test_a_reader_already_past_the_new_sentinel_is_never_stuck(short_page, server):
    """A fast reader (the End key held, a fling) is at the bottom again the
    moment a page arrives, before the browser has looked at its sentinel:
    the sentinel is first seen above the viewport, never "in view". The feed
    must keep growing all the same."""
    page = short_page
    req = Requests(page)
    open_feed(page, server.url + "/")
    # Every appended page sends the reader to the new bottom at once, in the same task.
    page.evaluate("""() => {
        const feed = document.querySelector('[role=feed]')
        window.jumper = new MutationObserver(() => scrollTo(0, document.documentElement.scrollHeight))
        window.jumper.observe(feed, {childList: true})
        scrollTo(0, document.documentElement.scrollHeight)
    }""")
    # The feed grows on its own past row 100 (the old client stopped at 10), however slow the machine.
    # Counted by the last row's position: rows far above the viewport give way to a spacer.
    counts = []
    for _ in range(450):  # up to 90 s
        counts.append(page.evaluate(
            "Math.max(0, ...[...document.querySelectorAll('[role=feed] article')].map(a => +a.getAttribute('aria-posinset')))"))
        if counts[-1] >= 100:
            break
        page.wait_for_timeout(200)
    page.evaluate("window.jumper.disconnect()")
    assert counts[-1] >= 100, f"the feed stopped growing at {counts[-1]} rows (counts every 0.2 s: {counts[-20:]})"
    settle(page)
    positions = [r["pos"] for r in rows(page)]
    assert positions and positions[-1] >= 100
    assert positions == list(range(positions[0], positions[0] + len(positions))), "rows are not in order"
    fragments = Counter(req.fragments())
    assert all(c == 1 for c in fragments.values()), f"a fragment was requested twice: {fragments}"
