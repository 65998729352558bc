"""One HTTP worker a core the server can use (UsableCores): a server started
under `taskset` runs as many workers as the cores it was given, not as many
as the machine has online. More event loops than cores only trade requests
for context switches (BENCHMARKS.md, "Threads and cores")."""

from __future__ import annotations

import os
import time
import urllib.request

import pytest

from conftest import Server


def workers_line(server: Server, timeout: float = 10) -> str:
    """The line the server prints after its address: how many HTTP workers it runs."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for line in server.printed.decode(errors="replace").splitlines():
            if line.startswith("HTTP workers:"):
                return line
        time.sleep(0.05)
    pytest.fail(f"no 'HTTP workers:' line; printed: {server.printed!r}")


def http_threads(pid: int) -> int:
    """Threads of the process named warmfeed-http-N: the feed's workers, and
    the in-process demo origin's one."""
    names = []
    for task in os.listdir(f"/proc/{pid}/task"):
        try:
            with open(f"/proc/{pid}/task/{task}/comm") as f:
                names.append(f.read().strip())
        except OSError:
            pass  # a thread that just ended
    return sum(name.startswith("warmfeed-http-") for name in names)


@pytest.mark.parametrize("cores", [[0], [0, 1]], ids=["one core", "two cores"])
def test_a_server_under_taskset_runs_one_worker_a_core_it_was_given(cores):
    if not set(cores) <= os.sched_getaffinity(0):
        pytest.skip(f"this machine does not let the tests use cores {cores}")
    server = Server(page_size=10, demo_items=40, wrap=("taskset", "-c", ",".join(map(str, cores))))
    try:
        assert workers_line(server) == f"HTTP workers: {len(cores)} (cores this process can use: {len(cores)})"
        # The demo origin in the same process serves on one worker thread of its own.
        assert http_threads(server.proc.pid) == len(cores) + 1
        assert os.sched_getaffinity(server.proc.pid) == set(cores)
        with urllib.request.urlopen(server.url + "/fragment?page=2") as answer:
            assert answer.status == 200
    finally:
        problem = server.stop()
    assert problem is None, problem


def test_threads_given_on_the_command_line_are_kept_under_taskset():
    server = Server(page_size=10, demo_items=40, wrap=("taskset", "-c", "0"), extra_args=("--threads", "3"))
    try:
        assert workers_line(server) == "HTTP workers: 3 (cores this process can use: 1)"
        assert http_threads(server.proc.pid) == 3 + 1
    finally:
        problem = server.stop()
    assert problem is None, problem
