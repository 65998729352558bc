"""Issue 4: a reader scrolls feeds that came in through `--source`: an RSS
file written by a hostile hand (nothing in it may run, no row is lost) and a
folder of images (every thumbnail is made from the file:// originals)."""

from __future__ import annotations

import http.client
import os
import struct
import tempfile
import zlib
from urllib.parse import urlsplit

import pytest

from conftest import open_feed, rows, scroll_until_pages, serving, settle

ITEMS = 45


def rss(items: int) -> str:
    parts = ['<?xml version="1.0" encoding="UTF-8"?>\n<rss version="2.0"><channel><title>Imported</title>'
             '<link>https://imported.example/</link><description>d</description>']
    for i in range(items):
        # Every fifth title tries to run something; the row must still be there, as text.
        title = f"Imported post {i}" if i % 5 else \
            f"Imported post {i} &lt;img src=x onerror=alert({i})&gt;&lt;script&gt;alert({i})&lt;/script&gt;"
        link = f"https://imported.example/{i}" if i % 7 else "javascript:alert('link')"
        parts.append(f"<item><guid>imp-{i}</guid><title>{title}</title><link>{link}</link>"
                     f"<description><![CDATA[<p onmouseover=\"alert(1)\">Text of {i}</p>]]></description>"
                     f"<pubDate>Mon, 07 Oct 2024 {10 + i // 60:02d}:{59 - i % 60:02d}:00 GMT</pubDate></item>")
    parts.append("</channel></rss>\n")
    return "".join(parts)


def png(path: str, width: int, height: int, rgb: tuple[int, int, int]) -> None:
    """A solid-colour PNG, written without any imaging library."""
    raw = b"".join(b"\x00" + bytes(rgb) * width for _ in range(height))

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)

    with open(path, "wb") as f:
        f.write(b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0))
                + chunk(b"IDAT", zlib.compress(raw)) + chunk(b"IEND", b""))


@pytest.fixture(scope="module")
def rss_server():
    folder = tempfile.mkdtemp(prefix="warmfeed-imported-")
    path = os.path.join(folder, "feed.xml")
    with open(path, "w") as f:
        f.write(rss(ITEMS))
    yield from serving(page_size=10, demo_items=0, extra_args=("--source", path))


def test_an_imported_feed_scrolls_to_its_end_and_nothing_in_it_runs(make_page, rss_server):
    page = make_page()
    dialogs = []
    page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
    open_feed(page, rss_server.url + "/")
    scroll_until_pages(page, 5)
    page.wait_for_selector("[role=feed] .end", state="attached")
    settle(page)
    got = rows(page)
    assert [r["pos"] for r in got] == list(range(1, ITEMS + 1))
    titles = page.eval_on_selector_all("[role=feed] article h2", "hs => hs.map(h => h.textContent)")
    # The markup a title carried is taken out (and a script with its content); the words stay.
    assert titles[:2] == ["Imported post 0", "Imported post 1"]
    assert titles == [f"Imported post {i}" for i in range(ITEMS)]
    # Text-only rows: no thumbnail box, no image.
    assert page.locator("[role=feed] article .thumb").count() == 0
    assert page.locator("[role=feed] article img").count() == 0
    # The javascript: links were dropped; the others carry the full rel.
    hrefs = page.eval_on_selector_all("[role=feed] article h2 a", "as => as.map(a => [a.getAttribute('href'), a.rel])")
    assert len(hrefs) == ITEMS - len([i for i in range(ITEMS) if i % 7 == 0])
    assert all(h.startswith("https://imported.example/") and rel == "noopener noreferrer nofollow ugc" for h, rel in hrefs)
    # Hover the rows whose summaries carried onmouseover: nothing runs.
    page.hover("[role=feed] article p")
    page.wait_for_timeout(200)
    assert dialogs == []
    assert page.locator("[role=feed] script").count() == 0


@pytest.fixture(scope="module")
def folder_server():
    folder = tempfile.mkdtemp(prefix="warmfeed-photos-")
    for i in range(24):
        sub = os.path.join(folder, f"album-{i % 3}")
        os.makedirs(sub, exist_ok=True)
        png(os.path.join(sub, f"photo_{i:02d}.png"), 640, 480, ((i * 40) % 256, (i * 90) % 256, (i * 150) % 256))
    with open(os.path.join(folder, "notes.txt"), "w") as f:
        f.write("not an image")
    yield from serving(page_size=10, demo_items=0, prewarm=2, extra_args=("--source", folder))


def thumbnail(server_url: str, src: str) -> tuple[int, str, str | None]:
    u = urlsplit(server_url)
    conn = http.client.HTTPConnection(u.hostname, u.port, timeout=30)
    conn.request("GET", src, headers={"Accept": "image/webp,*/*"})
    r = conn.getresponse()
    r.read()
    conn.close()
    return r.status, r.getheader("Content-Type"), r.getheader("X-Warmfeed-Placeholder")


def test_a_folder_of_images_scrolls_with_real_thumbnails(make_page, folder_server):
    page = make_page()
    open_feed(page, folder_server.url + "/")
    scroll_until_pages(page, 3)
    page.wait_for_selector("[role=feed] .end", state="attached")
    settle(page)
    assert len(rows(page)) == 24, "one row per image; the text file is skipped"
    titles = page.eval_on_selector_all("[role=feed] article h2", "hs => hs.map(h => h.textContent)")
    assert all(t.startswith("photo ") for t in titles), titles
    srcs = page.eval_on_selector_all("[role=feed] article img", "is => is.map(i => i.getAttribute('src'))")
    assert len(srcs) == 24
    for src in srcs:
        status, kind, placeholder = thumbnail(folder_server.url, src)
        assert (status, kind, placeholder) == (200, "image/webp", None), src
    # And in the browser every image decoded to the thumbnail's size.
    page.evaluate("() => window.scrollTo(0, 0)")
    sizes = page.eval_on_selector_all(
        "[role=feed] article img", "is => Promise.all(is.map(i => i.decode().then(() => [i.naturalWidth, i.naturalHeight])))")
    assert all(s == [160, 120] for s in sizes), sizes
