"""The warm-scroll measurement shared by test_warm_scroll.py and bench/scroll.py
(issue 3, "Tests → Browser" and "Numbers (c)").

A real `warmfeed serve` with the demo origin at 250 ms, 10 rows a page, and
pre-warm L pages ahead; Chromium at 1000×800 (DPR 1) opens `/`, waits for the
first screen, then scrolls steadily with the mouse wheel through 10 pages. In
the page, an init script records for every thumbnail <img> when it first
entered the viewport (IntersectionObserver) and when it loaded (its `load`
event); a thumbnail's blank time is how long it was in the viewport before it
loaded. The first screen is recorded apart: on a fresh server nothing has told
it about the reader before the first document, so those thumbnails are cold
whatever pre-warm does.
"""

from __future__ import annotations

import json
import os
import shutil
import time
import urllib.request
from urllib.parse import urlsplit

from conftest import ROOT, Server

TOKEN = "test-token"
PAGE_SIZE = 10
PAGES = 10
DEMO_ITEMS = 400
# Originals the demo origin paints ahead: every item the scroll reaches, and
# the pages pre-warm looks ahead to from there.
PAINT_AHEAD = 130
ORIGIN_LATENCY_MS = 250
# Painted originals are kept between runs (the same item always gets the same
# image), so only the first run waits for the painting.
ORIGINALS = os.environ.get("WARMFEED_ORIGINALS", str(ROOT / ".build" / "browser-demo-originals"))
VIEWPORT = {"width": 1000, "height": 800}
WHEEL_PX = 300
WHEEL_PAUSE_MS = 350
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
    const r = { src: img.getAttribute('src') || img.dataset.src, enter: null, load: null, error: null }
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


def start_server(prewarm: int) -> Server:
    return Server(page_size=PAGE_SIZE, demo_items=DEMO_ITEMS, prewarm=prewarm,
                  paint_ahead=PAINT_AHEAD,
                  extra_args=("--origin-latency", str(ORIGIN_LATENCY_MS)),
                  env={"WARMFEED_ADMIN_TOKEN": TOKEN}, originals=ORIGINALS)


def originals_in(folder: str) -> list[str]:
    try:
        return [n for n in os.listdir(folder) if not n.startswith(".")]
    except OSError:
        return []


def wait_painted(server: Server, count: int = PAINT_AHEAD, timeout: float = 300) -> None:
    """Wait until the demo origin has painted `count` originals (files in its
    folder), then keep them for the next run."""
    deadline = time.monotonic() + timeout
    while len(originals_in(server.origin_folder)) < count:
        if server.proc.poll() is not None:
            raise AssertionError(f"warmfeed died while painting; log:\n{server.log()}")
        if time.monotonic() > deadline:
            raise AssertionError(f"the demo origin painted only {len(originals_in(server.origin_folder))} "
                                 f"of {count} originals in {timeout:.0f} s")
        time.sleep(1)
    os.makedirs(ORIGINALS, exist_ok=True)
    kept = set(originals_in(ORIGINALS))
    for name in originals_in(server.origin_folder):
        if name not in kept:
            tmp = os.path.join(ORIGINALS, f".tmp-{name}")
            shutil.copyfile(os.path.join(server.origin_folder, name), tmp)
            os.replace(tmp, os.path.join(ORIGINALS, name))


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


def scroll_run(browser, server: Server, wheel_px: int = WHEEL_PX, pause_ms: int = WHEEL_PAUSE_MS) -> dict:
    """Open the feed, scroll through PAGES pages (wheel_px every pause_ms), and
    return the measurements."""
    from conftest import new_page, wait_js

    ctx = browser.new_context(viewport=VIEWPORT, device_scale_factor=1)
    errors: list[str] = []
    try:
        ctx.set_default_timeout(30_000)
        ctx.add_init_script(INIT_SCRIPT)
        page = new_page(ctx, errors)
        # A failed thumbnail is answered with a placeholder image (200, SVG,
        # X-Warmfeed-Placeholder): it loads, but it is no thumbnail.
        placeholders: set[str] = set()
        page.on("response", lambda r: r.headers.get("x-warmfeed-placeholder")
                and placeholders.add(urlsplit(r.url).path))
        page.goto(server.url + "/", wait_until="domcontentloaded")
        wait_js(page)
        # The first screen: cold on a fresh server, recorded apart.
        page.wait_for_function("""() => [...document.querySelectorAll('.thumb img')]
            .filter(i => i.getBoundingClientRect().top < innerHeight)
            .every(i => i.complete)""", timeout=30_000)
        page.wait_for_timeout(300)
        before = admin_cache(server)
        start = page.evaluate("() => performance.now()")
        page.mouse.move(VIEWPORT["width"] / 2, VIEWPORT["height"] / 2)
        last = PAGES * PAGE_SIZE
        steps = 0
        while steps < 600:
            done = page.evaluate("""n => {
                const a = document.querySelector(`[role=feed] article[aria-posinset="${n}"]`)
                return !!a && a.getBoundingClientRect().bottom <= innerHeight
            }""", last)
            if done:
                break
            page.mouse.wheel(0, wheel_px)
            page.wait_for_timeout(pause_ms)
            steps += 1
        else:
            raise AssertionError(f"row {last} never came into view after {steps} wheel steps")
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
        row = {"src": r["src"], "blank_ms": blank, "loaded": r["load"] is not None,
               "error": r["error"] is not None, "placeholder": r["src"] in placeholders}
        (first if r["enter"] < start else scrolled).append(row)
    late = [r for r in scrolled
            if r["blank_ms"] > LATE_MS or not r["loaded"] or r["error"] or r["placeholder"]]
    return {
        "prewarm": None,  # filled by the caller
        "wheel_px": wheel_px,
        "pause_ms": pause_ms,
        "wheel_steps": steps,
        "scroll_seconds": (end - start) / 1000,
        "first_screen": len(first),
        "first_screen_blank_ms": sum(r["blank_ms"] for r in first),
        "entered": len(scrolled),
        "late": len(late),
        "late_examples": sorted(late, key=lambda r: -r["blank_ms"])[:5],
        "placeholders": sum(r["placeholder"] for r in scrolled),
        "blank_ms": sum(r["blank_ms"] for r in scrolled),
        "painted_in_time": (1 - len(late) / len(scrolled)) if scrolled else None,
        "hit_ratio": after.get("hit_ratio"),
        "scroll_hit_ratio": ratio(before, after),
        "counters_before": {k: before.get(k) for k in ("hits", "misses", "coalesced", "negative_hits")},
        "counters_after": {k: after.get(k) for k in ("hits", "misses", "coalesced", "negative_hits")},
        "prewarm_stats": after.get("prewarm"),
        "origin": after.get("origin"),
        "page_errors": errors,
    }


def measure(browser, prewarm: int, wheel_px: int = WHEEL_PX, pause_ms: int = WHEEL_PAUSE_MS) -> dict:
    server = start_server(prewarm)
    try:
        wait_painted(server)
        result = scroll_run(browser, server, wheel_px, pause_ms)
        result["prewarm"] = prewarm
        # The server's complaints during the run (origin errors and the like), as evidence.
        result["log_warnings"] = [line for line in server.log().splitlines()
                                  if " warning " in line or " error " in line][-8:]
    finally:
        problem = server.stop()
    assert problem is None, problem
    return result
