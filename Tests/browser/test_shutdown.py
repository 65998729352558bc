"""SIGTERM reaches every part of `warmfeed serve`: sent while pre-warm jobs
wait on a slow origin and a refresh import is writing, the server exits 0
within 10 s, leaves no partial file in its data folder, and the store passes
SQLite's integrity check."""

from __future__ import annotations

import http.client
import json
import os
import re
import signal
import sqlite3
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from conftest import Server

ITEMS = 20000


class SlowImages(ThreadingHTTPServer):
    """An origin whose images take 3 s: pre-warm jobs are still running when the signal comes."""

    daemon_threads = True

    def __init__(self):
        self.requests = 0
        self.lock = threading.Lock()
        super().__init__(("127.0.0.1", 0), SlowImageHandler)


class SlowImageHandler(BaseHTTPRequestHandler):
    def do_GET(self):  # noqa: N802
        with self.server.lock:
            self.server.requests += 1
        time.sleep(3)
        try:
            self.send_response(404)
            self.send_header("Content-Length", "0")
            self.end_headers()
        except OSError:
            pass

    def log_message(self, *args):
        pass


def write_feed(path: str, origin: int, items: int, edition: int) -> None:
    with open(path, "w") as f:
        json.dump({"version": "https://jsonfeed.org/version/1.1", "title": f"Shutdown feed {edition}",
                   "items": [{"id": f"s{i}", "title": f"Item {i} (edition {edition})",
                              "url": f"https://shutdown.example/{i}",
                              "image": f"http://127.0.0.1:{origin}/img/{i}.jpg",
                              "date_published": f"2024-{1 + i % 12:02d}-{1 + i % 28:02d}T{i % 24:02d}:00:00Z"}
                             for i in range(items)]}, f)


def get(url: str, path: str, cookie: str | None = None) -> tuple[int, str | None]:
    host, port = url.removeprefix("http://").split(":")
    conn = http.client.HTTPConnection(host, int(port), timeout=30)
    conn.request("GET", path, headers={"Cookie": cookie} if cookie else {})
    response = conn.getresponse()
    response.read()
    conn.close()
    return response.status, response.getheader("Set-Cookie")


def wait_for(predicate, timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(0.05)
    raise AssertionError(f"timed out waiting for {what}")


def test_sigterm_while_prewarming_and_importing_exits_cleanly(tmp_path):
    origin = SlowImages()
    threading.Thread(target=origin.serve_forever, daemon=True).start()
    feed = str(tmp_path / "feed.json")
    write_feed(feed, origin.server_address[1], ITEMS, edition=1)
    server = Server(page_size=10, demo_items=0, prewarm=2,
                    # The feed's images sit on a loopback origin, which only an allowance reaches.
                    extra_args=("--source", feed, "--refresh", "1s", "--allow-origin", "127.0.0.0/8",
                                # Debug tells when a source's entries start to be read.
                                "--log-level", "debug"))
    try:
        # A reader: the first document gives the cookie, the next page puts pre-warm to work.
        status, set_cookie = get(server.url, "/")
        assert status == 200 and set_cookie
        cookie = set_cookie.split(";")[0]
        assert get(server.url, "/fragment?page=2", cookie)[0] == 200
        wait_for(lambda: origin.requests > 0, 20, "pre-warm to ask the origin")

        # A new edition of the feed: the refresher imports it again on its next tick.
        write_feed(feed, origin.server_address[1], ITEMS + 1, edition=2)
        wait_for(lambda: len(re.findall("importing the source", server.log())) >= 2, 30, "the refresh import to start")
        server.proc.send_signal(signal.SIGTERM)
        started = time.monotonic()
        server.proc.wait(timeout=10)  # raises if it takes longer
        print(f"exited {server.proc.returncode} {time.monotonic() - started:.2f} s after SIGTERM")
        assert server.proc.returncode == 0, server.log()

        partial = [os.path.join(folder, name) for folder, _, names in os.walk(server.data) for name in names
                   if name.startswith(".tmp-") or name.endswith((".part", ".download"))]
        assert partial == [], f"partial files left behind: {partial}"
        with sqlite3.connect(os.path.join(server.data, "feed.sqlite")) as db:
            assert db.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
            count = db.execute("SELECT COUNT(*) FROM item").fetchone()[0]
        # The refresh either landed whole or not at all.
        assert count in (ITEMS, ITEMS + 1), count
    finally:
        if server.proc.poll() is None:
            server.proc.kill()
        server.stop()
        origin.shutdown()


def test_sigterm_the_moment_the_address_is_printed_stops_the_server_cleanly():
    """A supervisor (or a test) that reads the address and stops the server at
    once: the address is printed only once SIGTERM is trapped, so the stop is
    a clean exit 0, never a kill by the signal's default action."""
    for _ in range(5):
        server = Server(page_size=10, demo_items=40)
        problem = server.stop()
        assert problem is None, problem
