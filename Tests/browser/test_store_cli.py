"""`--store` as an operator meets it: a store that cannot be opened stops
`serve`, `import` and `measure-render` at once with a message naming the
server (exit 2), and `copy-store` moves a feed to PostgreSQL with a progress
line and back again, refusing a target that holds a feed."""

from __future__ import annotations

import json
import os
import socket
import sqlite3
import subprocess
import tempfile
import urllib.parse
import uuid

import pytest

from conftest import WARMFEED_BIN

ADMIN = os.environ.get("WARMFEED_TEST_POSTGRES", "")
needs_postgres = pytest.mark.skipif(ADMIN in ("", "skip"), reason="scripts/test starts PostgreSQL")


def warmfeed(*args: str, timeout: float = 300, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([WARMFEED_BIN, *args], capture_output=True, text=True, timeout=timeout,
                          env={**os.environ, **(env or {})}, stdin=subprocess.DEVNULL)


def database_url(name: str) -> str:
    parts = urllib.parse.urlsplit(ADMIN)
    return urllib.parse.urlunsplit(parts._replace(path="/" + name))


def psql(url: str, sql: str) -> str:
    return subprocess.run(["psql", url, "-Atc", sql], capture_output=True, text=True, check=True).stdout.strip()


@pytest.fixture
def database():
    name = "wf_cli_" + uuid.uuid4().hex[:12]
    psql(ADMIN, f"CREATE DATABASE {name}")
    yield database_url(name)
    psql(ADMIN, f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_an_unknown_store_scheme_is_refused_before_anything_starts():
    data = tempfile.mkdtemp(prefix="warmfeed-store-")
    for command in (["serve", "--port", "0"], ["measure-render", "--pages", "1"]):
        result = warmfeed(*command, "--data", data, "--store", "mysql://u:p@localhost/feed", timeout=60)
        assert result.returncode != 0
        assert "unknown store" in result.stderr and "postgres://" in result.stderr, result.stderr
        assert "p@localhost" not in result.stderr or "u:p" not in result.stderr


@needs_postgres
def test_a_store_that_cannot_be_opened_stops_each_command_naming_the_server():
    data = tempfile.mkdtemp(prefix="warmfeed-store-")
    parts = urllib.parse.urlsplit(ADMIN)
    port = closed_port()
    cases = {
        "wrong password": f"postgres://postgres:nope@{parts.hostname}:{parts.port}/postgres?sslmode=disable",
        'no database "absent_feed"': database_url("absent_feed"),
        "connection refused": f"postgres://postgres:x@127.0.0.1:{port}/feed?sslmode=disable",
    }
    source = os.path.join(data, "feed.json")
    with open(source, "w") as f:
        json.dump({"version": "https://jsonfeed.org/version/1.1", "title": "t", "items": [{"id": "a", "title": "A"}]}, f)
    for expected, url in cases.items():
        served = warmfeed("serve", "--port", "0", "--data", data, "--store", url, timeout=60)
        assert served.returncode == 2, (expected, served.stderr)
        assert expected in served.stderr, served.stderr
        assert "nope" not in served.stderr
        # The environment names the store just as well, for import too.
        imported = warmfeed("import", "--data", data, source, env={"WARMFEED_STORE": url}, timeout=60)
        assert imported.returncode == 2 and expected in imported.stderr, imported.stderr
        assert "Nothing was written" in imported.stderr


@needs_postgres
def test_copy_store_moves_a_feed_to_postgres_and_back(database):
    folder = tempfile.mkdtemp(prefix="warmfeed-copy-")
    source = os.path.join(folder, "feed.json")
    with open(source, "w") as f:
        json.dump({"version": "https://jsonfeed.org/version/1.1", "title": "Copied",
                   "items": [{"id": f"i{i}", "title": f"Item {i}", "url": f"https://c.example/{i}",
                              "date_published": f"2024-03-{1 + i % 28:02d}T{i % 24:02d}:00:00Z"} for i in range(5000)]}, f)
    sqlite_path = os.path.join(folder, "data", "feed.sqlite")
    assert warmfeed("import", "--data", os.path.join(folder, "data"), "--quiet", source).returncode == 0

    moved = warmfeed("copy-store", f"sqlite:{sqlite_path}", database)
    assert moved.returncode == 0, moved.stderr
    assert "copying:" in moved.stderr and "%" in moved.stderr, "a progress line with a share done"
    assert "Copied 5,000 items" in moved.stdout, moved.stdout
    assert psql(database, "SELECT COUNT(*), MAX(seq) FROM item") == "5000|5000"

    again = warmfeed("copy-store", f"sqlite:{sqlite_path}", database)
    assert again.returncode == 1 and "already holds 5000 items" in again.stderr, again.stderr
    assert "Nothing was written" in again.stderr
    back_path = os.path.join(folder, "back.sqlite")
    back = warmfeed("copy-store", "--quiet", database, f"sqlite:{back_path}")
    assert back.returncode == 0, back.stderr
    with sqlite3.connect(sqlite_path) as a, sqlite3.connect(back_path) as b:
        query = "SELECT id, guid, title, link, published, seq FROM item ORDER BY id"
        assert a.execute(query).fetchall() == b.execute(query).fetchall()
        epoch = "SELECT value FROM meta WHERE key = 'epoch'"
        assert a.execute(epoch).fetchone() == b.execute(epoch).fetchone()
