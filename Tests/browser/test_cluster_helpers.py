"""The cluster test's own parts (cluster.py), checked on their own with the real
servers and no warmfeed binary: redis-server as the shared tier is started,
slowed down (pause), stopped and started again on the same port; PostgreSQL
(scripts/postgres) starts, answers, stops. test_deploy.py checks Nginx.
"""

from __future__ import annotations

import shutil
import socket
import struct
import tempfile
from urllib.parse import urlsplit

import pytest

import cluster as topology


@pytest.fixture
def folder():
    # Not pytest's tmp_path: PostgreSQL runs as the postgres user, which must reach it.
    path = tempfile.mkdtemp(prefix="warmfeed-helpers-")
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)


def redis_ping(port: int, timeout: float, password: str = topology.REDIS_PASSWORD) -> bytes:
    """AUTH and PING over a socket of our own: b"+OK\\r\\n+PONG\\r\\n", or socket.timeout."""
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as s:
        s.sendall(f"AUTH {password}\r\nPING\r\n".encode())
        answer = b""
        while answer.count(b"\r\n") < 2:
            chunk = s.recv(64)
            if not chunk:
                break
            answer += chunk
        return answer


def test_redis_pauses_stops_and_comes_back_on_its_port(folder):
    redis = topology.Redis(folder)
    try:
        assert redis.url == f"redis://:{topology.REDIS_PASSWORD}@127.0.0.1:{redis.port}/0"
        # deploy/redis.conf's password and protected mode: nothing answers without the password.
        assert redis_ping(redis.port, timeout=5, password="wrong").startswith(b"-")
        assert redis.cli("SET", "k", "v") == "OK"
        redis.pause(5)
        with pytest.raises(socket.timeout):
            redis_ping(redis.port, timeout=0.5)
        # Answered once the pause is over (well within 30 s).
        assert redis_ping(redis.port, timeout=30) == b"+OK\r\n+PONG\r\n"
        port = redis.port
        redis.stop()
        with pytest.raises(OSError):
            redis_ping(port, timeout=2)
        redis.start()
        assert redis.port == port and redis.cli("PING") == "PONG"
        assert redis.cli("GET", "k") == "", "a cache: nothing kept across a restart"
    finally:
        redis.stop()
    assert "Ready to accept connections" in redis.log(), "redis-server logs into the folder (for failure messages)"


def postgres_answers(port: int) -> bool:
    """Whether a PostgreSQL answers on `port`: an SSLRequest gets 'S' or 'N'."""
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=5) as s:
            s.sendall(struct.pack("!ii", 8, 80877103))
            return s.recv(1) in (b"S", b"N")
    except OSError:
        return False


def test_postgres_starts_answers_and_stops(folder):
    postgres = topology.Postgres(f"{folder}/pg")
    try:
        url = urlsplit(postgres.url)
        assert (url.scheme, url.hostname) == ("postgres", "127.0.0.1"), postgres.url
        assert postgres_answers(url.port), f"nothing answers at {postgres.url}"
    finally:
        postgres.stop()
    assert not postgres_answers(url.port), "PostgreSQL still answers after stop"
