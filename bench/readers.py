#!/usr/bin/env python3
"""Issue 11: 20 readers at once, over HTTP. Each reader has its own cookie,
starts at its own place (page 1, or a deep link), and reads at its own pace
(from a page every 20 s to one every 2 s, 200 to 2,100 px/s): it asks for its page, then
for each row's thumbnail as the row would come into view, then follows the
sentinel's fragment to the next page. A thumbnail is counted warm when it
came back in under 50 ms (the demo origin alone takes 250 ms). Run with
pre-warm on (2, adaptive) and off, on a fresh data folder each.

    WARMFEED_BIN=.build/release/warmfeed .venv/bin/python bench/readers.py [--seconds 60]

Prints, per reader and setting: pace, start page, thumbnails, share warm,
the p50/p95 of the cold ones (pre-warm must not starve readers' own
requests), placeholders; and the server's leads.
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import random
import re
import statistics
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "Tests" / "browser"))

import conftest  # noqa: E402

TOKEN = "bench-token-of-thirty-two-characters"
WARM_MS = 50
ROWS_IN_VIEW = 6  # rows a screen shows at once: asked for together when a page opens


class Reader(threading.Thread):
    """One reader: pages on one connection, thumbnails on up to six more at a
    time, as a browser over HTTP/1.1 does; each row's thumbnail is asked for
    when the row would come into view at the reader's pace."""

    def __init__(self, index: int, port: int, pace: float, start_page: int, until: float):
        super().__init__(daemon=True)
        self.index, self.port, self.pace, self.start_page, self.until = index, port, pace, start_page, until
        self.cookie = f"wf={index + 1:016x}"
        self.times: list[float] = []
        self.page_times: list[float] = []
        self.placeholders = 0
        self.errors = 0
        self.lock = threading.Lock()
        self.local = threading.local()

    def get(self, conn, path, accept="text/html"):
        conn.request("GET", path, headers={"Cookie": self.cookie, "Accept": accept, "Accept-Encoding": "identity"})
        r = conn.getresponse()
        body = r.read()
        return r.status, r.getheader("X-Warmfeed-Placeholder"), body

    def thumbnail(self, item: str):
        conn = getattr(self.local, "conn", None)
        if conn is None:
            conn = self.local.conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=60)
        start = time.monotonic()
        try:
            status, placeholder, _ = self.get(conn, f"/thumbs/{item}/1x", "image/webp,*/*")
        except OSError:
            self.local.conn = None
            with self.lock:
                self.errors += 1
            return
        with self.lock:
            self.times.append((time.monotonic() - start) * 1000)
            self.placeholders += bool(placeholder)
            self.errors += status != 200

    def run(self):
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=60)
        path = "/" if self.start_page == 1 else f"/?page={self.start_page}"
        with ThreadPoolExecutor(max_workers=6) as pool:
            try:
                while time.monotonic() < self.until:
                    asked = time.monotonic()
                    status, _, body = self.get(conn, path)
                    self.page_times.append((time.monotonic() - asked) * 1000)
                    if status != 200:
                        self.errors += 1
                        return
                    html = body.decode()
                    ids = re.findall(r'<article class="row" id="i(\d+)"', html)
                    opened, page_time = time.monotonic(), 1 / self.pace
                    for n, item in enumerate(ids):
                        due = opened + max(0, n - ROWS_IN_VIEW) * page_time / len(ids)
                        time.sleep(max(0.0, due - time.monotonic()))
                        if time.monotonic() >= self.until:
                            return
                        pool.submit(self.thumbnail, item)
                    time.sleep(max(0.0, opened + page_time - time.monotonic()))
                    m = re.search(r'data-fragment="([^"]+)"', html)
                    if not m:
                        return
                    path = m.group(1).replace("&amp;", "&")
            except OSError:
                self.errors += 1


def admin(port):
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    conn.request("GET", "/admin/cache", headers={"Authorization": f"Bearer {TOKEN}"})
    return json.loads(conn.getresponse().read())


def run(prewarm: int, seconds: float, seed: int) -> dict:
    server = conftest.Server(page_size=30, demo_items=20_000, prewarm=prewarm, pool=conftest.SHARED_POOL,
                             extra_args=("--origin-latency", "250"), env={"WARMFEED_ADMIN_TOKEN": TOKEN})
    port = int(server.url.rsplit(":", 1)[1])
    rng = random.Random(seed)
    until = time.monotonic() + seconds
    readers = []
    for i in range(20):
        pace = [0.05, 0.1, 0.2, 0.3, 0.5][i % 5]
        start_page = 1 if i % 4 == 0 else rng.randint(2, 600)
        readers.append(Reader(i, port, pace, start_page, until))
    try:
        for r in readers:
            r.start()
        for r in readers:
            r.join(seconds + 120)
        stats = admin(port)
    finally:
        problem = server.stop()
    assert problem is None, problem
    rows = []
    for r in readers:
        cold = sorted(t for t in r.times if t >= WARM_MS)
        rows.append({"reader": r.index, "pace": r.pace, "start": r.start_page, "thumbs": len(r.times),
                     "warm": (sum(t < WARM_MS for t in r.times) / len(r.times)) if r.times else None,
                     "cold_p50": statistics.median(cold) if cold else None,
                     "cold_p95": cold[int(0.95 * (len(cold) - 1))] if cold else None,
                     "placeholders": r.placeholders, "errors": r.errors, "pages": len(r.page_times),
                     "page_max": max(r.page_times, default=None)})
    return {"prewarm": prewarm, "readers": rows, "leads": (stats.get("prewarm") or {}).get("leads"),
            "page_warm_seconds": (stats.get("prewarm") or {}).get("page_warm_seconds"),
            "origin": (stats.get("origin") or {}).get("latency")}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seconds", type=float, default=60)
    ap.add_argument("--prewarm", type=int, nargs="+", default=[2, 0])
    ap.add_argument("--json")
    args = ap.parse_args()
    results = [run(prewarm, args.seconds, seed=11) for prewarm in args.prewarm]
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=1))
    print(f"\n20 readers for {args.seconds:.0f} s each setting, 30 a page, origin 250 ms; load average "
          f"{' '.join(f'{x:.1f}' for x in os.getloadavg())}; binary {conftest.WARMFEED_BIN}\n")
    print("| reader | pages/s | start page | " + " | ".join(
        f"prewarm {r['prewarm']}: thumbs, warm, cold p50/p95 ms, placeholders" for r in results) + " |")
    print("|---|---|---|" + "---|" * len(results))
    for i in range(20):
        a = results[0]["readers"][i]
        cells = []
        for r in results:
            x = r["readers"][i]
            warm = "—" if x["warm"] is None else f"{100 * x['warm']:.0f}%"
            cold = "—" if x["cold_p50"] is None else f"{x['cold_p50']:.0f}/{x['cold_p95']:.0f}"
            cells.append(f"{x['thumbs']}, {warm}, {cold}, {x['placeholders']}")
        print(f"| {i + 1} | {a['pace']} | {a['start']} | " + " | ".join(cells) + " |")
    for r in results:
        every = [t for x in r["readers"] for t in [x]]
        thumbs = sum(x["thumbs"] for x in every)
        warm = sum((x["warm"] or 0) * x["thumbs"] for x in every)
        print(f"\nprewarm {r['prewarm']}: {thumbs} thumbnails, {100 * warm / max(1, thumbs):.1f}% warm; "
              f"median reader {100 * statistics.median([x['warm'] or 0 for x in every]):.0f}% warm; "
              f"leads {r['leads']}; a page warms in {r['page_warm_seconds']} s; origin {r['origin']}; "
              f"pages served {sum(x['pages'] for x in every)}, slowest page {max((x['page_max'] or 0) for x in every):.0f} ms")
    return 0


if __name__ == "__main__":
    sys.exit(main())
