"""One HTTP worker a core the server can use (UsableCores): a server started
under `taskset` runs as many workers as the cores it was given, not as many
as the machine has online. More event loops than cores only trade requests
for context switches (BENCHMARKS.md, "Threads and cores")."""

from __future__ import annotations

import os
import tempfile
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


def quota_cgroup(cores: float) -> tuple[str, str] | None:
    """A new cgroup with a CPU quota of `cores` (cgroup v1's cpu controller,
    or v2's), and the file that takes a process into it; None when this
    machine does not let the tests make one."""
    period = 100000
    for mount, v2 in (("/sys/fs/cgroup/cpu", False), ("/sys/fs/cgroup/cpu,cpuacct", False), ("/sys/fs/cgroup", True)):
        if not os.path.exists(os.path.join(mount, "cpu.max" if v2 else "cpu.cfs_quota_us")) and not (
                v2 and os.path.exists(os.path.join(mount, "cgroup.subtree_control"))):
            continue
        try:
            folder = tempfile.mkdtemp(prefix="warmfeed-test-", dir=mount)
        except OSError:
            continue
        try:
            if v2:
                with open(os.path.join(folder, "cpu.max"), "w") as f:
                    f.write(f"{int(cores * period)} {period}")
            else:
                with open(os.path.join(folder, "cpu.cfs_quota_us"), "w") as f:
                    f.write(str(int(cores * period)))
            return folder, os.path.join(folder, "cgroup.procs")
        except OSError:
            os.rmdir(folder)
    return None


def test_a_server_with_half_a_core_of_cpu_quota_runs_one_worker():
    made = quota_cgroup(0.5)
    if made is None:
        pytest.skip("this machine does not let the tests make a cgroup with a CPU quota")
    folder, procs = made
    try:
        server = Server(page_size=10, demo_items=40,
                        wrap=("sh", "-c", f'echo $$ > {procs} && exec "$@"', "sh"))
        try:
            assert workers_line(server, timeout=30) == "HTTP workers: 1 (cores this process can use: 1)"
            assert http_threads(server.proc.pid) == 1 + 1
        finally:
            problem = server.stop()
        assert problem is None, problem
    finally:
        os.rmdir(folder)
