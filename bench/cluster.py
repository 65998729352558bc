#!/usr/bin/env python3
"""Issue 13: the cluster's duplicate work and overhead, measured side by side.

The topology of docker-compose.yml as plain processes (Tests/browser/cluster.py:
PostgreSQL, redis-server, nginx on deploy/nginx.conf, one `warmfeed origin` at
250 ms, three `warmfeed serve` nodes), fresh each time. Three runs:

1. 30 simulated readers through nginx, with the shared tier (--redis);
2. the same readers on a cluster without Redis (each node on its own tiers);
3. pages/s through nginx (wrk, random fragments, a random reader cookie per
   request, pre-warm off) with one node behind nginx, then three.

For 1 and 2: origin requests and resizes per distinct original (the goal is
1.00), the shared tier's hit latency p50/p99 as the nodes measured it, and
where readers' thumbnail requests were answered (memory, shared tier, disk,
made). On two cores, run 3 shows nginx's and the cluster's overhead, not
scale: three nodes share the same two cores.

    WARMFEED_BIN=.build/release/warmfeed .venv/bin/python bench/cluster.py [--readers 30] [--pages 6]
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import random
import re
import statistics
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "Tests" / "browser"))

import cluster as topology  # noqa: E402
from conftest import SHARED_POOL  # noqa: E402

THUMB = re.compile(r'src="(/thumbs/\d+/1x)"')
NEXT = re.compile(r'data-fragment="([^"]+)"')


class Reader(threading.Thread):
    """One reader with its own cookie: a page, its thumbnails (four at a time,
    as a browser's connections would), a pause, the next page."""

    def __init__(self, index: int, port: int, start_page: int, pages: int, pause: float):
        super().__init__(daemon=True)
        self.cookie = f"wf={index + 1:016x}"
        self.port, self.start_page, self.pages, self.pause = port, start_page, pages, pause
        self.statuses: list[int] = []
        self.thumbnails: list[str] = []

    def get(self, conn: http.client.HTTPConnection, path: str, accept: str = "text/html") -> str:
        conn.request("GET", path, headers={"Cookie": self.cookie, "Accept": accept})
        response = conn.getresponse()
        body = response.read()
        self.statuses.append(response.status)
        return body.decode(errors="replace") if accept == "text/html" else ""

    def run(self):
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=60)
        path = f"/?page={self.start_page}"
        with ThreadPoolExecutor(4) as pool:
            for _ in range(self.pages):
                html = self.get(conn, path)
                thumbs = THUMB.findall(html)
                self.thumbnails += thumbs

                def fetch(thumb: str) -> None:
                    c = http.client.HTTPConnection("127.0.0.1", self.port, timeout=60)
                    try:
                        self.get(c, thumb, accept="image/webp,*/*")
                    finally:
                        c.close()

                list(pool.map(fetch, thumbs))
                nxt = NEXT.findall(html)
                if not nxt:
                    break
                path = nxt[0].replace("&amp;", "&")
                time.sleep(self.pause)
        conn.close()


def readers_run(redis: bool, readers: int, pages: int, seed: int) -> dict:
    cluster = topology.Cluster(nodes=3, demo_items=3000, page_size=30, redis=redis, pool=SHARED_POOL)
    try:
        rng = random.Random(seed)
        # Readers start on the first 20 pages, so several of them meet on the same pages.
        crowd = [Reader(i, cluster.nginx.port, rng.randint(1, 20), pages, rng.uniform(0.3, 1.5)) for i in range(readers)]
        start = time.monotonic()
        for r in crowd:
            r.start()
        for r in crowd:
            r.join()
        seconds = time.monotonic() - start
        stats = settle(cluster)
        origin = cluster.origin_stats()
        item_reads = item_lookups(cluster.postgres.url)
    finally:
        cluster.stop()
    distinct = origin["distinct"] or 1
    resizes = sum(s["resizes"] for s in stats)
    answered = {
        "memory": sum(s["hits"] for s in stats),
        "shared": sum(s["shared_hits"] for s in stats),
        "disk": sum(s["disk_hits"] for s in stats),
        "joined": sum(s["coalesced"] for s in stats),
        "made_or_waited": sum(s["misses"] for s in stats) - sum(s["shared_hits"] + s["disk_hits"] for s in stats),
    }
    shared = [s["shared"] for s in stats if s.get("shared")]
    return {
        "redis": redis,
        "seconds": round(seconds, 1),
        "requests": sum(len(r.statuses) for r in crowd),
        "non_2xx": sum(1 for r in crowd for status in r.statuses if status >= 300),
        "distinct_originals": origin["distinct"],
        "origin_requests": origin["requests"],
        "origin_requests_per_original": round(origin["requests"] / distinct, 3),
        "resizes": resizes,
        "resizes_per_original": round(resizes / distinct, 3),
        "readers_thumbnail_answers": answered,
        "store_item_lookups": item_reads,
        "shared_hit_ms_p50": statistics.median([s["latency"]["p50_ms"] for s in shared if s["latency"].get("p50_ms")] or [0]) if shared else None,
        "shared_hit_ms_p99": max([s["latency"]["p99_ms"] for s in shared if s["latency"].get("p99_ms")] or [0]) if shared else None,
        "node_rss_mb": [round((s["memory_use"]["rss_bytes"] or 0) / 2**20) for s in stats],
        "claims": {k: sum(s[k] for s in shared) for k in ("claims_won", "claims_waited", "claims_taken_over", "claims_unavailable",
                                                          "pages_claimed", "pages_warmed_elsewhere")} if shared else None,
    }


def item_lookups(url: str) -> int | None:
    """Index scans of the item table's primary key, as PostgreSQL counted
    them: one per item read by id (the thumbnail path's store reads), plus
    those of the preview writes (about one per resize). Read after a pause, as PostgreSQL publishes
    its counters about once a second."""
    time.sleep(2)
    out = subprocess.run(["psql", url, "-Atc", "SELECT idx_scan FROM pg_stat_user_indexes WHERE indexrelname = 'item_pkey'"],
                         capture_output=True, text=True)
    return int(out.stdout.strip()) if out.returncode == 0 and out.stdout.strip().isdigit() else None


def settle(cluster: topology.Cluster, timeout: float = 120) -> list[dict]:
    deadline = time.monotonic() + timeout
    while True:
        stats = cluster.node_stats()
        if sum(s["in_flight"] + s["prewarm"]["running"] + s["prewarm"]["queued"] for s in stats) == 0 or time.monotonic() > deadline:
            return stats
        time.sleep(0.5)


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def pages_run(nodes: int, duration: str, connections: int) -> dict:
    cluster = topology.Cluster(nodes=nodes, demo_items=1000, page_size=30, redis=True, pool=SHARED_POOL,
                               node_args=("--prewarm", "0"))
    try:
        env = {**os.environ, "WF_PAGES": "34", "WF_READERS": "300"}
        script = str(ROOT / "bench" / "cluster_pages.lua")
        # A short warm-up fills the page caches; then the measured run.
        subprocess.run(["wrk", "-t2", f"-c{connections}", "-d3s", "-s", script, cluster.url], env=env, capture_output=True)
        pids = [n.proc.pid for n in cluster.nodes] + [cluster.nginx.proc.pid]
        cpu_before = sum(cpu_seconds(p) for p in pids[:-1])
        out = subprocess.run(["wrk", "-t2", f"-c{connections}", f"-d{duration}", "-s", script, cluster.url],
                             env=env, capture_output=True, text=True).stdout
        cpu_after = sum(cpu_seconds(p) for p in pids[:-1])
        result = json.loads(next(line for line in out.splitlines() if line.startswith("WRKJSON"))[8:])
    finally:
        cluster.stop()
    result["nodes"] = nodes
    result["pages_per_second"] = round(result["requests"] / result["seconds"])
    result["node_cpu_us_per_page"] = round((cpu_after - cpu_before) / max(1, result["requests"]) * 1e6, 1)
    return result


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--readers", type=int, default=30)
    parser.add_argument("--pages", type=int, default=6)
    parser.add_argument("--rounds", type=int, default=3, help="rounds of the pages/s comparison (medians)")
    parser.add_argument("--duration", default="10s")
    parser.add_argument("--connections", type=int, default=32)
    parser.add_argument("--readers-only", action="store_true", help="only the readers' runs, not the pages/s comparison")
    args = parser.parse_args()
    print(f"warmfeed: {topology.WARMFEED_BIN}")
    runs = [readers_run(redis, args.readers, args.pages, seed=13) for redis in (True, False)]
    for run in runs:
        print(json.dumps(run, indent=1))
    with_redis, without = runs
    print(f"\norigin requests per distinct original: {with_redis['origin_requests_per_original']:.2f} with Redis, "
          f"{without['origin_requests_per_original']:.2f} without (goal 1.00)")
    print(f"resizes per distinct original:         {with_redis['resizes_per_original']:.2f} with Redis, "
          f"{without['resizes_per_original']:.2f} without (goal 1.00)")
    print(f"shared-tier hit p50/p99: {with_redis['shared_hit_ms_p50']:.2f} / {with_redis['shared_hit_ms_p99']:.2f} ms")
    for run in runs:
        missed_memory = sum(v for k, v in run["readers_thumbnail_answers"].items() if k != "memory")
        print(f"store item lookups ({'with' if run['redis'] else 'without'} Redis): {run['store_item_lookups']} "
              f"for {missed_memory} readers' thumbnails not answered from memory")
    if args.readers_only:
        return 0

    rounds = {1: [], 3: []}
    for _ in range(args.rounds):
        for nodes in (1, 3):
            rounds[nodes].append(pages_run(nodes, args.duration, args.connections))
    for nodes, results in rounds.items():
        print(f"{nodes} node(s) behind nginx: " + ", ".join(f"{r['pages_per_second']} pages/s (p99 {r['p99_us'] / 1000:.1f} ms, "
                                                           f"{r['node_cpu_us_per_page']} µs node CPU/page, {r['non2xx'] + r['errors']} errors)"
                                                           for r in results))
    one = statistics.median(r["pages_per_second"] for r in rounds[1])
    three = statistics.median(r["pages_per_second"] for r in rounds[3])
    print(f"pages/s through nginx, medians: 1 node {one:.0f}, 3 nodes {three:.0f}: ratio {three / one:.2f}x "
          "(two cores shared by nginx, wrk and every node: this shows overhead, not scale)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
