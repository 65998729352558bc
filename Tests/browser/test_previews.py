"""Issue 11, part 4: no box is ever empty once its picture has been seen.

Page 300's thumbnails are made once; the server stops; its disk tier is
removed (and its memory went with the process); a new server on the same data
folder serves page 300 again. Every thumbnail box carries its picture's
preview (two colours kept with the item in the store) from the first paint,
with thumbnails held back entirely, and the preview's colours are close to
the thumbnail that replaces it.
"""

from __future__ import annotations

import os
import re
import shutil
import tempfile
import urllib.request

from conftest import Server, new_page

PAGE_SIZE = 30
ITEMS = 9100
# Each preview colour is rounded to a 216-colour palette (within 26 a channel);
# a gradient of the halves' means has the picture's mean colour.
TOLERANCE = 40


def get(url: str, accept: str = "text/html") -> bytes:
    with urllib.request.urlopen(urllib.request.Request(url, headers={"Accept": accept}), timeout=60) as r:
        assert r.status == 200
        return r.read()


MEASURE = """async () => {
  const out = []
  for (const box of document.querySelectorAll('.thumb')) {
    const style = getComputedStyle(box)
    const img = box.querySelector('img')
    out.push({ id: box.closest('article').id, cls: box.className, background: style.backgroundImage,
               a: style.getPropertyValue('--a').trim(), b: style.getPropertyValue('--b').trim(),
               src: img.getAttribute('src') || img.dataset.src })
  }
  return out
}"""

MEAN = """async src => {
  const img = new Image()
  img.src = src
  await img.decode()
  const c = document.createElement('canvas')
  c.width = img.naturalWidth; c.height = img.naturalHeight
  const g = c.getContext('2d')
  g.drawImage(img, 0, 0)
  const d = g.getImageData(0, 0, c.width, c.height).data
  const s = [0, 0, 0]
  for (let i = 0; i < d.length; i += 4) { s[0] += d[i]; s[1] += d[i + 1]; s[2] += d[i + 2] }
  const n = d.length / 4
  return s.map(x => x / n)
}"""


def hex_colour(text: str) -> tuple[int, int, int]:
    m = re.fullmatch(r"#([0-9a-f])([0-9a-f])([0-9a-f])", text)
    assert m, f"not a palette colour: {text!r}"
    return tuple(int(x, 16) * 17 for x in m.groups())


def test_previews_outlive_the_thumbnail_caches(browser):
    data = tempfile.mkdtemp(prefix="warmfeed-previews-")
    try:
        first = Server(page_size=PAGE_SIZE, demo_items=ITEMS, data=data)
        try:
            html = get(first.url + "/?page=300").decode()
            ids = re.findall(r'<article class="row" id="i(\d+)"', html)
            assert len(ids) == PAGE_SIZE
            for item in ids:
                get(f"{first.url}/thumbs/{item}/1x", accept="image/webp,*/*")
        finally:
            problem = first.stop()
        assert problem is None, problem
        shutil.rmtree(os.path.join(data, "thumbs"))

        second = Server(page_size=PAGE_SIZE, demo_items=ITEMS, data=data)
        try:
            ctx = second_context = browser.new_context(viewport={"width": 1000, "height": 800})
            try:
                page = new_page(ctx)
                # No thumbnail reaches the page: what it shows is the preview alone.
                page.route("**/thumbs/**", lambda route: route.abort())
                page.goto(second.url + "/?page=300", wait_until="domcontentloaded")
                boxes = page.evaluate(MEASURE)
                assert len(boxes) == PAGE_SIZE
                missing = [b for b in boxes if "linear-gradient" not in b["background"]]
                assert not missing, f"{len(missing)} boxes without a preview at first paint: {missing[:3]}"
                page.unroute("**/thumbs/**")
                far, distances = [], []
                for box in boxes:
                    mean = page.evaluate(MEAN, box["src"])
                    a, b = hex_colour(box["a"]), hex_colour(box["b"])
                    preview = [(x + y) / 2 for x, y in zip(a, b)]
                    distance = max(abs(p - m) for p, m in zip(preview, mean))
                    distances.append(distance)
                    if distance > TOLERANCE:
                        far.append((box["id"], [round(x) for x in mean], preview, round(distance)))
                print(f"{len(boxes)} previews; distance to the thumbnail's mean colour (largest channel "
                      f"difference): median {sorted(distances)[len(distances) // 2]:.0f}, largest {max(distances):.0f}")
                assert not far, f"previews far from their thumbnails' colours: {far[:5]}"
            finally:
                second_context.close()
        finally:
            problem = second.stop()
        assert problem is None, problem
    finally:
        shutil.rmtree(data, ignore_errors=True)
