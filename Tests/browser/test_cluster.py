"""Issue 13: the cluster, as plain processes on loopback (cluster.py): a real
PostgreSQL, redis-server, nginx running deploy/nginx.conf, one `warmfeed
origin` and three `warmfeed serve` nodes, all fresh (nothing cached, nothing
warmed but what the nodes warm themselves).

Chromium scrolls through nginx at 1,500 px/s for 10 pages of 30: at most 1% of
the thumbnails blank for over 100 ms; the origin got exactly one request per
original; each thumbnail (1x WebP for each, and whatever else the nodes chose
to make) was resized once in the whole cluster. Then a reader's
node is killed with SIGKILL mid-scroll: the reader still reaches page 10, with
no row twice and none missing. Then Redis is stopped: no 5xx, serving goes on.
No time is asserted.
"""

from __future__ import annotations

import json
import re
import time
from urllib.parse import urlsplit

import pytest

import cluster as topology
import warm_scroll
from conftest import SHARED_POOL, new_page

ROW_ID = re.compile(r'<article class="row" id="i(\d+)"')


@pytest.fixture(scope="module")
def cluster():
    c = topology.Cluster(nodes=3, demo_items=1000, page_size=warm_scroll.PAGE_SIZE, pool=SHARED_POOL,
                         origin_latency=warm_scroll.ORIGIN_LATENCY_MS, upstream_header=True)
    try:
        yield c
    finally:
        c.stop()


def settled(c: topology.Cluster, timeout: float = 60) -> list[dict]:
    """Every live node's numbers once nothing is in flight (pre-warm may still
    be making the pages ahead of where the reader stopped)."""
    deadline = time.monotonic() + timeout
    while True:
        stats = c.node_stats()
        busy = sum(s["in_flight"] + s["prewarm"]["running"] + s["prewarm"]["queued"] for s in stats)
        if busy == 0 or time.monotonic() > deadline:
            return stats
        time.sleep(0.5)


def why_twice(c: topology.Cluster, stats: list[dict]) -> str:
    """What each node's numbers say of how an original could be fetched twice."""
    numbers = json.dumps([{"node": s["node"], "shared": s["shared"], "originals": s.get("originals")} for s in stats], indent=1)
    return f"{numbers}\n{c.logs()}"


def assert_each_thumbnail_made_once(c: topology.Cluster, stats: list[dict]) -> None:
    """Each maker writes what it made to Redis once, so a thumbnail made twice is a
    key written twice. A write may still be on its way when the jobs have ended, so
    the counts are read until they hold still; a resize whose write failed (Redis
    slow, or the node's queue to it full, on CI's starved cores) is the only resize
    that may lack its key."""
    deadline = time.monotonic() + 10
    while True:
        keys = c.redis.count("wf:*:t:*")
        writes = sum(s["shared"]["writes"] for s in stats)
        if writes == keys or time.monotonic() > deadline:
            break
        time.sleep(0.5)
        stats = c.node_stats()
    resizes = sum(s["resizes"] for s in stats)
    unwritten = sum(s["shared"]["errors"] + s["shared"]["busy"] for s in stats)
    assert writes == keys, f"{writes} writes of {keys} thumbnails"
    assert keys <= resizes <= keys + unwritten, f"{resizes} resizes, {keys} thumbnails, {unwritten} commands failed"


def test_a_reader_scrolls_through_nginx_and_each_thumbnail_is_made_once(browser, cluster):
    result = warm_scroll.scroll_run(browser, cluster, pace=1500)
    report = json.dumps(result, indent=1, default=str)
    print(report)
    assert result["page_errors"] == [], report
    assert result["entered"] >= warm_scroll.PAGES * warm_scroll.PAGE_SIZE - 5, report
    assert result["late_share"] <= 0.01, \
        f"{result['late']} of {result['entered']} thumbnails were blank for over 100 ms:\n{report}\n{cluster.logs()}"

    stats = settled(cluster)
    origin = cluster.origin_stats()
    print(json.dumps({"origin": {k: origin[k] for k in ("requests", "distinct")},
                      "nodes": [{k: s[k] for k in ("node", "resizes", "shared_hits", "hits", "misses")} | {"shared": s["shared"]}
                                for s in stats]}, indent=1))
    twice = {name: n for name, n in origin["originals"].items() if n > 1}
    assert twice == {}, f"originals asked of the origin more than once: {twice}\n{why_twice(cluster, stats)}"
    assert origin["requests"] >= warm_scroll.PAGES * warm_scroll.PAGE_SIZE
    # Each thumbnail made once in the cluster. Which thumbnails there are is the server's
    # choice (the start warms the top in 1x and 2x; a browser that takes AVIF gets it made
    # after the WebP), but every original fetched has its 1x WebP, what this DPR-1
    # reader's screen loads when no AVIF is made yet.
    assert_each_thumbnail_made_once(cluster, stats)
    assert cluster.redis.count("wf:*:t:*:1x:webp") == origin["distinct"], f"{origin['distinct']} originals"
    # The work was spread: the other nodes found it in the shared tier or waited on a claim.
    assert sum(s["shared"]["hits"] + s["shared"]["claims_waited"] + s["shared"]["pages_warmed_elsewhere"] for s in stats) > 0


def test_a_dense_screen_on_the_same_pages_costs_no_second_fetch(browser, cluster):
    """After the plain reader, a reader on a dense screen (DPR 2: Chromium says
    so with Sec-CH-DPR once asked, and loads the 2x) scrolls the same pages,
    its pages on whichever node nginx hashes it to: each original it needs was
    fetched already, by the node that owns it, which makes its 2x."""
    result = warm_scroll.scroll_run(browser, cluster, pace=1500, device_scale_factor=2)
    report = json.dumps(result, indent=1, default=str)
    print(report)
    assert result["page_errors"] == [], report
    assert result["placeholders"] == 0, report
    # How late its thumbnails were is printed above, not asserted: this test is
    # about fetches, and a time on CI's starved cores (9 of 300 once, the cold
    # first screen) says nothing of them; bench/cluster.py measures lateness.
    stats = settled(cluster)
    origin = cluster.origin_stats()
    twice = {name: n for name, n in origin["originals"].items() if n > 1}
    assert twice == {}, f"originals asked of the origin more than once: {twice}\n{why_twice(cluster, stats)}"
    # 1x and 2x of the same pages, each made once in the cluster.
    assert_each_thumbnail_made_once(cluster, stats)
    assert cluster.redis.count("wf:*:t:*:2x:*") >= warm_scroll.PAGES * warm_scroll.PAGE_SIZE - 5
    assert sum(s["shared"]["owner_asks"] for s in stats) > 0, [s["shared"] for s in stats]


def test_a_reader_who_pauses_past_the_head_timeout_gets_no_placeholder(browser, cluster):
    """A reader who stops for longer than every side's idle limit (the nodes'
    and the origin's 10 s): the connections kept between nginx, the nodes and
    the origin sit idle and are closed; the next pages and thumbnails come all
    the same, with no placeholder and no error."""
    ctx = browser.new_context(viewport=warm_scroll.VIEWPORT, device_scale_factor=1)
    statuses: list[tuple[str, int]] = []
    placeholders: list[str] = []

    def on_response(r):
        statuses.append((urlsplit(r.url).path, r.status))
        if r.headers.get("x-warmfeed-placeholder"):
            placeholders.append(urlsplit(r.url).path)

    try:
        page = new_page(ctx)
        page.on("response", on_response)
        page.goto(cluster.url + "/?page=15", wait_until="domcontentloaded")
        page.wait_for_function("() => document.documentElement.classList.contains('js')")
        first = 14 * warm_scroll.PAGE_SIZE
        run = page.evaluate(warm_scroll.SCROLL, {"pace": 1500, "last": first + 2 * warm_scroll.PAGE_SIZE, "limitMs": 120_000})
        assert run["reached"], cluster.logs()
        page.wait_for_timeout(11_500)
        run = page.evaluate(warm_scroll.SCROLL, {"pace": 1500, "last": first + 5 * warm_scroll.PAGE_SIZE, "limitMs": 120_000})
        assert run["reached"], cluster.logs()
        page.wait_for_timeout(1500)
    finally:
        ctx.close()
    assert [s for s in statuses if s[1] >= 400] == [], statuses
    assert placeholders == [], placeholders
    stats = settled(cluster)
    assert sum(s["origin"]["errors"] for s in stats) == 0, [s["origin"] for s in stats]


def test_a_reader_whose_node_dies_mid_scroll_reaches_page_10(browser, cluster):
    ctx = browser.new_context(viewport=warm_scroll.VIEWPORT, device_scale_factor=1)
    errors: list[str] = []
    fragments: list = []
    killed: dict = {}
    statuses: list[tuple[str, int]] = []

    def on_response(response):
        path = urlsplit(response.url).path
        statuses.append((path, response.status))
        if path != "/fragment":
            return
        fragments.append(response)
        # Page 3 arrived: kill the node that served it (the reader's node) with SIGKILL.
        if len(fragments) == 2 and not killed:
            upstream = response.headers.get("x-upstream", "")
            for node in cluster.nodes:
                if upstream.endswith(f":{node.port}"):
                    node.kill9()
                    killed["node"] = node
                    killed["port"] = node.port

    try:
        ctx.set_default_timeout(60_000)
        page = new_page(ctx, errors)
        page.on("response", on_response)
        first = page.goto(cluster.url + "/", wait_until="domcontentloaded")
        page.wait_for_function("() => document.documentElement.classList.contains('js')")
        run = page.evaluate(warm_scroll.SCROLL, {"pace": 1500, "last": 300, "limitMs": 300_000})
        ids = [int(i) for i in ROW_ID.findall(first.text())]
        for response in fragments:
            if response.status == 200:
                ids += [int(i) for i in ROW_ID.findall(response.text())]
        requests_per_fragment: dict[str, int] = {}
        for response in fragments:
            requests_per_fragment[response.url] = requests_per_fragment.get(response.url, 0) + 1
    finally:
        ctx.close()
    assert killed, f"no fragment named its node (X-Upstream): {[f.headers for f in fragments[:2]]}"
    assert run["reached"], f"row 300 never came into view after node{killed['node'].args} died:\n{cluster.logs()}"
    assert errors == [], errors
    # Every row once, none missing: the next pages came from the nodes still up.
    assert len(ids) >= 300
    assert len(set(ids)) == len(ids), f"rows served twice: {sorted(i for i in set(ids) if ids.count(i) > 1)}"
    assert ids == list(range(ids[0], ids[0] - len(ids), -1)), "rows missing or out of order"
    assert [s for s in statuses if s[1] >= 500] == [], statuses
    # At most one retry of the thin client for any next page (nginx moves on by itself).
    assert max(requests_per_fragment.values()) <= 2, requests_per_fragment


def test_redis_stopped_serving_goes_on_without_a_5xx(browser, cluster):
    cluster.redis.stop()
    ctx = browser.new_context(viewport=warm_scroll.VIEWPORT, device_scale_factor=1)
    statuses: list[tuple[str, int]] = []
    try:
        page = new_page(ctx)
        page.on("response", lambda r: statuses.append((urlsplit(r.url).path, r.status)))
        page.goto(cluster.url + "/?page=20", wait_until="domcontentloaded")
        page.wait_for_function("() => document.documentElement.classList.contains('js')")
        last = 19 * warm_scroll.PAGE_SIZE + 3 * warm_scroll.PAGE_SIZE
        run = page.evaluate(warm_scroll.SCROLL, {"pace": 1500, "last": last, "limitMs": 300_000})
        page.wait_for_timeout(1500)
    finally:
        ctx.close()
    assert run["reached"], cluster.logs()
    assert [s for s in statuses if s[1] >= 500] == [], statuses
    assert sum(path.startswith("/thumbs/") and status == 200 for path, status in statuses) >= 60
    stats = cluster.node_stats()
    assert all(s["shared"]["up"] is False for s in stats), [s["shared"] for s in stats]


def test_a_node_killed_holding_claims_has_them_taken_over():
    """A slow origin (3 s), so node 1 still holds its claims when it is killed
    with SIGKILL; node 2, asked for the same thumbnails, waits on the claims,
    then takes them over when they expire and makes the thumbnails itself."""
    c = topology.Cluster(nodes=2, demo_items=200, page_size=30, pool=SHARED_POOL, origin_latency=3000,
                         node_args=("--prewarm", "0"))
    try:
        import http.client
        import threading

        items = range(150, 155)

        def ask(node, item: int, answers: dict | None = None):
            conn = http.client.HTTPConnection("127.0.0.1", node.port, timeout=60)
            try:
                conn.request("GET", f"/thumbs/{item}/1x", headers={"Accept": "image/webp"})
                response = conn.getresponse()
                response.read()
                if answers is not None:
                    answers[item] = (response.status, response.getheader("Content-Type"))
            except OSError:
                pass  # node 1's answers die with it
            finally:
                conn.close()

        doomed, survivor = c.nodes
        for item in items:
            threading.Thread(target=ask, args=(doomed, item), daemon=True).start()
        # Node 1 has claimed them all and is waiting on the origin.
        deadline = time.monotonic() + 30
        while c.redis.count("wf:*:c:*") < len(items) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert c.redis.count("wf:*:c:*") == len(items), "node 1 never claimed the originals"
        doomed.kill9()
        answers: dict = {}
        threads = [threading.Thread(target=ask, args=(survivor, item, answers)) for item in items]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert answers == {item: (200, "image/webp") for item in items}, answers
        shared = topology.get_json(survivor.url + "/admin/cache")["shared"]
        assert shared["claims_taken_over"] == len(items), shared
        assert topology.get_json(survivor.url + "/admin/cache")["resizes"] == len(items)
    finally:
        c.stop()
