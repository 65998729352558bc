"""The thin client stays small: at most 2.5 KB gzipped, as served (issue 11
gave it bounded thumbnail loads, a bounded document and the feed's keyboard;
htmx is 16.5 KB)."""

import gzip
import http.client
import re
from urllib.parse import urlsplit

import pytest

LIMIT = 2560


def get(base, path, headers):
    u = urlsplit(base)
    conn = http.client.HTTPConnection(u.hostname, u.port, timeout=10)
    try:
        conn.request("GET", path, headers=headers)
        r = conn.getresponse()
        return r.status, {k.lower(): v for k, v in r.getheaders()}, r.read()
    finally:
        conn.close()


def script_path(base):
    status, _, body = get(base, "/", {})
    assert status == 200
    m = re.search(rb'<script src="([^"]+)"', body)
    assert m, "the document has no script"
    return m.group(1).decode().replace("&amp;", "&")


@pytest.mark.parametrize("which", ["plain", "as linked"])
def test_feed_js_is_at_most_2_5kb_gzipped(server, which):
    path = "/static/feed.js" if which == "plain" else script_path(server.url)
    assert urlsplit(path).path == "/static/feed.js"
    status, headers, raw = get(server.url, path, {"Accept-Encoding": "gzip"})
    assert status == 200
    assert headers.get("content-encoding") == "gzip", "feed.js is not served gzipped to a client that accepts gzip"
    assert int(headers["content-length"]) == len(raw)
    assert len(raw) <= LIMIT, f"feed.js is {len(raw)} bytes gzipped (limit {LIMIT})"

    status, headers, plain = get(server.url, path, {})
    assert status == 200 and "content-encoding" not in headers
    assert gzip.decompress(raw) == plain, "the gzipped feed.js is not the same script"
    print(f"feed.js: {len(plain)} bytes, {len(raw)} bytes gzipped")
