#!/usr/bin/env bash
# Issue 37, item 5: a thousand sources on one node. The refresh loop's CPU and
# memory, and its politeness as the origin saw it, while Warmfeed polls SOURCES
# loopback feeds every REFRESH seconds for INTERVALS intervals.
#
#   bench/sources.sh                   # 1,000 sources on 50 hosts, 60 s, 10 intervals (~15 minutes)
#   QUICK=1 bench/sources.sh           # a smoke test: 3 intervals of 10 s
#   FAULTS=1 bench/sources.sh          # also a throttled host (429, Retry-After: RETRY_AFTER) and
#                                      # misbehaving sources (500, a drip, garbage, 40 MB)
#   WARMFEED_BIN=path bench/sources.sh # measure that binary, build nothing
#   PIN=0 bench/sources.sh             # no taskset: everything on the shared cores
#   LIST=plain bench/sources.sh        # give the server the plain list instead of the OPML
#   SERVE_ARGS="--threads 1" bench/sources.sh   # more options for every serve
#   MODE=cluster bench/sources.sh      # NODES (3) nodes on one PostgreSQL (scripts/postgres)
#                                      # polling the same list: each source once an interval
#                                      # in all, and what each node polled
#   WARMFEED_BIN=bench/sources_stand_in.py QUICK=1 FAULTS=1 bench/sources.sh
#                                      # the harness itself, against a Python stand-in
#
# The origin (bench/sources_origin.py, asyncio, one process) serves SOURCES feeds
# spread over HOSTS addresses 127.0.0.1..127.0.0.HOSTS, one port: even sources
# change every REFRESH seconds (40 items, 3 new, ~50 KB, ETag), odd ones never
# (ETag and Last-Modified, 304 to either). With PIN=1 it runs on ORIGIN_CPU (0)
# with this script's samplers (and PostgreSQL), and Warmfeed on SERVER_CPU (1).
#
# 1. Baseline (MODE=single): the same binary and options with no --source,
#    idle BASELINE_SECONDS (30), its VmRSS.
# 2. `warmfeed serve --port 0 --data TMP/data --source TMP/sources.opml --refresh
#    REFRESHs --prewarm 0 --demo-items 0 --public Public --templates Templates`;
#    waits until /admin/sources (admin token) shows every source fetched once
#    (or, without that route, until the origin saw every one asked), then
#    SETTLE (1) more interval.
# 3. INTERVALS intervals measured: the server's utime+stime from /proc/PID/stat
#    over the wall time (goal ≤ 5% of one core); VmRSS every second, highest
#    minus the baseline (goal ≤ 64 MB); from the origin's log: static sources'
#    full downloads after their first (goal 0), each source's requests in each
#    interval (windows of one interval centred on its first request: goal
#    exactly 1), its lateness against its own phase (p99 ≤ 1 s); with FAULTS=1
#    the throttled host armed 1.5 intervals in and every 3 intervals after:
#    requests inside a hold (goal 0) and how late the throttled source came back
#    after the hold (goal under 1 s). Then /admin/sources, /admin/cache and `/`
#    (200, the river's size from aria-setsize), and the table of figures vs goals.
#
# What it relies on from the server: `serve` takes --port 0 (or a port), --data,
# --source (an OPML file, or with LIST=plain a list, one URL a line), --refresh Ns,
# --prewarm 0, --demo-items 0, --public, --templates (with MODE=cluster also
# --store, --node-name, --peer, and WARMFEED_ADMIN_TOKEN); prints `Warmfeed is
# serving http://HOST:PORT/` on stdout once it listens; writes DATA/admin-token;
# GET /admin/sources with `Authorization: Bearer TOKEN` answers JSON
# {"sources": [{"url", "last_fetch_at" (null until fetched), "state", "items",
# "consecutive_failures", "last_result", ...}], "totals": {...}} (other fields
# are shown or ignored; without the route it waits on the origin's count);
# GET /admin/cache: "rows" (caught_up), "memory_use", "source" (imports,
# failures, throttled, polled_elsewhere), each optional; GET / answers 200 with
# rows carrying aria-setsize (the river's size); SIGTERM ends it.
#
# Everything lives in a mktemp folder under /tmp, removed on exit (KEEP_TMP=1
# keeps it: the origin's log is origin.log, one JSON line a request); a copy of
# the report goes to bench/out/ (git-ignored).
set -Eeuo pipefail
cd "$(dirname "$0")/.."
repo=$PWD
QUICK=${QUICK:-0}
if [ "$QUICK" = 1 ]; then
  INTERVALS=${INTERVALS:-3}; REFRESH=${REFRESH:-10}; BASELINE_SECONDS=${BASELINE_SECONDS:-10}
fi
SOURCES=${SOURCES:-1000}
HOSTS=${HOSTS:-50}
INTERVALS=${INTERVALS:-10}
REFRESH=${REFRESH:-60}; REFRESH=${REFRESH%s}
FAULTS=${FAULTS:-0}
PIN=${PIN:-1}
ORIGIN_CPU=${ORIGIN_CPU:-0}
SERVER_CPU=${SERVER_CPU:-1}
BASELINE_SECONDS=${BASELINE_SECONDS:-30}
SETTLE=${SETTLE:-1}
RETRY_AFTER=${RETRY_AFTER:-7}
LIST=${LIST:-opml}
MODE=${MODE:-single}
NODES=${NODES:-3}
TOKEN=bench-token-of-thirty-two-characters  # the cluster's nodes share it (WARMFEED_ADMIN_TOKEN)
FETCH_TIMEOUT=${FETCH_TIMEOUT:-$((REFRESH * 3 + 180))}
SERVE_TIMEOUT=${SERVE_TIMEOUT:-600}
read -r -a serve_extra <<<"${SERVE_ARGS:-}"
case "$REFRESH$INTERVALS$SOURCES$HOSTS$NODES$SETTLE" in *[!0-9]*) echo "REFRESH, INTERVALS, SOURCES, HOSTS, NODES and SETTLE are whole numbers" >&2; exit 2 ;; esac
case "$MODE" in single | cluster) ;; *) echo "MODE is single or cluster" >&2; exit 2 ;; esac
case "$LIST" in opml | plain) ;; *) echo "LIST is opml or plain" >&2; exit 2 ;; esac

tmp=$(mktemp -d /tmp/warmfeed-bench-sources.XXXXXX)
wf_pid="" origin_pid="" sampler_pid="" pg_started=0
node_pids=()  # the servers running now (a stopped one is taken out: its pid may be reused)
stop() {  # stop PID: TERM, then wait for it (it is a child of this shell)
  [ -n "$1" ] || return 0
  kill -TERM "$1" 2>/dev/null || true
  wait "$1" 2>/dev/null || true
}
cleanup() {
  stop "$sampler_pid"; stop "$wf_pid"
  for pid in ${node_pids[@]+"${node_pids[@]}"}; do stop "$pid"; done
  stop "$origin_pid"
  if [ "$pg_started" = 1 ]; then scripts/postgres stop "$tmp/pg" 2>/dev/null || true; fi
  if [ "${KEEP_TMP:-0}" = 1 ]; then echo "bench: kept $tmp" >&2; else rm -rf "$tmp"; fi
}
trap cleanup EXIT
trap 'echo "bench: failed at line $LINENO: $BASH_COMMAND" >&2' ERR
log() { echo "bench $(date +%T): $*" >&2; }
now() { python3 -c 'import time; print(f"{time.monotonic():.4f}")'; }  # the clock of the origin's log
ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }  # utime + stime of PID, in clock ticks
rss_kib() { awk '/^VmRSS/ {print $2}' "/proc/$1/status"; }
hwm_kib() { awk '/^VmHWM/ {print $2}' "/proc/$1/status"; }
on_origin=(); on_server=()
if [ "$PIN" = 1 ]; then
  [ "$(nproc)" -ge 2 ] || { echo "PIN=1 needs two cores" >&2; exit 2; }
  on_origin=(taskset -c "$ORIGIN_CPU"); on_server=(taskset -c "$SERVER_CPU")
fi

scripts/setup --bench
if [ -n "${WARMFEED_BIN:-}" ]; then built=$WARMFEED_BIN; else
  log "building the release binary"
  swift build -c release --product warmfeed >"$tmp/build.log" 2>&1 || { tail -20 "$tmp/build.log" >&2; exit 1; }
  built=.build/release/warmfeed
fi
cp "$built" "$tmp/warmfeed"

# serve NAME DATA PORT [OPTION...]: starts a server (on SERVER_CPU with PIN=1), sets
# wf_pid and url once it prints the address it serves.
serve() {
  local name=$1 data=$2 listen=$3; shift 3
  : >"$tmp/$name.out"
  ${on_server[@]+"${on_server[@]}"} "$tmp/warmfeed" serve --port "$listen" --data "$data" --prewarm 0 --demo-items 0 \
    --public "$repo/Public" --templates "$repo/Templates" ${serve_extra[@]+"${serve_extra[@]}"} "$@" \
    >"$tmp/$name.out" 2>"$tmp/$name.err" &
  wf_pid=$!
  url=""
  local deadline=$((SECONDS + SERVE_TIMEOUT))
  while [ "$SECONDS" -lt "$deadline" ]; do
    url=$(sed -n 's|^Warmfeed is serving \(http://[^ ]*\)/$|\1|p' "$tmp/$name.out"); [ -n "$url" ] && return 0
    kill -0 "$wf_pid" 2>/dev/null || { log "$name: warmfeed ended"; tail -20 "$tmp/$name.err" >&2; exit 1; }
    sleep 0.2
  done
  log "$name: warmfeed did not say it serves within $SERVE_TIMEOUT s"; tail -20 "$tmp/$name.err" >&2; exit 1
}

# 1. The baseline: an empty server, idle (MODE=single; a cluster's nodes are shown as they are).
baseline_kib=0
if [ "$MODE" = single ]; then
  serve baseline "$tmp/base-data" 0
  log "baseline: warmfeed (pid $wf_pid) serving $url with no source; idle for $BASELINE_SECONDS s"
  sleep "$BASELINE_SECONDS"
  baseline_kib=$(rss_kib "$wf_pid"); baseline_hwm=$(hwm_kib "$wf_pid")
  log "baseline: VmRSS $((baseline_kib / 1024)) MB (VmHWM $((baseline_hwm / 1024)) MB)"
  stop "$wf_pid"; wf_pid=""
fi

# 2. The origin, then the server (or the cluster's nodes) polling it.
origin_args=(--sources "$SOURCES" --hosts "$HOSTS" --interval "$REFRESH" --retry-after "$RETRY_AFTER"
  --log "$tmp/origin.log" --summary "$tmp/origin-summary.json"
  --write-opml "$tmp/sources.opml" --write-list "$tmp/sources.txt")
[ "$FAULTS" = 1 ] && origin_args+=(--faults)
: >"$tmp/origin.out"
${on_origin[@]+"${on_origin[@]}"} python3 bench/sources_origin.py "${origin_args[@]}" >"$tmp/origin.out" 2>"$tmp/origin.err" &
origin_pid=$!
port=""
for _ in $(seq 200); do
  port=$(sed -n 's/^sources_origin: listening on port \([0-9]*\):.*/\1/p' "$tmp/origin.out"); [ -n "$port" ] && break
  kill -0 "$origin_pid" 2>/dev/null || { cat "$tmp/origin.err" >&2; exit 1; }
  sleep 0.1
done
[ -n "$port" ] || { log "the origin did not start"; cat "$tmp/origin.err" >&2; exit 1; }
origin="http://127.0.0.1:$port"
log "$(cat "$tmp/origin.out")"
log "documents: $(curl -sf -o /dev/null -w '%{size_download}' "http://127.0.0.1:$port/feed/2.xml") bytes (a changing source), $(grep -vc '^#' "$tmp/sources.txt") sources in the list"
list_file=$tmp/sources.opml; [ "$LIST" = plain ] && list_file=$tmp/sources.txt
poll_args=(--source "$list_file" --refresh "${REFRESH}s")

node_names=(); node_urls=()
serve_started=$(now)
if [ "$MODE" = single ]; then
  serve serving "$tmp/data" 0 "${poll_args[@]}"
  node_names=(serving); node_pids=("$wf_pid"); node_urls=("$url"); wf_pid=""
  token=$(cat "$tmp/data/admin-token")
else
  # PostgreSQL (scripts/postgres; on the origin's CPU with PIN=1), then the nodes one after
  # the other, each told every node as a peer, as bench/cluster.py starts them.
  chmod 755 "$tmp"  # PostgreSQL runs as its own user in "$tmp/pg"
  store=$(${on_origin[@]+"${on_origin[@]}"} scripts/postgres start "$tmp/pg"); pg_started=1
  read -r -a node_ports <<<"$(python3 -c "
import socket
socks = [socket.socket() for _ in range($NODES)]
for s in socks: s.bind(('127.0.0.1', 0))
print(' '.join(str(s.getsockname()[1]) for s in socks))")"
  peers=(); for p in "${node_ports[@]}"; do peers+=(--peer "http://127.0.0.1:$p"); done
  export WARMFEED_ADMIN_TOKEN=$TOKEN
  token=$TOKEN
  for n in $(seq "$NODES"); do
    serve "node$n" "$tmp/node$n" "${node_ports[$((n - 1))]}" --store "$store" --node-name "node$n" "${peers[@]}" "${poll_args[@]}"
    node_names+=("node$n"); node_pids+=("$wf_pid"); node_urls+=("$url"); wf_pid=""
    log "node$n (pid ${node_pids[-1]}) serving $url"
  done
fi
url=${node_urls[0]}
log "serving $url after $(python3 -c "print(round($(now) - $serve_started, 1))") s; polling $(grep -vc '^#' "$tmp/sources.txt") sources"
# Every server's VmRSS each second from here on: "monotonic-seconds pid kB".
${on_origin[@]+"${on_origin[@]}"} python3 - "$tmp/rss" "${node_pids[@]}" <<'PY' &
import sys, time
out, pids = open(sys.argv[1], "w", buffering=1), sys.argv[2:]
while pids:
    now = time.monotonic()
    for pid in list(pids):
        try:
            kib = next(line.split()[1] for line in open(f"/proc/{pid}/status") if line.startswith("VmRSS"))
        except (OSError, StopIteration):
            pids.remove(pid)
            continue
        out.write(f"{now:.3f} {pid} {kib}\n")
    time.sleep(1.0)
PY
sampler_pid=$!
python3 bench/sources_helper.py wait-fetched "$(IFS=,; echo "${node_urls[*]}")" "$token" "$origin" "$tmp/sources.txt" "$FETCH_TIMEOUT" | tee "$tmp/fetched" >&2
# Rows rendered ahead for the first pass's items before measuring: that is the first
# pass's work, not the refresh loop's (at most ROWS_WAIT, 300 s, a server).
for u in "${node_urls[@]}"; do log "$(python3 bench/sources_helper.py rows-ready "$u" "$token" "${ROWS_WAIT:-300}")"; done
if [ "$SETTLE" -gt 0 ]; then
  log "settling for $SETTLE interval(s) of $REFRESH s"
  sleep $((SETTLE * REFRESH))
fi

# 3. The measured intervals.
log "measuring $INTERVALS intervals of $REFRESH s; VmRSS now $(for pid in "${node_pids[@]}"; do printf '%s MB ' $(($(rss_kib "$pid") / 1024)); done)"
curl -sf -o /dev/null "$origin/_origin/mark?name=start"
before=(); for pid in "${node_pids[@]}"; do before+=("$(ticks "$pid")"); done
t_start=$(now); o0=$(ticks "$origin_pid")
if [ "$FAULTS" = 1 ]; then
  curl -sf -o /dev/null "$origin/_origin/throttle?after=$((REFRESH * 3 / 2))&every=$((REFRESH * 3))"
fi
sleep $((REFRESH * INTERVALS))
after=(); for pid in "${node_pids[@]}"; do after+=("$(ticks "$pid")"); done
o1=$(ticks "$origin_pid"); t_end=$(now)
curl -sf -o /dev/null "$origin/_origin/mark?name=end"
servers=()
for i in "${!node_pids[@]}"; do
  servers+=(--server "${node_names[$i]}:${node_pids[$i]}:${before[$i]}:${after[$i]}:$(hwm_kib "${node_pids[$i]}")")
done
log "measured; the servers' view and the page"
for i in "${!node_urls[@]}"; do
  python3 bench/sources_helper.py snapshot "${node_urls[$i]}" "$token" "$tmp/snapshot/${node_names[$i]}" >&2
done
curl -sf -o "$tmp/snapshot/origin.json" "$origin/_origin/stats"
# Half an interval more, so each source's last window is whole in the origin's log.
rest=$(python3 -c "print(max(0.0, $t_end + $REFRESH / 2 + 1 - $(now)))")
sleep "$rest"
errors=0
for name in "${node_names[@]}"; do
  errors=$((errors + $(grep -ciE 'error|warning' "$tmp/$name.err" || true)))
done
stop "$sampler_pid"; sampler_pid=""
for pid in "${node_pids[@]}"; do stop "$pid"; done
node_pids=()
stop "$origin_pid"; origin_pid=""

if [ -n "${WARMFEED_BIN:-}" ]; then
  build_note="WARMFEED_BIN=$WARMFEED_BIN (built $(date -u -r "$built" '+%Y-%m-%d %H:%M UTC'))"
else
  build_note="release, from the checkout at $(git rev-parse --short HEAD 2>/dev/null || echo unknown)$(git diff --quiet HEAD -- Sources Templates Public Package.swift 2>/dev/null || echo ' with uncommitted changes')"
fi
table=$(python3 bench/sources_helper.py report --mode "$MODE" --log "$tmp/origin.log" --origin-summary "$tmp/origin-summary.json" \
  --start "$t_start" --end "$t_end" --interval "$REFRESH" --intervals "$INTERVALS" --sources "$SOURCES" --faults "$FAULTS" \
  --clk-tck "$(getconf CLK_TCK)" "${servers[@]}" --origin-cpu-before "$o0" --origin-cpu-after "$o1" \
  --rss-samples "$tmp/rss" --baseline-kib "$baseline_kib" --snapshot "$tmp/snapshot" --json-out "$tmp/figures.json")
if [ "$MODE" = single ]; then
  served="\`warmfeed serve --port 0 --data TMP --source TMP/$(basename "$list_file") --refresh ${REFRESH}s --prewarm 0 --demo-items 0 --public Public --templates Templates${SERVE_ARGS:+ $SERVE_ARGS}\`$([ "$PIN" = 1 ] && echo " on CPU $SERVER_CPU (taskset)"); the baseline the same without --source and --refresh, idle $BASELINE_SECONDS s"
else
  served="$NODES nodes, each \`warmfeed serve --port P --data TMP/nodeN --store POSTGRES --node-name nodeN --peer … (every node) --source TMP/$(basename "$list_file") --refresh ${REFRESH}s --prewarm 0 --demo-items 0 --public Public --templates Templates${SERVE_ARGS:+ $SERVE_ARGS}\`$([ "$PIN" = 1 ] && echo ", all on CPU $SERVER_CPU (taskset); PostgreSQL (scripts/postgres) on CPU $ORIGIN_CPU")"
fi
report=$(cat <<EOF
## Many sources, one river: $SOURCES sources polled every $REFRESH s$([ "$MODE" = cluster ] && echo " by a cluster of $NODES nodes") (issue 37)

- date: $(date -u '+%Y-%m-%d %H:%M UTC')
- machine: nproc $(nproc), kernel $(uname -r), CPU $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//'); load average at the end $(cut -d' ' -f1-3 /proc/loadavg)
- build: $build_note
- command: \`bench/sources.sh\` (MODE=$MODE$([ "$MODE" = cluster ] && echo " NODES=$NODES") SOURCES=$SOURCES HOSTS=$HOSTS INTERVALS=$INTERVALS REFRESH=$REFRESH FAULTS=$FAULTS PIN=$PIN$([ "$PIN" = 1 ] && echo " ORIGIN_CPU=$ORIGIN_CPU SERVER_CPU=$SERVER_CPU") LIST=$LIST SETTLE=$SETTLE$([ "$MODE" = single ] && echo " BASELINE_SECONDS=$BASELINE_SECONDS")${SERVE_ARGS:+ SERVE_ARGS=\"$SERVE_ARGS\"})
- warmfeed: $served
- origin: \`bench/sources_origin.py ${origin_args[*]//$tmp\//TMP/}\`$([ "$PIN" = 1 ] && echo " on CPU $ORIGIN_CPU")
- $(cat "$tmp/fetched")
- server log lines with error/warning: $errors

$table
EOF
)
echo "$report"
mkdir -p bench/out
echo "$report" >"bench/out/sources-$(date +%Y%m%d-%H%M%S).txt"
