#!/usr/bin/env bash
# Slow clients (issue 9, part 3): 4,200 connections trickle a never-ending
# request head one byte a second (reopened 5 s after the server ends one, as
# slowloris does), and meanwhile 300 normal requests (20 a second, each on a
# new connection, 5 s client timeout) ask for a page. Run against a release
# Warmfeed with its defaults (4,096 connections, 1,024 an address, 10 s a head)
# and against nginx with the same 4,096 connections in all (2 workers x 2,048)
# and its defaults (client_header_timeout 60 s), serving a static copy of the
# same page; alternating which goes first, ROUNDS rounds for each of two
# attacks: from four other addresses (127.0.0.2-5), and from the readers' own
# address (127.0.0.1, e.g. a shared NAT).
#
# Prints each run: the share of normal requests answered 200 within 1 s (the
# goal is >= 99%), their p50/p99, and how many trickling connections the
# server ended. Then the medians, side by side.
#
#   bench/slow-clients.sh                 # ~6 minutes
#   ROUNDS=1 bench/slow-clients.sh
#   WARMFEED_BIN=path bench/slow-clients.sh
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/common.sh  # bench_folder, log, bench_binary
. bench/nginx.sh  # nginx_conf, nginx_static, nginx_page
repo=$PWD
ROUNDS=${ROUNDS:-3}
bench_folder slow

scripts/setup --bench
bench_binary
cp "$built" "$tmp/warmfeed"
python=.venv/bin/python

mkdir -p "$tmp/data"
"$tmp/warmfeed" serve --port 0 --data "$tmp/data" --demo-items 1000 --prewarm 0 --threads 2 \
  --public "$repo/Public" --templates "$repo/Templates" >"$tmp/warmfeed.out" 2>"$tmp/warmfeed.err" &
pids+=($!)
wf=""
for _ in $(seq 600); do
  wf=$(sed -n 's|^Warmfeed is serving \(http://[^ ]*\)/$|\1|p' "$tmp/warmfeed.out"); [ -n "$wf" ] && break; sleep 0.1
done
[ -n "$wf" ] || { log "warmfeed did not start"; cat "$tmp/warmfeed.err" >&2; exit 1; }

# nginx serves warmfeed's first page as a static file.
mkdir -p "$tmp/nginx/root" "$tmp/nginx/tmp"
chmod 755 "$tmp" "$tmp/nginx" "$tmp/nginx/root"
curl -sS "$wf/" -o "$tmp/nginx/root/index.html"
chmod 644 "$tmp/nginx/root/index.html"
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
NGINX_CONNECTIONS=2048 NGINX_ERRORS=crit nginx_conf "$tmp/nginx" 2 "    server { listen 127.0.0.1:$port; root $tmp/nginx/root; }" "worker_rlimit_nofile 20000;"
nginx -p "$tmp/nginx" -c "$tmp/nginx/nginx.conf" -g 'daemon off;' 2>>"$tmp/nginx/error.log" &
pids+=($!)
ng="http://127.0.0.1:$port"
for _ in $(seq 100); do curl -sS -o /dev/null "$ng/" 2>/dev/null && break; sleep 0.1; done
log "warmfeed at $wf, nginx at $ng"

run() {  # run NAME URL SOURCES
  local line
  line=$("$python" bench/slow_clients_bench.py "$2" "$3" /)
  echo "$1 | $3 | $line"
  echo "$line" >>"$tmp/$1-$3.jsonl"
  sleep 12  # let the last trickling connections time out or be reaped before the next run
}
echo "server | trickling from | result"
for sources in 127.0.0.2,127.0.0.3,127.0.0.4,127.0.0.5 127.0.0.1; do
  for round in $(seq "$ROUNDS"); do
    if [ $((round % 2)) = 1 ]; then run warmfeed "$wf" "$sources"; run nginx "$ng" "$sources"
    else run nginx "$ng" "$sources"; run warmfeed "$wf" "$sources"; fi
  done
done
echo "medians (share answered within 1 s):"
for sources in 127.0.0.2,127.0.0.3,127.0.0.4,127.0.0.5 127.0.0.1; do
  for name in warmfeed nginx; do
    python3 - "$tmp/$name-$sources.jsonl" "$name" "$sources" <<'PY'
import json, statistics, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
p99 = [r["p99_ms"] for r in rows if r["p99_ms"] is not None]
print(f"  {sys.argv[2]:8} from {sys.argv[3]}: within 1 s {statistics.median(r['within_1s'] for r in rows):.1%}, "
      f"p99 {statistics.median(p99) if p99 else '-'} ms, answered {statistics.median(r['answered'] for r in rows)}/{rows[0]['normal']}")
PY
  done
done
curl -s "$wf/metrics" >/dev/null || true
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
