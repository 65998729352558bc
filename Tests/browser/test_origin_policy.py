"""Issue 34: a feed's images never reach an address the operator did not
allow, not even through the proxy the environment names.

The server runs with every proxy variable libcurl reads pointing at a canary
proxy on 127.0.0.3, which `--allow-origin` allows: were the proxy used for a
feed's image, the connection to it would be admitted and the proxy would see
the request. It answers every request with the feed, so the operator's own
`--source` (an http URL, fetched where the operator said, proxies included)
proves the environment is read. The images point at a canary on 127.0.0.2 by
several spellings: neither canary sees one of them, and each is a placeholder.
"""

from __future__ import annotations

import http.client
import json
import re
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from conftest import Server

TOKEN = "origin-policy-token-of-32-characters"


class Canary(ThreadingHTTPServer):
    """An origin (or proxy) on a loopback address that counts connections and
    requests; it answers every request with `body`."""

    daemon_threads = True

    def __init__(self, host: str, body: bytes, content_type: str):
        self.connections = 0
        self.requests: list[str] = []
        self.lock = threading.Lock()
        canary = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def setup(self):
                with canary.lock:
                    canary.connections += 1
                super().setup()

            def do_GET(self):
                with canary.lock:
                    canary.requests.append(self.path)
                self.send_response(200)
                self.send_header("Content-Type", content_type)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            do_CONNECT = do_GET

            def log_message(self, *args):
                pass

        super().__init__((host, 0), Handler)
        self.port = self.server_address[1]
        threading.Thread(target=self.serve_forever, daemon=True).start()

    def stop(self):
        self.shutdown()
        self.server_close()


def get(url: str, path: str, headers: dict[str, str] | None = None) -> http.client.HTTPResponse:
    host, port = url.removeprefix("http://").split(":")
    conn = http.client.HTTPConnection(host, int(port), timeout=60)
    conn.request("GET", path, headers=headers or {})
    response = conn.getresponse()
    response.body = response.read()
    conn.close()
    return response


def test_env_proxies_carry_the_operators_source_but_never_a_feeds_image():
    target = Canary("127.0.0.2", b"\xff\xd8\xff not really a jpeg", "image/jpeg")
    spellings = [f"http://127.0.0.2:{target.port}/c.jpg", f"http://2130706433:{target.port}/c.jpg",
                 f"http://localhost:{target.port}/c.jpg", f"https://127.0.0.2:{target.port}/c.jpg"]
    feed = json.dumps({"version": "https://jsonfeed.org/version/1.1", "title": "Through a proxy",
                       "items": [{"id": f"p{i}", "title": f"Proxied {i}", "url": f"https://feed.example/{i}",
                                  "image": url, "date_published": f"2024-10-{10 + i:02d}T10:00:00Z"}
                                 for i, url in enumerate(spellings)]}).encode()
    proxy = Canary("127.0.0.3", feed, "application/feed+json")
    proxy_url = f"http://127.0.0.3:{proxy.port}"
    env = {name: proxy_url for name in ("http_proxy", "https_proxy", "HTTPS_PROXY", "all_proxy", "ALL_PROXY")}
    env.update(no_proxy="", NO_PROXY="", WARMFEED_ADMIN_TOKEN=TOKEN)
    server = Server(page_size=10, demo_items=0, prewarm=2, env=env,
                    extra_args=("--source", "http://feed.invalid/feed.json", "--allow-origin", "127.0.0.3"))
    try:
        # The operator's source came through the proxy: the environment is read.
        assert proxy.requests == ["http://feed.invalid/feed.json"], proxy.requests
        page = get(server.url, "/")
        assert page.status == 200
        ids = list(dict.fromkeys(re.findall(r"/thumbs/(\d+-[0-9a-f]{8})/1x", page.body.decode())))
        assert len(ids) == len(spellings), page.body[:2000]
        for thumb in ids:
            response = get(server.url, f"/thumbs/{thumb}/1x", {"Accept": "image/webp,*/*"})
            assert response.status == 200 and response.getheader("X-Warmfeed-Placeholder") == "1", thumb
        stats = json.loads(get(server.url, "/admin/cache", {"Authorization": f"Bearer {TOKEN}"}).body)
        # Each refused at its connect, none through the proxy.
        assert stats["origin"]["refused"] == len(spellings), stats["origin"]
        assert target.connections == 0, target.requests
        assert proxy.requests == ["http://feed.invalid/feed.json"], proxy.requests
        assert proxy.connections == 1
    finally:
        problem = server.stop()
        target.stop()
        proxy.stop()
    assert problem is None, problem
