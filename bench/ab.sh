#!/usr/bin/env bash
# Two builds of warmfeed, the same pages, paired: server CPU a request of
# build B against build A, for a change too small for bench/pages.sh to show.
#
# On this kind of VM (no hardware counters, rounds of one binary spreading by
# ±15% as other tenants come and go) a change worth a few percent cannot be
# read from rounds run minutes apart. Here both servers are up at once,
# pinned to the same core (SERVER_CPU, 1), each on its own copy of the same
# data folder; wrk (on LOAD_CPUS, 0) alternates short rounds between them,
# A then B, then B then A, so a slow moment of the machine falls on both of
# a pair. Each round's figure is the server's CPU time (user + system, from
# /proc) over the requests wrk counted; the result is the median of the
# pairs' B/A ratios and their quartiles. An A/A run (the same binary twice)
# reads 1.002, quartiles 0.977–1.040, over 16 pairs of 3 s (2026-12-02).
#
#   bench/ab.sh OLD_BINARY NEW_BINARY DATA_FOLDER
#   PAGES=33334 PAGE_CACHE_MB=64 bench/ab.sh A B DIR  # deep pages: a folder a
#                                                     # `DEEP=1 KEEP_TMP=1 bench/pages.sh` kept
#   PAIRS=20 SECONDS_EACH=3 bench/ab.sh A B DIR       # the defaults
#   WF_GZIP=1 … bench/ab.sh A B DIR                   # asking for gzip, as browsers do
#   AS_READERS=1 PAGES=20 bench/ab.sh A B DIR          # readers' documents (bench/readers.lua: wf
#                                                     # cookies, gzip, Sec-CH-DPR, Sec-Fetch-*) with
#                                                     # pre-warm on, which tracks them; DIR a small
#                                                     # feed (600 items: 20 pages), warmed by the
#                                                     # readers, every thumbnail made, before the pairs
#
# DATA_FOLDER holds a store (feed.sqlite and its feed.sqlite-* files), e.g. the
# data folder of a `KEEP_TMP=1 bench/pages.sh` run; its files are copied twice
# into a mktemp folder, removed on exit. Requests are cookie-less random page
# fragments (bench/random_page.lua) over CONNECTIONS (32) connections, as
# bench/pages.sh sends; each server gets --threads 1 and a warm-up of 5 s.
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/common.sh  # bench_folder, log, bench_binary
[ $# = 3 ] || { sed -n '2,26p' "$0" >&2; exit 2; }
a_bin=$(realpath "$1") b_bin=$(realpath "$2") data=$3
PAGES=${PAGES:-3334}
PAGE_CACHE_MB=${PAGE_CACHE_MB:-256}
PAIRS=${PAIRS:-20}
SECONDS_EACH=${SECONDS_EACH:-3}
CONNECTIONS=${CONNECTIONS:-32}
SERVER_CPU=${SERVER_CPU:-1}
LOAD_CPUS=${LOAD_CPUS:-0}

bench_folder ab

start() {  # start NAME BINARY: a server on its copy of the store; sets started_pid and started_url
  local name=$1 binary=$2
  mkdir -p "$tmp/$name"
  cp "$data"/feed.sqlite "$data"/feed.sqlite-* "$tmp/$name/"
  taskset -c "$SERVER_CPU" "$binary" serve --port 0 --data "$tmp/$name" --demo-items 0 --page-size 30 \
    --page-cache-mb "$PAGE_CACHE_MB" --threads 1 --public Public --templates Templates ${readers_args[@]+"${readers_args[@]}"} \
    >"$tmp/$name.out" 2>"$tmp/$name.err" &
  local pid=$! url=""
  pids+=("$pid")
  for _ in $(seq 600); do
    url=$(sed -n 's|^Warmfeed is serving \(http://[^ ]*\)/$|\1|p' "$tmp/$name.out")
    [ -n "$url" ] && break
    kill -0 "$pid" 2>/dev/null || { echo "ab: $name exited:" >&2; cat "$tmp/$name.err" >&2; exit 1; }
    sleep 0.1
  done
  [ -n "$url" ] || { echo "ab: $name did not start in 60 s" >&2; exit 1; }
  started_pid=$pid started_url=$url
}
readers_args=() script=bench/random_page.lua
if [ "${AS_READERS:-0}" = 1 ]; then readers_args=(--prewarm 2 --origin-latency 0); script=bench/readers.lua; fi
start a "$a_bin"; a_pid=$started_pid a_url=$started_url
start b "$b_bin"; b_pid=$started_pid b_url=$started_url

export WF_PAGES=$PAGES
load() { taskset -c "$LOAD_CPUS" wrk -t1 -c"$CONNECTIONS" -d"$1" -s "$script" "$2/"; }
# shellcheck source=bench/cpu.sh
source bench/cpu.sh   # cpu_ticks
settle() {  # settle PID: until the server is idle (under 2% of a core for a second), at most 300 s
  local before after
  for _ in $(seq 300); do
    before=$(cpu_ticks "$1"); sleep 1; after=$(cpu_ticks "$1")
    [ $((after - before)) -le $(( $(getconf CLK_TCK) / 50 )) ] && return
  done
  echo "ab: the server at $1 was still busy after 300 s" >&2
}
load 5s "$a_url" >/dev/null
load 5s "$b_url" >/dev/null
if [ "${AS_READERS:-0}" = 1 ]; then
  # The readers' first views set pre-warm making their pages' thumbnails (WebP and AVIF):
  # seconds of CPU, let finish so the pairs measure the views, not that work.
  settle "$a_pid"; settle "$b_pid"
  load 5s "$a_url" >/dev/null; load 5s "$b_url" >/dev/null
  settle "$a_pid"; settle "$b_pid"
fi
round() {  # round PID URL -> µs of the server's CPU a request
  local before after requests
  before=$(cpu_ticks "$1")
  requests=$(load "${SECONDS_EACH}s" "$2" | awk '/requests in/ {print $1}')
  after=$(cpu_ticks "$1")
  awk -v ticks=$((after - before)) -v hz="$(getconf CLK_TCK)" -v n="$requests" 'BEGIN { printf "%.2f\n", ticks * 1e6 / hz / n }'
}
echo "pair A_us B_us B/A"
for pair in $(seq "$PAIRS"); do
  if [ $((pair % 2)) = 1 ]; then a=$(round "$a_pid" "$a_url"); b=$(round "$b_pid" "$b_url")
  else b=$(round "$b_pid" "$b_url"); a=$(round "$a_pid" "$a_url"); fi
  echo "$pair $a $b $(awk -v a="$a" -v b="$b" 'BEGIN { printf "%.4f", b / a }')"
done | tee "$tmp/pairs"
python3 - "$tmp/pairs" <<'EOF'
import statistics, sys
rows = [line.split() for line in open(sys.argv[1]) if line[0].isdigit()]
a = [float(r[1]) for r in rows]; b = [float(r[2]) for r in rows]; q = sorted(float(r[3]) for r in rows)
print(f"A median {statistics.median(a):.2f} us, B median {statistics.median(b):.2f} us a request")
print(f"B/A: median of {len(q)} paired ratios {statistics.median(q):.4f}, quartiles {q[len(q) // 4]:.4f} to {q[3 * len(q) // 4]:.4f}")
EOF
