"""Issue 37: many sources, one river. A real `warmfeed serve` with an OPML
list of feed files: the rows of every source merged by date, each naming its
source with markup axe-core passes; the list edited while serving and
SIGHUP sent (also during the start): the river follows and the process lives."""

from __future__ import annotations

import os
import signal
import tempfile
import time
import urllib.request

from axe_playwright_python.sync_playwright import Axe

import contextlib

from conftest import Server, open_feed, rows, scroll_until_pages, settle

AXE = Axe()
LONG_TITLE = "A planet of many voices " * 8  # 200 characters


def rss(title: str, site: str | None, prefix: str, minutes: range) -> str:
    """A feed named `title` of one entry a minute in `minutes`, newest first."""
    parts = ['<?xml version="1.0" encoding="UTF-8"?><rss version="2.0"><channel>'
             f'<title>{title}</title>' + (f'<link>{site}</link>' if site else '') + '<description>d</description>']
    for m in reversed(minutes):
        parts.append(f"<item><guid>{prefix}{m}</guid><title>{title[:20]} post {m}</title>"
                     f"<link>https://posts.example/{prefix}{m}</link><description>Text {m}</description>"
                     f"<pubDate>Mon, 07 Oct 2024 {10 + m // 60:02d}:{m % 60:02d}:00 GMT</pubDate></item>")
    return "".join(parts) + "</channel></rss>\n"


def write(path: str, text: str) -> None:
    with open(path, "w") as f:
        f.write(text)


def opml(paths: list[str]) -> str:
    outlines = "".join(f'<outline text="f{i}" xmlUrl="file://{p}"/>' for i, p in enumerate(paths))
    return f'<?xml version="1.0"?><opml version="2.0"><head/><body><outline text="all">{outlines}</outline></body></opml>'


def feed_files(folder: str) -> dict[str, str]:
    files = {
        "a": (rss("Alpha Weekly", "https://alpha.example/", "a", range(0, 40, 2))),
        # The same entry ids as Alpha: another source, so other rows.
        "b": (rss("Beta Notes", None, "a", range(1, 40, 2))),
        "c": (rss(LONG_TITLE, "https://gamma.example/", "c", range(40, 45))),
        "d": (rss("Delta Added Later", "https://delta.example/", "d", range(50, 53))),
    }
    paths = {}
    for name, text in files.items():
        paths[name] = os.path.join(folder, f"{name}.xml")
        write(paths[name], text)
    return paths


@contextlib.contextmanager
def served(**options):
    """A server for one test, stopped (and its shutdown checked) even when the test fails."""
    server = Server(**options)
    try:
        yield server
    finally:
        problem = server.stop()
    assert problem is None, problem


def violations(page) -> list[str]:
    result = AXE.run(page)
    return [f"{v['impact']} {v['id']}: {v['help']} at {[n['target'] for n in v['nodes']][:3]}"
            for v in result.response["violations"]]


def titles(url: str) -> list[str]:
    with urllib.request.urlopen(url + "/?page=1", timeout=10) as response:
        html = response.read().decode()
    return [part.split("</a>")[0].split(">")[-1] for part in html.split('<h2 id="t')[1:]]


def test_a_river_of_three_sources_names_each_rows_source_and_axe_finds_nothing(make_page):
    folder = tempfile.mkdtemp(prefix="warmfeed-river-")
    paths = feed_files(folder)
    planet = os.path.join(folder, "planet.opml")
    write(planet, opml([paths["a"], paths["b"], paths["c"]]))
    with served(page_size=10, demo_items=0, extra_args=("--source", planet)) as server:
        page = make_page()
        open_feed(page, server.url + "/")
        scroll_until_pages(page, 5)
        page.wait_for_selector("[role=feed] .end", state="attached")
        settle(page)
        got = rows(page)
        assert len(got) == 45, "every entry of every source, once"
        sources = page.eval_on_selector_all("[role=feed] article .via", "vs => vs.map(v => v.textContent)")
        assert len(sources) == 45
        assert sources[:5] == [" · from " + LONG_TITLE[:79] + "…"] * 5, "the newest are Gamma's, its long title shortened"
        assert sources.count(" · from Alpha Weekly") == 20 and sources.count(" · from Beta Notes") == 20
        links = page.eval_on_selector_all("[role=feed] article .via a", "as => as.map(a => [a.getAttribute('href'), a.rel])")
        assert {href for href, _ in links} == {"https://alpha.example/", "https://gamma.example/"}, "Beta names no site"
        assert all(rel == "noopener noreferrer nofollow ugc" for _, rel in links)
        # Merged by date: Alpha's and Beta's posts alternate.
        heads = page.eval_on_selector_all("[role=feed] article h2", "hs => hs.map(h => h.textContent)")
        assert heads[5:9] == ["Beta Notes post 39", "Alpha Weekly post 38", "Beta Notes post 37", "Alpha Weekly post 36"]
        assert violations(page) == []
        # A row with a source is as tall as one without: the source shares the date's line.
        heights = page.eval_on_selector_all("[role=feed] article", "as => as.map(a => Math.round(a.getBoundingClientRect().height))")
        assert len(set(heights)) == 1, heights


def test_sighup_rereads_the_list_and_a_source_taken_out_leaves_the_river():
    folder = tempfile.mkdtemp(prefix="warmfeed-river-")
    paths = feed_files(folder)
    listed = os.path.join(folder, "list.txt")
    write(listed, f"{paths['a']}\n{paths['c']}\n")
    with served(page_size=100, demo_items=0, extra_args=("--source", listed)) as server:
        # A SIGHUP before the list changed, as an operator's reload would: nothing happens, the process lives.
        server.proc.send_signal(signal.SIGHUP)
        assert len(titles(server.url)) == 25
        write(listed, f"# Alpha left, Delta came\n{paths['c']}\n{paths['d']}\n")
        server.proc.send_signal(signal.SIGHUP)
        deadline = time.monotonic() + 20
        now = []
        while time.monotonic() < deadline:
            now = titles(server.url)
            if len(now) == 8:
                break
            time.sleep(0.2)
        assert [t.split(" post ")[0] for t in now] == ["Delta Added Later"] * 3 + [LONG_TITLE[:20]] * 5
        assert server.proc.poll() is None


def test_sighup_during_the_start_does_not_end_the_process():
    folder = tempfile.mkdtemp(prefix="warmfeed-river-")
    paths = feed_files(folder)
    # A list of many feeds keeps the start busy for a moment; the signal lands in it.
    listed = os.path.join(folder, "list.txt")
    write(listed, "\n".join([paths["a"], paths["b"], paths["c"]]) + "\n")
    import conftest
    original = conftest.Server._read_address

    def hup_then_read(self, timeout):
        time.sleep(0.3)  # past the process's first line, which ignores SIGHUP until the poller listens for it
        self.proc.send_signal(signal.SIGHUP)
        return original(self, timeout)

    conftest.Server._read_address = hup_then_read
    try:
        with served(page_size=100, demo_items=0, extra_args=("--source", listed)) as server:
            assert server.proc.poll() is None
            assert len(titles(server.url)) == 45
    finally:
        conftest.Server._read_address = original
