"""The WAI-ARIA feed pattern: role=feed, aria-busy while loading, articles with
aria-posinset / aria-setsize, focusable, labelled."""

from conftest import DEMO_ITEMS, open_feed, rows, scroll_until_pages, settle

BUSY_LOG = """
window.__busy = []
new MutationObserver(ms => { for (const m of ms) window.__busy.push([m.oldValue, m.target.getAttribute('aria-busy')]) })
  .observe(document, {subtree: true, attributes: true, attributeFilter: ['aria-busy'], attributeOldValue: true})
"""


def test_feed_follows_the_wai_aria_feed_pattern(page, server):
    page.add_init_script(BUSY_LOG)
    open_feed(page, server.url + "/")

    feed = page.locator("[role=feed]")
    assert feed.count() == 1
    assert feed.get_attribute("aria-busy") == "false"
    assert feed.get_attribute("aria-label") or feed.get_attribute("aria-labelledby"), "the feed has no name"
    assert page.evaluate("window.__busy") == [], "the feed went busy without loading anything"

    scroll_until_pages(page, last_page=3)
    settle(page)

    # aria-busy went to "true" while each page loaded, and back to "false".
    busy = page.evaluate("window.__busy")
    assert ["false", "true"] in busy, f"aria-busy never became true while loading: {busy}"
    assert busy.count(["false", "true"]) == 2, f"expected two loads marked busy: {busy}"
    assert busy[-1][1] == "false"
    assert feed.get_attribute("aria-busy") == "false"

    rs = rows(page)
    assert len(rs) == 30
    assert page.locator("[role=feed] > article").count() == 30, "every article is a child of the feed"
    assert page.locator("[role=feed] article").count() == page.locator("article").count()
    for r in rs:
        assert r["parentRole"] == "feed"
        assert r["tabindex"] == "0", f"{r['id']} is not focusable"
        assert r["size"] == str(DEMO_ITEMS), f"{r['id']} has aria-setsize {r['size']}"
    assert [r["pos"] for r in rs] == list(range(1, 31))
    # Each article is labelled by its own, non-empty title.
    labels = page.evaluate("""() => [...document.querySelectorAll('[role=feed] article')].map(a => {
        const l = document.getElementById(a.getAttribute('aria-labelledby'))
        return l && a.contains(l) ? l.textContent.trim() : null })""")
    assert all(labels), "an article's aria-labelledby does not name a title inside it"
    # The accessibility tree exposes the feed and its articles.
    snapshot = feed.aria_snapshot()
    assert snapshot.startswith("- feed"), snapshot[:200]
    assert snapshot.count("- article") == 30
    # Articles take focus.
    page.locator("[role=feed] article[aria-posinset='12']").focus()
    assert page.evaluate("document.activeElement.getAttribute('aria-posinset')") == "12"
