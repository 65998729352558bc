#!/usr/bin/env python3
"""Issues 13 and 22: the cluster's duplicate work and overhead, measured side by side.

The topology of docker-compose.yml as plain processes (Tests/browser/cluster.py:
PostgreSQL, redis-server, nginx on deploy/nginx.conf, one `warmfeed origin` at
250 ms, three `warmfeed serve` nodes), fresh each time. Four runs:

1. 30 simulated readers through nginx, with the shared tier (--redis): a
   third of them on dense screens (they say `Sec-CH-DPR: 2`, as Chromium does
   once asked with `Accept-CH`, and load the 2x of each srcset), each pausing
   longer than the nodes' head timeout between pages (`--pause`, 10.5-12 s
   against the default 10 s), so every kept connection sits idle past it;
2. the same readers on a cluster without Redis (each node on its own tiers);
3. the same readers with the shared tier, a node killed with SIGKILL a third
   of the way in and Redis stopped two thirds of the way;
4. pages/s through nginx (wrk, random fragments, a random reader cookie per
   request, pre-warm off) with one node behind nginx, then three.

For 1-3: origin requests per distinct original and resizes per distinct
thumbnail (the goals are 1.00 with the shared tier), placeholders (the
origin is healthy: the goal is 0), answers that were not 2xx, the node that
answered each request (nginx's X-Upstream), the shared tier's hit latency
p50/p99 as the nodes measured it, and where readers' thumbnail requests were
answered (memory, shared tier, disk, made). On two cores, run 4 shows nginx's
and the cluster's overhead, not scale: three nodes share the same two cores.

    WARMFEED_BIN=.build/release/warmfeed .venv/bin/python bench/cluster.py [--readers 30] [--pages 6] [--dense 0.33]
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

THUMB = re.compile(r'src="/thumbs/(\d+-[0-9a-f]{8})/1x"')
NEXT = re.compile(r'data-fragment="([^"]+)"')


class Reader(threading.Thread):
    """One reader with its own cookie and screen: a page, its thumbnails in
    the size that screen loads (four at a time, as a browser's connections
    would), a pause, the next page. A dense screen says its pixel ratio
    (`Sec-CH-DPR: 2`) and loads the 2x; the pages keep one connection, idle
    through each pause."""

    def __init__(self, index: int, port: int, start_page: int, pages: int, pause: float, dense: bool):
        super().__init__(daemon=True)
        self.cookie = f"wf={index + 1:016x}"
        self.port, self.start_page, self.pages, self.pause, self.dense = port, start_page, pages, pause, dense
        self.statuses: list[int] = []
        self.thumbnails: list[str] = []
        self.placeholders = 0
        self.upstreams: dict[str, int] = {}
        self.lock = threading.Lock()

    def get(self, conn: http.client.HTTPConnection, path: str, accept: str = "text/html") -> str:
        headers = {"Cookie": self.cookie, "Accept": accept}
        if self.dense:
            headers["Sec-CH-DPR"] = "2"
        conn.request("GET", path, headers=headers)
        response = conn.getresponse()
        body = response.read()
        with self.lock:
            self.statuses.append(response.status)
            if response.getheader("X-Warmfeed-Placeholder") == "1":
                self.placeholders += 1
            upstream = response.getheader("X-Upstream") or "nginx"
            self.upstreams[upstream] = self.upstreams.get(upstream, 0) + 1
        return body.decode(errors="replace") if accept == "text/html" else ""

    def run(self):
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=60)
        path = f"/?page={self.start_page}"
        scale = "2x" if self.dense else "1x"
        with ThreadPoolExecutor(4) as pool:
            for _ in range(self.pages):
                try:
                    html = self.get(conn, path)
                except (OSError, http.client.HTTPException):
                    # nginx closed the idle connection (its keepalive_timeout): a browser opens another.
                    conn.close()
                    conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=60)
                    html = self.get(conn, path)
                thumbs = [f"/thumbs/{item}/{scale}" for item in THUMB.findall(html)]
                self.thumbnails += thumbs

                def fetch(thumb: str) -> None:
                    c = http.client.HTTPConnection("127.0.0.1", self.port, timeout=60)
                    try:
                        self.get(c, thumb, accept="image/avif,image/webp,*/*")
                    finally:
                        c.close()

                list(pool.map(fetch, thumbs))
                nxt = NEXT.findall(html)
                if not nxt:
                    break
                path = nxt[0].replace("&amp;", "&")
                time.sleep(self.pause)
        conn.close()


def readers_run(redis: bool, readers: int, pages: int, seed: int, dense: float, pause: tuple[float, float],
                faults: bool = False) -> dict:
    cluster = topology.Cluster(nodes=3, demo_items=3000, page_size=30, redis=redis, pool=SHARED_POOL, upstream_header=True)
    events: list[str] = []
    try:
        rng = random.Random(seed)
        # Readers start on the first 20 pages, so several of them meet on the same pages;
        # every third (by default) on a dense screen.
        crowd = [Reader(i, cluster.nginx.port, rng.randint(1, 20), pages, rng.uniform(*pause), dense=(i % round(1 / dense) == 0) if dense else False)
                 for i in range(readers)]
        start = time.monotonic()
        for r in crowd:
            r.start()
        if faults:
            expected = pages * (pause[0] + pause[1]) / 2
            time.sleep(expected / 3)
            cluster.nodes[1].kill9()
            events.append(f"node2 killed with SIGKILL at {time.monotonic() - start:.0f} s")
            time.sleep(expected / 3)
            cluster.redis.stop()
            events.append(f"Redis stopped at {time.monotonic() - start:.0f} s")
        for r in crowd:
            r.join()
        seconds = time.monotonic() - start
        stats = settle(cluster)
        origin = cluster.origin_stats()
        item_reads = item_lookups(cluster.postgres.url)
        node_ports = {f"127.0.0.1:{node.port}": f"node{index + 1}" for index, node in enumerate(cluster.nodes)}
        # Every thumbnail a node made or was given is on its disk: the union is what the cluster made.
        made = set()
        for index in range(len(cluster.nodes)):
            folder = Path(cluster.folder, f"node{index + 1}", "thumbs")
            made |= {p.name for p in folder.iterdir() if not p.name.startswith(".")} if folder.is_dir() else set()
    finally:
        cluster.stop()
    distinct = origin["distinct"] or 1
    resizes = sum(s["resizes"] for s in stats)
    # Thumbnails made: every one is written to its maker's disk and to Redis; distinct
    # thumbnails are what readers and pre-warm asked for, counted by the nodes' disk tiers.
    split: dict[str, int] = {}
    for r in crowd:
        for upstream, count in r.upstreams.items():
            name = ", ".join(node_ports.get(part.strip(), part.strip()) for part in upstream.split(","))
            split[name] = split.get(name, 0) + count
    answered = {
        "memory": sum(s["hits"] for s in stats),
        "shared": sum(s["shared_hits"] for s in stats),
        "disk": sum(s["disk_hits"] for s in stats),
        "joined": sum(s["coalesced"] for s in stats),
        "made_or_waited": sum(s["misses"] for s in stats) - sum(s["shared_hits"] + s["disk_hits"] for s in stats),
    }
    shared = [s["shared"] for s in stats if s.get("shared")]
    thumbs = {t for r in crowd for t in r.thumbnails}
    return {
        "redis": redis,
        "faults": events,
        "seconds": round(seconds, 1),
        "readers": {"plain": sum(not r.dense for r in crowd), "dense": sum(r.dense for r in crowd)},
        "requests": sum(len(r.statuses) for r in crowd),
        "non_2xx": sum(1 for r in crowd for status in r.statuses if status >= 300),
        "placeholders": sum(r.placeholders for r in crowd),
        "answers_per_node": dict(sorted(split.items())),
        "distinct_originals": origin["distinct"],
        "origin_requests": origin["requests"],
        "origin_requests_per_original": round(origin["requests"] / distinct, 3),
        "distinct_thumbnails_asked": len(thumbs),
        "resizes": resizes,
        "distinct_thumbnails_made": len(made),
        "resizes_per_thumbnail": round(resizes / max(1, len(made)), 3),
        "readers_thumbnail_answers": answered,
        "store_item_lookups": item_reads,
        "shared_hit_ms_p50": statistics.median([s["latency"]["p50_ms"] for s in shared if s["latency"].get("p50_ms")] or [0]) if shared else None,
        "shared_hit_ms_p99": max([s["latency"]["p99_ms"] for s in shared if s["latency"].get("p99_ms")] or [0]) if shared else None,
        "node_rss_mb": [round((s["memory_use"]["rss_bytes"] or 0) / 2**20) for s in stats],
        "claims": {k: sum(s.get(k, 0) for s in shared) for k in ("claims_won", "claims_waited", "claims_taken_over", "claims_unavailable",
                                                                 "claims_busy_retries", "claims_outage_retries", "owner_asks", "owner_unreachable", "busy",
                                                                 "errors", "pages_claimed", "pages_warmed_elsewhere")} if shared else None,
        "origin_retried": sum(s["origin"].get("retried", 0) for s in stats),
        "connections_closed_idle": sum(s["connections"].get("idle_closed", 0) for s in stats),
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
    parser.add_argument("--dense", type=float, default=1 / 3, help="the share of readers on dense screens (2x)")
    parser.add_argument("--pause", default="10.5,12", help="seconds a reader pauses between pages (low,high): past the 10 s head timeout")
    parser.add_argument("--rounds", type=int, default=3, help="rounds of the pages/s comparison (medians)")
    parser.add_argument("--duration", default="10s")
    parser.add_argument("--connections", type=int, default=32)
    parser.add_argument("--readers-only", action="store_true", help="only the readers' runs, not the pages/s comparison")
    parser.add_argument("--no-faults", action="store_true", help="leave out the run with a node killed and Redis stopped")
    args = parser.parse_args()
    pause = tuple(float(x) for x in args.pause.split(","))
    print(f"warmfeed: {topology.WARMFEED_BIN}")
    runs = [readers_run(redis, args.readers, args.pages, seed=13, dense=args.dense, pause=pause) for redis in (True, False)]
    if not args.no_faults:
        runs.append(readers_run(True, args.readers, args.pages, seed=13, dense=args.dense, pause=pause, faults=True))
    for run in runs:
        print(json.dumps(run, indent=1))
    for run in runs:
        label = "with Redis" if run["redis"] and not run["faults"] else "without Redis" if not run["redis"] else "node killed, Redis stopped"
        print(f"\n{label}: {run['readers']['plain']} plain and {run['readers']['dense']} dense readers, {run['seconds']} s")
        print(f"  origin requests per distinct original: {run['origin_requests_per_original']:.2f} "
              f"({run['origin_requests']} for {run['distinct_originals']}; goal 1.00 with the shared tier)")
        print(f"  resizes per distinct thumbnail:        {run['resizes_per_thumbnail']:.2f} "
              f"({run['resizes']} for {run['distinct_thumbnails_made']})")
        print(f"  placeholders {run['placeholders']}, non-2xx {run['non_2xx']} of {run['requests']} requests (goal 0 and 0)")
        print(f"  answers per node: {run['answers_per_node']}")
        if run["claims"]:
            print(f"  claims: {run['claims']}")
        print(f"  origin fetches retried on a new connection: {run['origin_retried']}; idle connections closed: {run['connections_closed_idle']}")
    with_redis = runs[0]
    print(f"\nshared-tier hit p50/p99: {with_redis['shared_hit_ms_p50']:.2f} / {with_redis['shared_hit_ms_p99']:.2f} ms")
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
