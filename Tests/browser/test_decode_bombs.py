"""Issue 34, part 3: sixteen decode bombs at once, and the server stays
within what the operator set.

A folder of sixteen pictures of 48 megapixels, a few hundred KB each, whose
decoders hold the whole picture whatever size the thumbnail is: 16-bit
Adam7-interlaced PNGs (288 MB of pixels in libpng), progressive JPEGs (144 MB
of coefficients in libjpeg) and GIFs (RGBA frames in libnsgif and libvips).
Their sixteen 2x thumbnails are asked for at once. The server's peak resident
size (VmHWM: the server is a process of its own) must stay within its
budgets plus 96 MB; before the decode budget, two decodes at once (one a
core) took it past 600 MB. What the budget can hold (a progressive JPEG) is
made, one at a time; what it never can (the PNGs, the GIFs) gets its
placeholder without a pixel decoded, and is counted in /admin/cache.
"""

from __future__ import annotations

import http.client
import json
import os
import re
import shutil
import struct
import subprocess
import tempfile
import zlib
from concurrent.futures import ThreadPoolExecutor
from urllib.parse import urlsplit

import pytest

from conftest import serving

TOKEN = "decode-bombs-admin-token-0123456789abcdef"
WIDTH, HEIGHT = 8000, 6000
# The budgets the server runs with, in MiB: those of the soak, and a
# decode budget that holds one progressive JPEG of 48 megapixels (about 149 MiB).
BUDGETS = {"--cache-mb": 16, "--page-cache-mb": 8, "--originals-mb": 32, "--disk-index-mb": 16, "--decode-mb": 160}


def interlaced_png(path: str) -> None:
    """A black 16-bit RGB PNG, Adam7-interlaced, written with zlib by hand: about 280 KB."""
    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)

    compressor = zlib.compressobj(9)
    data = []
    for x, y, dx, dy in [(0, 0, 8, 8), (4, 0, 8, 8), (0, 4, 4, 8), (2, 0, 4, 4), (0, 2, 2, 4), (1, 0, 2, 2), (0, 1, 1, 2)]:
        columns, rows = (WIDTH - x + dx - 1) // dx, (HEIGHT - y + dy - 1) // dy
        row = bytes(1 + columns * 6)  # filter byte 0, then black pixels of three 16-bit samples
        data += [compressor.compress(row) for _ in range(rows)]
    data.append(compressor.flush())
    header = struct.pack(">IIBBBBB", WIDTH, HEIGHT, 16, 2, 0, 0, 1)
    with open(path, "wb") as f:
        f.write(b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", b"".join(data)) + chunk(b"IEND", b""))


def vips(*args: str) -> None:
    """libvips' command line (Debian's libvips-tools)."""
    if shutil.which("vips") is None:
        pytest.skip("the vips command (libvips-tools) is not installed")
    subprocess.run(["vips", *args], check=True, timeout=300, capture_output=True)


@pytest.fixture(scope="module")
def bombs():
    folder = tempfile.mkdtemp(prefix="warmfeed-bombs-")
    made = os.path.join(folder, "made")
    os.makedirs(made)
    interlaced_png(os.path.join(made, "png.png"))
    vips("black", os.path.join(made, "jpeg.jpg[Q=10,interlace]"), str(WIDTH), str(HEIGHT), "--bands", "3")
    vips("black", os.path.join(made, "gif.gif"), str(WIDTH), str(HEIGHT))
    pictures = os.path.join(folder, "pictures")
    os.makedirs(pictures)
    for i in range(16):
        kind = ["png", "jpeg", "gif"][i % 3]
        shutil.copy(os.path.join(made, f"{kind}.{'jpg' if kind == 'jpeg' else kind}"),
                    os.path.join(pictures, f"bomb_{i:02d}.{'jpg' if kind == 'jpeg' else kind}"))
    sizes = {name: os.path.getsize(os.path.join(made, name)) for name in os.listdir(made)}
    assert all(size < 800_000 for size in sizes.values()), sizes
    yield pictures
    shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture
def server(bombs):
    args = [str(part) for option in BUDGETS.items() for part in option]
    yield from serving(page_size=20, demo_items=0, prewarm=0, extra_args=("--source", bombs, *args),
                       env={"WARMFEED_ADMIN_TOKEN": TOKEN})


def get(server, path: str, headers: dict[str, str] | None = None) -> tuple[int, dict[str, str], bytes]:
    u = urlsplit(server.url)
    conn = http.client.HTTPConnection(u.hostname, u.port, timeout=120)
    conn.request("GET", path, headers=headers or {})
    r = conn.getresponse()
    body = r.read()
    conn.close()
    return r.status, {k.lower(): v for k, v in r.getheaders()}, body


def peak_resident_mb(pid: int) -> float:
    """The process's peak resident size so far (VmHWM), in MiB."""
    with open(f"/proc/{pid}/status") as f:
        kb = next(int(line.split()[1]) for line in f if line.startswith("VmHWM:"))
    return kb / 1024


def test_sixteen_bombs_at_once_stay_within_the_budgets(server):
    status, _, page = get(server, "/")
    assert status == 200
    # The addresses the page gives: each picture's item id and tag.
    items = sorted(set(i.decode() for i in re.findall(rb"/thumbs/(\d+-[0-9a-f]{8})/", page)))
    assert len(items) == 16, "one row per picture"
    before = peak_resident_mb(server.proc.pid)
    with ThreadPoolExecutor(max_workers=16) as pool:
        answers = list(pool.map(
            lambda item: get(server, f"/thumbs/{item}/2x", {"Accept": "image/webp,*/*"}), items))
    peak = peak_resident_mb(server.proc.pid)
    assert all(status == 200 for status, _, _ in answers), [a[0] for a in answers]
    made = [headers for _, headers, _ in answers if "x-warmfeed-placeholder" not in headers]
    assert len(made) == 5, "the progressive JPEGs fit the decode budget and are made"
    assert all(headers["content-type"] == "image/webp" for headers in made)

    budgets = sum(BUDGETS.values())
    print(f"VmHWM {before:.0f} MiB before the thumbnails, {peak:.0f} MiB after; budgets {budgets} MiB")
    assert peak <= budgets + 96, f"peak resident {peak:.0f} MiB over the budgets ({budgets} MiB) + 96"

    _, _, body = get(server, "/admin/cache", {"Authorization": f"Bearer {TOKEN}"})
    decode = json.loads(body)["decode"]
    assert decode["budget_bytes"] == BUDGETS["--decode-mb"] << 20
    assert decode["refused"] == 11, "the interlaced PNGs and the GIFs never fit"
    assert decode["admitted"] == 5 and decode["waited"] >= 1, decode
    assert decode["peak_bytes"] <= decode["budget_bytes"] and decode["in_use_bytes"] == 0
    # A refused picture is remembered as a failed image: asked again, it is not decoded again.
    refused = next(item for item, (_, headers, _) in zip(items, answers) if "x-warmfeed-placeholder" in headers)
    status, headers, _ = get(server, f"/thumbs/{refused}/2x", {"Accept": "image/webp,*/*"})
    assert status == 200 and "x-warmfeed-placeholder" in headers
    _, _, body = get(server, "/admin/cache", {"Authorization": f"Bearer {TOKEN}"})
    assert json.loads(body)["decode"]["refused"] == 11
