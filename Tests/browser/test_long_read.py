"""Issue 11, part 5: an hour of reading stays light.

200 pages of 5 rows are scrolled through; rows far from the viewport give way
to spacers, so the document never holds more than 12 pages' worth of
articles. Scrolling back to the top brings every row back once, in order,
with the same id and position, and without moving what the reader is
looking at. Counted, never timed.
"""

from __future__ import annotations

import pytest

from conftest import open_feed, serving

PAGE_SIZE = 5
PAGES = 200
MOST = 12 * PAGE_SIZE


@pytest.fixture(scope="module")
def long_server():
    yield from serving(page_size=PAGE_SIZE, demo_items=PAGE_SIZE * (PAGES + 20))


# The articles in the document, in document order, as [position, id, set size].
ARTICLES = """() => [...document.querySelectorAll('[role=feed] article')]
    .map(a => [Number(a.getAttribute('aria-posinset')), a.id, a.getAttribute('aria-setsize')])"""

# The article at the top of the viewport (below the masthead), and where it is.
ANCHOR = """() => {
    const y = document.querySelector('.masthead').getBoundingClientRect().bottom
    const a = [...document.querySelectorAll('[role=feed] article')].find(a => a.getBoundingClientRect().bottom > y)
    return [a.id, a.getBoundingClientRect().top]
}"""

FRAMES = "() => new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)))"


def last_page(page) -> int:
    return page.evaluate("""() => Math.max(...[...document.querySelectorAll('[role=feed] article[data-page]')]
        .map(a => Number(a.dataset.page)))""")


def check_run(arts, ids: dict, where: str) -> None:
    """The articles in the document are in order, none twice, whole pages
    (a page far away is taken out whole), each row with the id it had when it
    was first seen."""
    pos = [p for p, _, _ in arts]
    assert pos == sorted(set(pos)), f"{where}: positions out of order or repeated: {pos}"
    for a, b in zip(pos, pos[1:]):
        assert b == a + 1 or (a % PAGE_SIZE == 0 and b % PAGE_SIZE == 1), f"{where}: a page cut short: {pos}"
    for p, i, _ in arts:
        assert ids.setdefault(p, i) == i, f"{where}: position {p} was {ids[p]}, now {i}"


def test_two_hundred_pages_stay_light_and_come_back_in_order(make_page, long_server):
    page = make_page()
    open_feed(page, long_server.url + "/")
    ids: dict[int, str] = {}
    counts = []
    # Down: to the bottom, and again once the next page has arrived.
    for n in range(2, PAGES + 1):
        page.evaluate("window.scrollTo(0, document.documentElement.scrollHeight)")
        page.wait_for_function(
            "n => document.querySelector(`[role=feed] article[data-page='${n}']`)", arg=n, timeout=30_000)
        arts = page.evaluate(ARTICLES)
        counts.append(len(arts))
        check_run(arts, ids, f"down, page {n}")
    page.evaluate(FRAMES)
    counts.append(len(page.evaluate(ARTICLES)))
    print(f"articles in the document, page by page: most {max(counts)}, last {counts[-1]}")
    assert max(counts) <= MOST, f"the document held {max(counts)} articles (at most {MOST}): {counts}"
    assert page.evaluate("document.querySelectorAll('[role=feed] article').length") < PAGES * PAGE_SIZE / 4
    top = max(ids)
    assert top >= PAGES * PAGE_SIZE - PAGE_SIZE, f"only {top} rows were reached"

    # Up: half a screen at a time, to the top. What is in view moves by just
    # that much, and each row that comes back is the one that was there.
    size = {s for _, _, s in page.evaluate(ARTICLES)}
    jumps, steps, seen = [], 0, set()
    while page.evaluate("scrollY") > 0:
        before = page.evaluate(ANCHOR)
        y = page.evaluate("scrollY")
        dy = min(y, page.evaluate("innerHeight") // 2)
        page.evaluate("dy => window.scrollBy(0, -dy)", dy)
        page.evaluate(FRAMES)
        # The row in view moved by dy, and so did the scroll position: the
        # browser's scroll anchoring had nothing to make up for (a spacer of
        # the wrong height would show here, and in a browser without it).
        after = page.evaluate("""id => { const a = document.getElementById(id)
            return a && a.getBoundingClientRect().top }""", before[0])
        y2 = page.evaluate("scrollY")
        if after is None or abs(after - (before[1] + dy)) > 1 or abs(y - dy - y2) > 1:
            jumps.append((before, dy, after, y, y2))
        arts = page.evaluate(ARTICLES)
        check_run(arts, ids, f"up, step {steps}")
        assert len(arts) <= MOST, f"up, step {steps}: {len(arts)} articles in the document"
        size |= {s for _, _, s in arts}
        seen |= {p for p, _, _ in arts}
        steps += 1
        assert steps < 2000, "never reached the top"
    assert jumps == [], f"the view moved while rows came back: {jumps[:5]} ({len(jumps)} of {steps} steps)"
    assert seen == set(range(1, top + 1)), f"rows never came back: {sorted(set(range(1, top + 1)) - seen)[:20]}"
    assert len(size) == 1, f"aria-setsize changed: {size}"
    first = page.evaluate(ARTICLES)
    assert first[0][0] == 1 and first[0][1] == ids[1]
    page.wait_for_function("() => location.pathname + location.search === '/'")
