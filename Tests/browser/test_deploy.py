"""Issue 13: what ships for running a cluster, checked without a Docker
engine. `docker-compose config` (Debian's docker-compose) must accept
docker-compose.yml as written and find in it the whole topology, with health
checks and volumes; nginx must accept deploy/nginx.conf and route by it (real
nginx in front of three small Python backends that say who they are): the same
thumbnail URL to the same backend, one reader's pages to one backend, a dead
backend's requests to another, static files from nginx's cache, and a store
outage (every node's 503) passed on without taking the nodes out. The Dockerfile's
Swift must be able to build every dependency. test_cluster.py
runs the same nginx.conf in front of real nodes.
"""

from __future__ import annotations

import http.client
import re
import shutil
import subprocess
import tempfile
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
import yaml

import cluster as topology

NODES = ("node1", "node2", "node3")
# What an operator must set before compose starts anything.
REDIS_PASSWORD = "0123456789abcdef0123456789abcdef"
REQUIRED = {"WARMFEED_REDIS_PASSWORD": REDIS_PASSWORD, "WARMFEED_ADMIN_TOKEN": "0123456789abcdef0123456789abcdef"}


def compose_config(env: dict[str, str]) -> subprocess.CompletedProcess:
    if shutil.which("docker-compose") is None:
        pytest.fail("docker-compose is missing: scripts/setup --tests installs it")
    return subprocess.run(["docker-compose", "-f", str(topology.ROOT / "docker-compose.yml"), "config"],
                          capture_output=True, text=True, cwd=topology.ROOT, env={"PATH": "/usr/bin:/bin", **env})


A_TOKEN = "0123456789abcdef0123456789abcdef"  # 32 characters: the least a token may have


@pytest.fixture(scope="module")
def compose() -> dict:
    result = compose_config(REQUIRED)
    assert result.returncode == 0, f"docker-compose config refused docker-compose.yml:\n{result.stderr}"
    return yaml.safe_load(result.stdout)


@pytest.mark.parametrize("environment", [{}, {"WARMFEED_ADMIN_TOKEN": ""}], ids=["unset", "empty"])
def test_compose_refuses_to_start_without_an_admin_token(environment):
    # No default token: a cluster started as the README says, without one, does not start at all.
    result = compose_config({k: v for k, v in REQUIRED.items() if k != "WARMFEED_ADMIN_TOKEN"} | environment)
    assert result.returncode != 0, "docker-compose accepted docker-compose.yml without WARMFEED_ADMIN_TOKEN"
    assert "WARMFEED_ADMIN_TOKEN" in result.stderr and "at least 32 characters" in result.stderr, result.stderr
    assert "change-me" not in (topology.ROOT / "docker-compose.yml").read_text()


def test_compose_gives_every_node_the_token_it_was_given(compose):
    for node in NODES:
        assert compose["services"][node]["environment"]["WARMFEED_ADMIN_TOKEN"] == A_TOKEN


def test_a_node_refuses_a_short_token_as_a_configuration_error(tmp_path):
    # Compose can only say whether the token is set; the length is the server's rule, checked before anything opens.
    for name, env, args in [
        ("WARMFEED_ADMIN_TOKEN", {"WARMFEED_ADMIN_TOKEN": A_TOKEN[:31]}, []),
        ("the token in", {}, []),  # a token kept in the data folder, written by hand
    ]:
        data = tmp_path / f"data-{len(args)}-{len(env)}"
        data.mkdir()
        if not env:
            (data / "admin-token").write_text("short-token-by-hand\n")
        result = subprocess.run([topology.WARMFEED_BIN, "serve", "--port", "0", "--data", str(data), "--demo-items", "0", *args],
                                capture_output=True, text=True, timeout=120,
                                env={"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), **env})
        assert result.returncode == 64, f"{name}: exit {result.returncode}\n{result.stderr}"
        assert name in result.stderr and "at least 32 characters" in result.stderr, result.stderr
        assert A_TOKEN[:31] not in result.stderr + result.stdout and "short-token-by-hand" not in result.stderr, "the refusal names the token"


def test_compose_refuses_to_start_without_a_redis_password():
    for env in ({}, {"WARMFEED_REDIS_PASSWORD": ""}):
        result = compose_config({k: v for k, v in REQUIRED.items() if k != "WARMFEED_REDIS_PASSWORD"} | env)
        assert result.returncode != 0 and "WARMFEED_REDIS_PASSWORD" in result.stderr, (env, result.stderr)


def test_redis_asks_for_the_password_and_is_on_the_clusters_network_only(compose):
    services = compose["services"]
    redis = services["redis"]
    assert "ports" not in redis, "Redis publishes no port"
    assert set(redis["networks"]) == {"cluster"}
    assert compose["networks"]["cluster"].get("internal") is True
    assert redis["environment"]["REDISCLI_AUTH"] == REDIS_PASSWORD
    assert "--requirepass" in " ".join(redis["command"])
    for node in NODES:
        environment = services[node]["environment"]
        assert environment["WARMFEED_REDIS"] == f"redis://:{REDIS_PASSWORD}@redis:6379/0"
        assert environment["WARMFEED_PEERS"].split() == [f"http://{n}:8080" for n in NODES]
        assert {"default", "cluster"} <= set(services[node]["networks"])
    for name in ("postgres", "origin"):
        assert "ports" not in services[name] and set(services[name]["networks"]) == {"cluster"}, name


def test_compose_names_the_whole_cluster(compose):
    services = compose["services"]
    assert set(services) == {"nginx", *NODES, "redis", "postgres", "origin"}
    for name, service in services.items():
        assert "healthcheck" in service, f"{name} has no health check"
    for node in NODES:
        service = services[node]
        command = service["command"]
        assert command[:1] == ["serve"] and "--demo-origin" in command and service["environment"]["WARMFEED_REDIS"]
        assert service["environment"]["WARMFEED_STORE"].startswith("postgres://")
        assert {"postgres", "redis", "origin"} <= set(service["depends_on"])
        assert all(dep["condition"] == "service_healthy" for dep in service["depends_on"].values())
        assert any(str(v).endswith(":/data:rw") or str(v).endswith(":/data") for v in service["volumes"]), service["volumes"]
        assert service["build"]["context"] == str(topology.ROOT)
    assert services["origin"]["command"][:1] == ["origin"]
    assert services["nginx"]["ports"][0]["target"] == 80
    assert any("nginx.conf:/etc/nginx/nginx.conf" in str(v) for v in services["nginx"]["volumes"])
    assert {f"{n}-data" for n in NODES} | {"postgres-data"} <= set(compose["volumes"])


def test_the_redis_config_bounds_redis_as_a_cache():
    text = (topology.ROOT / "deploy" / "redis.conf").read_text()
    assert "maxmemory-policy allkeys-lru" in text and "\nmaxmemory " in text
    assert 'save ""' in text and "appendonly no" in text
    lines = [line.strip() for line in text.splitlines() if line.strip() and not line.lstrip().startswith("#")]
    assert "protected-mode yes" in lines and "protected-mode no" not in lines
    assert not any(line.startswith("requirepass") for line in lines), "no password in the repository: compose passes it"


def test_the_dockerfile_builds_in_one_stage_and_runs_in_a_slim_one():
    text = (topology.ROOT / "Dockerfile").read_text()
    stages = [line for line in text.splitlines() if line.startswith("FROM ")]
    assert len(stages) == 2 and " AS build" in stages[0] and "slim" in stages[1]
    assert "libhiredis-dev" in text and "libhiredis0.14" in text and "HEALTHCHECK" in text
    assert "swift build -c release --product warmfeed" in text


def tools_version(manifest) -> tuple[int, int]:
    m = re.match(r"//\s*swift-tools-version:\s*(\d+)\.(\d+)", manifest.read_text())
    assert m, f"{manifest} names no swift-tools-version"
    return int(m[1]), int(m[2])


def test_the_dockerfiles_swift_can_build_the_package_and_its_dependencies():
    # The image resolves afresh (no Package.resolved in it): it gets the
    # versions checked out here or newer ones, so it must at least build these.
    checkouts = topology.ROOT / ".build" / "checkouts"
    if not checkouts.is_dir():
        pytest.skip("no .build/checkouts: the dependencies' tools versions are known after a build")
    needed = {"Package.swift": tools_version(topology.ROOT / "Package.swift")}
    for package in sorted(checkouts.iterdir()):
        # Package@swift-X.swift is an older toolchain's manifest: the oldest one decides.
        manifests = sorted(package.glob("Package*.swift"))
        if manifests:
            needed[package.name] = min(tools_version(m) for m in manifests)
    m = re.search(r"^FROM swift:(\d+)\.(\d+)", (topology.ROOT / "Dockerfile").read_text(), re.M)
    assert m, "the Dockerfile's build stage is FROM swift:X.Y"
    image = (int(m[1]), int(m[2]))
    too_new = {name: version for name, version in needed.items() if version > image}
    assert not too_new, f"swift:{image[0]}.{image[1]} cannot build these (swift-tools-version): {too_new}"


class Backend:
    """A tiny HTTP server that answers every GET with its own name, counting requests per path."""

    def __init__(self, name: str):
        self.name = name
        self.dead = False
        self.unavailable: tuple[str, ...] = ()  # path prefixes answered 503, as a node whose store is down
        self.hits: dict[str, int] = {}
        backend = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):
                pass

            def do_GET(self):
                if backend.dead:
                    # As a killed process: the connection closes with no answer.
                    self.close_connection = True
                    return
                backend.hits[self.path] = backend.hits.get(self.path, 0) + 1
                body = backend.name.encode()
                if self.path.startswith(backend.unavailable):
                    self.send_response(503)
                    self.send_header("Retry-After", "1")
                    self.send_header("Content-Length", str(len(body)))
                    self.end_headers()
                    self.wfile.write(body)
                    return
                self.send_response(200)
                self.send_header("Content-Length", str(len(body)))
                self.send_header("Cache-Control", "public, max-age=60")
                self.end_headers()
                self.wfile.write(body)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.port = self.httpd.server_address[1]
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def stop(self):
        self.dead = True  # connections nginx keeps alive get no more answers
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture
def front():
    # Not pytest's tmp_path: its parents are closed to nginx's unprivileged workers.
    folder = tempfile.mkdtemp(prefix="warmfeed-nginx-")
    backends = [Backend(name) for name in NODES]
    nginx = topology.Nginx(folder, [b.port for b in backends])
    try:
        yield nginx, backends
    finally:
        nginx.stop()
        shutil.rmtree(folder, ignore_errors=True)
        for b in backends:
            try:
                b.stop()
            except OSError:
                pass


def ask(nginx, path: str, cookie: str | None = None) -> tuple[int, str]:
    connection = http.client.HTTPConnection("127.0.0.1", nginx.port, timeout=10)
    try:
        connection.request("GET", path, headers={"Cookie": f"wf={cookie}"} if cookie else {})
        response = connection.getresponse()
        return response.status, response.read().decode()
    finally:
        connection.close()


def test_nginx_keeps_each_thumbnail_and_each_reader_on_one_node(front):
    nginx, backends = front
    owners = {}
    for item in range(1, 61):
        answers = {ask(nginx, f"/thumbs/{item}/1x")[1] for _ in range(3)}
        assert len(answers) == 1, f"/thumbs/{item}/1x went to {answers}"
        owners[item] = answers.pop()
    assert set(owners.values()) == set(NODES), "thumbnails spread over every node"
    readers = {}
    for reader in range(40):
        cookie = f"{reader:016x}"
        answers = {ask(nginx, path, cookie)[1] for path in ("/", "/fragment?page=2", "/fragment?page=3")}
        assert len(answers) == 1, f"reader {cookie}'s pages went to {answers}"
        readers[cookie] = answers.pop()
    assert len(set(readers.values())) > 1, "readers spread over more than one node"


def test_a_dead_nodes_requests_go_to_another_without_an_error(front):
    nginx, backends = front
    dead = backends[0]
    mine = [item for item in range(1, 200) if ask(nginx, f"/thumbs/{item}/1x")[1] == dead.name][:10]
    assert mine, "some thumbnails hash to node1"
    dead.stop()
    for item in mine:
        status, body = ask(nginx, f"/thumbs/{item}/1x")
        assert status == 200 and body in ("node2", "node3"), (item, status, body)


def test_static_files_are_served_from_nginxs_cache(front):
    nginx, backends = front
    for _ in range(3):
        assert ask(nginx, "/static/feed.js?v=1")[0] == 200
    assert sum(b.hits.get("/static/feed.js?v=1", 0) for b in backends) == 1


def test_a_store_outage_leaves_every_node_in_service(front):
    # PostgreSQL down: every node answers 503 for the pages it has not cached
    # and still serves the ones it has. nginx must pass both on, not count the
    # 503s as failures, mark every node down and answer 502 for everything.
    nginx, backends = front
    for b in backends:
        b.unavailable = ("/?page=",)
    for reader in range(12):
        status, body = ask(nginx, f"/?page={reader + 5}", f"{reader:016x}")
        assert (status, body in NODES) == (503, True), f"an uncached page, reader {reader}: {status} {body[:80]!r}"
    for reader in range(12):
        status, body = ask(nginx, "/", f"{reader:016x}")
        assert (status, body in NODES) == (200, True), f"a cached page, reader {reader}: {status} {body[:80]!r}"
