#!/usr/bin/env python3
"""Helpers for bench/cold.sh (standard library only).

  originals DB POOL FIRST LAST OUT    each demo item's id and original file (its pool picture, linked into OUT)
  point DB BASE MAPFILE               point those items' imageURL at BASE/FILE (the shared origin)
  load BASE URLFILE CONNECTIONS OUT   ask for every target in URLFILE once, CONNECTIONS at a time
  cpu PID                             user+system CPU seconds of PID and its live descendants
  check-webp FOLDER W H               every *.webp in FOLDER is a W x H WebP (vipsthumbnail's output)
  targets MAPFILE SEED ORIGIN WF TH   both servers' request targets for MAPFILE's items, in one shuffled order
"""
import http.client
import json
import os
import random
import sqlite3
import statistics
import sys
import threading
import time
import urllib.parse

FORMATS = {"jpg": "jpeg", "jpeg": "jpeg", "png": "png", "webp": "webp"}


# Pictures per format in the demo origin's pool (Sources/DemoOrigin/DemoPool.swift).
POOL_VARIANTS = {"jpeg": 2, "png": 1, "webp": 1}


def originals(db, pool, first, last, out):
    """Demo item n's image is `demo:<n>.<ext>`; the demo origin serves it from
    its pool's `<w>x<h>-<n mod variants>.<format>`, linked here as `<n>-<w>x<h>.<format>`."""
    con = sqlite3.connect(db)
    rows = con.execute(
        "SELECT id, imageURL, imageWidth, imageHeight FROM item WHERE id BETWEEN ? AND ? ORDER BY id",
        (int(first), int(last))).fetchall()
    if len(rows) != int(last) - int(first) + 1:
        sys.exit(f"expected items {first}..{last}, found {len(rows)}")
    for item_id, url, width, height in rows:
        number, ext = url[len("demo:"):].split(".")
        fmt = FORMATS[ext]
        name = f"{number}-{width}x{height}.{fmt}"
        picture = os.path.join(pool, f"{width}x{height}-{int(number) % POOL_VARIANTS[fmt]}.{fmt}")
        if not os.path.isfile(picture):
            sys.exit(f"item {item_id}: its picture {picture} is missing")
        os.link(picture, os.path.join(out, name))
        print(item_id, name)


def point(db, base, mapfile):
    con = sqlite3.connect(db)
    with open(mapfile) as f:
        pairs = [line.split() for line in f if line.strip()]
    con.executemany("UPDATE item SET imageURL = ? WHERE id = ?",
                    [(f"{base}/{name}", int(item_id)) for item_id, name in pairs])
    con.commit()
    changed = con.execute("SELECT count(*) FROM item WHERE imageURL LIKE ?", (base + "/%",)).fetchone()[0]
    if changed != len(pairs):
        sys.exit(f"pointed {changed} items at {base}, expected {len(pairs)}")
    con.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    con.close()


def webp_size(body):
    """(width, height) of a WebP file, or None when it is not one."""
    if len(body) < 30 or body[:4] != b"RIFF" or body[8:12] != b"WEBP":
        return None
    chunk = body[12:16]
    if chunk == b"VP8 ":
        return (int.from_bytes(body[26:28], "little") & 0x3FFF, int.from_bytes(body[28:30], "little") & 0x3FFF)
    if chunk == b"VP8L":
        bits = int.from_bytes(body[21:25], "little")
        return ((bits & 0x3FFF) + 1, ((bits >> 14) & 0x3FFF) + 1)
    if chunk == b"VP8X":
        return (int.from_bytes(body[24:27], "little") + 1, int.from_bytes(body[27:30], "little") + 1)
    return None


def load(base, urlfile, connections, out):
    """Every target once, over `connections` keep-alive connections; a result line per target."""
    with open(urlfile) as f:
        targets = [line.strip() for line in f if line.strip()]
    parsed = urllib.parse.urlsplit(base)
    connections = int(connections)
    lock = threading.Lock()
    next_index = [0]
    results = [None] * len(targets)
    start_gate = threading.Barrier(connections + 1)

    def worker():
        conn = http.client.HTTPConnection(parsed.hostname, parsed.port, timeout=120)
        start_gate.wait()
        while True:
            with lock:
                index = next_index[0]
                next_index[0] += 1
            if index >= len(targets):
                break
            began = time.monotonic()
            try:
                conn.request("GET", targets[index], headers={"Accept": "image/webp,*/*"})
                response = conn.getresponse()
                body = response.read()
                results[index] = {
                    "status": response.status,
                    "type": response.getheader("Content-Type", ""),
                    "placeholder": response.getheader("X-Warmfeed-Placeholder") is not None,
                    "size": webp_size(body),
                    "bytes": len(body),
                    "seconds": time.monotonic() - began,
                    "done": time.monotonic(),
                }
                if response.getheader("Connection", "").lower() == "close":
                    conn.close()
                    conn = http.client.HTTPConnection(parsed.hostname, parsed.port, timeout=120)
            except Exception as error:  # counted as an error, the run goes on
                results[index] = {"error": f"{type(error).__name__}: {error}", "seconds": time.monotonic() - began,
                                  "done": time.monotonic()}
                conn.close()
                conn = http.client.HTTPConnection(parsed.hostname, parsed.port, timeout=120)
        conn.close()

    threads = [threading.Thread(target=worker) for _ in range(connections)]
    for thread in threads:
        thread.start()
    start_gate.wait()
    started = time.monotonic()
    for thread in threads:
        thread.join()
    elapsed = max(r["done"] for r in results) - started
    good = [r for r in results if "error" not in r and r["status"] == 200 and r["type"] == "image/webp"
            and not r["placeholder"] and r["size"] == (160, 120)]
    latencies = sorted(r["seconds"] for r in results)
    summary = {
        "targets": len(targets),
        "good": len(good),
        "placeholders": sum(1 for r in results if r.get("placeholder")),
        "errors": sum(1 for r in results if "error" in r),
        "non_200": sum(1 for r in results if "error" not in r and r["status"] != 200),
        "not_webp": sum(1 for r in results if "error" not in r and r["type"] != "image/webp"),
        "wrong_size": sum(1 for r in results if "error" not in r and r["type"] == "image/webp" and r["size"] != (160, 120)),
        "elapsed": elapsed,
        "per_second": len(good) / elapsed,
        "p50_ms": 1000 * latencies[len(latencies) // 2],
        "p99_ms": 1000 * latencies[min(len(latencies) - 1, int(len(latencies) * 0.99))],
        "mean_bytes": statistics.mean(r["bytes"] for r in good) if good else 0,
        "first_errors": [r["error"] for r in results if "error" in r][:3],
    }
    with open(out, "w") as f:
        json.dump(summary, f)
    print(json.dumps(summary))


def cpu(pid):
    """utime + stime of `pid` and every live descendant, in seconds."""
    children = {}
    stats = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        # After the command: state ppid ... utime(12th) stime(13th) counting from state as 1st.
        ppid, utime, stime = int(fields[1]), int(fields[11]), int(fields[12])
        stats[int(entry)] = utime + stime
        children.setdefault(ppid, []).append(int(entry))
    total, todo = 0, [int(pid)]
    while todo:
        p = todo.pop()
        total += stats.get(p, 0)
        todo.extend(children.get(p, []))
    print(f"{total / os.sysconf('SC_CLK_TCK'):.2f}")


def check_webp(folder, width, height):
    names = [n for n in os.listdir(folder) if n.endswith(".webp")]
    bad = []
    for name in names:
        with open(os.path.join(folder, name), "rb") as f:
            if webp_size(f.read(64)) != (int(width), int(height)):
                bad.append(name)
    if bad:
        sys.exit(f"{len(bad)} of {len(names)} vipsthumbnail outputs are not {width}x{height} WebP: {bad[:3]}")
    print(len(names))


def targets(mapfile, seed, origin, wf_out, th_out):
    """Warmfeed's /thumbs/ID/1x and thumbor's unsafe URL of the same original, in the same order."""
    with open(mapfile) as f:
        pairs = [line.split() for line in f if line.strip()]
    random.Random(int(seed)).shuffle(pairs)
    with open(wf_out, "w") as wf, open(th_out, "w") as th:
        for item_id, name in pairs:
            wf.write(f"/thumbs/{item_id}/1x\n")
            th.write(f"/unsafe/160x120/filters:format(webp)/{origin}/originals/{name}\n")


if __name__ == "__main__":
    command, args = sys.argv[1], sys.argv[2:]
    {"originals": originals, "point": point, "load": load, "cpu": cpu, "check-webp": check_webp,
     "targets": targets}[command](*args)
