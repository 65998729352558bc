"""One slow-client attack against URL; prints one JSON line (see bench/slow-clients.sh)."""

import json
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "Tests" / "browser"))
from slow_clients import attack  # noqa: E402

url, sources, path = sys.argv[1], sys.argv[2].split(","), sys.argv[3]
outcome = attack(url, tricklers=4200, sources=sources, normal=300, rate=20, path=path, client_timeout=5)
latencies = sorted(outcome.latencies)
print(json.dumps({
    "within_1s": round(outcome.answered_within(1), 4),
    "answered": len(latencies), "normal": outcome.normal,
    "p50_ms": round(statistics.median(latencies) * 1000, 1) if latencies else None,
    "p99_ms": round(latencies[int(len(latencies) * 0.99) - 1] * 1000, 1) if latencies else None,
    "trickling_opened": outcome.opened, "ended_by_server": outcome.closed_by_server,
}))
