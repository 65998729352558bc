#!/usr/bin/env bash
# slowhttptest's four attacks (slowloris, slow body, slow read, range) against a
# release Warmfeed with its defaults, each with CONNECTIONS connections from
# 127.0.0.1, while a probe from another address (127.0.0.2) asks for the first
# page every 0.25 s on a new connection with a 1 s timeout (issue 34: probes
# 100% answered within 1 s).
#
#   bench/slowhttptest.sh                      # ~5 minutes
#   SECONDS_EACH=30 CONNECTIONS=2000 bench/slowhttptest.sh
#   WARMFEED_BIN=path bench/slowhttptest.sh
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/common.sh  # bench_folder, log, bench_binary
repo=$PWD
CONNECTIONS=${CONNECTIONS:-2000}; SECONDS_EACH=${SECONDS_EACH:-60}
bench_folder slowhttp

scripts/setup --bench
bench_binary
ulimit -n 65536 2>/dev/null || ulimit -n "$(ulimit -Hn)"

WARMFEED_ADMIN_TOKEN=bench-token-of-thirty-two-characters "$built" serve --port 0 --data "$tmp/data" --demo-items 1000 \
  --public "$repo/Public" --templates "$repo/Templates" >"$tmp/out" 2>"$tmp/err" &
pid=$!; pids+=("$pid")
url=""
for _ in $(seq 600); do url=$(sed -n 's|^Warmfeed is serving \(http://[^ ]*\)/$|\1|p' "$tmp/out"); [ -n "$url" ] && break; sleep 0.1; done
[ -n "$url" ] || { log "warmfeed did not start"; cat "$tmp/err" >&2; exit 1; }
port=${url##*:}

probe() {  # probe SECONDS: asks every 0.25 s from 127.0.0.2; prints "answered total p99_ms"
  python3 - "$port" "$1" <<'PY'
import socket, sys, time
port, seconds = int(sys.argv[1]), float(sys.argv[2])
times, total, end = [], 0, time.monotonic() + seconds
while time.monotonic() < end:
    total += 1
    start = time.monotonic()
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=1, source_address=("127.0.0.2", 0)) as s:
            s.settimeout(max(0.01, 1 - (time.monotonic() - start)))
            s.sendall(b"GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
            data = b""
            while b"\r\n\r\n" not in data:
                chunk = s.recv(65536)
                if not chunk: break
                data += chunk
            if data.startswith(b"HTTP/1.1 200") and time.monotonic() - start <= 1: times.append(time.monotonic() - start)
    except OSError:
        pass
    time.sleep(max(0, 0.25 - (time.monotonic() - start)))
times.sort()
print(len(times), total, f"{1000 * times[min(len(times) - 1, int(len(times) * 0.99))]:.1f}" if times else "-")
PY
}

echo "| attack | connections asked | most connected at once | probes answered 200 within 1 s | p99 ms | server RSS peak MB |"
echo "|---|---:|---:|---:|---:|---:|"
for mode in slowloris slowbody slowread range; do
  case $mode in
    slowloris) args=(-H -i 10 -r 200 -t GET -x 24 -p 3) ;;
    slowbody) args=(-B -i 110 -r 200 -s 8192 -t POST -x 10 -p 3) ;;
    slowread) args=(-X -r 200 -w 512 -y 1024 -n 5 -z 32 -k 3 -p 3) ;;
    range) args=(-R -t HEAD -a 10 -b 3000 -r 500 -p 3) ;;
  esac
  slowhttptest -c "$CONNECTIONS" "${args[@]}" -l "$SECONDS_EACH" -u "$url/" >"$tmp/$mode.log" 2>&1 &
  attack=$!; pids+=("$attack")
  sleep 5   # the attack's connections open
  read -r answered total p99 < <(probe $((SECONDS_EACH - 10)))
  wait "$attack" 2>/dev/null || true
  rss=$(awk '/^VmHWM/ {print int($2 / 1024)}' "/proc/$pid/status")
  # slowhttptest's status lines: the most connections it held at once (the attack reached the server).
  held=$(sed 's/\x1b\[[0-9;]*m//g' "$tmp/$mode.log" | sed -n 's/^connected:[[:space:]]*\([0-9]*\).*/\1/p' | sort -n | tail -1)
  echo "| $mode | $CONNECTIONS | ${held:-?} | $answered / $total ($(python3 -c "print(f'{100 * $answered / max(1, $total):.1f}%')")) | $p99 | $rss |"
  sleep 3
done
