#!/usr/bin/env python3
"""A crowd of cold thumbnail waits against probes from another address (issue 34).

A feed of ITEMS items whose pictures sit on a slow loopback origin (each answer
DELAY seconds late, on 127.0.0.9, allowed with --allow-origin). CROWD connections
from six addresses (127.0.0.2-7) each ask for a different cold 2x thumbnail
(/thumbs/ID/2x) and hold on for its answer; meanwhile PROBES probes from a
seventh address (127.0.0.8), spaced over the crowd's life, each open a new
connection and ask for the feed's first page with a 1 s timeout.

Prints the probes answered 200 within 1 s (the goal is 100%), their p50/p99,
how the crowd was answered (images, see-through "late" boxes, placeholders,
errors), the server's counts of waits shed and late, and its peak RSS.

    .venv/bin/python bench/crowd.py --bin .build/release/warmfeed
    .venv/bin/python bench/crowd.py --bin ... --crowd 4600 --probes 40 --delay 3
"""
import argparse
import asyncio
import json
import os
import resource
import socket
import subprocess
import sys
import tempfile
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TOKEN = "bench-token-of-thirty-two-characters"
CROWD_ADDRESSES = [f"127.0.0.{n}" for n in range(2, 8)]
PROBE_ADDRESS = "127.0.0.8"
ORIGIN_ADDRESS = "127.0.0.9"


def picture(path: Path) -> bytes:
    subprocess.run(["vips", "gaussnoise", str(path), "320", "240"], check=True)
    return path.read_bytes()


class SlowOrigin(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 1024


def origin_handler(body: bytes, delay: float):
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_GET(self):  # noqa: N802
            time.sleep(delay)
            self.send_response(200)
            self.send_header("Content-Type", "image/jpeg")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args):
            pass
    return Handler


def free_port(host: str) -> int:
    with socket.socket() as s:
        s.bind((host, 0))
        return s.getsockname()[1]


def peak_rss(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) * 1024
    return 0


async def ask(host: str, port: int, path: str, source: str, timeout: float, headers: str = "") -> tuple[int, dict, float]:
    start = time.monotonic()
    reader, writer = await asyncio.wait_for(asyncio.open_connection(host, port, local_addr=(source, 0)), timeout)
    try:
        writer.write(f"GET {path} HTTP/1.1\r\nHost: {host}\r\n{headers}\r\n".encode())
        await writer.drain()
        head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), timeout - (time.monotonic() - start))
        lines = head.decode("latin-1").split("\r\n")
        status = int(lines[0].split()[1])
        fields = {k.lower(): v.strip() for k, _, v in (line.partition(":") for line in lines[1:] if line)}
        length = int(fields.get("content-length", "0"))
        if length:
            await asyncio.wait_for(reader.readexactly(length), max(0.01, timeout - (time.monotonic() - start)))
        return status, fields, time.monotonic() - start
    finally:
        writer.close()


PROBER = r"""
import json, socket, sys, time
port, source, count, spacing = int(sys.argv[1]), sys.argv[2], int(sys.argv[3]), float(sys.argv[4])
seconds, failures = [], {}
began = time.monotonic()
for _ in range(count):
    start = time.monotonic()
    phase = "connect"
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=1.0, source_address=(source, 0)) as sock:
            phase = "answer"
            sock.settimeout(max(0.01, 1.0 - (time.monotonic() - start)))
            sock.sendall(b"GET / HTTP/1.1\r\nHost: probe\r\nConnection: close\r\n\r\n")
            data = b""
            while True:
                sock.settimeout(max(0.01, 1.0 - (time.monotonic() - start)))
                chunk = sock.recv(65536)
                if not chunk:
                    break
                data += chunk
        status = int(data.split(b" ", 2)[1]) if data.startswith(b"HTTP/1.1 ") else 0
        elapsed = time.monotonic() - start
        if status == 200 and elapsed <= 1.0:
            seconds.append(elapsed)
        else:
            seconds.append(None)
            what = f"status {status}" if status != 200 else "200 after 1 s"
            failures[what] = failures.get(what, 0) + 1
    except OSError as error:
        seconds.append(None)
        what = f"{type(error).__name__} at {phase}, {start - began:.1f} s in"
        failures[what] = failures.get(what, 0) + 1
    time.sleep(max(0.0, spacing - (time.monotonic() - start)))
print(json.dumps({"seconds": seconds, "failures": failures}))
"""


async def run(args, port: int, server_pid: int) -> dict:
    crowd_answers: dict[str, int] = {}
    loop = asyncio.get_running_loop()

    async def one(index: int):
        source = CROWD_ADDRESSES[index % len(CROWD_ADDRESSES)]
        try:
            status, fields, _ = await ask("127.0.0.1", port, f"/thumbs/{index + 1}/2x", source, 120,
                                          "Accept: image/avif,image/webp,*/*\r\nSec-Fetch-Dest: image\r\n")
            kind = fields.get("x-warmfeed-placeholder")
            what = "late" if kind == "late" else "placeholder" if kind else f"image ({fields.get('content-type')})" if status == 200 else f"status {status}"
        except (OSError, asyncio.TimeoutError, asyncio.IncompleteReadError, ValueError) as error:
            what = f"error ({type(error).__name__})"
        crowd_answers[what] = crowd_answers.get(what, 0) + 1

    # The probes run in a process of their own, with blocking sockets: in this
    # event loop, busy with the crowd's thousands of sockets, a probe's time
    # would be the load generator's as much as the server's.
    crowd = [loop.create_task(one(i)) for i in range(args.crowd)]
    # Probes start once the crowd is connecting and are spread over DELAY * 3 seconds.
    await asyncio.sleep(0.5)
    spacing = max(0.05, args.delay * 3 / args.probes)
    prober = await asyncio.create_subprocess_exec(
        sys.executable, "-c", PROBER, str(port), PROBE_ADDRESS, str(args.probes), str(spacing), stdout=asyncio.subprocess.PIPE)
    out, _ = await prober.communicate()
    report = json.loads(out)
    probes: list[float | None] = report["seconds"]
    probe_failures: dict[str, int] = report["failures"]
    await asyncio.gather(*crowd)
    answered = sorted(p for p in probes if p is not None)
    return {"probes": len(probes), "within_1s": len(answered), "answers": crowd_answers, "probe_failures": probe_failures,
            "p50_ms": 1000 * answered[len(answered) // 2] if answered else None,
            "p99_ms": 1000 * answered[min(len(answered) - 1, int(len(answered) * 0.99))] if answered else None,
            "rss_peak_mb": peak_rss(server_pid) / 1048576}


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--bin", default=str(ROOT / ".build/release/warmfeed"))
    parser.add_argument("--crowd", type=int, default=4600)
    parser.add_argument("--probes", type=int, default=40)
    parser.add_argument("--delay", type=float, default=3.0)
    parser.add_argument("--extra", default="", help="more `warmfeed serve` arguments, space-separated")
    args = parser.parse_args()
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, 65536), hard))

    with tempfile.TemporaryDirectory(prefix="warmfeed-crowd-") as tmp:
        tmp = Path(tmp)
        body = picture(tmp / "p.jpg")
        origin = SlowOrigin((ORIGIN_ADDRESS, free_port(ORIGIN_ADDRESS)), origin_handler(body, args.delay))
        threading.Thread(target=origin.serve_forever, daemon=True).start()
        base = f"http://{ORIGIN_ADDRESS}:{origin.server_address[1]}"
        items = [{"id": f"i{n}", "title": f"Item {n}", "content_text": "", "date_published": f"2026-01-01T00:00:{n % 60:02d}Z",
                  "image": f"{base}/p/{n}.jpg"} for n in range(args.crowd + 100)]
        feed = tmp / "feed.json"
        feed.write_text(json.dumps({"version": "https://jsonfeed.org/version/1.1", "title": "crowd", "items": items}))
        port = free_port("127.0.0.1")
        server = subprocess.Popen(
            [args.bin, "serve", "--port", str(port), "--data", str(tmp / "data"), "--source", str(feed), "--prewarm", "0",
             "--allow-origin", ORIGIN_ADDRESS, "--public", str(ROOT / "Public"), "--templates", str(ROOT / "Templates"),
             *args.extra.split()],
            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, env={**os.environ, "WARMFEED_ADMIN_TOKEN": TOKEN})
        try:
            for line in server.stdout:
                if line.startswith("Warmfeed is serving"):
                    break
            result = asyncio.run(run(args, port, server.pid))
            stats = json.loads(subprocess.run(["curl", "-s", "-H", f"Authorization: Bearer {TOKEN}", f"http://127.0.0.1:{port}/admin/cache"],
                                              capture_output=True, text=True).stdout)
            connections = stats["connections"]
        finally:
            server.terminate()
            server.wait(timeout=30)
            origin.shutdown()
    share = 100 * result["within_1s"] / max(1, result["probes"])
    print(f"probes from {PROBE_ADDRESS} answered 200 within 1 s: {result['within_1s']}/{result['probes']} ({share:.1f}%), "
          f"p50 {result['p50_ms'] or 0:.1f} ms, p99 {result['p99_ms'] or 0:.1f} ms"
          + (f"; not answered: {result['probe_failures']}" if result["probe_failures"] else ""))
    print(f"crowd of {args.crowd} cold 2x waits from {len(CROWD_ADDRESSES)} addresses, origin {args.delay:g} s late: "
          + ", ".join(f"{v} {k}" for k, v in sorted(result["answers"].items(), key=lambda kv: -kv[1])))
    print(f"server: waits shed {connections.get('waits_shed')}, late {connections.get('waits_late')}, "
          f"connections made room {connections.get('made_room')}, refused {connections.get('refused')}; RSS peak {result['rss_peak_mb']:.0f} MB")
    sys.exit(0 if share == 100 else 1)


if __name__ == "__main__":
    main()
