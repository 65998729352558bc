"""Issue 34: the operator's door behind the shipped nginx. deploy/nginx.conf
itself (cluster.py's rewrite for loopback) runs in front of a real node; an
operator signs in with the form, fails, signs out, opens /admin?token= and
sends the token as Bearer; a guesser is slowed on its own address (the node
trusts nginx's X-Forwarded-For); then the node goes away and every request
is an upstream error. Afterwards neither of nginx's logs holds the token,
while both hold the lines about those requests (the error log names each
failed request's line: a URL with the token in it would have been there)."""

from __future__ import annotations

import http.client
import os
import re
import shutil
import tempfile
from pathlib import Path

import pytest

import cluster as topology
from conftest import Server

TOKEN = "door-token-" + "7f3a9c1e5b2d4f60" * 2  # 43 characters, found only where it leaked


def ask(nginx, method: str, target: str, headers: dict[str, str] | None = None, body: str | None = None,
        source: str = "127.0.0.1") -> http.client.HTTPResponse:
    """One request to nginx from `source` (any loopback address: each is a client of its own)."""
    connection = http.client.HTTPConnection("127.0.0.1", nginx.port, timeout=30, source_address=(source, 0))
    headers = dict(headers or {})
    if body is not None:
        headers["Content-Type"] = "application/x-www-form-urlencoded"
    connection.request(method, target, body=body, headers=headers)
    response = connection.getresponse()
    response.text = response.read().decode(errors="replace")
    connection.close()
    return response


def form_headers(nginx) -> dict[str, str]:
    """What a browser sends with a form posted from a page nginx served."""
    return {"Origin": nginx.url, "Sec-Fetch-Site": "same-origin", "Accept": "text/html"}


@pytest.fixture
def door():
    folder = tempfile.mkdtemp(prefix="warmfeed-door-")
    os.chmod(folder, 0o755)
    node = Server(page_size=10, demo_items=30, env={"WARMFEED_ADMIN_TOKEN": TOKEN},
                  extra_args=("--trusted-proxy", "127.0.0.1"))
    nginx = None
    try:
        port = int(node.url.rsplit(":", 1)[1])
        nginx = topology.Nginx(f"{folder}/nginx", [port, port, port])
        yield node, nginx
    finally:
        if nginx:
            nginx.stop()
        node.stop()
        shutil.rmtree(folder, ignore_errors=True)


def test_no_token_in_any_line_nginx_logs(door):
    node, nginx = door
    # The sign-in form, a wrong token, then the right one: a session, and the dashboard.
    signin = ask(nginx, "GET", "/admin", {"Accept": "text/html"})
    assert signin.status == 401 and 'action="/admin/sign-in"' in signin.text
    wrong = ask(nginx, "POST", "/admin/sign-in", form_headers(nginx), body="token=not-" + TOKEN)
    assert wrong.status == 401 and wrong.getheader("Set-Cookie") is None
    right = ask(nginx, "POST", "/admin/sign-in", form_headers(nginx), body="token=" + TOKEN)
    assert right.status == 303 and right.getheader("Location") == "/admin", right.status
    cookie = right.getheader("Set-Cookie").split(";")[0]
    dashboard = ask(nginx, "GET", "/admin", {"Cookie": cookie, "Accept": "text/html"})
    assert dashboard.status == 200 and 'action="/admin/sign-out"' in dashboard.text

    # A token in a URL, however spelled, is never passed on: nginx sends the browser to the form.
    for target in (f"/admin?token={TOKEN}", f"/admin?TOKEN={TOKEN}", f"/admin?tok%65n={TOKEN}",
                   f"/metrics?x=1&token={TOKEN}", f"/?page=2&token={TOKEN}", f"/admin/cache?token={TOKEN}&y"):
        response = ask(nginx, "GET", target)
        assert response.status == 303 and response.getheader("Location") == "/admin", target
        assert response.getheader("Set-Cookie") is None, f"{target} reached the node"
    # A referrer that names one is refused here too.
    assert ask(nginx, "GET", "/", {"Referer": f"{nginx.url}/admin?token={TOKEN}"}).status == 400
    # Scripts: Bearer, right and wrong; then the way out.
    assert ask(nginx, "GET", "/admin/cache", {"Authorization": f"Bearer {TOKEN}"}).status == 200
    assert ask(nginx, "GET", "/metrics", {"Authorization": "Bearer not-" + TOKEN}).status == 401
    out = ask(nginx, "POST", "/admin/sign-out", {**form_headers(nginx), "Cookie": cookie}, body="")
    assert out.status == 303
    assert ask(nginx, "GET", "/admin/cache", {"Cookie": cookie}).status == 401

    # A guesser is slowed on its own address (nginx names it; the node trusts nginx)…
    statuses = []
    for _ in range(15):
        statuses.append(ask(nginx, "POST", "/admin/sign-in", form_headers(nginx), body="token=guess", source="127.0.0.2").status)
        if statuses[-1] == 429:
            break
    assert statuses[:5] == [401] * 5 and statuses[-1] == 429, statuses
    # …and the operator on another address is not.
    assert ask(nginx, "POST", "/admin/sign-in", form_headers(nginx), body="token=" + TOKEN, source="127.0.0.3").status == 303

    # The node goes away: every request is now an upstream error, which the error log describes.
    assert node.stop() is None
    assert ask(nginx, "POST", "/admin/sign-in", form_headers(nginx), body="token=" + TOKEN).status == 502
    assert ask(nginx, "GET", "/admin/cache", {"Authorization": f"Bearer {TOKEN}"}).status == 502
    assert ask(nginx, "GET", f"/admin?token={TOKEN}").status == 303
    assert ask(nginx, "GET", "/?page=3").status == 502

    access = Path(nginx.folder, "access.log").read_text(errors="replace")
    errors = Path(nginx.folder, "error.log").read_text(errors="replace")
    # The logs hold the requests (so this is no test of empty files)…
    assert len(re.findall(r'"POST /admin/sign-in HTTP/1\.1" 303 ', access)) == 2, access
    assert '"GET /admin?(token not logged) HTTP/1.1" 303 ' in access and '"(token not logged)"' in access
    assert re.search(r'"GET /admin/cache HTTP/1\.1" 502 ', access), access
    assert re.search(r'request: "(POST /admin/sign-in|GET /admin/cache|GET /\?page=3) HTTP/1\.1"', errors), errors
    # …and not the token, in any line.
    for name, text in (("access.log", access), ("error.log", errors)):
        leaks = [line for line in text.splitlines() if TOKEN in line or TOKEN[-16:] in line]
        assert leaks == [], f"{name} holds the token:\n" + "\n".join(leaks)
