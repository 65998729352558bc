#!/usr/bin/env python3
"""A loopback feed origin for bench/sources.sh (issue 37): many feed sources on
many hosts, in one asyncio process, standard library only.

N sources (--sources, 1,000) spread over H hosts (--hosts, 50): the loopback
addresses 127.0.0.1 .. 127.0.0.H (all of 127/8 is loopback on Linux), all on
one port (--port, or a free one chosen and printed). Source n (1..N) lives on
host 127.0.0.((n-1) // ceil(N/H) + 1) at /feed/<n>.xml; its channel's site is
/site/<n> on the same host. Each host holds consecutive sources, so half of
them change and half do not.

- Even sources CHANGE each interval (--interval, 60 s): generation
  g = floor((t - t0) / interval), t0 the origin's start. The document is RSS 2.0
  with 40 items, indices 3g .. 3g+39 newest first (3 new items an interval),
  each ~1.2 KB (title, link, <guid isPermaLink="false">n-i</guid>, an RFC 822
  pubDate that grows with i, a ~950-character description): ~50 KB.
  ETag "n-g", no Last-Modified; 304 to a matching If-None-Match.
- Odd sources are STATIC: 40 fixed items, ETag "n-static" and a fixed
  Last-Modified; 304 when either validator matches (If-None-Match names the
  ETag, or If-Modified-Since is at or after Last-Modified).

No Cache-Control, Expires or <ttl>: a poller's interval stays its default.

Faults (--faults turns both on with their default hosts):
- --throttle-host 127.0.0.60: --throttle-sources (20) more sources on that host
  (the same even/odd rule). Once armed (--throttle-after S seconds after start,
  or GET /_origin/throttle?after=S; --throttle-every E re-arms E seconds after
  each hold began), the host's next request is answered 429 with
  `Retry-After: R` (--retry-after, 7): the host is held for R seconds from that
  answer. A request to the host inside the hold is a violation: logged
  ("hold": true) and answered 429 again with the seconds left. The first
  request after the hold and the throttled source's next request are noted
  with their lateness.
- --bad-host 127.0.0.61: misbehaving sources, one per entry of --bad-kinds
  (default 500,500,drip,drip,garbage,garbage-http,huge): `500` always;
  `drip` a 200 whose body comes at one byte a second (--drip-seconds, 300);
  `garbage` a 200 of 32 KiB random bytes as application/rss+xml;
  `garbage-http` random bytes instead of an HTTP answer; `huge` a 200 of a
  40 MiB (--huge-mb) feed-shaped body.

Records:
- --log PATH: one JSON line a request, written when its answer is done:
  t (CLOCK_MONOTONIC seconds, the arrival), wall (Unix time), host, path,
  src (source number or null), kind (change, static, throttle, bad kinds,
  other), status, inm / ims (If-None-Match / If-Modified-Since sent), match
  (a validator matched: 304), gen (the generation served, changing sources),
  bytes (body bytes written), dur (seconds to answer), hold (inside a hold);
  and event lines: {"event": "start" | "mark" | "arm" | "hold" | "stop", ...}.
- GET /_origin/stats on any of its addresses: the summary as JSON;
  GET /_origin/mark?name=X: an event line with the time, answered with it.
- --summary PATH: the same summary, written on SIGTERM or SIGINT (then exit).
- --write-opml PATH: an OPML 2.0 list of every source, in nested folders of
  100 (folders of folders, so the reader's flattening is exercised), the
  faults' sources in a folder of their own; --write-list PATH: the same URLs,
  one a line, with a comment line first.

On stdout, once every address listens:
  sources_origin: listening on port P: N sources on 127.0.0.1-127.0.0.H (...)

    python3 bench/sources_origin.py --sources 1000 --hosts 50 --interval 60 \\
        --log /tmp/o.log --write-opml /tmp/sources.opml [--faults]
"""
from __future__ import annotations

import argparse
import asyncio
import email.utils
import json
import math
import random
import signal
import socket
import sys
import time
from urllib.parse import parse_qs, urlsplit

WORDS = ("warm feed thumbnail cache origin reader scroll page sentinel image "
         "pre-warm server browser latency hit ratio river source poll").split()
BAD_KINDS = ("500", "drip", "garbage", "garbage-http", "huge")
DESCRIPTION_VARIANTS = 97
ITEMS_PER_DOCUMENT = 40
NEW_PER_INTERVAL = 3


def words(seed: int, length: int) -> str:
    """Text of about `length` characters from WORDS, varying with seed."""
    out, size, k = [], 0, 0
    while size < length:
        w = WORDS[(seed * 7 + k * 3 + k * k) % len(WORDS)]
        out.append(w)
        size += len(w) + 1
        k += 1
    return " ".join(out)[:length]


def http_date(ts: float) -> str:
    """IMF-fixdate (RFC 9110 5.6.7), also RSS's RFC 822 date with a four-digit year."""
    return time.strftime("%a, %d %b %Y %H:%M:%S GMT", time.gmtime(ts))


class Origin:
    def __init__(self, args: argparse.Namespace):
        self.args = args
        self.interval = float(args.interval)
        self.t0 = time.monotonic()
        self.wall0 = time.time()
        self.port = 0
        n = args.sources
        self.per_host = max(1, math.ceil(n / args.hosts))
        self.hosts = [f"127.0.0.{h}" for h in range(1, math.ceil(n / self.per_host) + 1)]
        # source number -> (host, kind)
        self.sources: dict[int, tuple[str, str]] = {}
        for s in range(1, n + 1):
            self.sources[s] = (self.hosts[(s - 1) // self.per_host], "change" if s % 2 == 0 else "static")
        nxt = n + 1
        self.throttle_host = args.throttle_host
        self.throttle_sources: list[int] = []
        if self.throttle_host:
            for _ in range(args.throttle_sources):
                self.sources[nxt] = (self.throttle_host, "change" if nxt % 2 == 0 else "static")
                self.throttle_sources.append(nxt)
                nxt += 1
        self.bad_host = args.bad_host
        self.bad_sources: dict[int, str] = {}
        if self.bad_host:
            for kind in [k.strip() for k in args.bad_kinds.split(",") if k.strip()]:
                if kind not in BAD_KINDS:
                    sys.exit(f"sources_origin: unknown bad kind {kind!r} (one of {', '.join(BAD_KINDS)})")
                self.sources[nxt] = (self.bad_host, kind)
                self.bad_sources[nxt] = kind
                nxt += 1
        self.addresses = list(self.hosts)
        for extra in (self.throttle_host, self.bad_host):
            if extra:
                if extra in self.addresses:
                    sys.exit(f"sources_origin: {extra} is already one of the {len(self.hosts)} hosts of the healthy sources")
                self.addresses.append(extra)
        # Fixed parts of the documents.
        self.descriptions = [words(v, 950) for v in range(DESCRIPTION_VARIANTS)]
        self.titles = [words(v * 131, 60) for v in range(DESCRIPTION_VARIANTS)]
        # Changing sources: the items of the generation last served, newest first, so a
        # new generation makes only its 3 new items (the origin must not be the limit).
        self.items_cache: dict[int, tuple[int, list[bytes]]] = {}
        self.static_lm_ts = math.floor(self.wall0) - 86_400
        self.static_lm = http_date(self.static_lm_ts)
        self.garbage = random.Random(37).randbytes(32 * 1024)
        self.garbage_http = random.Random(38).randbytes(2048)
        # Counters and records.
        self.log_file = open(args.log, "a", buffering=1 << 16) if args.log else None
        self.requests = 0
        self.by_status: dict[str, int] = {}
        self.by_kind: dict[str, int] = {}
        self.bytes_out = 0
        self.first_full: set[int] = set()          # sources that had a 200
        self.static_full_again = 0                 # static sources: 200s after their first
        self.static_full_again_with_validators = 0
        self.static_full_again_sources: set[int] = set()
        self.change_not_modified = 0
        self.asked: set[int] = set()
        # Throttling.
        self.arm_at: float | None = (self.t0 + args.throttle_after) if (self.throttle_host and args.throttle_after is not None) else None
        self.arm_every: float = args.throttle_every
        self.holds: list[dict] = []                # each: start, end, trigger, violations, first_after, trigger_next
        self.hold_violations = 0
        self.connections = 0
        self.open_connections = 0
        self.stopping = False

    # --- helpers -------------------------------------------------------------

    def url(self, s: int) -> str:
        return f"http://{self.sources[s][0]}:{self.port}/feed/{s}.xml"

    def site(self, s: int) -> str:
        return f"http://{self.sources[s][0]}:{self.port}/site/{s}"

    def generation(self, now: float) -> int:
        return int((now - self.t0) // self.interval)

    def pub_ts(self, s: int, i: int, static: bool) -> int:
        if static:  # two days back, an hour apart, all before Last-Modified
            return self.static_lm_ts - 86_400 + i * 1800 - (s % 60)
        # The newest item of generation g (index 3g+39) is dated at the start of g.
        step = self.interval / NEW_PER_INTERVAL
        return math.floor(self.wall0 + (i - (ITEMS_PER_DOCUMENT - 1)) * step) - (s % 60)

    def item(self, s: int, i: int, static: bool) -> str:
        site = self.site(s)
        title = f"Source {s}, item {i}: {self.titles[(s * 17 + i) % DESCRIPTION_VARIANTS]}"
        desc = f"Item {i} of source {s}. " + self.descriptions[(s * 31 + i) % DESCRIPTION_VARIANTS]
        return (f"<item><title>{title}</title><link>{site}/{i}</link>"
                f'<guid isPermaLink="false">{s}-{i}</guid>'
                f"<pubDate>{http_date(self.pub_ts(s, i, static))}</pubDate>"
                f"<description>{desc}</description></item>\n")

    def head(self, s: int) -> str:
        return ('<?xml version="1.0" encoding="UTF-8"?>\n<rss version="2.0"><channel>\n'
                f"<title>Source {s}</title><link>{self.site(s)}</link>"
                f"<description>Bench source {s}: {words(s, 60)}</description>\n")

    def document(self, s: int, first: int, static: bool) -> bytes:
        newest = first + ITEMS_PER_DOCUMENT - 1
        cached = None if static else self.items_cache.get(s)
        if cached and cached[0] == first:
            items = cached[1]
        elif cached and 0 < first - cached[0] < ITEMS_PER_DOCUMENT:
            old_newest = cached[0] + ITEMS_PER_DOCUMENT - 1
            fresh = [self.item(s, i, static).encode() for i in range(newest, old_newest, -1)]
            items = fresh + cached[1][:ITEMS_PER_DOCUMENT - len(fresh)]
        else:
            items = [self.item(s, i, static).encode() for i in range(newest, first - 1, -1)]
        if not static:
            self.items_cache[s] = (first, items)
        return self.head(s).encode() + b"".join(items) + b"</channel></rss>\n"

    def log(self, record: dict) -> None:
        if self.log_file:
            self.log_file.write(json.dumps(record, separators=(",", ":")) + "\n")

    def event(self, what: str, **fields) -> dict:
        record = {"event": what, "t": round(time.monotonic(), 4), "wall": round(time.time(), 4), **fields}
        self.log(record)
        return record

    def summary(self) -> dict:
        listed = [s for s, (_, k) in self.sources.items() if k in ("change", "static")]
        return {
            "t": round(time.monotonic(), 4), "t0": round(self.t0, 4), "wall0": round(self.wall0, 4),
            "port": self.port, "interval": self.interval, "generation": self.generation(time.monotonic()),
            "sources": len(self.sources), "hosts": len(self.addresses),
            "requests": self.requests, "by_status": self.by_status, "by_kind": self.by_kind,
            "bytes_out": self.bytes_out,
            "sources_asked": len(self.asked), "healthy_sources": len(listed),  # feeds that answer: not the misbehaving
            "healthy_sources_asked": len([s for s in listed if s in self.asked]),
            "healthy_sources_downloaded": len([s for s in listed if s in self.first_full]),
            "static_full_again": self.static_full_again,
            "static_full_again_with_validators": self.static_full_again_with_validators,
            "static_full_again_sources": len(self.static_full_again_sources),
            "change_not_modified": self.change_not_modified,
            "hold_violations": self.hold_violations, "holds": self.holds,
            "throttle_armed_at": None if self.arm_at is None else round(self.arm_at, 4),
            "connections": self.connections, "open_connections": self.open_connections,
            "throttle_host": self.throttle_host, "throttle_sources": self.throttle_sources,
            "bad_host": self.bad_host, "bad_sources": {str(k): v for k, v in self.bad_sources.items()},
        }

    # --- throttling ----------------------------------------------------------

    def throttle(self, s: int, now: float) -> tuple[bool, float, bool]:
        """For a request to the throttle host: (answer 429?, seconds left, inside a hold?)."""
        if self.holds and now < self.holds[-1]["end"]:
            hold = self.holds[-1]
            hold["violations"] += 1
            self.hold_violations += 1
            return True, hold["end"] - now, True
        if self.holds:
            hold = self.holds[-1]
            if hold["first_after"] is None:
                hold["first_after"] = round(now, 4)
                hold["first_after_late"] = round(now - hold["end"], 4)
                hold["first_after_src"] = s
            if s == hold["trigger"] and hold["trigger_next"] is None:
                hold["trigger_next"] = round(now, 4)
                hold["trigger_next_late"] = round(now - hold["end"], 4)
        if self.arm_at is not None and now >= self.arm_at:
            retry = self.args.retry_after
            hold = {"start": round(now, 4), "end": round(now + retry, 4), "wall": round(time.time(), 4),
                    "retry_after": retry, "trigger": s, "violations": 0,
                    "first_after": None, "first_after_late": None, "first_after_src": None,
                    "trigger_next": None, "trigger_next_late": None}
            self.holds.append(hold)
            self.arm_at = (self.arm_at + self.arm_every) if self.arm_every > 0 else None
            if self.arm_at is not None and self.arm_at < now + retry:
                self.arm_at = now + retry + 0.001
            self.event("hold", host=self.throttle_host, start=hold["start"], end=hold["end"], retry_after=retry, src=s)
            return True, float(retry), False
        return False, 0.0, False

    def arm(self, after: float, every: float | None) -> dict:
        self.arm_at = time.monotonic() + after
        if every is not None:
            self.arm_every = every
        return self.event("arm", at=round(self.arm_at, 4), every=self.arm_every)

    # --- HTTP ----------------------------------------------------------------

    async def handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.connections += 1
        self.open_connections += 1
        host = writer.get_extra_info("sockname")[0]
        try:
            while not self.stopping:
                try:
                    head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), timeout=self.args.idle_timeout)
                except (asyncio.IncompleteReadError, asyncio.LimitOverrunError, asyncio.TimeoutError, ConnectionError):
                    break
                keep = await self.answer(host, head, reader, writer)
                if not keep:
                    break
        except (ConnectionError, OSError):
            pass
        except Exception as error:  # a bug here must not end the origin: say it, drop the connection
            print(f"sources_origin: {type(error).__name__}: {error} on {host}", file=sys.stderr)
        finally:
            self.open_connections -= 1
            try:
                writer.close()
            except Exception:
                pass

    async def answer(self, host: str, head: bytes, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> bool:
        now = time.monotonic()
        wall = time.time()
        lines = head.decode("latin-1").split("\r\n")
        try:
            method, target, version = lines[0].split(" ", 2)
        except ValueError:
            await self.send(writer, 400, b"bad request\n", close=True)
            return False
        headers: dict[str, str] = {}
        for line in lines[1:]:
            if ":" in line:
                name, _, value = line.partition(":")
                headers[name.strip().lower()] = value.strip()
        length = int(headers.get("content-length", "0") or 0)
        if length:
            await reader.readexactly(min(length, 1 << 20))
        keep = version == "HTTP/1.1" and "close" not in headers.get("connection", "").lower()
        is_head = method == "HEAD"
        parts = urlsplit(target)
        path = parts.path
        record = {"t": round(now, 4), "wall": round(wall, 4), "host": host, "path": path, "src": None, "kind": "other",
                  "inm": "if-none-match" in headers, "ims": "if-modified-since" in headers, "match": False}

        if path.startswith("/_origin/"):
            return await self.control(path, parts.query, writer, keep)

        src = None
        if path.startswith("/feed/") and path.endswith(".xml"):
            try:
                src = int(path[len("/feed/"):-len(".xml")])
            except ValueError:
                src = None
        if src is None or src not in self.sources or self.sources[src][0] != host:
            if path.startswith("/site/"):
                status, sent = await self.send(writer, 200, b"<!doctype html><title>site</title><p>A bench source's site.\n",
                                               ctype="text/html; charset=utf-8", close=not keep, head_only=is_head)
            else:
                status, sent = await self.send(writer, 404, b"not found\n", close=not keep, head_only=is_head)
            self.count(record, status, sent, now)
            return keep

        kind = self.sources[src][1]
        record["src"] = src
        record["kind"] = kind
        self.asked.add(src)
        if host == self.throttle_host:
            record["kind"] = "throttle-" + kind
            throttled, left, in_hold = self.throttle(src, now)
            if throttled:
                record["hold"] = in_hold
                seconds = max(1, math.ceil(left - 1e-6))
                status, sent = await self.send(writer, 429, b"slow down\n", close=not keep, head_only=is_head,
                                               extra=[("Retry-After", str(seconds))])
                self.count(record, status, sent, now)
                return keep

        if kind in BAD_KINDS:
            return await self.misbehave(kind, src, record, writer, keep, now, is_head)

        extra: list[tuple[str, str]] = []
        if kind == "change":
            g = self.generation(now)
            record["gen"] = g
            etag = f'"{src}-{g}"'
            extra.append(("ETag", etag))
            matched = self.etag_matches(headers.get("if-none-match"), etag)
            first = NEW_PER_INTERVAL * g
            static = False
        else:
            etag = f'"{src}-static"'
            extra += [("ETag", etag), ("Last-Modified", self.static_lm)]
            matched = self.etag_matches(headers.get("if-none-match"), etag) or self.modified_since_ok(headers.get("if-modified-since"))
            first = 0
            static = True
        if matched:
            record["match"] = True
            if kind == "change":
                self.change_not_modified += 1
            status, sent = await self.send(writer, 304, b"", close=not keep, extra=extra)
        else:
            body = self.document(src, first, static)
            if src in self.first_full and static:
                self.static_full_again += 1
                self.static_full_again_sources.add(src)
                if record["inm"] or record["ims"]:
                    self.static_full_again_with_validators += 1
            self.first_full.add(src)
            status, sent = await self.send(writer, 200, body, ctype="application/rss+xml; charset=utf-8",
                                           close=not keep, extra=extra, head_only=is_head)
        self.count(record, status, sent, now)
        return keep

    @staticmethod
    def etag_matches(header: str | None, etag: str) -> bool:
        if not header:
            return False
        if header.strip() == "*":
            return True
        for tag in header.split(","):
            tag = tag.strip()
            if tag.startswith("W/"):
                tag = tag[2:]
            if tag == etag:
                return True
        return False

    def modified_since_ok(self, header: str | None) -> bool:
        if not header:
            return False
        try:
            when = email.utils.parsedate_to_datetime(header)
        except (TypeError, ValueError, IndexError):
            return False
        if when is None:
            return False
        return when.timestamp() >= self.static_lm_ts

    def count(self, record: dict, status: int, sent: int, start: float) -> None:
        record["status"] = status
        record["bytes"] = sent
        record["dur"] = round(time.monotonic() - start, 4)
        self.requests += 1
        key = str(status)
        self.by_status[key] = self.by_status.get(key, 0) + 1
        self.by_kind[record["kind"]] = self.by_kind.get(record["kind"], 0) + 1
        self.bytes_out += sent
        self.log(record)

    async def send(self, writer: asyncio.StreamWriter, status: int, body: bytes, *, ctype: str = "text/plain; charset=utf-8",
                   close: bool = False, extra: list[tuple[str, str]] | None = None, head_only: bool = False) -> tuple[int, int]:
        reason = {200: "OK", 304: "Not Modified", 400: "Bad Request", 404: "Not Found", 429: "Too Many Requests",
                  500: "Internal Server Error"}.get(status, "Status")
        lines = [f"HTTP/1.1 {status} {reason}", f"Date: {http_date(time.time())}", "Server: sources-origin"]
        if status != 304:
            lines += [f"Content-Type: {ctype}", f"Content-Length: {len(body)}"]
        for name, value in extra or []:
            lines.append(f"{name}: {value}")
        lines.append("Connection: close" if close else "Connection: keep-alive")
        payload = ("\r\n".join(lines) + "\r\n\r\n").encode()
        sent = 0
        if status != 304 and not head_only:
            payload += body
            sent = len(body)
        writer.write(payload)
        await writer.drain()
        return status, sent

    async def misbehave(self, kind: str, src: int, record: dict, writer: asyncio.StreamWriter, keep: bool,
                        now: float, is_head: bool) -> bool:
        if kind == "500":
            status, sent = await self.send(writer, 500, b"internal error\n", close=not keep, head_only=is_head)
            self.count(record, status, sent, now)
            return keep
        if kind == "garbage":
            status, sent = await self.send(writer, 200, self.garbage, ctype="application/rss+xml", close=True, head_only=is_head)
            self.count(record, status, sent, now)
            return False
        if kind == "garbage-http":
            sent = 0
            try:
                writer.write(self.garbage_http)
                await writer.drain()
                sent = len(self.garbage_http)
            except (ConnectionError, OSError):
                pass
            self.count(record, 0, sent, now)
            return False
        if kind == "drip":
            body = self.document(src, 0, True)
            sent = 0
            try:
                writer.write(b"HTTP/1.1 200 OK\r\nContent-Type: application/rss+xml\r\n"
                             + f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n".encode())
                await writer.drain()
                end = now + self.args.drip_seconds
                while time.monotonic() < end and sent < len(body) and not self.stopping:
                    writer.write(body[sent:sent + 1])
                    await writer.drain()
                    sent += 1
                    await asyncio.sleep(1.0)
                    if writer.is_closing():
                        break
            except (ConnectionError, OSError):
                pass
            self.count(record, 200, sent, now)
            return False
        if kind == "huge":
            total = self.args.huge_mb << 20
            head = self.head(src).encode()
            chunk = ("".join(self.item(src, i, True) for i in range(200))).encode()
            sent = 0
            try:
                writer.write(b"HTTP/1.1 200 OK\r\nContent-Type: application/rss+xml\r\n"
                             + f"Content-Length: {total}\r\nConnection: close\r\n\r\n".encode())
                writer.write(head)
                sent = len(head)
                while sent < total and not self.stopping:
                    piece = chunk[:total - sent]
                    writer.write(piece)
                    sent += len(piece)
                    await writer.drain()
                    if writer.is_closing():
                        break
            except (ConnectionError, OSError):
                pass
            self.count(record, 200, sent, now)
            return False
        return False

    async def control(self, path: str, query: str, writer: asyncio.StreamWriter, keep: bool) -> bool:
        q = parse_qs(query)
        if path == "/_origin/stats":
            body = self.summary()
        elif path == "/_origin/mark":
            body = self.event("mark", label=(q.get("name") or [""])[0])
        elif path == "/_origin/throttle" and self.throttle_host:
            every = q.get("every")
            body = self.arm(float((q.get("after") or ["0"])[0]), float(every[0]) if every else None)
        else:
            await self.send(writer, 404, b"not found\n", close=not keep)
            return keep
        await self.send(writer, 200, (json.dumps(body, indent=1) + "\n").encode(), ctype="application/json", close=not keep)
        return keep

    # --- lists ---------------------------------------------------------------

    def write_lists(self) -> None:
        listed = sorted(self.sources)
        if self.args.write_list:
            with open(self.args.write_list, "w", encoding="utf-8") as out:
                out.write(f"# {len(listed)} bench sources (bench/sources_origin.py), port {self.port}\n")
                for s in listed:
                    out.write(self.url(s) + "\n")
        if self.args.write_opml:
            healthy = [s for s in listed if s <= self.args.sources]
            faults = [s for s in listed if s > self.args.sources]
            esc = lambda text: text.replace("&", "&amp;").replace('"', "&quot;").replace("<", "&lt;")

            def outline(s: int, indent: str) -> str:
                label = f"Source {s}" if s not in self.bad_sources else f"Source {s} ({self.bad_sources[s]})"
                return (f'{indent}<outline type="rss" text="{esc(label)}" title="{esc(label)}" '
                        f'xmlUrl="{esc(self.url(s))}" htmlUrl="{esc(self.site(s))}"/>\n')

            out = ['<?xml version="1.0" encoding="UTF-8"?>\n<opml version="2.0">\n<head>\n',
                   f"  <title>Warmfeed bench: {len(listed)} sources</title>\n",
                   f"  <dateCreated>{http_date(time.time())}</dateCreated>\n</head>\n<body>\n"]
            # Folders of 100 sources, five folders to an outer folder: three levels.
            folders = [healthy[i:i + 100] for i in range(0, len(healthy), 100)]
            for o in range(0, len(folders), 5):
                out.append(f'  <outline text="Sources {folders[o][0]}-{folders[min(o + 4, len(folders) - 1)][-1]}">\n')
                for folder in folders[o:o + 5]:
                    out.append(f'    <outline text="Folder {folder[0]}-{folder[-1]}" title="Folder {folder[0]}-{folder[-1]}">\n')
                    out += [outline(s, "      ") for s in folder]
                    out.append("    </outline>\n")
                out.append("  </outline>\n")
            if faults:
                out.append('  <outline text="Faults">\n')
                out += [outline(s, "    ") for s in faults]
                out.append("  </outline>\n")
            out.append("</body>\n</opml>\n")
            with open(self.args.write_opml, "w", encoding="utf-8") as f:
                f.write("".join(out))

    # --- start and stop ------------------------------------------------------

    def bind(self) -> list[socket.socket]:
        for _ in range(50):
            socks: list[socket.socket] = []
            port = self.args.port
            try:
                for address in self.addresses:
                    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
                    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
                    socks.append(s)
                    s.bind((address, port))
                    if port == 0:
                        port = s.getsockname()[1]
                    s.listen(1024)
                    s.setblocking(False)
                self.port = port
                return socks
            except OSError as error:
                for s in socks:
                    s.close()
                if self.args.port:
                    sys.exit(f"sources_origin: cannot listen on port {self.args.port}: {error}")
        sys.exit("sources_origin: no port free on every address")

    async def flusher(self) -> None:
        while True:
            await asyncio.sleep(1.0)
            if self.log_file:
                self.log_file.flush()

    async def run(self) -> None:
        socks = self.bind()
        self.write_lists()
        servers = [await asyncio.start_server(self.handle, sock=s, limit=64 * 1024) for s in socks]
        self.event("start", port=self.port, t0=round(self.t0, 4), wall0=round(self.wall0, 4), interval=self.interval,
                   sources=len(self.sources), hosts=self.addresses,
                   throttle_host=self.throttle_host, throttle_sources=self.throttle_sources,
                   bad_host=self.bad_host, bad_sources={str(k): v for k, v in self.bad_sources.items()})
        print(f"sources_origin: listening on port {self.port}: {self.args.sources} sources on "
              f"{self.hosts[0]}-{self.hosts[-1]}"
              + (f", {len(self.throttle_sources)} on {self.throttle_host} (throttled)" if self.throttle_host else "")
              + (f", {len(self.bad_sources)} on {self.bad_host} (misbehaving)" if self.bad_host else "")
              + f", interval {self.interval:g} s", flush=True)
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(sig, stop.set)
        flusher = asyncio.create_task(self.flusher())
        await stop.wait()
        self.stopping = True
        flusher.cancel()
        for server in servers:
            server.close()
        summary = self.summary()
        self.event("stop", requests=self.requests)
        if self.log_file:
            self.log_file.flush()
        if self.args.summary:
            with open(self.args.summary, "w", encoding="utf-8") as out:
                json.dump(summary, out, indent=1)
                out.write("\n")
        else:
            print(json.dumps(summary), file=sys.stderr)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--sources", type=int, default=1000)
    p.add_argument("--hosts", type=int, default=50)
    p.add_argument("--port", type=int, default=0, help="0: one free on every address, printed")
    p.add_argument("--interval", type=float, default=60.0, help="seconds between generations of the changing sources")
    p.add_argument("--faults", action="store_true", help="--throttle-host 127.0.0.60 and --bad-host 127.0.0.61 unless given")
    p.add_argument("--throttle-host", default=None)
    p.add_argument("--throttle-sources", type=int, default=20)
    p.add_argument("--throttle-after", type=float, default=None, help="seconds after start; or arm with /_origin/throttle?after=S")
    p.add_argument("--throttle-every", type=float, default=0.0, help="re-arm this many seconds after each arming (0: once)")
    p.add_argument("--retry-after", type=int, default=7)
    p.add_argument("--bad-host", default=None)
    p.add_argument("--bad-kinds", default="500,500,drip,drip,garbage,garbage-http,huge")
    p.add_argument("--drip-seconds", type=float, default=300.0)
    p.add_argument("--huge-mb", type=int, default=40)
    p.add_argument("--idle-timeout", type=float, default=300.0, help="seconds a kept connection may idle")
    p.add_argument("--log")
    p.add_argument("--summary")
    p.add_argument("--write-opml")
    p.add_argument("--write-list")
    args = p.parse_args()
    if args.faults:
        args.throttle_host = args.throttle_host or "127.0.0.60"
        args.bad_host = args.bad_host or "127.0.0.61"
    if args.sources < 1 or args.hosts < 1 or args.interval <= 0:
        sys.exit("sources_origin: --sources, --hosts and --interval must be positive")
    if args.hosts > 250:
        sys.exit("sources_origin: at most 250 hosts (127.0.0.1-127.0.0.250)")
    asyncio.run(Origin(args).run())


if __name__ == "__main__":
    main()
