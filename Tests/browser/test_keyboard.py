"""Issue 11, part 6: the WAI-ARIA feed pattern's keyboard.

Page Down / Page Up move focus to the next / previous article, across page
boundaries, loading the next page when the reader is at the last article;
Ctrl+End / Ctrl+Home move focus to the first focusable element after / before
the feed; the focused article shows an outline."""

from conftest import open_feed, settle

FOCUSED = """() => { const a = document.activeElement
    return a && a.closest('[role=feed]') ? Number(a.closest('article').getAttribute('aria-posinset')) : null }"""


def focused(page):
    return page.evaluate(FOCUSED)


def press_to(page, key: str, pos: int) -> None:
    page.keyboard.press(key)
    page.wait_for_function(f"p => ({FOCUSED})() === p", arg=pos)


def test_page_down_walks_the_articles_across_pages(page, server, proxy):
    open_feed(page, proxy.url + "/")
    # Page 2 is held at the proxy: Page Down on the last article of page 1
    # must wait for it, then go on.
    proxy.hold(lambda path, query: path == "/fragment" and query.get("page") == ["2"])
    page.locator("[role=feed] article[aria-posinset='1']").focus()
    walked = [focused(page)]
    for pos in range(2, 11):
        press_to(page, "PageDown", pos)
        walked.append(focused(page))
    proxy.wait_held(1)
    assert page.locator("[role=feed] article[data-page='2']").count() == 0, "test setup: page 2 arrived early"
    page.keyboard.press("PageDown")  # on row 10, the last one there is
    page.wait_for_timeout(300)
    assert focused(page) == 10, "focus left the last article before the next page arrived"
    proxy.release()
    page.wait_for_function(f"() => ({FOCUSED})() === 11")
    walked.append(11)
    for pos in range(12, 26):
        press_to(page, "PageDown", pos)
        walked.append(focused(page))
    assert walked == list(range(1, 26)), walked
    settle(page)
    assert len([p for p, s in proxy.requests() if "page=2" in p]) == 1

    # The focused article is in view, and its focus is visible.
    box = page.evaluate("""() => { const a = document.activeElement, r = a.getBoundingClientRect(), s = getComputedStyle(a)
        return {top: r.top, bottom: r.bottom, h: innerHeight, outline: s.outlineStyle, width: parseFloat(s.outlineWidth)} }""")
    assert box["bottom"] > 0 and box["top"] < box["h"], f"the focused article is out of view: {box}"
    assert box["outline"] != "none" and box["width"] > 0, f"focus is not visible: {box}"

    # Page Up walks back, across the boundary between pages 3 and 2.
    for pos in (24, 23, 22, 21, 20, 19):
        press_to(page, "PageUp", pos)

    # Ctrl+End leaves the feed forwards, Ctrl+Home backwards.
    page.keyboard.press("Control+End")
    page.wait_for_function("() => !document.activeElement.closest('[role=feed]') && document.activeElement !== document.body")
    after = page.evaluate("""() => document.querySelector('[role=feed]')
        .compareDocumentPosition(document.activeElement) & Node.DOCUMENT_POSITION_FOLLOWING""")
    assert after, "Ctrl+End did not move focus after the feed"
    page.locator("[role=feed] article[aria-posinset='15']").focus()
    page.keyboard.press("Control+Home")
    page.wait_for_function("() => !document.activeElement.closest('[role=feed]') && document.activeElement !== document.body")
    assert page.evaluate("document.activeElement.className") == "brand", "Ctrl+Home did not move focus before the feed"
