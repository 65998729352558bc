"""With JavaScript off, every page is a real URL and the next-page link after the feed navigates."""

import pytest

from conftest import rows


@pytest.fixture
def nojs_page(make_page):
    return make_page(java_script_enabled=False)


def test_next_page_link_navigates_without_javascript(nojs_page, server):
    page = nojs_page
    fragments = []
    page.on("request", lambda r: "/fragment" in r.url and fragments.append(r.url))
    page.goto(server.url + "/", wait_until="domcontentloaded")
    assert "js" not in (page.get_attribute("html", "class") or "")

    # The feed holds only articles: the link stands right after it (issue 25).
    link = page.locator(".feed + .more a[rel=next]")
    assert link.count() == 1
    link.scroll_into_view_if_needed()
    assert link.is_visible(), "the next-page link is hidden when JavaScript is off"
    box = link.bounding_box()
    assert box and box["height"] > 0
    assert "Next page (2)" in link.inner_text()
    href = link.get_attribute("href")
    assert href.startswith("/?page=2&after=")

    with page.expect_navigation(wait_until="domcontentloaded"):
        link.click()
    assert page.url == server.url + href
    rs = rows(page)
    assert rs[0]["page"] == "2" and rs[0]["pos"] == 11, f"page 2 starts with {rs[0]}"
    assert [r["pos"] for r in rs] == list(range(11, 21))
    assert page.locator(".feed + .more a[rel=next]").get_attribute("href").startswith("/?page=3&after=")
    assert fragments == [], "no fragment is fetched with JavaScript off"
