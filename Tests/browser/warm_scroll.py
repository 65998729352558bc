"""The newcomer's scroll, shared by test_warm_scroll.py and bench/scroll.py
(issue 11, "Tests" and "Numbers").

A real `warmfeed serve` on a fresh data folder (nothing painted, nothing
cached: the demo origin paints its pool before the server answers), the demo
origin at 250 ms, 30 rows a page, pre-warm on or off. Chromium at 1000×800
(DPR 1) opens `/` the moment the server answers and scrolls at a steady pace
(px/s, driven by requestAnimationFrame in the page) until row 300 is in view.
In the page, an init script records for every thumbnail <img> when it first
entered the viewport (IntersectionObserver) and when it loaded (its `load`
event); a thumbnail's blank time is how long it was in the viewport before it
loaded. The first screen counts like every other: page 1 is warmed at start.
"""

from __future__ import annotations

import json
import os
import time
import urllib.request
from urllib.parse import urlsplit

from conftest import Server

TOKEN = "test-token"
PAGE_SIZE = 30
PAGES = 10
DEMO_ITEMS = 1000
ORIGIN_LATENCY_MS = 250
VIEWPORT = {"width": 1000, "height": 800}
PACE = 1500  # px/s
LATE_MS = 100

# Runs in the page before its own scripts (Playwright injects it, so the
# server's CSP does not apply to it).
INIT_SCRIPT = """
(() => {
  const rec = window.__wfThumbs = []
  const seen = new WeakMap()
  const io = new IntersectionObserver(es => {
    for (const e of es) {
      const r = seen.get(e.target)
      if (r && e.isIntersecting && r.enter === null) r.enter = e.time
    }
  })
  const track = img => {
    if (seen.has(img)) return seen.get(img)
    const row = img.closest('article')
    const r = { src: img.getAttribute('src') || img.dataset.src, pos: row && +row.getAttribute('aria-posinset'),
                enter: null, load: null, error: null }
    img.addEventListener('load', () => { r.src = img.getAttribute('src') })
    seen.set(img, r)
    rec.push(r)
    if (img.complete && img.naturalWidth > 0) r.load = performance.now()
    io.observe(img)
    return r
  }
  // On the document: a load event never reaches the window from an element.
  const isThumb = t => t instanceof HTMLImageElement && t.closest('.thumb')
  document.addEventListener('load', e => {
    if (!isThumb(e.target)) return
    const r = track(e.target)
    if (r.load === null) r.load = performance.now()
  }, true)
  document.addEventListener('error', e => {
    if (!isThumb(e.target)) return
    const r = track(e.target)
    if (r.error === null) r.error = performance.now()
  }, true)
  new MutationObserver(() => document.querySelectorAll('.thumb img').forEach(track))
    .observe(document, { childList: true, subtree: true })
})()
"""


def start_server(prewarm: int, fresh: bool = True, extra_args: tuple[str, ...] = (),
                 demo_items: int = DEMO_ITEMS) -> Server:
    """A server as a newcomer starts it (fresh=True: its own data folder and
    demo pool), or one sharing the tests' demo pool."""
    kwargs = {"pool": None} if fresh else {}
    return Server(page_size=PAGE_SIZE, demo_items=demo_items, prewarm=prewarm,
                  extra_args=("--origin-latency", str(ORIGIN_LATENCY_MS), *extra_args),
                  env={"WARMFEED_ADMIN_TOKEN": TOKEN}, **kwargs)


def admin_cache(server: Server) -> dict:
    req = urllib.request.Request(server.url + "/admin/cache", headers={"Authorization": f"Bearer {TOKEN}"})
    with urllib.request.urlopen(req, timeout=10) as r:
        return json.load(r)


def ratio(before: dict, after: dict) -> float | None:
    """Hits over all decisions between two /admin/cache snapshots (the same
    sum the server's hit_ratio uses)."""
    keys = ("hits", "misses", "coalesced", "negative_hits")
    d = {k: after.get(k, 0) - before.get(k, 0) for k in keys}
    total = sum(d.values())
    return d["hits"] / total if total else None


# Scrolls at `pace` px/s until row `last` is in view (or `limit_ms` passes);
# a document that has not grown yet holds the scroll where it is.
SCROLL = """async ({ pace, last, limitMs }) => {
  const t0 = performance.now()
  let prev = t0
  return await new Promise(done => {
    const step = now => {
      const a = document.querySelector(`[role=feed] article[aria-posinset="${last}"]`)
      if (a && a.getBoundingClientRect().bottom <= innerHeight) return done({ reached: true, ms: now - t0 })
      if (now - t0 > limitMs) return done({ reached: false, ms: now - t0 })
      scrollBy(0, pace * (now - prev) / 1000)
      prev = now
      requestAnimationFrame(step)
    }
    requestAnimationFrame(step)
  })
}"""


def scroll_run(browser, server: Server, pace: int = PACE, path: str = "/", pages: int = PAGES,
               first_row: int = 1, device_scale_factor: float = 1) -> dict:
    """Open `path` at once and scroll at `pace` px/s through `pages` pages
    (to row first_row + pages × PAGE_SIZE - 1), on a screen of
    `device_scale_factor` (2: it loads the 2x); return the measurements."""
    from conftest import new_page

    ctx = browser.new_context(viewport=VIEWPORT, device_scale_factor=device_scale_factor)
    errors: list[str] = []
    try:
        ctx.set_default_timeout(60_000)
        ctx.add_init_script(INIT_SCRIPT)
        page = new_page(ctx, errors)
        # A failed thumbnail is answered with a placeholder image (200, SVG,
        # X-Warmfeed-Placeholder): it loads, but it is no thumbnail.
        placeholders: set[str] = set()
        page.on("response", lambda r: r.headers.get("x-warmfeed-placeholder")
                and placeholders.add(urlsplit(r.url).path))
        before = admin_cache(server)
        page.goto(server.url + path, wait_until="domcontentloaded")
        page.wait_for_function("() => document.documentElement.classList.contains('js')")
        start = page.evaluate("() => performance.now()")
        last = first_row + pages * PAGE_SIZE - 1
        run = page.evaluate(SCROLL, {"pace": pace, "last": last, "limitMs": 600_000})
        assert run["reached"], f"row {last} never came into view in {run['ms'] / 1000:.0f} s"
        # Let the last screen's thumbnails finish (or not) before reading the clock.
        page.wait_for_timeout(1500)
        end = page.evaluate("() => performance.now()")
        records = page.evaluate("() => window.__wfThumbs")
        after = admin_cache(server)
    finally:
        ctx.close()

    first, scrolled = [], []
    for r in records:
        if r["enter"] is None:
            continue
        painted = r["load"] if r["load"] is not None else end
        blank = max(0.0, painted - r["enter"])
        row = {"src": r["src"], "pos": r.get("pos"), "blank_ms": blank, "loaded": r["load"] is not None,
               "error": r["error"] is not None, "placeholder": r["src"] in placeholders}
        (first if r["enter"] < start + 50 else scrolled).append(row)
    every = first + scrolled
    late = [r for r in every
            if r["blank_ms"] > LATE_MS or not r["loaded"] or r["error"] or r["placeholder"]]
    return {
        "prewarm": None,  # filled by the caller
        "pace": pace,
        "path": path,
        "scroll_seconds": run["ms"] / 1000,
        "first_screen": len(first),
        "first_screen_late": sum(r in late for r in first),
        "first_screen_blank_ms": sum(r["blank_ms"] for r in first),
        "entered": len(every),
        "late": len(late),
        "late_share": len(late) / len(every) if every else None,
        "late_examples": sorted(late, key=lambda r: -r["blank_ms"])[:5],
        "placeholders": sum(r["placeholder"] for r in every),
        "blank_ms": sum(r["blank_ms"] for r in every),
        "painted_in_time": (1 - len(late) / len(every)) if every else None,
        "scrolled": len(scrolled),
        "scrolled_late": sum(r in late for r in scrolled),
        # The pages after the one opened (a deep link's landing page is cold by nature).
        "later_pages": sum((r["pos"] or 0) >= first_row + PAGE_SIZE for r in every),
        "later_pages_late": sum((r["pos"] or 0) >= first_row + PAGE_SIZE for r in late),
        "hit_ratio": after.get("hit_ratio"),
        "scroll_hit_ratio": ratio(before, after),
        "counters_before": {k: before.get(k) for k in ("hits", "misses", "coalesced", "negative_hits")},
        "counters_after": {k: after.get(k) for k in ("hits", "misses", "coalesced", "negative_hits")},
        "prewarm_stats": after.get("prewarm"),
        "origin": after.get("origin"),
        "page_errors": errors,
    }


def measure(browser, prewarm: int, pace: int = PACE, path: str = "/", pages: int = PAGES,
            first_row: int = 1, demo_items: int = DEMO_ITEMS) -> dict:
    """A newcomer's server, started now, and one scroll through it."""
    server = start_server(prewarm, demo_items=demo_items)
    try:
        result = scroll_run(browser, server, pace, path, pages, first_row)
        result["prewarm"] = prewarm
        # The server's complaints during the run (origin errors and the like), as evidence.
        result["log_warnings"] = [line for line in server.log().splitlines()
                                  if " warning " in line or " error " in line][-8:]
        result["page_one_warm"] = [line for line in server.log().splitlines() if "page 1 is warm" in line][:1]
    finally:
        problem = server.stop()
    assert problem is None, problem
    return result
