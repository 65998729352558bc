#!/usr/bin/env python3
"""Issue 3, benchmark (c): the browser scroll of Tests/browser/test_warm_scroll.py
with pre-warm on (2 pages) and off (0), side by side: blank-thumbnail time (ms
that thumbnails spent in the viewport unpainted, summed), how many were blank
for over 100 ms, and the hit ratio.

    WARMFEED_BIN=.build/debug/warmfeed .venv/bin/python bench/scroll.py [--runs N] [--json FILE]

Each run starts a fresh server (same flags as the test: --origin-latency 250
--page-size 10, demo originals painted ahead) and a fresh browser context.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "Tests" / "browser"))

from playwright.sync_api import sync_playwright  # noqa: E402

import conftest  # noqa: E402
import warm_scroll  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=1, help="runs of each setting (default 1)")
    ap.add_argument("--prewarm", type=int, nargs="+", default=[2, 0], help="settings to compare (default 2 0)")
    ap.add_argument("--pace", nargs="+", default=["300/350", "600/200"],
                    help="wheel px/pause ms paces to run (default: the test's generous 300/350, and a brisk 600/200)")
    ap.add_argument("--json", help="also write every run's measurements to this file")
    args = ap.parse_args()

    results = []
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=conftest.CHROMIUM)
        try:
            for run in range(args.runs):
                for pace in args.pace:
                    px, ms = (int(x) for x in pace.split("/"))
                    for prewarm in args.prewarm:
                        print(f"run {run + 1}: {px} px / {ms} ms, prewarm {prewarm} …", file=sys.stderr, flush=True)
                        results.append(warm_scroll.measure(browser, prewarm, px, ms))
        finally:
            browser.close()

    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=1, default=str))

    print(f"\nScroll through {warm_scroll.PAGES} pages of {warm_scroll.PAGE_SIZE} "
          f"(origin {warm_scroll.ORIGIN_LATENCY_MS} ms, viewport {warm_scroll.VIEWPORT['width']}×"
          f"{warm_scroll.VIEWPORT['height']}, first screen apart); load average "
          f"{' '.join(f'{x:.1f}' for x in os.getloadavg())}\n")
    cols = ["pace px/ms", "prewarm", "entered", "blank ms", f"> {warm_scroll.LATE_MS} ms", "placeholders", "in time",
            "hit ratio (scroll)", "hit ratio (/admin)", "origin errors", "1st screen blank ms"]
    print(" | ".join(cols))
    print(" | ".join("-" * len(c) for c in cols))
    for r in results:
        def pct(x):
            return "—" if x is None else f"{100 * x:.1f}%"
        print(" | ".join([
            f"{r['wheel_px']}/{r['pause_ms']}", str(r["prewarm"]), str(r["entered"]),
            f"{r['blank_ms']:.0f}", str(r["late"]), str(r["placeholders"]),
            pct(r["painted_in_time"]), pct(r["scroll_hit_ratio"]), pct(r["hit_ratio"]),
            str((r.get("origin") or {}).get("errors")), f"{r['first_screen_blank_ms']:.0f}"]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
