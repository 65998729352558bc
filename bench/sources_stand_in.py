#!/usr/bin/env python3
"""A stand-in for `warmfeed serve` with many sources, to test bench/sources.sh
without a Swift build: `WARMFEED_BIN=bench/sources_stand_in.py QUICK=1
bench/sources.sh`. Not a peer and not a model of Warmfeed's speed: it answers
the same interface the harness relies on, and polls the way issue 37's design
says (docs/design/issue-37-many-sources.md, 3.2-3.6), so the harness's
figures can be checked against a poller that behaves.

  sources_stand_in.py serve --port 0 --data DIR [--source SPEC]... [--refresh Ns]
                            [other warmfeed options, ignored]

- writes DIR/admin-token; prints `Warmfeed is serving http://127.0.0.1:PORT/`
  after one pass over every source (at most 30 s);
- reads each --source: an OPML file (every outline with xmlUrl, nested folders
  flattened) or a plain list (one URL a line, # comments);
- polls each source every --refresh seconds at its own phase (a hash of its URL),
  anchored on its slot; conditional GET (If-None-Match, If-Modified-Since);
  429/503 with Retry-After hold the host:port for every source on it, the
  throttled source asked again at the hold's end; failures back off (doubling,
  equal jitter, at most 6 h); at most 2 fetches a host and 16 in all; 30 s a
  fetch, 16 MiB a document;
- GET /admin/sources (Bearer token, WARMFEED_ADMIN_TOKEN or DIR/admin-token):
  {"sources": [...], "totals": {...}} with the fields the harness reads;
  GET /admin/cache: {"memory_use": {...}, "source": {imports, failures, ...}};
- --store, --node-name and --peer are taken and ignored: nodes of a "cluster"
  of stand-ins each poll every source (MODE=cluster shows it: 3 an interval);
  GET /: a page of 30 rows with aria-setsize = the items held.

STAND_IN_RUDE=1 makes it impolite, so the harness can be seen to say so: no
validators, Retry-After ignored, every source asked twice an interval.
"""
from __future__ import annotations

import argparse
import asyncio
import datetime
import hashlib
import http.client
import http.server
import json
import math
import os
import random
import re
import secrets
import signal
import socket
import sys
import threading
import time
import urllib.parse
from concurrent.futures import ThreadPoolExecutor
import xml.etree.ElementTree as ET

GUID = re.compile(rb"<guid[^>]*>([^<]*)</guid>")
RUDE = os.environ.get("STAND_IN_RUDE") == "1"
TITLE = re.compile(rb"<channel>\s*<title>([^<]*)</title>")


def iso(ts: float | None) -> str | None:
    return None if ts is None else datetime.datetime.fromtimestamp(ts, datetime.timezone.utc).isoformat().replace("+00:00", "Z")


def read_specs(specs: list[str]) -> list[str]:
    urls: list[str] = []
    for spec in specs:
        text = open(spec, encoding="utf-8").read()
        if text.lstrip().startswith("<"):
            root = ET.fromstring(text)
            for outline in root.iter("outline"):
                u = outline.get("xmlUrl") or outline.get("xmlurl")
                if u:
                    urls.append(u)
        else:
            urls += [line.strip() for line in text.splitlines() if line.strip() and not line.lstrip().startswith("#")]
    seen: set[str] = set()
    return [u for u in urls if not (u in seen or seen.add(u))]


class Source:
    def __init__(self, url: str, interval: float, t0: float):
        self.url = url
        parts = urllib.parse.urlsplit(url)
        self.host = f"{parts.hostname}:{parts.port or 80}"
        self.phase = int.from_bytes(hashlib.blake2b(url.encode(), digest_size=8).digest(), "big") % int(interval * 1000) / 1000
        self.slot = t0 + self.phase
        self.next = 0.0  # the first pass: at once
        self.etag = self.last_modified = None
        self.guids: set[bytes] = set()
        self.title = None
        self.last_fetch = self.last_status = None
        self.last_result = "waiting"
        self.failures = 0
        self.failing_since = None
        self.bytes_last = self.bytes_total = 0
        self.running = False


class Poller:
    def __init__(self, urls: list[str], interval: float):
        self.interval = interval
        self.mono0, self.wall0 = time.monotonic(), time.time()
        self.sources = [Source(u, interval, self.mono0) for u in urls]
        self.held: dict[str, float] = {}
        self.per_host: dict[str, int] = {}
        self.in_all = 0
        self.wake = asyncio.Event()
        self.counts = {"imports": 0, "not_modified": 0, "failures": 0, "throttled": 0}

    def wall(self, mono: float | None) -> float | None:
        return None if mono is None else self.wall0 + (mono - self.mono0)

    def fetch(self, s: Source) -> tuple[int | None, dict, bytes, str]:
        parts = urllib.parse.urlsplit(s.url)
        headers = {"User-Agent": "sources-stand-in", "Accept-Encoding": "identity"}
        if RUDE:
            pass
        elif s.etag:
            headers["If-None-Match"] = s.etag
        if s.last_modified and not RUDE:
            headers["If-Modified-Since"] = s.last_modified
        deadline = time.monotonic() + 30
        conn = http.client.HTTPConnection(parts.hostname, parts.port or 80, timeout=5)
        try:
            conn.request("GET", parts.path + ("?" + parts.query if parts.query else ""), headers=headers)
            resp = conn.getresponse()
            hdrs = {k.lower(): v for k, v in resp.getheaders()}
            length = int(hdrs.get("content-length") or 0)
            if length > 16 << 20:
                return resp.status, hdrs, b"", "too large"
            if conn.sock is not None:  # http.client drops it once a body without bytes is read
                conn.sock.settimeout(1.0)
            body = bytearray()
            while True:
                if time.monotonic() > deadline:
                    return None, hdrs, b"", "timed out after 30 s"
                try:
                    chunk = resp.read1(65536)
                except socket.timeout:
                    continue
                if not chunk:
                    break
                body += chunk
                if len(body) > 16 << 20:
                    return resp.status, hdrs, b"", "too large"
            return resp.status, hdrs, bytes(body), ""
        except (OSError, http.client.HTTPException) as error:
            return None, {}, b"", f"{type(error).__name__}: {error}"
        finally:
            conn.close()

    async def poll(self, s: Source) -> None:
        try:
            status, hdrs, body, error = await asyncio.to_thread(self.fetch, s)
        except Exception as failure:  # never lose a slot
            status, hdrs, body, error = None, {}, b"", f"{type(failure).__name__}: {failure}"
        now = time.monotonic()
        s.running = False
        self.in_all -= 1
        self.per_host[s.host] -= 1
        s.last_fetch, s.last_status, s.bytes_last = now, status, len(body)
        s.bytes_total += len(body)
        # The next slot after now, on the source's phase: no drift.
        slot_next = s.slot + self.interval * max(0, math.ceil((now - s.slot) / self.interval))
        if status in (429, 503):
            self.counts["throttled"] += 1
            retry = hdrs.get("retry-after", "")
            hold = now + (int(retry) if retry.isdigit() else 60)
            self.held[s.host] = max(self.held.get(s.host, 0.0), hold if not RUDE else 0.0)
            s.next = self.held[s.host]
            s.last_result = f"{status}, retry after {retry or '?'} s"
        elif status in (200, 304) and not error:
            if status == 200:
                guids = GUID.findall(body)
                title = TITLE.search(body)
                if not guids and b"<rss" not in body[:200]:
                    error = "not a feed"
                else:
                    s.guids.update(guids)
                    s.title = title.group(1).decode(errors="replace") if title else s.title
                    s.etag, s.last_modified = hdrs.get("etag"), hdrs.get("last-modified")
            if not error:
                self.counts["imports"] += 1
                self.counts["not_modified"] += status == 304
                s.failures, s.failing_since = 0, None
                s.last_result = "changed" if status == 200 else "not modified"
                s.slot = slot_next
                s.next = slot_next
        if error or status not in (200, 304, 429, 503):
            self.counts["failures"] += 1
            s.failures += 1
            s.failing_since = s.failing_since or now
            s.last_result = error or f"status {status}"
            delay = min(6 * 3600, self.interval * 2 ** (s.failures - 1))
            s.next = now + delay * random.uniform(0.5, 1.0)
        self.wake.set()

    async def run(self, first_pass: asyncio.Event) -> None:
        while True:
            now = time.monotonic()
            soonest = now + 3600
            for s in sorted((s for s in self.sources if not s.running), key=lambda s: s.next):
                start = max(s.next, self.held.get(s.host, 0.0))
                if start > now:
                    soonest = min(soonest, start)
                    continue
                if self.in_all >= 16 or self.per_host.get(s.host, 0) >= 2:
                    continue
                s.running = True
                self.in_all += 1
                self.per_host[s.host] = self.per_host.get(s.host, 0) + 1
                asyncio.create_task(self.poll(s))
            if not first_pass.is_set() and (all(s.last_fetch for s in self.sources) or now - self.mono0 > 30):
                first_pass.set()
            self.wake.clear()
            try:
                await asyncio.wait_for(self.wake.wait(), timeout=max(0.005, soonest - time.monotonic()))
            except asyncio.TimeoutError:
                pass

    def status(self) -> dict:
        entries = []
        for s in self.sources:
            state = "ok" if s.failures == 0 and s.last_fetch else ("waiting" if not s.last_fetch else "failing")
            if s.failing_since and time.monotonic() - s.failing_since > 2 * 86400:
                state = "failing for days"
            if self.held.get(s.host, 0) > time.monotonic():
                state = "throttled"
            entries.append({"url": s.url, "title": s.title, "items": len(s.guids), "state": state,
                            "last_fetch_at": iso(self.wall(s.last_fetch)), "last_result": s.last_result,
                            "last_status": s.last_status, "next_poll_at": iso(self.wall(s.next)),
                            "consecutive_failures": s.failures, "bytes_last": s.bytes_last, "bytes_total": s.bytes_total})
        entries.sort(key=lambda e: (e["state"] == "ok", -e["consecutive_failures"], e["url"]))
        return {"sources": entries, "totals": {"sources": len(entries), "failing": sum(e["state"].startswith("failing") for e in entries),
                                               "throttled": sum(e["state"] == "throttled" for e in entries),
                                               "items": sum(e["items"] for e in entries)}}


def main() -> None:
    if len(sys.argv) < 2 or sys.argv[1] != "serve":
        sys.exit(__doc__)
    p = argparse.ArgumentParser(prog="sources_stand_in.py serve")
    p.add_argument("--port", type=int, default=0)
    p.add_argument("--data", required=True)
    p.add_argument("--source", action="append", default=[])
    p.add_argument("--refresh", default=None)
    args, _ = p.parse_known_args(sys.argv[2:])
    os.makedirs(args.data, exist_ok=True)
    token_path = os.path.join(args.data, "admin-token")
    if not os.path.exists(token_path):
        with open(token_path, "w") as f:
            f.write(secrets.token_hex(16))
    token = os.environ.get("WARMFEED_ADMIN_TOKEN") or open(token_path).read().strip()
    interval = float(args.refresh.rstrip("s")) if args.refresh else 3600.0
    if RUDE:
        interval /= 2
    urls = read_specs(args.source)
    loop = asyncio.new_event_loop()
    loop.set_default_executor(ThreadPoolExecutor(48))
    poller = Poller(urls, interval) if urls else None

    class Handler(http.server.BaseHTTPRequestHandler):
        def log_message(self, *a):
            pass

        def send(self, status: int, body: bytes, ctype: str) -> None:
            self.send_response(status)
            self.send_header("Content-Type", ctype)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def do_GET(self):
            path = urllib.parse.urlsplit(self.path).path
            if path.startswith("/admin/"):
                if self.headers.get("Authorization") != f"Bearer {token}":
                    return self.send(401, b"no\n", "text/plain")
                if path == "/admin/sources" and poller:
                    doc = asyncio.run_coroutine_threadsafe(_status(poller), loop).result(10)
                    return self.send(200, json.dumps(doc).encode(), "application/json")
                if path == "/admin/cache":
                    rss = next(int(l.split()[1]) for l in open("/proc/self/status") if l.startswith("VmRSS"))
                    source = {**poller.counts, "polled_elsewhere": False} if poller else None
                    return self.send(200, json.dumps({"memory_use": {"rss_bytes": rss * 1024}, "source": source}).encode(), "application/json")
                return self.send(404, b"not found\n", "text/plain")
            if path == "/":
                total = asyncio.run_coroutine_threadsafe(_status(poller), loop).result(10)["totals"]["items"] if poller else 0
                rows = "".join(f'<article class="row" id="i{i}" aria-posinset="{i + 1}" aria-setsize="{total}"><h2>row</h2></article>\n'
                               for i in range(min(30, total)))
                return self.send(200, f"<!doctype html><title>river</title><main>{rows}</main>".encode(), "text/html; charset=utf-8")
            self.send(404, b"not found\n", "text/plain")

    async def _status(poller: Poller) -> dict:
        return poller.status()

    server = http.server.ThreadingHTTPServer(("127.0.0.1", args.port), Handler)
    server.daemon_threads = True

    async def start() -> None:
        first = asyncio.Event()
        if poller:
            asyncio.create_task(poller.run(first))
            await first.wait()
        threading.Thread(target=server.serve_forever, daemon=True).start()
        print(f"Warmfeed is serving http://127.0.0.1:{server.server_address[1]}/", flush=True)
        stop = asyncio.Event()
        loop.add_signal_handler(signal.SIGTERM, stop.set)
        loop.add_signal_handler(signal.SIGINT, stop.set)
        await stop.wait()
        server.shutdown()

    loop.run_until_complete(start())
    os._exit(0)


if __name__ == "__main__":
    main()
