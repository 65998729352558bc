#!/usr/bin/env bash
# What an idle server costs: voluntary context switches a second and CPU,
# Warmfeed beside nginx, after a reader's page view and a quiet spell.
#
# Each wake-up of an idle server is a timer firing, a thread woken for it, and
# a thread woken for the job; on a machine of many tenants, or two shared
# cores, those are taken from the work that pays. nginx sleeps in epoll_wait
# with nothing to do. Warmfeed is started on a demo feed of ITEMS items
# (--threads THREADS, its other options as `serve` sets them), asked for one
# page as a reader asks (a `wf` cookie, Sec-Fetch-Mode: navigate), so the
# parts a reader wakes (pre-warm, its drain of readers' views) have run; then
# QUIET seconds pass, and the next COUNT seconds are counted from /proc.
#
#   bench/idle.sh                            # ~1 minute
#   WARMFEED_BIN=path bench/idle.sh          # that binary, build nothing
#   ITEMS=1000 THREADS=2 QUIET=20 COUNT=10 bench/idle.sh   # the defaults
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/common.sh  # bench_folder, log, bench_binary
. bench/nginx.sh  # nginx_conf, nginx_static, nginx_page
repo=$PWD
ITEMS=${ITEMS:-1000}
THREADS=${THREADS:-2}
QUIET=${QUIET:-20}
COUNT=${COUNT:-10}

bench_folder idle

scripts/setup --bench >/dev/null
if [ -n "${WARMFEED_BIN:-}" ]; then
  bin=$WARMFEED_BIN
else
  log "building warmfeed (release)"
  swift build -c release --product warmfeed >"$tmp/build.log" 2>&1 || { tail -n 20 "$tmp/build.log" >&2; exit 1; }
  bin=$repo/.build/release/warmfeed
fi

# voluntary switches of every thread of PID, and its CPU ticks
switches() { cat /proc/"$1"/task/*/status 2>/dev/null | awk '/^voluntary_ctxt_switches/ {s += $2} END {print s + 0}'; }
# shellcheck source=bench/cpu.sh
source bench/cpu.sh   # cpu_ticks
count() {  # count NAME PID...: switches a second and CPU over COUNT seconds, for those processes
  local name=$1; shift
  local s0=0 s1=0 pid t0 t1
  for pid in "$@"; do s0=$((s0 + $(switches "$pid"))); done
  t0=$(cpu_ticks "$@")
  sleep "$COUNT"
  for pid in "$@"; do s1=$((s1 + $(switches "$pid"))); done
  t1=$(cpu_ticks "$@")
  awk -v n="$name" -v s=$((s1 - s0)) -v t=$((t1 - t0)) -v c="$COUNT" -v hz="$(getconf CLK_TCK)" \
    'BEGIN { printf "%-9s %6.1f voluntary switches a second, CPU %.2f%% of a core\n", n, s / c, 100 * t / hz / c }'
}

mkdir -p "$tmp/data"
"$bin" serve --port 0 --data "$tmp/data" --demo-items "$ITEMS" --threads "$THREADS" \
  --public "$repo/Public" --templates "$repo/Templates" >"$tmp/warmfeed.out" 2>"$tmp/warmfeed.err" &
wf_pid=$!
pids+=("$wf_pid")
url=""
for _ in $(seq 600); do
  url=$(sed -n 's|^Warmfeed is serving \(http://[^ ]*\)/$|\1|p' "$tmp/warmfeed.out")
  [ -n "$url" ] && break
  sleep 0.1
done
[ -n "$url" ] || { log "warmfeed did not start"; cat "$tmp/warmfeed.err" >&2; exit 1; }
curl -s -o /dev/null -b "wf=idlebenchreader0000000001" -H 'Sec-Fetch-Mode: navigate' -H 'Accept-Encoding: gzip' "$url/?page=2"

mkdir -p "$tmp/nginx/root" "$tmp/nginx/tmp"
ng_port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
echo ok >"$tmp/nginx/root/index.html"
nginx_conf "$tmp/nginx" "$THREADS" "    server { listen 127.0.0.1:$ng_port; root $tmp/nginx/root; }"
nginx -c "$tmp/nginx/nginx.conf" -g 'daemon off;' 2>"$tmp/nginx/stderr" &
ng_master=$!
pids+=("$ng_master")
sleep 1
kill -0 "$ng_master" 2>/dev/null || { log "nginx did not start:"; cat "$tmp/nginx/stderr" >&2; exit 1; }
ng_pids="$ng_master $(pgrep -P "$ng_master" | tr '\n' ' ')"

log "warmfeed ($bin, --threads $THREADS, $ITEMS items) asked for a reader's page; quiet for $QUIET s, then $COUNT s counted"
sleep "$QUIET"
# shellcheck disable=SC2086 # the pids split into words
count warmfeed "$wf_pid" >"$tmp/count.wf" &
wf_count=$!
count nginx $ng_pids >"$tmp/count.ng" &
ng_count=$!
wait "$wf_count" "$ng_count"
cat "$tmp/count.wf" "$tmp/count.ng"
