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
from pathlib import Path
from urllib.parse import urlsplit

from conftest import Server

TOKEN = "test-token-of-thirty-two-characters"
PAGE_SIZE = 30
PAGES = 10
DEMO_ITEMS = 1000
ORIGIN_LATENCY_MS = 250
VIEWPORT = {"width": 1000, "height": 800}
PACE = 1500  # px/s
LATE_MS = 100

# The screens a reader scrolls on. "phone" is Lighthouse's mobile profile:
# a Moto G Power's 412×823 CSS px at DPR 2.625 (so the 2x thumbnails), on its
# "slow 4G" (150 ms RTT, 1.6 Mbit/s down, 750 kbit/s up) and a CPU 4× slower,
# both through the Chrome DevTools Protocol. "tall" is a desktop with a tall,
# dense screen: more rows in view at once, every one a 2x.
PROFILES = {
    "desktop": {"viewport": VIEWPORT, "device_scale_factor": 1},
    "tall": {"viewport": {"width": 1280, "height": 1440}, "device_scale_factor": 2},
    "phone": {"viewport": {"width": 412, "height": 823}, "device_scale_factor": 2.625,
              "is_mobile": True, "has_touch": True,
              "network": {"latency": 150, "downloadThroughput": 1_600_000 / 8, "uploadThroughput": 750_000 / 8},
              "cpu_slowdown": 4},
}

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
  // Every thumbnail's request in the resource timings (250 by default): when it left, when it came.
  performance.setResourceTimingBufferSize(5000)
  // Layout shifts not caused by input (CLS's sum) and long tasks (over 50 ms on the main thread).
  const perf = window.__wfPerf = { cls: 0, shifts: 0, longTasks: 0, longTaskMs: 0 }
  new PerformanceObserver(l => l.getEntries().forEach(e => {
    if (!e.hadRecentInput) { perf.cls += e.value; perf.shifts += 1 }
  })).observe({ type: 'layout-shift', buffered: true })
  new PerformanceObserver(l => l.getEntries().forEach(e => { perf.longTasks += 1; perf.longTaskMs += e.duration }))
    .observe({ type: 'longtask', buffered: true })
})()
"""


def cpu_seconds(pid: int) -> float:
    """CPU seconds `pid` has used so far, every thread's (user and system)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def machine_ticks() -> tuple[int, int]:
    """The machine's busy and total CPU ticks so far, all cores (steal counted busy)."""
    user, nice, system, idle, iowait, irq, softirq, steal = map(int, Path("/proc/stat").read_text().split()[1:9])
    busy = user + nice + system + irq + softirq + steal
    return busy, busy + idle + iowait


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
# a document that has not grown yet holds the scroll where it is. The time the
# reader spent at the document's end (the next page not there yet) is the
# loading gap at the bottom.
SCROLL = """async ({ pace, last, limitMs }) => {
  const t0 = performance.now()
  let prev = t0, gapMs = 0, gaps = 0, atEnd = false
  return await new Promise(done => {
    const step = now => {
      const a = document.querySelector(`[role=feed] article[aria-posinset="${last}"]`)
      if (a && a.getBoundingClientRect().bottom <= innerHeight) return done({ reached: true, ms: now - t0, gapMs, gaps })
      if (now - t0 > limitMs) return done({ reached: false, ms: now - t0, gapMs, gaps })
      const end = scrollY + innerHeight >= document.scrollingElement.scrollHeight - 1
      if (end) { gapMs += now - prev; if (!atEnd) gaps += 1 }
      atEnd = end
      scrollBy(0, pace * (now - prev) / 1000)
      prev = now
      requestAnimationFrame(step)
    }
    requestAnimationFrame(step)
  })
}"""


def scroll_run(browser, server: Server, pace: int = PACE, path: str = "/", pages: int = PAGES,
               first_row: int = 1, device_scale_factor: float = 1, profile: str | None = None) -> dict:
    """Open `path` at once and scroll at `pace` px/s through `pages` pages
    (to row first_row + pages × PAGE_SIZE - 1), on a screen of
    `device_scale_factor` (2: it loads the 2x), or as one of `PROFILES`
    (its screen, network and CPU); return the measurements."""
    from conftest import new_page

    screen = PROFILES[profile] if profile else {"viewport": VIEWPORT, "device_scale_factor": device_scale_factor}
    ctx = browser.new_context(**{k: v for k, v in screen.items() if k not in ("network", "cpu_slowdown")})
    errors: list[str] = []
    try:
        ctx.set_default_timeout(60_000)
        ctx.add_init_script(INIT_SCRIPT)
        page = new_page(ctx, errors)
        if "network" in screen or "cpu_slowdown" in screen:
            cdp = ctx.new_cdp_session(page)
            if "network" in screen:
                cdp.send("Network.enable")
                cdp.send("Network.emulateNetworkConditions", {"offline": False, **screen["network"]})
            if "cpu_slowdown" in screen:
                cdp.send("Emulation.setCPUThrottlingRate", {"rate": screen["cpu_slowdown"]})
        # A failed thumbnail is answered with a placeholder image (200, SVG,
        # X-Warmfeed-Placeholder): it loads, but it is no thumbnail.
        placeholders: set[str] = set()
        page.on("response", lambda r: r.headers.get("x-warmfeed-placeholder")
                and placeholders.add(urlsplit(r.url).path))
        before = admin_cache(server)
        # Who had the CPU during the run: the server (one process; not a
        # cluster's), and everything else on the machine (Chromium, mostly), so
        # a figure says whether the host was full.
        pid = server.proc.pid if isinstance(server, Server) else None
        server_cpu, ticks = cpu_seconds(pid) if pid else 0.0, machine_ticks()
        page.goto(server.url + path, wait_until="domcontentloaded")
        page.wait_for_function("() => document.documentElement.classList.contains('js')")
        start = page.evaluate("() => performance.now()")
        last = first_row + pages * PAGE_SIZE - 1
        run = page.evaluate(SCROLL, {"pace": pace, "last": last, "limitMs": 600_000})
        assert run["reached"], f"row {last} never came into view in {run['ms'] / 1000:.0f} s"
        # Let the last screen's thumbnails finish (or not) before reading the clock.
        page.wait_for_timeout(1500)
        end = page.evaluate("() => performance.now()")
        server_cpu, ticks = cpu_seconds(pid) - server_cpu if pid else None, [b - a for a, b in zip(ticks, machine_ticks())]
        records = page.evaluate("() => window.__wfThumbs")
        perf = page.evaluate("() => window.__wfPerf")
        # By item: the img's src names the 1x, its srcset the size the screen loads.
        timings = {e["name"].split("/")[2]: e for e in page.evaluate("""() => performance.getEntriesByType('resource')
            .filter(e => e.name.includes('/thumbs/'))
            .map(e => ({ name: new URL(e.name).pathname, start: e.startTime, end: e.responseEnd, size: e.transferSize }))""")}
        after = admin_cache(server)
    finally:
        ctx.close()

    first, scrolled = [], []
    for r in records:
        if r["enter"] is None:
            continue
        painted = r["load"] if r["load"] is not None else end
        blank = max(0.0, painted - r["enter"])
        parts = urlsplit(r["src"] or "").path.split("/")
        timing = timings.get(parts[2] if len(parts) > 2 else "") or {}
        row = {"src": r["src"], "pos": r.get("pos"), "blank_ms": blank, "loaded": r["load"] is not None,
               "error": r["error"] is not None, "placeholder": r["src"] in placeholders,
               # When its request left and its answer came, from when it entered the view (negative: before).
               "asked_ms": timing["start"] - r["enter"] if "start" in timing else None,
               "answered_ms": timing["end"] - r["enter"] if "end" in timing else None,
               "bytes": timing.get("size")}
        (first if r["enter"] < start + 50 else scrolled).append(row)
    every = first + scrolled
    late = [r for r in every
            if r["blank_ms"] > LATE_MS or not r["loaded"] or r["error"] or r["placeholder"]]
    blanks = sorted(r["blank_ms"] for r in every)
    return {
        "prewarm": None,  # filled by the caller
        "profile": profile or ("desktop" if device_scale_factor == 1 else f"dpr {device_scale_factor}"),
        "pace": pace,
        "blank_p99_ms": blanks[min(len(blanks) - 1, int(len(blanks) * 0.99))] if blanks else None,
        "blank_max_ms": blanks[-1] if blanks else None,
        "gap_ms": run["gapMs"],
        "gaps": run["gaps"],
        "cls": perf["cls"],
        "layout_shifts": perf["shifts"],
        "long_tasks": perf["longTasks"],
        "long_task_ms": perf["longTaskMs"],
        "path": path,
        "scroll_seconds": run["ms"] / 1000,
        "first_screen": len(first),
        "first_screen_late": sum(r in late for r in first),
        "first_screen_blank_ms": sum(r["blank_ms"] for r in first),
        "entered": len(every),
        "late": len(late),
        "late_share": len(late) / len(every) if every else None,
        "late_examples": sorted(late, key=lambda r: -r["blank_ms"])[:5],
        # Bytes on the wire (transferSize: headers included) for the thumbnails, and for the first screen's.
        "thumbnail_bytes": sum(t.get("size") or 0 for t in timings.values()),
        "first_screen_bytes": sum(r["bytes"] or 0 for r in first),
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
        # CPU over the run, from opening the page to the last screen's wait.
        "cores": os.cpu_count(),
        "server_cpu_s": server_cpu,
        "others_cpu_s": ticks[0] / os.sysconf("SC_CLK_TCK") - (server_cpu or 0),
        "machine_busy": ticks[0] / ticks[1] if ticks[1] else None,
    }


def measure(browser, prewarm: int, pace: int = PACE, path: str = "/", pages: int = PAGES,
            first_row: int = 1, demo_items: int = DEMO_ITEMS, profile: str | None = None,
            server_cpus: set[int] | None = None) -> dict:
    """A newcomer's server, started now (on `server_cpus`, when given), and one
    scroll through it (on `profile`'s screen, network and CPU)."""
    # A child is born on its parent's CPUs, and every thread it starts on its own.
    ours = os.sched_getaffinity(0)
    if server_cpus:
        os.sched_setaffinity(0, server_cpus)
    try:
        server = start_server(prewarm, demo_items=demo_items)
    finally:
        os.sched_setaffinity(0, ours)
    try:
        result = scroll_run(browser, server, pace, path, pages, first_row, profile=profile)
        result["prewarm"] = prewarm
        result["server_cpus"] = sorted(server_cpus) if server_cpus else None
        # The server's complaints during the run (origin errors and the like), as evidence.
        result["log_warnings"] = [line for line in server.log().splitlines()
                                  if " warning " in line or " error " in line][-8:]
        result["page_one_warm"] = [line for line in server.log().splitlines() if "page 1 is warm" in line][:1]
    finally:
        problem = server.stop()
    assert problem is None, problem
    return result
