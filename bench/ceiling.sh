#!/usr/bin/env bash
# The ceiling for warm pages on two shared cores: Warmfeed (libmicrohttpd,
# --threads 2), nginx (2 workers, sendfile) and bench/ceiling/lean.c, the least
# an epoll server can do to send the same prepared bytes (2 threads, each its
# own epoll and SO_REUSEPORT listener), once copying them from memory (writev)
# and once with sendfile from a memfd. All four serve the same fragments of a
# 100,000-item feed (dumped from Warmfeed), to wrk with random pages, as
# bench/pages.sh does; rounds alternate the four. Prints each round (req/s,
# server CPU a request, wrk errors), the medians, and each one's ratios to
# nginx: what an event loop of our own could reach in place of libmicrohttpd
# (issue 35's goal: warm pages >= 1.0x nginx's req/s on shared cores).
#
#   bench/ceiling.sh                     # ~4 minutes
#   ROUNDS=5 DURATION=10 bench/ceiling.sh
#   WARMFEED_BIN=path bench/ceiling.sh   # that binary, built nothing
#   ITEMS=3000 bench/ceiling.sh          # 100 pages: the bytes stay in the caches
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/common.sh  # bench_folder, log, bench_binary
. bench/nginx.sh   # nginx_conf, nginx_static, nginx_page
. bench/cpu.sh     # cpu_ticks
ROUNDS=${ROUNDS:-3}
DURATION=${DURATION:-10}
ITEMS=${ITEMS:-100000}
CONNECTIONS=${CONNECTIONS:-32}
PAGES=$(( (ITEMS + 29) / 30 ))
bench_folder ceiling
chmod 755 "$tmp"

scripts/setup --bench >&2
bench_binary
cc=$(command -v cc || command -v clang) || { log "no C compiler (cc or clang) for bench/ceiling/lean.c"; exit 1; }
"$cc" -O2 -pthread -o "$tmp/lean" bench/ceiling/lean.c
freeport() { python3 bench/pages_helper.py freeport; }

log "seeding $ITEMS items and starting warmfeed (--threads 2)"
"$built" serve --port 0 --data "$tmp/data" --demo-items "$ITEMS" --page-size 30 --page-cache-mb 256 --threads 2 \
  --public Public --templates Templates >"$tmp/warmfeed.out" 2>"$tmp/warmfeed.err" &
wf=$!; pids+=("$wf")
url=""
for _ in $(seq 1200); do
  url=$(sed -n 's|^Warmfeed is serving \(http://[^ ]*\)/$|\1|p' "$tmp/warmfeed.out")
  [ -n "$url" ] && break
  kill -0 "$wf" 2>/dev/null || { cat "$tmp/warmfeed.err" >&2; exit 1; }
  sleep 0.1
done
[ -n "$url" ] || { log "warmfeed did not start in 120 s"; exit 1; }
log "$(python3 bench/pages_helper.py rows-ready "$url" "$(cat "$tmp/data/admin-token")")"
mkdir -p "$tmp/root"
log "$(python3 bench/pages_helper.py dump "$url" "$PAGES" "$tmp/root")"
chmod -R a+rX "$tmp/root"

ng_port=$(freeport)
mkdir -p "$tmp/nginx"
nginx_conf "$tmp/nginx" 2 "$(nginx_static)
    server {
        listen 127.0.0.1:$ng_port;
        root $tmp/root;
        location = /fragment {
$(nginx_page)
            try_files /fragments/\$arg_page.html =404;
        }
    }"
nginx -p "$tmp/nginx" -c "$tmp/nginx/nginx.conf" -g 'daemon off;' 2>>"$tmp/nginx/error.log" &
ng=$!; pids+=("$ng")
copy_port=$(freeport); "$tmp/lean" "$copy_port" 2 copy "$tmp/root" "$PAGES" & copy=$!; pids+=("$copy")
send_port=$(freeport); "$tmp/lean" "$send_port" 2 sendfile "$tmp/root" "$PAGES" & send=$!; pids+=("$send")
sleep 2
ng_workers=$(pgrep -P "$ng" | tr '\n' ' ')
for port in "$ng_port" "$copy_port" "$send_port"; do
  python3 - "$url" "http://127.0.0.1:$port" <<'PY'
import sys, urllib.request
a, b = (urllib.request.urlopen(u + "/fragment?page=7").read() for u in sys.argv[1:])
sys.exit(0 if a == b else f"{sys.argv[2]} does not send Warmfeed's bytes")
PY
done

wrk_round() {  # NAME URL PID... -> "NAME req/s cpu_us errors"
  local name=$1 target=$2 out c0 c1 n errors
  shift 2
  WF_PAGES=$PAGES KIND=fragment wrk -t1 -c"$CONNECTIONS" -d2s -s bench/random_page.lua "$target/" >/dev/null 2>&1 || true
  c0=$(cpu_ticks "$@")
  out=$(WF_PAGES=$PAGES KIND=fragment wrk -t1 -c"$CONNECTIONS" -d"${DURATION}s" -s bench/random_page.lua "$target/" 2>&1) || true
  c1=$(cpu_ticks "$@")
  n=$(awk '/requests in/ {print $1}' <<<"$out")
  errors=$(awk '/Socket errors|Non-2xx/ {print}' <<<"$out" | tr '\n' ' ')
  python3 -c "import sys; n=$n; print('$name', round(n / $DURATION), round(($c1 - $c0) * 1e6 / $(getconf CLK_TCK) / n, 2), repr('${errors:-none}'))"
}

{
echo "## The ceiling: warmfeed, nginx and a lean epoll server on the same fragments"
echo
echo "- date: $(date -u '+%Y-%m-%d %H:%M UTC'); machine: nproc $(nproc), $(uname -r); load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "- build: $built ($(git rev-parse --short HEAD)); command: \`bench/ceiling.sh\` (ROUNDS=$ROUNDS DURATION=$DURATION ITEMS=$ITEMS CONNECTIONS=$CONNECTIONS)"
echo "- every server and wrk (-t1 -c$CONNECTIONS, random /fragment?page=1..$PAGES) share the same 2 cores; warmfeed --threads 2, nginx 2 workers, lean 2 threads"
echo
echo "| round | server | req/s | server CPU µs a request | wrk errors |"
echo "|---:|---|---:|---:|---|"
} | tee "$tmp/report"
for round in $(seq "$ROUNDS"); do
  for server in warmfeed nginx lean-copy lean-sendfile; do
    case $server in
      warmfeed) line=$(wrk_round warmfeed "$url" "$wf") ;;
      nginx) line=$(wrk_round nginx "http://127.0.0.1:$ng_port" $ng_workers) ;;
      lean-copy) line=$(wrk_round lean-copy "http://127.0.0.1:$copy_port" "$copy") ;;
      lean-sendfile) line=$(wrk_round lean-sendfile "http://127.0.0.1:$send_port" "$send") ;;
    esac
    echo "$round $line" >>"$tmp/rounds"
    read -r _ name rps cpu errors <<<"$round $line"
    echo "| $round | $name | $rps | $cpu | $errors |" | tee -a "$tmp/report"
  done
done
python3 - "$tmp/rounds" <<'PY' | tee -a "$tmp/report"
import statistics, sys
rows = [line.split(None, 4) for line in open(sys.argv[1])]
by = {}
for r, name, rps, cpu, _ in rows:
    by.setdefault(name, {}).setdefault(r, (float(rps), float(cpu)))
ng = by["nginx"]
print()
print("| server | median req/s | median CPU µs | req/s / nginx's (median of rounds) | CPU / nginx's (median of rounds) |")
print("|---|---:|---:|---:|---:|")
for name, runs in by.items():
    rps = statistics.median(v[0] for v in runs.values())
    cpu = statistics.median(v[1] for v in runs.values())
    ratio = statistics.median(runs[r][0] / ng[r][0] for r in runs)
    cost = statistics.median(runs[r][1] / ng[r][1] for r in runs)
    print(f"| {name} | {rps:.0f} | {cpu:.1f} | {ratio:.3f} | {cost:.3f} |")
PY
mkdir -p bench/out
cp "$tmp/report" "bench/out/ceiling-$(date -u +%Y%m%dT%H%M%SZ).md"
