"""A slow-client attack and the normal requests that must get through it.

`attack(url, ...)` opens `tricklers` connections from the given source
addresses (any 127.x.y.z is loopback on Linux), each sending a request head
one byte a second that never ends, and reopening it `reopen_after` seconds
after the server ends it (slowloris re-creates its dead sockets every 15 s). Once they are all open, `normal` requests are made,
each on a new connection from `normal_source`, at `rate` a second; each waits
at most `client_timeout` seconds for its status line.

Shared by Tests/browser/test_slow_clients.py (counts asserted) and
bench/slow-clients.sh (latencies printed, beside nginx).
"""

from __future__ import annotations

import asyncio
import resource
import threading
import time
from dataclasses import dataclass, field
from urllib.parse import urlsplit


@dataclass
class Outcome:
    opened: int = 0              # trickling connections opened (reopenings included)
    closed_by_server: int = 0    # ... that the server ended
    connect_failures: int = 0    # trickler connects refused or reset
    latencies: list[float] = field(default_factory=list)  # normal requests answered 200, seconds
    failures: list[str] = field(default_factory=list)     # normal requests that were not

    @property
    def normal(self) -> int:
        return len(self.latencies) + len(self.failures)

    def answered_within(self, seconds: float) -> float:
        """The fraction of normal requests answered 200 within `seconds`."""
        return sum(1 for t in self.latencies if t <= seconds) / max(1, self.normal)


def raise_open_file_limit(needed: int) -> None:
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < needed:
        resource.setrlimit(resource.RLIMIT_NOFILE, (min(needed, hard), hard))


async def _trickle(host: str, port: int, source: str, stop: asyncio.Event, outcome: Outcome,
                   all_open: asyncio.Event, opened_target: int, reopen_after: float) -> None:
    head = b"GET / HTTP/1.1\r\nHost: warmfeed\r\nX-Padding: " + b"a" * 1_000_000
    while not stop.is_set():
        try:
            reader, writer = await asyncio.open_connection(host, port, local_addr=(source, 0))
        except OSError:
            outcome.connect_failures += 1
            await asyncio.sleep(1)
            continue
        outcome.opened += 1
        if outcome.opened >= opened_target:
            all_open.set()
        sent = 0
        try:
            while not stop.is_set():
                writer.write(head[sent:sent + 1])
                sent += 1
                await writer.drain()
                try:
                    # Anything from the server (an answer, or end of file) ends this connection.
                    await asyncio.wait_for(reader.read(1), timeout=1.0)
                    outcome.closed_by_server += 1
                    break
                except asyncio.TimeoutError:
                    continue
        except OSError:
            outcome.closed_by_server += 1
        finally:
            writer.close()
        try:
            await asyncio.wait_for(stop.wait(), timeout=reopen_after)
        except asyncio.TimeoutError:
            pass


async def _normal_request(host: str, port: int, source: str, path: str, timeout: float,
                          outcome: Outcome) -> None:
    started = time.monotonic()
    try:
        async def exchange() -> bytes:
            reader, writer = await asyncio.open_connection(host, port, local_addr=(source, 0))
            try:
                writer.write(f"GET {path} HTTP/1.1\r\nHost: warmfeed\r\nConnection: close\r\n\r\n".encode())
                await writer.drain()
                return await reader.readline()
            finally:
                writer.close()
        status_line = await asyncio.wait_for(exchange(), timeout)
    except (asyncio.TimeoutError, OSError) as error:
        outcome.failures.append(f"{type(error).__name__}: {error}")
        return
    if status_line.startswith(b"HTTP/1.1 200"):
        outcome.latencies.append(time.monotonic() - started)
    else:
        outcome.failures.append(f"status line {status_line[:40]!r}")


async def _attack(url: str, tricklers: int, sources: list[str], normal: int, rate: float,
                  normal_source: str, path: str, client_timeout: float, hold: float,
                  reopen_after: float) -> Outcome:
    parts = urlsplit(url)
    host, port = parts.hostname, parts.port
    outcome = Outcome()
    stop = asyncio.Event()
    all_open = asyncio.Event()
    tasks = [asyncio.create_task(_trickle(host, port, sources[i % len(sources)], stop, outcome,
                                          all_open, tricklers, reopen_after))
             for i in range(tricklers)]
    try:
        await asyncio.wait_for(all_open.wait(), timeout=60)
    except asyncio.TimeoutError:
        pass  # measure anyway: some connects may have been refused
    await asyncio.sleep(hold)
    requests = []
    for _ in range(normal):
        requests.append(asyncio.create_task(
            _normal_request(host, port, normal_source, path, client_timeout, outcome)))
        await asyncio.sleep(1 / rate)
    await asyncio.gather(*requests)
    stop.set()
    for task in tasks:
        task.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)
    return outcome


def attack(url: str, tricklers: int = 4200, sources: list[str] | None = None, normal: int = 200,
           rate: float = 20, normal_source: str = "127.0.0.1", path: str = "/",
           client_timeout: float = 5, hold: float = 1, reopen_after: float = 5) -> Outcome:
    """Runs the attack and the normal requests through it; see the module's doc."""
    raise_open_file_limit(tricklers + normal + 256)
    # On a thread of its own: in a pytest session Playwright's sync API may
    # already run an event loop on this one, and asyncio.run refuses to nest.
    outcome: list[Outcome] = []
    errors: list[BaseException] = []

    def run() -> None:
        try:
            outcome.append(asyncio.run(_attack(url, tricklers, sources or ["127.0.0.2"], normal, rate,
                                               normal_source, path, client_timeout, hold, reopen_after)))
        except BaseException as error:  # re-raised on the caller's thread
            errors.append(error)

    thread = threading.Thread(target=run, name="slow-clients")
    thread.start()
    thread.join()
    if errors:
        raise errors[0]
    return outcome[0]
