#!/usr/bin/env python3
"""Issue 25's bytes: AVIF against WebP for the same thumbnails, at the same
quality, and a phone's first screen with and without AVIF.

1. Thumbnails of real pictures, made by the real server: the demo origin's 40
   pictures and seven photographs from scikit-image's data (astronaut,
   coffee, chelsea, rocket, immunohistochemistry, hubble_deep_field, retina),
   imported as a folder. Each item's 2x (320x240) is asked for as WebP and as
   AVIF; both are decoded with libvips and compared by SSIM (scikit-image)
   against a lossless rendering of the same crop; the server's CPU per
   thumbnail is read from /proc around each pass (its originals were read
   once before, so both passes pay the same decode and resize).
2. A phone's first screen (412x823 at DPR 2.625, so the 2x): a fresh demo
   server; a first phone opens it (the server learns readers take AVIF; that
   first screen is WebP, its AVIF made after); once pre-warm is idle, a second
   phone opens it, once as Chromium asks (AVIF) and once with AVIF taken out of
   its Accept (today's WebP). Prints the bytes of the thumbnails on each
   first screen.

    WARMFEED_BIN=$PWD/.build/release/warmfeed .venv/bin/python bench/avif.py [--json FILE]
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from urllib.parse import urlsplit

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "Tests" / "browser"))

import numpy as np  # noqa: E402
import skimage.data  # noqa: E402
import skimage.io  # noqa: E402
from skimage.metrics import structural_similarity  # noqa: E402

import conftest  # noqa: E402
import warm_scroll  # noqa: E402

PHOTOS = ["astronaut", "coffee", "chelsea", "rocket", "immunohistochemistry", "hubble_deep_field", "retina"]
BOX = (320, 240)


def get(base: str, target: str, accept: str) -> tuple[int, dict, bytes]:
    u = urlsplit(base)
    conn = http.client.HTTPConnection(u.hostname, u.port, timeout=120)
    try:
        conn.request("GET", target, headers={"Accept": accept})
        r = conn.getresponse()
        return r.status, {k.lower(): v for k, v in r.getheaders()}, r.read()
    finally:
        conn.close()


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def decode(data: bytes, folder: Path, name: str) -> np.ndarray:
    src, png = folder / name, folder / (name + ".png")
    src.write_bytes(data)
    subprocess.run(["vips", "copy", str(src), str(png)], check=True, capture_output=True)
    return skimage.io.imread(png)[..., :3]


def reference(original: Path, out: Path) -> np.ndarray:
    """The same crop of the same picture, resized by libvips and kept lossless."""
    subprocess.run(["vipsthumbnail", str(original), "-s", f"{BOX[0]}x{BOX[1]}", "-m", "centre", "-c", "-o", str(out)],
                   check=True, capture_output=True)
    return skimage.io.imread(out)[..., :3]


def thumbnails_of_real_pictures(tmp: Path) -> dict:
    pictures = tmp / "pictures"
    pictures.mkdir()
    # The demo origin's pool, painted by a server started once.
    demo = conftest.Server(page_size=30, demo_items=30, pool=None)
    pool = Path(demo.data) / "demo-origin" / "pool"
    for f in sorted(pool.iterdir()):
        if f.suffix in (".jpeg", ".png", ".webp"):
            shutil.copy(f, pictures / ("demo-" + f.name))
    demo.stop()
    for name in PHOTOS:
        skimage.io.imsave(pictures / f"photo-{name}.png", getattr(skimage.data, name)(), check_contrast=False)

    server = conftest.Server(page_size=30, demo_items=0, pool=None, extra_args=("--source", str(pictures)))
    try:
        db = sqlite3.connect(Path(server.data) / "feed.sqlite")
        items = [(i, urlsplit(u).path) for i, u in db.execute("SELECT id, imageURL FROM item ORDER BY id")]
        pid = server.proc.pid
        # Every original read once (1x JPEG), so the two passes below pay the same.
        for item_id, _ in items:
            get(server.url, f"/thumbs/{item_id}/1x", "image/jpeg")
        made = {}
        for fmt in ("webp", "avif"):
            before = cpu_seconds(pid)
            for item_id, _ in items:
                status, headers, body = get(server.url, f"/thumbs/{item_id}/2x", f"image/{fmt}")
                assert status == 200 and headers["content-type"] == f"image/{fmt}", (item_id, fmt, status, headers)
                made[(item_id, fmt)] = body
            made[fmt] = (cpu_seconds(pid) - before) / len(items)
    finally:
        server.stop()

    rows = []
    for item_id, path in items:
        ref = reference(Path(path), tmp / f"{item_id}-ref.png")
        row = {"picture": Path(path).name, "id": item_id}
        for fmt in ("webp", "avif"):
            body = made[(item_id, fmt)]
            row[fmt] = {"bytes": len(body),
                        "ssim": structural_similarity(ref, decode(body, tmp, f"{item_id}.{fmt}"), channel_axis=2, data_range=255)}
        rows.append(row)
    return {"rows": rows, "cpu_ms": {fmt: made[fmt] * 1000 for fmt in ("webp", "avif")}}


def first_screen_bytes(browser, base: str, avif: bool) -> dict:
    """A phone opens the feed; the thumbnails on its first screen, and their bytes on the wire."""
    screen = warm_scroll.PROFILES["phone"]
    ctx = browser.new_context(**{k: v for k, v in screen.items() if k not in ("network", "cpu_slowdown")})
    try:
        page = ctx.new_page()
        if not avif:
            # Today's client: the same browser, without AVIF in its Accept.
            page.route("**/thumbs/**", lambda route: route.continue_(headers={
                **route.request.headers, "accept": "image/webp,image/apng,image/*,*/*;q=0.8"}))
        page.goto(base + "/", wait_until="load")
        page.wait_for_timeout(500)
        shown = page.evaluate("""() => [...document.querySelectorAll('.thumb img')]
            .filter(i => { const r = i.getBoundingClientRect(); return r.top < innerHeight && r.bottom > 0 })
            .map(i => new URL(i.currentSrc).pathname)""")
        sizes = {}
        for e in page.evaluate("""() => performance.getEntriesByType('resource').filter(e => e.name.includes('/thumbs/'))
                .map(e => ({ path: new URL(e.name).pathname, size: e.encodedBodySize }))"""):
            sizes[e["path"]] = e["size"]
        return {"thumbnails": shown, "bytes": sum(sizes.get(p, 0) for p in shown)}
    finally:
        ctx.close()


def idle(server, quiet: float = 2.0, limit: float = 120) -> None:
    """Until no pre-warm job and no thumbnail job has run for `quiet` seconds."""
    token = Path(server.data, "admin-token").read_text().strip()
    u = urlsplit(server.url)
    calm_since, start = None, time.monotonic()
    while time.monotonic() - start < limit:
        conn = http.client.HTTPConnection(u.hostname, u.port, timeout=30)
        conn.request("GET", "/admin/cache", headers={"Authorization": f"Bearer {token}"})
        stats = json.loads(conn.getresponse().read())
        conn.close()
        busy = stats["in_flight"] + stats["prewarm"]["queued"] + stats["prewarm"]["running"]
        if busy:
            calm_since = None
        elif calm_since is None:
            calm_since = time.monotonic()
        elif time.monotonic() - calm_since >= quiet:
            return
        time.sleep(0.2)


def phone_first_screen() -> dict:
    from playwright.sync_api import sync_playwright

    server = conftest.Server(page_size=30, demo_items=1000, prewarm=2, pool=None)
    try:
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=conftest.CHROMIUM)
            try:
                first = first_screen_bytes(browser, server.url, avif=True)
                # Pre-warm and the first reader's AVIF done.
                idle(server)
                today = first_screen_bytes(browser, server.url, avif=False)
                with_avif = first_screen_bytes(browser, server.url, avif=True)
            finally:
                browser.close()
    finally:
        server.stop()
    return {"first_visit": first, "webp": today, "avif": with_avif}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--json", help="also write the measurements to this file")
    args = ap.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="warmfeed-bench-avif-"))
    try:
        real = thumbnails_of_real_pictures(tmp)
        phone = phone_first_screen()
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    if args.json:
        Path(args.json).write_text(json.dumps({"real": real, "phone": phone}, indent=1))

    rows = real["rows"]
    print(f"\n2x thumbnails ({BOX[0]}x{BOX[1]}) made by the server, WebP (Q75) against AVIF (4:4:4, effort 3, "
          f"its quality chosen per picture by the server to reach the WebP's SSIM); "
          f"SSIM against a lossless rendering of the same crop\n")
    print("| picture | WebP bytes | WebP SSIM | AVIF bytes | AVIF SSIM | bytes AVIF/WebP | SSIM AVIF - WebP |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for r in rows:
        w, a = r["webp"], r["avif"]
        print(f"| {r['picture']} | {w['bytes']} | {w['ssim']:.4f} | {a['bytes']} | {a['ssim']:.4f} | "
              f"{a['bytes'] / w['bytes']:.2f} | {a['ssim'] - w['ssim']:+.4f} |")
    for label, group in (("demo pictures", [r for r in rows if r["picture"].startswith("demo-")]),
                         ("photographs", [r for r in rows if r["picture"].startswith("photo-")]), ("all", rows)):
        wb, ab = sum(r["webp"]["bytes"] for r in group), sum(r["avif"]["bytes"] for r in group)
        ws, as_ = statistics.mean(r["webp"]["ssim"] for r in group), statistics.mean(r["avif"]["ssim"] for r in group)
        below = sum(r["avif"]["ssim"] < r["webp"]["ssim"] for r in group)
        bigger = sum(r["avif"]["bytes"] >= r["webp"]["bytes"] for r in group)
        print(f"\n{label} ({len(group)}): AVIF is {ab / wb:.2f}x WebP's bytes ({ab} vs {wb}); mean SSIM "
              f"{as_:.4f} vs {ws:.4f}; AVIF's SSIM below WebP's on {below} of {len(group)}; "
              f"AVIF not smaller than its WebP on {bigger}")
    print(f"\nserver CPU per 2x thumbnail (original read, decoded, resized, encoded): "
          f"WebP {real['cpu_ms']['webp']:.1f} ms, AVIF {real['cpu_ms']['avif']:.1f} ms")
    f, w, a = phone["first_visit"], phone["webp"], phone["avif"]
    print(f"\nA phone's first screen ({len(w['thumbnails'])} thumbnails at 2x): {w['bytes']} bytes in WebP, "
          f"{a['bytes']} in AVIF ({a['bytes'] / max(1, w['bytes']):.2f}x); the fresh server's first visitor: {f['bytes']} bytes")
    return 0


if __name__ == "__main__":
    sys.exit(main())
