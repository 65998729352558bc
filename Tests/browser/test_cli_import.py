"""`warmfeed import` as an operator runs it: the summary on standard output,
progress on standard error (plain lines when it is not a terminal), exit 1
and the store untouched when the source is not a feed."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import tempfile

from conftest import WARMFEED_BIN


def run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([WARMFEED_BIN, "import", *args], capture_output=True, text=True, timeout=300)


def feed(path: str, items: int) -> None:
    with open(path, "w") as f:
        json.dump({"version": "https://jsonfeed.org/version/1.1", "title": "CLI feed",
                   "home_page_url": "https://cli.example/",
                   "items": [{"id": f"c{i}", "title": f"CLI item {i}", "url": f"/posts/{i}",
                              "date_published": f"2024-05-{1 + i % 28:02d}T10:00:00Z"} for i in range(items)]
                   + [{"id": "bad", "title": 42}]}, f)


def count(data: str) -> int:
    with sqlite3.connect(os.path.join(data, "feed.sqlite")) as db:
        return db.execute("SELECT COUNT(*) FROM item").fetchone()[0]


def test_import_prints_progress_and_a_summary_and_is_idempotent():
    folder = tempfile.mkdtemp(prefix="warmfeed-cli-")
    source, data = os.path.join(folder, "feed.json"), os.path.join(folder, "data")
    feed(source, 3000)
    first = run("--data", data, source)
    assert first.returncode == 0, first.stderr
    assert "importing:" in first.stderr, "a plain progress line when standard error is not a terminal"
    assert "\r" not in first.stderr and "\x1b[" not in first.stderr, "no terminal codes into a pipe"
    assert "(JSON Feed: CLI feed):" in first.stdout
    assert "imported 3000, updated 0, unchanged 0" in first.stdout
    assert '1 × item 3001: "title" is a number, not a string' in first.stdout, first.stdout
    assert count(data) == 3000
    again = run("--data", data, "--quiet", source)
    assert again.returncode == 0 and again.stderr == ""
    assert "imported 0, updated 0, unchanged 3000" in again.stdout


def test_a_source_that_is_not_a_feed_fails_and_writes_nothing():
    folder = tempfile.mkdtemp(prefix="warmfeed-cli-")
    source, data = os.path.join(folder, "feed.json"), os.path.join(folder, "data")
    feed(source, 10)
    assert run("--data", data, source).returncode == 0
    page = os.path.join(folder, "page.html")
    with open(page, "w") as f:
        f.write("<!DOCTYPE html><html><body>moved</body></html>")
    failed = run("--data", data, page)
    assert failed.returncode == 1
    assert "an HTML page, not a feed" in failed.stderr
    assert "Nothing was written" in failed.stderr
    assert count(data) == 10
    missing = run("--data", data, os.path.join(folder, "nope.xml"))
    assert missing.returncode == 2 and "no such file or folder" in missing.stderr
