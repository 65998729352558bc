"""Faults between the browser and the server: a fault-injecting reverse proxy
answers 500 (or 404) to the fragment of page 3; the client shows an error row
with a Retry button, retries, and recovers with page 3's rows exactly once."""

import time
from collections import Counter

from conftest import Requests, open_feed, rows, scroll_until_pages, settle

# Records, in order, every error row and every page's first row the client adds
# to the feed, and every aria-busy change.
FEED_LOG = """
window.__feedLog = []
new MutationObserver(ms => { for (const m of ms) {
  if (m.type === 'attributes') { window.__feedLog.push({busy: m.target.getAttribute('aria-busy'), was: m.oldValue}); continue }
  for (const n of m.addedNodes) {
    if (n.nodeType !== 1) continue
    if (n.classList.contains('feed-error')) {
      const b = n.querySelector('button')
      window.__feedLog.push({error: true, role: n.getAttribute('role'), button: b && b.textContent.trim()})
    } else if (n.matches('article[data-page]')) window.__feedLog.push({page: n.dataset.page})
  }
}}).observe(document, {subtree: true, childList: true, attributes: true, attributeFilter: ['aria-busy'], attributeOldValue: true})
"""


def page3_fragment(path, query):
    return path == "/fragment" and query.get("page") == ["3"]


def scroll_to_page2_sentinel(page):
    page.evaluate("""() => {
        const s = document.querySelectorAll('[role=feed] .sentinel')[1]
        window.scrollTo(0, s.getBoundingClientRect().top + scrollY - innerHeight / 2)
    }""")


def assert_rows_clean(page, pages):
    rs = rows(page)
    ids = [r["id"] for r in rs]
    assert len(set(ids)) == len(ids), f"duplicate rows: {[i for i, c in Counter(ids).items() if c > 1]}"
    assert [r["pos"] for r in rs] == list(range(1, 10 * pages + 1))
    assert [r["page"] for r in rs if r["page"]] == [str(k) for k in range(1, pages + 1)]


def test_server_errors_heal_by_automatic_retry(page, server, proxy):
    proxy.fail(2, page3_fragment)
    page.add_init_script(FEED_LOG)
    req = Requests(page)
    open_feed(page, proxy.url + "/")
    scroll_until_pages(page, last_page=2)

    scroll_to_page2_sentinel(page)
    # Two failures, then the automatic retry (1 s, then 2 s later) brings page 3.
    page.wait_for_selector("[role=feed] article[data-page='3']", state="attached", timeout=20_000)
    settle(page)

    assert [s for p, s in proxy.requests() if "page=3" in p] == [500, 500, 200]
    assert len(req.pages(3)) == 3
    log = page.evaluate("window.__feedLog")
    events = [e for e in log if "busy" not in e]
    assert events == [{"page": "1"}, {"page": "2"}, {"error": True, "role": "alert", "button": "Retry"},
                      {"error": True, "role": "alert", "button": "Retry"}, {"page": "3"}], events
    assert page.locator(".feed-error").count() == 0, "the error row stayed after recovery"
    assert page.get_attribute("[role=feed]", "aria-busy") == "false"
    assert_rows_clean(page, 3)


def test_retry_button_recovers(page, server, proxy):
    proxy.fail(1, page3_fragment)
    page.add_init_script(FEED_LOG)
    page.clock.install()
    req = Requests(page)
    open_feed(page, proxy.url + "/")
    scroll_until_pages(page, last_page=2)

    # Stop the page's clock so the automatic retry cannot beat the click.
    page.clock.pause_at(time.time() + 1)
    scroll_to_page2_sentinel(page)
    error = page.locator("[role=feed] + .feed-error[role=alert]")
    error.wait_for()
    retry = error.get_by_role("button", name="Retry")
    assert retry.is_visible()
    assert [s for p, s in proxy.requests() if "page=3" in p] == [500]
    assert page.get_attribute("[role=feed]", "aria-busy") == "false"
    assert page.locator("[role=feed] article[data-page='3']").count() == 0

    retry.click()
    page.wait_for_selector("[role=feed] article[data-page='3']", state="attached")
    # Let every pending timer fire: the cancelled automatic retry must not fetch again.
    page.clock.run_for(60_000)
    page.clock.resume()
    settle(page)

    assert [s for p, s in proxy.requests() if "page=3" in p] == [500, 200]
    assert len(req.pages(3)) == 2
    assert page.locator(".feed-error").count() == 0, "the error row stayed after recovery"
    assert_rows_clean(page, 3)


def test_client_errors_are_not_retried_automatically(page, server, proxy):
    """A 4xx will not heal by itself: the error row and Retry, no retry loop."""
    page.clock.install()
    req = Requests(page)
    open_feed(page, proxy.url + "/")
    scroll_until_pages(page, last_page=2)

    proxy.fail(1, page3_fragment, status=404)
    page.clock.pause_at(time.time() + 1)
    scroll_to_page2_sentinel(page)
    page.locator("[role=feed] + .feed-error[role=alert]").wait_for()
    page.clock.run_for(120_000)
    page.clock.resume()
    settle(page)
    assert [s for p, s in proxy.requests() if "page=3" in p] == [404]
    assert page.locator("[role=feed] + .feed-error button").count() == 1

    page.locator("[role=feed] + .feed-error button").click()
    page.wait_for_selector("[role=feed] article[data-page='3']", state="attached")
    settle(page)
    assert [s for p, s in proxy.requests() if "page=3" in p] == [404, 200]
    assert len(req.pages(3)) == 2
    assert_rows_clean(page, 3)


def frames(page, n=3):
    page.evaluate("n => new Promise(r => { const f = k => k ? requestAnimationFrame(() => f(k - 1)) : r(); f(n) })", n)


def test_slow_page_is_fetched_once_even_if_its_sentinel_leaves_and_returns(page, server, proxy):
    """While page 2 is in flight (held by the proxy), the reader scrolls the
    sentinel out of view and back, twice: still one request, one copy of page 2."""
    req = Requests(page)
    open_feed(page, proxy.url + "/")
    proxy.hold(lambda path, query: path == "/fragment" and query.get("page") == ["2"])

    top_of_sentinel = page.evaluate("""() => document.querySelector('[role=feed] .sentinel')
        .getBoundingClientRect().top + scrollY""")
    in_view = top_of_sentinel - page.evaluate("innerHeight") / 2
    page.evaluate("y => window.scrollTo(0, y)", in_view)
    proxy.wait_held(1)
    page.wait_for_function("() => document.querySelector('[role=feed]').getAttribute('aria-busy') === 'true'")
    for _ in range(2):
        page.evaluate("window.scrollTo(0, 0)")
        frames(page)
        page.evaluate("y => window.scrollTo(0, y)", in_view)
        frames(page)
    assert len(req.pages(2)) == 1, f"page 2 was requested again while in flight: {req.pages(2)}"

    proxy.release()
    page.wait_for_selector("[role=feed] article[data-page='2']", state="attached")
    settle(page)
    assert len(req.pages(2)) == 1
    assert [s for p, s in proxy.requests() if "page=2" in p] == [200]
    assert page.get_attribute("[role=feed]", "aria-busy") == "false"
    assert_rows_clean(page, 2)
