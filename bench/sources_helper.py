#!/usr/bin/env python3
"""Helper for bench/sources.sh (issue 37), standard library only.

  wait-fetched URL[,URL...] TOKEN ORIGIN LIST TIMEOUT
      Polls URL/admin/sources (Authorization: Bearer TOKEN; of every node given:
      fetched by any counts) until every source
      of LIST (the origin's plain list) not on the misbehaving host has a
      last_fetch_at, or TIMEOUT seconds; then waits at most 60 s more for the
      misbehaving ones. Without /admin/sources (404, not JSON) it waits on the
      origin's own count (ORIGIN/_origin/stats: every listed source asked).
      Prints one line of what it found; exits 1 on the timeout.
  rows-ready URL TOKEN LIMIT
      Waits at most LIMIT seconds until /admin/cache's "rows" say caught_up
      (rows rendered ahead for every item written); prints what it saw.
  snapshot URL TOKEN OUT_DIR
      Saves /admin/sources (all entries), /admin/cache and GET / (status,
      body) into OUT_DIR: sources.json, cache.json, river.status, river.html.
  report ARGS...   (see `report --help`)
      The figures against the goals, from the origin's log and summary, the
      CPU ticks, the RSS samples and the snapshot.
"""
from __future__ import annotations

import argparse
import json
import math
import re
import statistics
import sys
import time
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path


def get(url: str, token: str | None = None, timeout: float = 30.0) -> tuple[int, bytes]:
    request = urllib.request.Request(url, headers={"Authorization": "Bearer " + token} if token else {})
    try:
        with urllib.request.urlopen(request, timeout=timeout) as answer:
            return answer.status, answer.read()
    except urllib.error.HTTPError as error:
        return error.code, error.read()


def key(url: str) -> str:
    """A source's URL as compared here: scheme, host and port lowercased, path, query."""
    parts = urllib.parse.urlsplit(url.strip())
    port = parts.port or (443 if parts.scheme == "https" else 80)
    return f"{parts.scheme.lower()}://{(parts.hostname or '').lower()}:{port}{parts.path}{'?' + parts.query if parts.query else ''}"


def read_list(path: str) -> list[str]:
    return [line.strip() for line in open(path, encoding="utf-8") if line.strip() and not line.startswith("#")]


def admin_sources(url: str, token: str) -> dict | None:
    """The whole /admin/sources answer, or None without the route. Asks again
    with ?limit= when the first answer lists fewer entries than its totals."""
    status, body = get(url + "/admin/sources", token)
    if status != 200:
        return None
    try:
        doc = json.loads(body)
    except ValueError:
        return None
    entries = doc.get("sources") if isinstance(doc, dict) else None
    if not isinstance(entries, list):
        return None
    total = (doc.get("totals") or {}).get("sources") if isinstance(doc.get("totals"), dict) else None
    if isinstance(total, int) and total > len(entries):
        status, body = get(f"{url}/admin/sources?limit={total}", token)
        if status == 200:
            try:
                again = json.loads(body)
                if isinstance(again.get("sources"), list) and len(again["sources"]) > len(entries):
                    doc = again
            except ValueError:
                pass
    return doc


def origin_stats(origin: str) -> dict:
    return json.loads(get(origin + "/_origin/stats")[1])


def wait_fetched(url: str, token: str, origin: str, list_path: str, timeout: float) -> None:
    start = time.monotonic()
    urls = read_list(list_path)
    bad = origin_stats(origin).get("bad_host")
    needed = {key(u) for u in urls if urllib.parse.urlsplit(u).hostname != bad}
    misbehaving = {key(u) for u in urls if urllib.parse.urlsplit(u).hostname == bad}
    said, grace_until = 0.0, None
    while True:
        elapsed = time.monotonic() - start
        docs = [admin_sources(one, token) for one in url.split(",")]
        if all(doc is not None for doc in docs):
            mode = "/admin/sources" + (f" of {len(docs)} nodes" if len(docs) > 1 else "")
            fetched = {key(str(e.get("url", ""))) for doc in docs for e in doc["sources"] if isinstance(e, dict) and e.get("last_fetch_at")}
            done, bad_done, listed = len(needed & fetched), len(misbehaving & fetched), max(len(doc["sources"]) for doc in docs)
        else:
            mode = "the origin's log (no /admin/sources)"
            stats = origin_stats(origin)
            done, bad_done, listed = stats["healthy_sources_asked"], 0, None
        if done >= len(needed):
            # The misbehaving ones (a drip ends at the poller's deadline): at most 60 s more.
            if not mode.startswith("/admin/sources") or bad_done >= len(misbehaving):
                break
            grace_until = grace_until or time.monotonic() + 60
            if time.monotonic() > grace_until:
                break
        elif elapsed > timeout:
            print(f"not every source fetched after {elapsed:.0f} s ({mode}): {done} of {len(needed)}"
                  + (f", the server lists {listed}" if listed is not None else ""))
            sys.exit(1)
        if elapsed - said >= 15:
            print(f"bench {time.strftime('%H:%M:%S')}: {done} of {len(needed)} sources fetched ({mode}), {elapsed:.0f} s",
                  file=sys.stderr)
            said = elapsed
        time.sleep(1.0)
    print(f"every source fetched once after {time.monotonic() - start:.1f} s ({mode}): {done} of {len(needed)}"
          + (f", misbehaving {bad_done} of {len(misbehaving)}" if misbehaving and mode.startswith("/admin/sources") else "")
          + (f"; the server lists {listed}" if listed is not None else ""))


def rows_ready(url: str, token: str, limit: float) -> None:
    """Waits (at most `limit` s) until /admin/cache's rows say they caught up with
    the items written (RowPreparation renders each new item's row ahead): the
    first pass's thousands of rows are its work, not the refresh loop's."""
    start = time.monotonic()
    rows = None
    while time.monotonic() - start < limit:
        status, body = get(url + "/admin/cache", token)
        try:
            rows = json.loads(body).get("rows") if status == 200 else None
        except (ValueError, AttributeError):
            rows = None
        if not isinstance(rows, dict) or not rows.get("ahead") or rows.get("caught_up"):
            break
        time.sleep(0.5)
    print(f"rows rendered ahead after {time.monotonic() - start:.1f} s"
          + (f" (gave up after {limit:g} s)" if time.monotonic() - start >= limit else "")
          + f": {json.dumps(rows, sort_keys=True) if rows is not None else 'no rows section'}")


def snapshot(url: str, token: str, out: str) -> None:
    folder = Path(out)
    folder.mkdir(parents=True, exist_ok=True)
    doc = admin_sources(url, token)
    (folder / "sources.json").write_text(json.dumps(doc) if doc is not None else "null")
    status, body = get(url + "/admin/cache", token)
    (folder / "cache.json").write_bytes(body if status == 200 else b"null")
    status, body = get(url + "/")
    (folder / "river.status").write_text(str(status))
    (folder / "river.html").write_bytes(body)
    print(f"snapshot: /admin/sources {'with ' + str(len(doc['sources'])) + ' entries' if doc else 'absent'}, / answered {status}")


# --- the report -----------------------------------------------------------------


def printable(value: object, limit: int) -> str:
    """A server's words as one short line of plain characters."""
    text = "".join(c if c.isprintable() and ord(c) < 0x7f else "?" for c in str(value))
    return text if len(text) <= limit else text[:limit - 1] + "…"


def percentile(values: list[float], p: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, math.ceil(p / 100 * len(ordered)) - 1))]


def load_log(path: str) -> tuple[list[dict], list[dict]]:
    requests, events = [], []
    with open(path, encoding="utf-8") as f:
        for line in f:
            try:
                record = json.loads(line)
            except ValueError:
                continue  # a line cut by the stop
            (events if "event" in record else requests).append(record)
    return requests, events


def phase_windows(times: list[float], t_start: float, interval: float, count: int) -> tuple[list[int], list[float]]:
    """Requests of one source in `count` windows of one interval, centred on
    the source's first request at or after t_start: the number in each window,
    and each request's lateness (its offset from its centre, less the smallest
    offset, so the least late request sets the source's phase)."""
    after = [t for t in times if t >= t_start]
    if not after:
        return [0] * count, []
    anchor = after[0]
    counts = [0] * count
    offsets = []
    for t in times:
        k = math.floor((t - anchor) / interval + 0.5)
        if 0 <= k < count:
            counts[k] += 1
            offsets.append(t - anchor - k * interval)
    base = min(offsets) if offsets else 0.0
    return counts, [o - base for o in offsets]


def report(a: argparse.Namespace) -> None:
    requests, events = load_log(a.log)
    start_event = next((e for e in events if e["event"] == "start"), {})
    summary = json.loads(Path(a.origin_summary).read_text()) if a.origin_summary and Path(a.origin_summary).exists() else {}
    interval, intervals = a.interval, a.intervals
    t_start, t_end = a.start, a.end
    healthy_hosts = {f"127.0.0.{h}" for h in range(1, 251)} - {start_event.get("throttle_host"), start_event.get("bad_host")}
    throttle_host, bad = start_event.get("throttle_host"), start_event.get("bad_host")
    bad_kinds = {int(k): v for k, v in (start_event.get("bad_sources") or {}).items()}
    rows: list[tuple[str, str, str, str]] = []  # figure, measured, goal, met

    def verdict(ok: bool | None) -> str:
        return "—" if ok is None else ("met" if ok else "NOT MET")

    # CPU, each server.
    hz = a.clk_tck
    elapsed = t_end - t_start
    servers = []
    for spec in a.server:
        name, pid, before, after, hwm = spec.split(":")
        servers.append({"name": name, "pid": pid, "cpu": (int(after) - int(before)) / hz, "hwm": int(hwm or 0)})
    single = a.mode == "single"
    for srv in servers:
        share = srv["cpu"] / elapsed * 100
        srv["share"] = share
        rows.append((f"{'server' if single else srv['name']} CPU, share of one core over the intervals",
                     f"{share:.2f}% ({srv['cpu']:.1f} s of CPU in {elapsed:.0f} s)",
                     "≤ 5%" if single else "(≤ 5% for one node)", verdict(share <= 5.0) if single else "—"))
    if not single:
        total = sum(srv["cpu"] for srv in servers) / elapsed * 100
        rows.append((f"the {len(servers)} nodes' CPU together", f"{total:.2f}% of one core", "(≤ 5%, one node's goal)", "—"))
    origin_share = (a.origin_cpu_after - a.origin_cpu_before) / hz / elapsed * 100 if a.origin_cpu_after is not None else None

    # Memory: VmRSS samples, "monotonic-seconds pid kB" (or "monotonic-seconds kB" for one server).
    samples: dict[str, list[tuple[float, int]]] = {}
    for line in open(a.rss_samples):
        parts = line.split()
        try:
            if len(parts) == 3:
                samples.setdefault(parts[1], []).append((float(parts[0]), int(parts[2])))
            elif len(parts) == 2:
                samples.setdefault(servers[0]["pid"] if servers else "-", []).append((float(parts[0]), int(parts[1])))
        except ValueError:
            pass
    base = a.baseline_kib
    for srv in servers:
        mine = samples.get(srv["pid"], [])
        in_window = [kib for t, kib in mine if t_start <= t <= t_end]
        whole = [kib for _, kib in mine]
        if not in_window:
            continue
        peak, peak_all = max(in_window), max(whole)
        if base:
            over, over_all = (peak - base) / 1024, (peak_all - base) / 1024
            rows.append(("memory above the empty server (highest VmRSS over the intervals − baseline)",
                         f"{over:.1f} MB ({peak / 1024:.1f} − {base / 1024:.1f} MB; median {statistics.median(in_window) / 1024:.1f} MB)",
                         "≤ 64 MB", verdict(over <= 64)))
            rows.append(("the same from the start (the first pass over every source)",
                         f"{over_all:.1f} MB (VmRSS {peak_all / 1024:.1f} MB; VmHWM {srv['hwm'] / 1024:.1f} MB)",
                         "(≤ 64 MB)", verdict(over_all <= 64)))
        else:
            rows.append((f"{srv['name']} VmRSS over the intervals, highest (median); from the start",
                         f"{peak / 1024:.1f} MB ({statistics.median(in_window) / 1024:.1f} MB); {peak_all / 1024:.1f} MB (VmHWM {srv['hwm'] / 1024:.1f} MB)",
                         "(no baseline)", "—"))

    # Politeness: full downloads of static sources after their first.
    by_source: dict[int, list[dict]] = {}
    for r in requests:
        if r.get("src") is not None:
            by_source.setdefault(r["src"], []).append(r)
    for rs in by_source.values():
        rs.sort(key=lambda r: r["t"])
    static_again = static_again_validators = static_again_sources = 0
    static_conditional = static_requests = 0
    change_304 = change_requests = change_conditional = 0
    for s, rs in by_source.items():
        kind = rs[0]["kind"].replace("throttle-", "")
        seen_full = False
        again_here = 0
        for r in rs:
            if r["status"] not in (200, 304):
                continue
            inside = t_start <= r["t"] <= t_end
            if kind == "static":
                static_requests += inside
                static_conditional += inside and (r["inm"] or r["ims"])
                if r["status"] == 200:
                    if seen_full:
                        again_here += 1
                        static_again_validators += r["inm"] or r["ims"]
                    seen_full = True
            elif kind == "change" and inside:
                change_requests += 1
                change_conditional += r["inm"] or r["ims"]
                change_304 += r["status"] == 304
        static_again += again_here
        static_again_sources += again_here > 0
    rows.append(("full (200) downloads of static sources after their first, whole run",
                 f"{static_again} ({static_again_validators} of them sent validators; {static_again_sources} sources)",
                 "0", verdict(static_again == 0)))
    rows.append(("requests with validators (If-None-Match / If-Modified-Since) in the intervals",
                 f"static {static_conditional} of {static_requests}, changing {change_conditional} of {change_requests}",
                 "all", verdict(static_conditional == static_requests and change_conditional == change_requests)))

    # Requests per source per interval: healthy hosts.
    healthy = [s for s, rs in by_source.items() if rs[0]["host"] in healthy_hosts and rs[0]["kind"] in ("change", "static")]
    listed_healthy = a.sources
    counts_all: list[int] = []
    more_than_once = never = missed = 0
    lateness: list[float] = []
    gaps_short = 0
    tolerance = min(1.0, interval / 10)
    for s in healthy:
        times = [r["t"] for r in by_source[s] if r["status"] in (200, 304)]
        window_times = [t for t in times if t_start <= t <= t_end]
        if not window_times:
            never += 1
            counts_all += [0] * intervals
            continue
        counts, late = phase_windows([t for t in times if t >= t_start - interval / 2], t_start, interval, intervals)
        counts_all += counts
        more_than_once += any(c > 1 for c in counts)
        missed += any(c == 0 for c in counts)
        lateness += late
        gaps_short += any(b - a_ < interval - tolerance for a_, b in zip(window_times, window_times[1:]))
    never += max(0, listed_healthy - len(healthy))
    if counts_all:
        histogram = {c: counts_all.count(c) for c in sorted(set(counts_all))}
        rows.append((f"requests per source per interval{'' if a.mode == 'single' else ', all nodes together'} ({len(healthy)} healthy sources × {intervals} intervals)",
                     f"min {min(counts_all)}, median {statistics.median(counts_all):g}, max {max(counts_all)}; "
                     + ", ".join(f"{n}×{c}" for c, n in histogram.items()),
                     "exactly 1", verdict(min(counts_all) == 1 and max(counts_all) == 1)))
    rows.append(("sources asked more than once in an interval",
                 f"{more_than_once} (gaps shorter than the interval − {tolerance:g} s: {gaps_short} sources)", "0",
                 verdict(more_than_once == 0)))
    rows.append(("sources missing an interval / never asked in the window", f"{missed} / {never}", "0 / 0",
                 verdict(missed == 0 and never == 0)))
    if lateness:
        p99 = percentile(lateness, 99)
        rows.append(("healthy sources' lateness (offset from their phase), p50 / p99 / max",
                     f"{percentile(lateness, 50):.3f} / {p99:.3f} / {max(lateness):.3f} s",
                     "p99 ≤ 1 s" + (" (with faults)" if a.faults else ""), verdict(p99 <= 1.0)))
    rows.append(("changing sources answered 304 in the intervals (asked twice in one generation)",
                 f"{change_304} of {change_requests}", "(near 0)", "—"))

    # Faults.
    if a.faults:
        holds = summary.get("holds") or []
        begun = [h for h in holds if h["start"] <= t_end]
        # Lateness is judged on the holds that ended inside the intervals (the server ran on
        # half an interval after them); requests inside a hold are counted in every hold.
        ended = [h for h in begun if h["end"] <= t_end]
        violations = sum(h["violations"] for h in holds)
        rows.append(("throttle holds (429, Retry-After) during the intervals",
                     f"{len(begun)} holds of {begun[0]['retry_after'] if begun else '-'} s ({len(ended)} ended inside)",
                     "≥ 1", verdict(len(ended) >= 1)))
        rows.append((f"requests to the throttled host {throttle_host} inside a hold", str(violations), "0", verdict(violations == 0)))
        if ended:
            lates = [h["trigger_next_late"] for h in ended if h.get("trigger_next_late") is not None]
            never_again = len(ended) - len(lates)
            rows.append(("the throttled source asked again after the hold's end, by",
                         ", ".join(f"{x:.2f} s" for x in lates) + (f"; {never_again} never" if never_again else ""),
                         "0 ≤ late < 1 s", verdict(never_again == 0 and all(0 <= x < 1 for x in lates))))
            firsts = [(h["first_after_late"], h["first_after_src"]) for h in ended if h.get("first_after_late") is not None]
            rows.append(("the host's first request after the hold's end, by",
                         ", ".join(f"{x:.2f} s (source {src})" for x, src in firsts) or "none",
                         "0 ≤ late < 1 s", verdict(len(firsts) == len(ended) and all(0 <= x < 1 for x, _ in firsts))))
        throttled = [s for s, rs in by_source.items() if rs[0]["host"] == throttle_host]
        tcounts = []
        for s in throttled:
            times = [r["t"] for r in by_source[s] if r["status"] in (200, 304, 429)]
            counts, _ = phase_windows([t for t in times if t >= t_start - interval / 2], t_start, interval, intervals)
            tcounts += counts
        if tcounts:
            rows.append((f"the throttled host's {len(throttled)} sources: requests per source per interval",
                         f"min {min(tcounts)}, median {statistics.median(tcounts):g}, max {max(tcounts)}", "(1; a held one moves)", "—"))
        per_kind: dict[str, list[int]] = {}
        for s, kind in bad_kinds.items():
            n = sum(1 for r in by_source.get(s, []) if t_start <= r["t"] <= t_end)
            per_kind.setdefault(kind, []).append(n)
        rows.append(("misbehaving sources: requests in the intervals, by kind",
                     "; ".join(f"{k} {'+'.join(map(str, v))}" for k, v in per_kind.items()), "(backing off)", "—"))

    # The servers' own view: every node's sources (each lists those of the hosts it polls), every node's polls.
    folders = [Path(a.snapshot) / srv["name"] for srv in servers] if a.snapshot else []
    first = folders[0] if folders else None
    docs = [json.loads((f / "sources.json").read_text()) for f in folders if (f / "sources.json").exists()]
    doc = docs[0] if docs else None
    if doc:
        entries = [e for one in docs for e in one.get("sources", []) if isinstance(e, dict)]
        if len(docs) > 1:
            by_node = [sum(1 for e in one.get("sources", []) if isinstance(e, dict)) for one in docs]
            urls = [str(e.get("url")) for e in entries]
            rows.append(("/admin/sources: sources each node polls", " + ".join(map(str, by_node)) + f" = {len(urls)}; on two nodes {len(urls) - len(set(urls))}",
                         "each on one node, every node some", verdict(len(urls) == len(set(urls)) and min(by_node) > 0)))
        states: dict[str, int] = {}
        for e in entries:
            states[str(e.get("state"))] = states.get(str(e.get("state")), 0) + 1
        unfetched = sum(1 for e in entries if not e.get("last_fetch_at"))
        expected = a.sources + len(start_event.get("throttle_sources") or []) + len(bad_kinds)
        rows.append(("/admin/sources: entries, states", f"{len(entries)} ({', '.join(f'{k} {v}' for k, v in sorted(states.items()))}); never fetched {unfetched}",
                     f"{expected} listed", verdict(len(entries) == expected)))
        for e in entries:
            if urllib.parse.urlsplit(str(e.get("url", ""))).hostname != bad or not bad:
                continue
            number = re.search(r"/feed/(\d+)\.xml", str(e.get("url")))
            what = bad_kinds.get(int(number.group(1)), "?") if number else "?"
            rows.append((f"/admin/sources: misbehaving ({what})",
                         f"{e.get('state')}, {e.get('consecutive_failures')} failures, {printable(e.get('last_result'), 50)}",
                         "failing, not dropped", verdict(e.get("state") in ("failing", "failing for days"))))
        totals = doc.get("totals")
        if isinstance(totals, dict):
            shown = ", ".join(f"{k} {v}" for k, v in totals.items() if not isinstance(v, (list, dict)))
            rows.append(("/admin/sources totals", printable(shown, 240), "", "—"))
        items = sum(e.get("items") or 0 for e in entries if isinstance(e.get("items"), int))
        rows.append(("items the sources hold (sum of their items)", f"{items:,}", "", "—"))
    elif first:
        rows.append(("/admin/sources", "absent (the route answered no JSON)", "present", "NOT MET"))
    if first:
        status = (first / "river.status").read_text().strip() if (first / "river.status").exists() else "-"
        html = (first / "river.html").read_text(errors="replace") if (first / "river.html").exists() else ""
        setsize = re.search(r'aria-setsize="(\d+)"', html)
        rows_on_page = len(re.findall(r"<article\b", html))
        via = len(re.findall(r'class="via"', html))
        rows.append(("GET /", f"{status}; {rows_on_page} rows on the first page ({via} naming their source); "
                     f"the river holds {int(setsize.group(1)):,} items" if setsize else f"{status}; {rows_on_page} rows, no aria-setsize",
                     "200", verdict(status == "200")))

    def cache_of(folder: Path) -> dict | None:
        try:
            value = json.loads((folder / "cache.json").read_text())
        except (OSError, ValueError):
            return None
        return value if isinstance(value, dict) else None

    def megabytes(prefix: str, d: dict):
        for k, v in d.items():
            if isinstance(v, dict):
                yield from megabytes(prefix + k + ".", v)
            elif k.endswith("_bytes") and isinstance(v, (int, float)):
                yield f"{prefix}{k[:-6]} {v / 1048576:.1f} MB"

    polls = []
    for srv, folder in zip(servers, folders):
        cache = cache_of(folder)
        if cache is None:
            continue
        if isinstance(cache.get("memory_use"), dict):
            rows.append((f"memory_use (/admin/cache) at the end{'' if single else ', ' + srv['name']}",
                         printable(", ".join(megabytes("", cache["memory_use"])), 240), "", "—"))
        source = cache.get("source")
        if isinstance(source, dict):
            answered, failed, throttled = (source.get(k) for k in ("imports", "failures", "throttled"))
            counted = sum(v for v in (answered, failed, throttled) if isinstance(v, int))
            polls.append((srv["name"], counted, source.get("polled_elsewhere")))
            if not single:
                rows.append((f"{srv['name']} polls (/admin/cache source: answered + failed + throttled)",
                             f"{counted:,} ({answered} + {failed} + {throttled}); polled elsewhere {source.get('polled_elsewhere')}",
                             "> 0", verdict(counted > 0)))
    origin_then = None
    if a.snapshot and (Path(a.snapshot) / "origin.json").exists():
        try:
            origin_then = json.loads((Path(a.snapshot) / "origin.json").read_text())
        except ValueError:
            pass
    if polls and origin_then:
        feeds = sum(v for k, v in origin_then.get("by_kind", {}).items() if k != "other")
        rows.append(("polls the servers counted vs feed requests the origin answered (at the snapshot)",
                     f"{sum(p[1] for p in polls):,} vs {feeds:,}", "equal (± those in flight)", "—"))

    # Context.
    if summary:
        rows.append(("origin: requests, bytes out, by status", f"{summary.get('requests'):,}, {summary.get('bytes_out', 0) / 1048576:.0f} MB, "
                     + ", ".join(f"{k} {v}" for k, v in sorted(summary.get("by_status", {}).items())), "", "—"))
    if origin_share is not None:
        rows.append(("origin CPU, share of one core over the intervals", f"{origin_share:.2f}%", "(not the limit)", "—"))

    width = [max(len(r[i]) for r in rows) for i in range(4)]
    width[1] = min(width[1], 90)
    print(f"\n{'figure':<{width[0]}}  {'measured':<{width[1]}}  {'goal':<{width[2]}}  met?")
    print(f"{'-' * width[0]}  {'-' * width[1]}  {'-' * width[2]}  ----")
    for r in rows:
        print(f"{r[0]:<{width[0]}}  {r[1]:<{width[1]}}  {r[2]:<{width[2]}}  {r[3]}")
    if a.json_out:
        Path(a.json_out).write_text(json.dumps({"rows": rows, "servers": servers}, indent=1))


def main() -> None:
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    cmd, args = sys.argv[1], sys.argv[2:]
    if cmd == "wait-fetched":
        wait_fetched(args[0], args[1], args[2], args[3], float(args[4]))
    elif cmd == "rows-ready":
        rows_ready(args[0], args[1], float(args[2]))
    elif cmd == "snapshot":
        snapshot(args[0], args[1], args[2])
    elif cmd == "report":
        p = argparse.ArgumentParser(prog="sources_helper.py report")
        p.add_argument("--log", required=True)
        p.add_argument("--origin-summary")
        p.add_argument("--start", type=float, required=True, help="CLOCK_MONOTONIC seconds")
        p.add_argument("--end", type=float, required=True)
        p.add_argument("--interval", type=float, required=True)
        p.add_argument("--intervals", type=int, required=True)
        p.add_argument("--sources", type=int, required=True)
        p.add_argument("--faults", type=int, default=0)
        p.add_argument("--clk-tck", type=int, default=100)
        p.add_argument("--mode", choices=("single", "cluster"), default="single")
        p.add_argument("--server", action="append", default=[], required=True,
                       help="NAME:PID:TICKS_BEFORE:TICKS_AFTER:VMHWM_KB, one for each server")
        p.add_argument("--origin-cpu-before", type=int)
        p.add_argument("--origin-cpu-after", type=int)
        p.add_argument("--rss-samples", required=True, help="lines: monotonic seconds, pid, VmRSS kB")
        p.add_argument("--baseline-kib", type=int, default=0, help="the empty server's VmRSS (0: none)")
        p.add_argument("--snapshot", help="a folder: one folder a server (by name) from `snapshot`, and origin.json")
        p.add_argument("--json-out")
        report(p.parse_args(args))
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main()
