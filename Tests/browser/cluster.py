"""A Warmfeed cluster as plain processes on loopback, the topology of
docker-compose.yml: PostgreSQL (scripts/postgres), redis-server, one
`warmfeed origin`, three `warmfeed serve` nodes and nginx running
deploy/nginx.conf itself, its upstream, listen and path lines rewritten for
loopback. Used by test_cluster.py and bench/cluster.py.
"""

from __future__ import annotations

import json
import os
import re
import select
import shutil
import signal
import socket
import subprocess
import tempfile
import threading
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
WARMFEED_BIN = os.environ.get("WARMFEED_BIN", str(ROOT / ".build" / "debug" / "warmfeed"))
TOKEN = "test-token-of-thirty-two-characters"
# Redis asks for a password, as docker-compose.yml's does (WARMFEED_REDIS_PASSWORD).
REDIS_PASSWORD = "cluster-test-password"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def get_json(url: str, token: str | None = TOKEN, timeout: float = 10) -> dict:
    request = urllib.request.Request(url, headers={"Authorization": f"Bearer {token}"} if token else {})
    with urllib.request.urlopen(request, timeout=timeout) as r:
        return json.load(r)


def read_address(proc: subprocess.Popen, banner: bytes, timeout: float) -> str | None:
    """The first group of `banner` in a line `proc` prints on stdout within
    `timeout` seconds (read a byte at a time, so nothing after it is taken from
    the pipe); None if it exits or stays silent."""
    deadline = time.monotonic() + timeout
    line = b""
    fd = proc.stdout.fileno()
    while time.monotonic() < deadline and proc.poll() is None:
        ready, _, _ = select.select([fd], [], [], 0.2)
        if not ready:
            continue
        chunk = os.read(fd, 1)
        if not chunk:
            break
        line += chunk
        if chunk == b"\n":
            m = re.search(banner, line)
            if m:
                return m.group(1).decode()
            line = b""
    return None


class Process:
    """A `warmfeed` subcommand that prints its address on stdout; its log in a file."""

    def __init__(self, args: list[str], log_path: str, env: dict[str, str] | None = None,
                 banner: bytes = rb"is serving (http://127\.0\.0\.1:\d+)/"):
        self.args = args
        self.log_path = log_path
        self._log = open(log_path, "ab")
        self.proc = subprocess.Popen([WARMFEED_BIN, *args], stdout=subprocess.PIPE, stderr=self._log,
                                     env={**os.environ, **(env or {})})
        self.url = self._read_address(banner, timeout=180)
        threading.Thread(target=self._drain, daemon=True).start()

    def _read_address(self, banner: bytes, timeout: float) -> str:
        url = read_address(self.proc, banner, timeout)
        if url is None:
            self.kill9()
            raise RuntimeError(f"{' '.join(self.args[:1])} did not print its address; log:\n{self.log()}")
        return url

    def _drain(self) -> None:
        try:
            while self.proc.stdout.read(4096):
                pass
        except (OSError, ValueError):
            pass

    @property
    def port(self) -> int:
        return int(self.url.rsplit(":", 1)[1])

    def log(self) -> str:
        try:
            return Path(self.log_path).read_text(errors="replace")[-4000:]
        except OSError:
            return ""

    def stop(self) -> int | None:
        """SIGTERM, then SIGKILL after 15 s; the exit status."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self._log.close()
        return self.proc.returncode

    def kill9(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()


class Redis:
    """redis-server on deploy/redis.conf, on loopback, with REDIS_PASSWORD."""

    def __init__(self, folder: str):
        self.folder = folder
        self.port = free_port()
        self.password = REDIS_PASSWORD
        self.proc: subprocess.Popen | None = None
        self.start()

    @property
    def url(self) -> str:
        return f"redis://:{self.password}@127.0.0.1:{self.port}/0"

    def start(self) -> None:
        self.proc = subprocess.Popen(
            ["redis-server", str(ROOT / "deploy" / "redis.conf"), "--port", str(self.port), "--bind", "127.0.0.1",
             "--requirepass", self.password,
             "--maxmemory", "64mb", "--dir", self.folder, "--logfile", os.path.join(self.folder, "redis.log")],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        for _ in range(200):
            if self.cli("PING") == "PONG":
                return
            if self.proc.poll() is not None:
                break
            time.sleep(0.05)
        self.stop()
        raise RuntimeError(f"redis-server did not answer PING on port {self.port}; log:\n{self.log()}")

    def log(self) -> str:
        try:
            return Path(self.folder, "redis.log").read_text(errors="replace")[-4000:]
        except OSError:
            return ""

    def pause(self, seconds: float) -> None:
        """A slow Redis: every client's commands wait `seconds` (CLIENT PAUSE ALL),
        from now; returns at once. The nodes' calls hit their timeout meanwhile."""
        answer = self.cli("CLIENT", "PAUSE", str(int(seconds * 1000)), "ALL")
        assert answer == "OK", f"CLIENT PAUSE: {answer!r}"

    def cli(self, *words: str) -> str:
        r = subprocess.run(["redis-cli", "-p", str(self.port), *words], capture_output=True, text=True, timeout=10,
                           env={**os.environ, "REDISCLI_AUTH": self.password})
        return r.stdout.strip()

    def count(self, pattern: str) -> int:
        r = subprocess.run(["redis-cli", "-p", str(self.port), "--scan", "--pattern", pattern],
                           capture_output=True, text=True, timeout=30, env={**os.environ, "REDISCLI_AUTH": self.password})
        return len([line for line in r.stdout.splitlines() if line])

    def stop(self) -> None:
        if self.proc and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()


class Postgres:
    def __init__(self, folder: str):
        self.folder = folder
        os.chmod(os.path.dirname(folder), 0o755)
        self.url = subprocess.run([str(ROOT / "scripts" / "postgres"), "start", folder], check=True,
                                  capture_output=True, text=True).stdout.strip()

    def stop(self) -> None:
        subprocess.run([str(ROOT / "scripts" / "postgres"), "stop", self.folder], capture_output=True)


def nginx_config(listen_port: int, node_ports: list[int], folder: str, upstream_header: bool = False) -> str:
    """deploy/nginx.conf for loopback: the nodes at `node_ports`, listening on
    `listen_port`, every path inside `folder`. With `upstream_header`, each
    answer says which node gave it (X-Upstream), for tests only."""
    text = (ROOT / "deploy" / "nginx.conf").read_text()
    for index, port in enumerate(node_ports, start=1):
        text = text.replace(f"server node{index}:8080 ", f"server 127.0.0.1:{port} ")
    assert "node1:8080" not in text and len(node_ports) == 3, "deploy/nginx.conf has three node lines"
    text = text.replace("listen 80;", f"listen 127.0.0.1:{listen_port};")
    text = text.replace("/var/cache/nginx", f"{folder}/cache")
    text = text.replace("/var/log/nginx", folder).replace("/run/nginx-warmfeed.pid", f"{folder}/nginx.pid")
    text = text.replace("worker_processes auto;", "worker_processes 1;")
    if upstream_header:
        text = text.replace("        listen 127.0.0.1", "        add_header X-Upstream $upstream_addr always;\n        listen 127.0.0.1", 1)
    return text


class Nginx:
    def __init__(self, folder: str, node_ports: list[int], upstream_header: bool = False):
        self.folder = folder
        self.port = free_port()
        os.makedirs(f"{folder}/cache", exist_ok=True)
        # nginx's workers run as an unprivileged user: they must reach their temp and cache folders.
        for path in (folder, f"{folder}/cache"):
            os.chmod(path, 0o755)
        self.config = f"{folder}/nginx.conf"
        Path(self.config).write_text(nginx_config(self.port, node_ports, folder, upstream_header))
        self.proc = subprocess.Popen(["nginx", "-c", self.config, "-p", folder, "-e", f"{folder}/startup.log",
                                      "-g", "daemon off;"], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        for _ in range(200):
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=1):
                    return
            except OSError:
                if self.proc.poll() is not None:
                    raise RuntimeError(f"nginx did not start: {self.proc.stderr.read().decode(errors='replace')}")
                time.sleep(0.05)
        self.stop()
        raise RuntimeError(f"nginx did not listen on port {self.port}; error log:\n{self.log()}")

    def log(self) -> str:
        """The end of nginx's error log (deploy/nginx.conf's error_log, moved into the folder)."""
        try:
            return Path(self.folder, "error.log").read_text(errors="replace")[-4000:]
        except OSError:
            return ""

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGQUIT)
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


class Cluster:
    """The whole topology. `redis=False` leaves the shared tier out (for the
    benchmark's comparison); `node_args` go to every node."""

    def __init__(self, nodes: int = 3, demo_items: int = 1000, page_size: int = 30, redis: bool = True,
                 origin_latency: int = 250, pool: str | None = None, node_args: tuple[str, ...] = (),
                 upstream_header: bool = False):
        self.folder = tempfile.mkdtemp(prefix="warmfeed-cluster-")
        os.chmod(self.folder, 0o755)
        self.postgres = self.redis = self.origin = self.nginx = None
        self.nodes: list[Process] = []
        try:
            self.postgres = Postgres(f"{self.folder}/pg")
            self.redis = Redis(self.folder) if redis else None
            self.origin = Process(["origin", "--port", "0", "--data", f"{self.folder}/origin", "--latency", str(origin_latency),
                                   *(("--demo-pool", pool) if pool else ())], f"{self.folder}/origin.log")
            env = {"WARMFEED_ADMIN_TOKEN": TOKEN, **({"WARMFEED_REDIS": self.redis.url} if self.redis else {})}
            # Each node is told the others (and itself) as peers, as docker-compose.yml's
            # WARMFEED_PEERS does: their ports are chosen before they start.
            ports = [free_port() for _ in range(nodes)]
            peers = [arg for port in ports for arg in ("--peer", f"http://127.0.0.1:{port}")]
            for n, port in enumerate(ports, start=1):
                # One after the other: the first seeds the demo feed into the empty store.
                self.nodes.append(Process(
                    ["serve", "--port", str(port), "--data", f"{self.folder}/node{n}", "--node-name", f"node{n}",
                     "--store", self.postgres.url, "--demo-origin", self.origin.url, *(peers if self.redis else ()),
                     "--demo-items", str(demo_items), "--page-size", str(page_size),
                     "--public", str(ROOT / "Public"), "--templates", str(ROOT / "Templates"), *node_args],
                    f"{self.folder}/node{n}.log", env=env))
            ports = [node.port for node in self.nodes]
            while len(ports) < 3:  # nginx.conf names three nodes: one node stands in for the missing
                ports.append(ports[0])
            self.nginx = Nginx(f"{self.folder}/nginx", ports, upstream_header)
        except BaseException:
            self.stop()
            raise

    @property
    def url(self) -> str:
        return self.nginx.url

    def node_stats(self) -> list[dict]:
        return [get_json(node.url + "/admin/cache") for node in self.nodes if node.proc.poll() is None]

    def origin_stats(self) -> dict:
        return get_json(self.origin.url + "/stats", token=None)

    def logs(self) -> str:
        parts = [f"--- {Path(p.log_path).name}\n{p.log()[-1500:]}" for p in [self.origin, *self.nodes] if p]
        return "\n".join(parts)

    def stop(self) -> None:
        for part in [self.nginx, *reversed(self.nodes), self.origin, self.redis, self.postgres]:
            if part is not None:
                try:
                    part.stop()
                except Exception:
                    pass
        shutil.rmtree(self.folder, ignore_errors=True)
