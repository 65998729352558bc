#!/usr/bin/env python3
"""Issue 11's scroll numbers: a newcomer's server (fresh data folder and demo
pool, nothing cached), Chromium opened the moment it answers, a steady scroll
through 10 pages of 30, at each pace, with pre-warm on (2, adaptive) and off,
on each screen: a desktop (1000×800, DPR 1), a phone as Lighthouse emulates
one (412×823 at DPR 2.625, slow 4G, CPU 4× slower; issue 25) and a tall
dense desktop (1280×1440 at DPR 2). Prints the share of thumbnails blank for
over 100 ms (first screen included), the first screen apart, blank p99 and
worst, the loading gap at the bottom, CLS and long tasks, the leads the
server chose, the origin's p50/p99 over the run (as /admin/cache reports
them), the CPU the server and everything else on the machine (Chromium,
mostly) used over each run and how busy the machine's cores were (a run on a
full machine measures the machine), and the thin client's gzipped size.

    WARMFEED_BIN=$PWD/.build/release/warmfeed .venv/bin/python bench/scroll.py \
        [--runs N] [--profile desktop phone tall] [--prewarm 2 0] [--pace 1500 3000] [--json FILE] \
        [--server-cpus 0-3 [--browser-cpus 4-11]]

On a many-core machine, --server-cpus gives the server cores of its own, as
a phone and a server have: Chromium (whose phone is throttled 4× on top of
whatever CPU it gets) and this script keep the rest. On two cores, each
wants about one at 3,000 px/s, and a run on a full machine measures it.

The measurement is Tests/browser/warm_scroll.py's, the one the test asserts on.
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import statistics
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "Tests" / "browser"))

from playwright.sync_api import sync_playwright  # noqa: E402

import conftest  # noqa: E402
import warm_scroll  # noqa: E402


def cpu_list(text: str) -> set[int]:
    """CPUs written as taskset takes them: "0-3,8"."""
    cpus: set[int] = set()
    for part in text.split(","):
        first, _, last = part.partition("-")
        cpus.update(range(int(first), int(last or first) + 1))
    return cpus


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=3, help="runs of each setting (default 3; medians are printed)")
    ap.add_argument("--prewarm", type=int, nargs="+", default=[2, 0], help="settings to compare (default 2 0)")
    ap.add_argument("--pace", type=int, nargs="+", default=[1500, 3000], help="px/s (default 1500 3000)")
    ap.add_argument("--profile", nargs="+", default=["desktop"], choices=sorted(warm_scroll.PROFILES),
                    help="screens to scroll on (default desktop)")
    ap.add_argument("--json", help="also write every run's measurements to this file")
    ap.add_argument("--server-cpus", help="CPUs for the server, as taskset takes them (0-3,8); "
                    "Chromium and this script get --browser-cpus")
    ap.add_argument("--browser-cpus", help="CPUs for Chromium and this script (default: all the others)")
    args = ap.parse_args()
    server_cpus = cpu_list(args.server_cpus) if args.server_cpus else None
    if server_cpus:
        browser_cpus = cpu_list(args.browser_cpus) if args.browser_cpus else os.sched_getaffinity(0) - server_cpus
        # Chromium inherits this process's CPUs; each server is started on its own (warm_scroll.measure).
        os.sched_setaffinity(0, browser_cpus)
        where = f"server on CPUs {args.server_cpus}, Chromium and the harness on {sorted(browser_cpus)}"
    else:
        where = f"server, Chromium and the harness sharing all {os.cpu_count()} cores"

    client = (ROOT / "Public" / "feed.js").read_bytes()
    results = []
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=conftest.CHROMIUM)
        try:
            for run in range(args.runs):
                for profile in args.profile:
                    for pace in args.pace:
                        for prewarm in args.prewarm:
                            print(f"run {run + 1}: {profile}, {pace} px/s, prewarm {prewarm} …", file=sys.stderr, flush=True)
                            results.append(warm_scroll.measure(browser, prewarm, pace, profile=profile,
                                                               server_cpus=server_cpus))
        finally:
            browser.close()

    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=1, default=str))

    print(f"\nNewcomer's scroll through {warm_scroll.PAGES} pages of {warm_scroll.PAGE_SIZE} (origin "
          f"{warm_scroll.ORIGIN_LATENCY_MS} ms, first screen included), {args.runs} run(s) each, medians; load average "
          f"{' '.join(f'{x:.1f}' for x in os.getloadavg())}; binary {conftest.WARMFEED_BIN}; {where}\n")
    cols = ["screen", "px/s", "prewarm", "entered", "late > 100 ms", "late, each run", "late share", "1st screen late", "blank p99 / max ms",
            "gap at the bottom ms", "CLS", "long tasks", "page 1 warm s",
            "leads (lead: readers)", "page warms in s", "origin p50 ms", "origin p99 ms", "placeholders",
            "CPU s: server / the rest", "machine busy"]
    print("| " + " | ".join(cols) + " |")
    print("|" + "|".join("---" for _ in cols) + "|")
    for profile, pace, prewarm in [(f, p, w) for f in args.profile for p in args.pace for w in args.prewarm]:
        rs = [r for r in results if r["pace"] == pace and r["prewarm"] == prewarm and r["profile"] == profile]

        def med(f):
            values = [f(r) for r in rs if f(r) is not None]
            return statistics.median(values) if values else None

        def fmt(x, spec):
            return "—" if x is None else format(x, spec)
        leads = [json.dumps((r.get("prewarm_stats") or {}).get("leads")) for r in rs]
        print("| " + " | ".join([
            profile, str(pace), str(prewarm), fmt(med(lambda r: r["entered"]), ".0f"), fmt(med(lambda r: r["late"]), ".0f"),
            " · ".join(str(r["late"]) for r in rs),
            fmt(med(lambda r: 100 * r["late_share"] if r["late_share"] is not None else None), ".1f") + "%",
            fmt(med(lambda r: r["first_screen_late"]), ".0f") + " of " + fmt(med(lambda r: r["first_screen"]), ".0f"),
            fmt(med(lambda r: r["blank_p99_ms"]), ".0f") + " / " + fmt(med(lambda r: r["blank_max_ms"]), ".0f"),
            fmt(med(lambda r: r["gap_ms"]), ".0f"), fmt(med(lambda r: r["cls"]), ".3f"),
            fmt(med(lambda r: r["long_tasks"]), ".0f"),
            fmt(med(lambda r: (r.get("prewarm_stats") or {}).get("page_one_warm_seconds")), ".2f"),
            " ".join(leads),
            fmt(med(lambda r: (r.get("prewarm_stats") or {}).get("page_warm_seconds")), ".2f"),
            fmt(med(lambda r: ((r.get("origin") or {}).get("latency") or {}).get("p50_ms")), ".0f"),
            fmt(med(lambda r: ((r.get("origin") or {}).get("latency") or {}).get("p99_ms")), ".0f"),
            fmt(med(lambda r: r["placeholders"]), ".0f"),
            fmt(med(lambda r: r.get("server_cpu_s")), ".1f") + " / " + fmt(med(lambda r: r.get("others_cpu_s")), ".1f"),
            fmt(med(lambda r: 100 * r["machine_busy"] if r.get("machine_busy") is not None else None), ".0f")
            + f"% of {rs[0].get('cores') if rs else '—'} cores",
        ]) + " |")
    print(f"\nThin client: feed.js source {len(client)} B, {len(gzip.compress(client, 9))} B at gzip -9; the server "
          "sends it without its comment lines, and Tests/browser/test_thin_client.py measures that, gzipped as served")
    return 0


if __name__ == "__main__":
    sys.exit(main())
