#!/usr/bin/env bash
# Page fragments: Warmfeed vs nginx serving the same bytes as static files.
#
# Side by side in one run, on loopback, with wrk asking for uniformly random
# page fragments of a 100,000-item feed. Both servers get 2 workers (warmfeed
# --threads 2, nginx worker_processes 2); wrk runs the same connections,
# threads and duration against each, alternating warmfeed/nginx for ROUNDS
# rounds. Prints each round, the medians and the ratios against the goals
# (>= 0.8x nginx's requests/s, p99 within 2x nginx's), then the cold render
# time per page (`warmfeed measure-render`) and the gzipped size of feed.js.
#
#   bench/pages.sh                       # ~3 minutes (up to 5 on a busy machine)
#   ROUNDS=7 DURATION=15s bench/pages.sh # knobs: see the defaults below
#   WARMFEED_BIN=path bench/pages.sh     # measure that binary, build nothing
#   DEEP=1 bench/pages.sh                # the deep run: 1,000,000 items, the default
#                                        # 64 MB page cache, so nearly every page is cold
#   DEEP=1 ACCEPT_GZIP=1 bench/pages.sh  # the same with Accept-Encoding: gzip, nginx gzip on
#   AS_READERS=1 [ORDER=sequential] [DPR=] bench/pages.sh
#                                        # readers' headers and cookies (bench/readers.lua), gzip
#   PIN=1 DEEP=1 DELAY_MS=4 bench/pages.sh # both servers offered the same rate (see DELAY_MS)
#   PIN=1 [DEEP=1] bench/pages.sh        # one core each: warmfeed (--threads 1) and nginx (one
#                                        # worker) on SERVER_CPU (1), wrk and PostgreSQL on LOAD_CPUS
#                                        # (0); reports how busy the server's core was each round,
#                                        # so a figure says whether the server or wrk was the limit
#   STORE=postgres DEEP=1 bench/pages.sh # the feed in PostgreSQL (scripts/postgres starts one
#                                        # in the temporary folder), read through --store
#
# After the rounds, a crawl: one connection follows the next links from page 1
# on each server for CRAWL_DURATION (bench/crawl.lua; at the last page it starts
# again), for pages/s and server CPU per page.
#
# The machine is shared: read the ratios (same run, alternating rounds) and the
# server CPU per request, not the absolute requests/s.
#
# Everything it makes lives in a mktemp folder under /tmp, removed on exit
# (KEEP_TMP=1 keeps it); a copy of the report goes to bench/out/ (git-ignored).
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/nginx.sh  # nginx_conf, nginx_static, nginx_page
repo=$PWD

DEEP=${DEEP:-0}
STORE=${STORE:-sqlite}
AS_READERS=${AS_READERS:-0}
# AS_READERS=1: the requests browsers send (bench/readers.lua: a `wf` cookie per
# reader, Accept-Encoding with gzip and br, Sec-Fetch-*, Sec-CH-DPR unless DPR=""),
# so warmfeed tracks each as a reader; gzip on both sides unless ACCEPT_GZIP=0.
if [ "$AS_READERS" = 1 ]; then ACCEPT_GZIP=${ACCEPT_GZIP:-1}; fi
ACCEPT_GZIP=${ACCEPT_GZIP:-0}
# GZIP_STATIC=1 (with gzip asked): nginx sends each fragment gzipped ahead of time
# (gzip_static, files compressed at GZIP_LEVEL before the rounds) instead of gzip on the fly.
GZIP_STATIC=${GZIP_STATIC:-0}
# (not GZIP: gzip(1) reads its options from an environment variable of that name)
GZIP_LEVEL=${GZIP_LEVEL:-1}   # warmfeed's own level (PageCache.Rendering.gzipLevel), for nginx
if [ "$DEEP" = 1 ]; then ITEMS=${ITEMS:-1000000}; PAGE_CACHE_MB=${PAGE_CACHE_MB:-64}; fi
ROUNDS=${ROUNDS:-5}
DURATION=${DURATION:-10s}
WARMUP=${WARMUP:-3s}
CONNECTIONS=${CONNECTIONS:-32}
WRK_THREADS=${WRK_THREADS:-1}
# DELAY_MS=N: each wrk connection waits N ms after each answer, so both servers
# are offered the same rate (at most CONNECTIONS x 1000 / N requests a second)
# and their CPU per request is compared at equal load. Without it each server
# runs at its own peak, where the faster one finds wrk busy more often and pays
# fewer wake-ups of wrk (on loopback the sender pays the receiver's wake-up).
DELAY_MS=${DELAY_MS:-0}
ITEMS=${ITEMS:-100000}
PAGE_SIZE=${PAGE_SIZE:-30}
PIN=${PIN:-0}
SERVER_CPU=${SERVER_CPU:-1}
LOAD_CPUS=${LOAD_CPUS:-0}
if [ "$PIN" = 1 ]; then SERVER_THREADS=${SERVER_THREADS:-1}; fi
SERVER_THREADS=${SERVER_THREADS:-2}
# With PIN=1: the servers on their core, the load (wrk, PostgreSQL, this script) on the others.
on_server=(); on_load=()
if [ "$PIN" = 1 ]; then on_server=(taskset -c "$SERVER_CPU"); on_load=(taskset -c "$LOAD_CPUS"); fi
PAGE_CACHE_MB=${PAGE_CACHE_MB:-256}
RENDER_RUNS=${RENDER_RUNS:-3}
CRAWL_DURATION=${CRAWL_DURATION:-30s}  # the crawl wraps to page 1 at the end; see bench/crawl.lua
RENDER_PAGES=${RENDER_PAGES:-500}
# SEED_FROM=DIR: serve a copy of that data folder's store (feed.sqlite and every feed.sqlite-* file
# files) instead of --demo-items: e.g. the river of 1,000 sources a `KEEP_TMP=1 bench/sources.sh`
# left in its folder, to compare with a one-source feed of as many items (ITEMS=that count).
SEED_FROM=${SEED_FROM:-}
if [ -n "$SEED_FROM" ]; then
  ITEMS=$(python3 -c 'import sqlite3, sys; print(sqlite3.connect(sys.argv[1]).execute("SELECT COUNT(*) FROM item").fetchone()[0])' "$SEED_FROM/feed.sqlite")
fi
PAGES=$(( (ITEMS + PAGE_SIZE - 1) / PAGE_SIZE ))

tmp=$(mktemp -d /tmp/warmfeed-bench-pages.XXXXXX)
wf_pid="" ng_pid=""

stop() {  # stop PID NAME: SIGTERM, then SIGKILL after 10 s
  local pid=$1 name=$2
  [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null || return 0
  kill -TERM "$pid" 2>/dev/null || true
  for _ in $(seq 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
  if kill -0 "$pid" 2>/dev/null; then
    echo "bench: $name ($pid) ignored SIGTERM for 10 s; killing it" >&2
    kill -KILL "$pid" 2>/dev/null || true
  fi
  wait "$pid" 2>/dev/null || true
}
cleanup() {
  stop "$wf_pid" warmfeed
  stop "$ng_pid" nginx
  [ -f "$tmp/pg/port" ] && scripts/postgres stop "$tmp/pg" 2>/dev/null || true
  if [ "${KEEP_TMP:-0}" = 1 ]; then echo "bench: kept $tmp" >&2; else rm -rf "$tmp"; fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

log() { echo "bench $(date +%T): $*" >&2; }
helper() { python3 "$repo/bench/pages_helper.py" "$@"; }

# --- 1. set up, build, seed, start warmfeed -----------------------------------
log "setup (scripts/setup --bench)"
scripts/setup --bench
if [ -n "${WARMFEED_BIN:-}" ]; then
  log "using WARMFEED_BIN=$WARMFEED_BIN (not building)"
  built=$WARMFEED_BIN
else
  log "building warmfeed (release)"
  if ! swift build -c release --product warmfeed >"$tmp/build.log" 2>&1; then
    grep -E 'error:' "$tmp/build.log" | head -n 20 >&2 || tail -n 20 "$tmp/build.log" >&2
    log "the release build failed; nothing measured"
    exit 1
  fi
  tail -n 1 "$tmp/build.log" >&2
  built=$repo/.build/release/warmfeed
fi
[ -x "$built" ] || { log "no executable at $built"; exit 1; }
# Run a private copy: another build in the same checkout must not swap the
# binary under a running benchmark.
bin=$tmp/warmfeed
cp "$built" "$bin"

# The demo origin's background painting of originals (libvips, 0.1–0.5 s of CPU
# each) is demo scaffolding, not page serving: keep it from stealing a core
# during the rounds. Fragment requests carry no reader cookie, so they start
# no pre-warm work either way. WARMFEED_ARGS adds (or overrides) serve options.
extra_args=()
# Binaries before the demo pool painted originals ahead; they are told not to.
# (The help read whole first: `| grep -q` under pipefail can fail as grep closes the pipe early.)
serve_help=$("$bin" serve --help 2>/dev/null || true)
if grep -q -- '--demo-paint-ahead' <<<"$serve_help"; then extra_args+=(--demo-paint-ahead 0); fi
# shellcheck disable=SC2206 # WARMFEED_ARGS is meant to split into words
extra_args+=(${WARMFEED_ARGS:-})

store_args=()
if [ "$STORE" = postgres ]; then
  log "starting PostgreSQL (scripts/postgres) for the feed"
  chmod 755 "$tmp"  # PostgreSQL runs as its own user in "$tmp/pg"
  store_args=(--store "$(${on_load[@]+"${on_load[@]}"} scripts/postgres start "$tmp/pg")")
fi

mkdir -p "$tmp/data" "$tmp/nginx/root" "$tmp/nginx/tmp"
# When this runs as root, nginx's workers drop to `nobody`: let them read the
# static root (mktemp makes the folder private).
chmod 755 "$tmp" "$tmp/nginx" "$tmp/nginx/root"
seed_args=(--demo-items "$ITEMS")
if [ -n "$SEED_FROM" ]; then
  cp "$SEED_FROM"/feed.sqlite "$SEED_FROM"/feed.sqlite-* "$tmp/data/"  # the WAL, the rows, the page index
  seed_args=(--demo-items 0)
fi
log "seeding $ITEMS items${SEED_FROM:+ (a copy of $SEED_FROM)} and starting warmfeed (--threads $SERVER_THREADS)"
seed_start=$SECONDS
${on_server[@]+"${on_server[@]}"} "$bin" serve --port 0 --data "$tmp/data" "${seed_args[@]}" --page-size "$PAGE_SIZE" \
  --page-cache-mb "$PAGE_CACHE_MB" --threads "$SERVER_THREADS" \
  --public "$repo/Public" --templates "$repo/Templates" ${extra_args[@]+"${extra_args[@]}"} ${store_args[@]+"${store_args[@]}"} \
  >"$tmp/warmfeed.out" 2>"$tmp/warmfeed.err" &
wf_pid=$!
wf_url=""
for _ in $(seq 1200); do
  wf_url=$(sed -n 's|^Warmfeed is serving \(http://[^ ]*\)/$|\1|p' "$tmp/warmfeed.out")
  [ -n "$wf_url" ] && break
  kill -0 "$wf_pid" 2>/dev/null || { log "warmfeed exited:"; cat "$tmp/warmfeed.err" >&2; exit 1; }
  sleep 0.1
done
[ -n "$wf_url" ] || { log "warmfeed did not start in 120 s"; exit 1; }
log "warmfeed at $wf_url (seeded and listening after $((SECONDS - seed_start)) s)"

# The server warms page 1 (and its thumbnails) at start; previews made then are
# written a second later and page 1 is rendered again with them. Let that
# settle, so the bytes dumped for nginx are the ones warmfeed keeps serving.
token=$(cat "$tmp/data/admin-token" 2>/dev/null || true)
for _ in $(seq 300); do
  curl -s -H "Authorization: Bearer $token" "$wf_url/admin/cache" | grep -q '"page_one_warm_seconds" : [0-9]' && break
  sleep 0.1
done
# Rows are rendered ahead in the background after the seeding (RowPreparation):
# measure once every row is, as on a server that has been up a while.
log "$(helper rows-ready "$wf_url" "$token")"
sleep 2

# --- 2. every fragment once: warms warmfeed's cache and makes nginx's files ---
log "fetching /fragment?page=1..$PAGES once (warm-up pass)"
dump_line=$(helper dump "$wf_url" "$PAGES" "$tmp/nginx/root")
# Readers scroll by the next links, each with its cursor (`after=`), not by page numbers:
# the crawl follows them, and so do the readers (bench/readers.lua FRAGMENTS). Each such
# answer is warmed and kept for nginx in cursors/ (its rows link to the cursor's URL, so it
# is about 1.3 KB longer than page N's), served when a request carries after=.
fragments_line=$(helper fragments "$wf_url" "$PAGES" "$tmp/fragments" "$tmp/nginx/root" "$ACCEPT_GZIP")
[ "$AS_READERS" = 1 ] && export FRAGMENTS=$tmp/fragments
if [ "$ACCEPT_GZIP" = 1 ] && [ "$GZIP_STATIC" = 1 ]; then
  log "compressing the fragments for nginx's gzip_static (gzip -$GZIP_LEVEL)"
  find "$tmp/nginx/root" -name '*.html' -print0 | xargs -0 -n 500 gzip -k "-$GZIP_LEVEL"
fi
log "$dump_line"
log "$fragments_line"
wf_rss_after_warmup=$(awk '/^VmRSS/ {print $2, $3}' "/proc/$wf_pid/status")

# --- 3. nginx, tuned for static files, 2 workers, no root, in the foreground --
ng_port=$(helper freeport)
ng_url="http://127.0.0.1:$ng_port"
gzip_line=""
if [ "$ACCEPT_GZIP" = 1 ]; then
  # (gzip_types *: the default_type carries "; charset=utf-8", which the default list, text/html, does not match)
  gzip_line="    gzip on; gzip_comp_level $GZIP_LEVEL; gzip_min_length 0; gzip_vary off; gzip_types *;"
  [ "$GZIP_STATIC" = 1 ] && gzip_line="    gzip_static on;"
fi
nginx_conf "$tmp/nginx" "$SERVER_THREADS" "$(nginx_static)
$gzip_line
    map \$arg_after \$fragments { \"\" fragments; default cursors; }
    server {
        listen 127.0.0.1:$ng_port;
        root $tmp/nginx/root;
        location = /fragment {
            # The same response headers warmfeed sends, so both heads are alike.
$(nginx_page)
            try_files /\$fragments/\$arg_page.html =404;
        }
    }"
log "starting nginx at $ng_url (worker_processes $SERVER_THREADS)"
${on_server[@]+"${on_server[@]}"} nginx -p "$tmp/nginx" -c "$tmp/nginx/nginx.conf" -g 'daemon off;' 2>>"$tmp/nginx/error.log" &
ng_pid=$!
for _ in $(seq 100); do
  curl -sS -o /dev/null "$ng_url/fragment?page=1" 2>/dev/null && break
  kill -0 "$ng_pid" 2>/dev/null || { log "nginx exited:"; cat "$tmp/nginx/error.log" >&2; exit 1; }
  sleep 0.1
done
compare_out=$(helper compare "$wf_url" "$ng_url" "$PAGES" "$tmp/nginx/root" "$tmp/fragments")
echo "$compare_out" >&2

# --- 4. wrk, alternating warmfeed / nginx -------------------------------------
lua=bench/random_page.lua; [ "$AS_READERS" = 1 ] && lua=bench/readers.lua
wrk_args=(-t"$WRK_THREADS" -c"$CONNECTIONS" -d"$DURATION" --latency -s "$lua")
run_wrk() {  # run_wrk URL DURATION SEED -> the WRKJSON payload of wrk's `done`
  local out json
  out=$(WF_DELAY_MS=$DELAY_MS WF_GZIP=$ACCEPT_GZIP GZIP=$ACCEPT_GZIP KIND=fragment WF_PAGES=$PAGES WF_SEED=$3 ${on_load[@]+"${on_load[@]}"} wrk -t"$WRK_THREADS" -c"$CONNECTIONS" -d"$2" --latency \
    -s "$lua" "$1/" 2>&1) || true
  echo "$out" >>"$tmp/wrk.log"
  json=$(sed -n 's/^WRKJSON //p' <<<"$out")
  [ -n "$json" ] || { log "wrk against $1 gave no result:"; echo "$out" >&2; exit 1; }
  echo "$json"
}
# CPU time of the server's processes (cpu_ticks) and how busy its core was
# (core_ticks, core_busy): bench/cpu.sh.
clk_tck=$(getconf CLK_TCK)
# shellcheck source=bench/cpu.sh
source bench/cpu.sh
# With STORE=postgres, the CPU PostgreSQL's processes (the postmaster's
# children: the backends warmfeed reads through) used in each round: the
# server's own share of a deep page.
pg_ticks() {
  [ "$STORE" = postgres ] || { echo 0; return; }
  local postmaster
  postmaster=$(head -n1 "$tmp/pg/data/postmaster.pid" 2>/dev/null) || { echo 0; return; }
  cpu_ticks $(pgrep -P "$postmaster" | tr '\n' ' ')
}
# Voluntary context switches of every thread of the server's processes (a
# thread blocking: in epoll when its connections have nothing to read, or on
# a lock), summed; per request, beside nginx's.
vol_switches() {
  local total=0 pid task
  for pid in "$@"; do
    for task in /proc/"$pid"/task/*; do
      total=$(( total + $(awk '/^voluntary_ctxt_switches/ {print $2}' "$task/status" 2>/dev/null || echo 0) ))
    done
  done
  echo "$total"
}
log "wrk warm-up, $WARMUP each (not recorded)"
run_wrk "$wf_url" "$WARMUP" 0 >/dev/null
run_wrk "$ng_url" "$WARMUP" 0 >/dev/null
: >"$tmp/results"
load_before=$(cut -d' ' -f1-3 /proc/loadavg)
for round in $(seq "$ROUNDS"); do
  for server in warmfeed nginx; do
    url=$wf_url; [ "$server" = nginx ] && url=$ng_url
    pids=$wf_pid; [ "$server" = nginx ] && pids="$ng_pid $(pgrep -P "$ng_pid" | tr '\n' ' ')"
    load=$(cut -d' ' -f1 /proc/loadavg)  # the 1-minute load as the round starts
    cpu0=$(cpu_ticks $pids)
    pg0=$(pg_ticks)
    core0=$(core_ticks)
    vol0=$(vol_switches $pids)
    threads0=$(thread_ticks $pids)
    json=$(run_wrk "$url" "$DURATION" "$round")
    echo "$server $round $(busiest_share "$threads0" "$(thread_ticks $pids)")" >>"$tmp/placement"
    echo "$server $(( $(vol_switches $pids) - vol0 )) $json" >>"$tmp/switches"
    echo "$server $round $(core_busy "$core0" "$(core_ticks)")" >>"$tmp/core_busy"
    cpu_us=$(( ($(cpu_ticks $pids) - cpu0) * 1000000 / clk_tck ))
    pg_us=$(( ($(pg_ticks) - pg0) * 1000000 / clk_tck ))
    echo "$server $round $load $cpu_us $json" >>"$tmp/results"
    [ "$STORE" = postgres ] && echo "$server $pg_us $json" >>"$tmp/pg_cpu"
    log "round $round $server: $(helper line "$json")"
  done
done
load_after=$(cut -d' ' -f1-3 /proc/loadavg)

# --- 4b. the crawl: page 1 to the end through the next links, one connection --
log "crawl: one connection follows the next links from page 1 (to page $PAGES, then again), $CRAWL_DURATION each, warmfeed then nginx"
: >"$tmp/crawl"
for server in warmfeed nginx; do
  url=$wf_url; [ "$server" = nginx ] && url=$ng_url
  pids=$wf_pid; [ "$server" = nginx ] && pids="$ng_pid $(pgrep -P "$ng_pid" | tr '\n' ' ')"
  cpu0=$(cpu_ticks $pids)
  out=$(WF_GZIP=$ACCEPT_GZIP ${on_load[@]+"${on_load[@]}"} wrk -t1 -c1 -d"$CRAWL_DURATION" --latency -s bench/crawl.lua "$url/" 2>&1) || true
  cpu_us=$(( ($(cpu_ticks $pids) - cpu0) * 1000000 / clk_tck ))
  echo "$out" >>"$tmp/wrk.log"
  json=$(sed -n 's/^WRKJSON //p' <<<"$out")
  [ -n "$json" ] || { log "the crawl of $server gave no result:"; echo "$out" >&2; exit 1; }
  echo "$server $cpu_us $json" >>"$tmp/crawl"
  log "crawl $server: $(helper line "$json")"
done
crawl_table=$(helper crawl "$tmp/crawl" "$PAGES")
wf_rss=$(awk '/^VmRSS/ {print $2, $3}' "/proc/$wf_pid/status")
wf_hwm=$(awk '/^VmHWM/ {print $2, $3}' "/proc/$wf_pid/status")
wrk_table=$(DEEP=$DEEP helper summary "$tmp/results")
switch_line=$(python3 - "$tmp/switches" <<'PY'
import json, statistics, sys
rounds = {}
for line in open(sys.argv[1]):
    server, switches, payload = line.split(" ", 2)
    rounds.setdefault(server, []).append(int(switches) / max(1, json.loads(payload)["requests"]))
print("Voluntary context switches per request (every thread of the server's processes; median of the rounds): "
      + ", ".join(f"{server} {statistics.median(v):.3f}" for server, v in rounds.items()))
PY
)
wrk_table=$(printf '%s\n\n%s' "$wrk_table" "$switch_line")
# How wrk's connections fell on each server's workers: each worker (a
# libmicrohttpd thread, an nginx process) keeps the connections it accepted.
# On shared cores that decides much of a round: all on one worker leaves wrk
# a core of its own; split, three busy threads take turns on two cores.
placement_line=""
[ "$SERVER_THREADS" -gt 1 ] && placement_line="The busiest worker's share of the server's CPU in each round ($SERVER_THREADS workers; $(( 100 / SERVER_THREADS ))%: wrk's connections split evenly, 100%: all on one): warmfeed $(awk '$1 == "warmfeed" {printf "%s%% ", $3}' "$tmp/placement"); nginx $(awk '$1 == "nginx" {printf "%s%% ", $3}' "$tmp/placement")"
[ -n "$placement_line" ] && wrk_table=$(printf '%s\n\n%s' "$wrk_table" "$placement_line")
if [ "$PIN" = 1 ]; then
  busy_line="The server's core (CPU $SERVER_CPU) busy in each round: warmfeed $(awk '$1 == "warmfeed" {printf "%s%% ", $3}' "$tmp/core_busy"); nginx $(awk '$1 == "nginx" {printf "%s%% ", $3}' "$tmp/core_busy")(100%: the server was the limit; less: it waited for wrk on CPU $LOAD_CPUS)"
  wrk_table=$(printf '%s\n\n%s' "$wrk_table" "$busy_line")
fi
if [ "$STORE" = postgres ]; then
  pg_line=$(python3 - "$tmp/pg_cpu" <<'PY'
import json, statistics, sys
rounds = {}
for line in open(sys.argv[1]):
    server, us, payload = line.split(" ", 2)
    rounds.setdefault(server, []).append(int(us) / max(1, json.loads(payload)["requests"]))
print("PostgreSQL's CPU per request (its backends, beside the server's own above; median of the rounds): "
      + ", ".join(f"{server} rounds {statistics.median(v):.1f} µs" for server, v in rounds.items())
      + " (in the nginx rounds PostgreSQL is idle: the base line)")
PY
)
  wrk_table=$(printf '%s\n\n%s' "$wrk_table" "$pg_line")
  # Where the node's cold pages came from: its own copy, or PostgreSQL.
  copy_line=$(curl -s -H "Authorization: Bearer $token" "$wf_url/admin/cache" | python3 -c '
import json, sys
copy = (json.load(sys.stdin).get("store") or {}).get("copy")
print("The node'"'"'s copy (store.copy): none" if copy is None else
      "The node'"'"'s copy (store.copy): %s pages read from it, %s asked of PostgreSQL, %s rows copied in %s catch-ups, %s rebuilds" % (
          copy.get("pages_from_copy"), copy.get("pages_from_store"), copy.get("rows_copied"), copy.get("catch_ups"), copy.get("rebuilds")))' 2>/dev/null || echo "-")
  wrk_table=$(printf '%s\n\n%s' "$wrk_table" "$copy_line")
fi

# feed.js as a reader's browser gets it: the server sends a script without its comment lines, gzipped.
feedjs_gz=$(curl -s -H 'Accept-Encoding: gzip' "$wf_url/static/feed.js" | wc -c)
feedjs_raw=$(curl -s "$wf_url/static/feed.js" | wc -c)
stop "$wf_pid" warmfeed; wf_pid=""
stop "$ng_pid" nginx; ng_pid=""
wf_errors=$(grep -ciE 'error|warning|critical' "$tmp/warmfeed.err" || true)
ng_errors=$(grep -cE '\[(error|crit|alert|emerg)\]' "$tmp/nginx/error.log" || true)

# --- 5. cold render time and feed.js size -------------------------------------
log "measure-render, $RENDER_RUNS runs of $RENDER_PAGES random pages (servers stopped)"
: >"$tmp/render"
for _ in $(seq "$RENDER_RUNS"); do
  "$bin" measure-render --data "$tmp/data" --page-size "$PAGE_SIZE" --pages "$RENDER_PAGES" ${store_args[@]+"${store_args[@]}"} \
    --public "$repo/Public" --templates "$repo/Templates" >>"$tmp/render"
done
render_table=$(helper render "$tmp/render")

if [ -n "${WARMFEED_BIN:-}" ]; then
  build_note="WARMFEED_BIN=$WARMFEED_BIN (built $(date -u -r "$built" '+%Y-%m-%d %H:%M UTC'); its source is whatever it was built from)"
else
  build_note="release, from the checkout at $(git rev-parse --short HEAD 2>/dev/null || echo unknown)$(git diff --quiet HEAD -- Sources Templates Public Package.swift 2>/dev/null || echo ' with uncommitted changes in Sources/Templates/Public/Package.swift')"
fi

# --- report --------------------------------------------------------------------
report=$(cat <<EOF
## Page fragments: warmfeed vs nginx (static files)

- date: $(date -u '+%Y-%m-%d %H:%M UTC')
- machine: nproc $(nproc), kernel $(uname -r), CPU $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//'); load average before/after the rounds: $load_before / $load_after
- build: $build_note
- tools: $(swift --version 2>/dev/null | head -n1); $(nginx -v 2>&1); $(wrk -v 2>&1 | head -n1 | cut -d' ' -f1-2)
- command: \`bench/pages.sh\` (PIN=$PIN$([ "$PIN" = 1 ] && echo " SERVER_CPU=$SERVER_CPU LOAD_CPUS=$LOAD_CPUS") DEEP=$DEEP ACCEPT_GZIP=$ACCEPT_GZIP ROUNDS=$ROUNDS DURATION=$DURATION CONNECTIONS=$CONNECTIONS DELAY_MS=$DELAY_MS WRK_THREADS=$WRK_THREADS ITEMS=$ITEMS PAGE_SIZE=$PAGE_SIZE PAGE_CACHE_MB=$PAGE_CACHE_MB)
- store: $STORE
- warmfeed: \`warmfeed serve --port 0 --data TMP $([ -n "$SEED_FROM" ] && echo "(a copy of $SEED_FROM's store, $ITEMS items) --demo-items 0" || echo "--demo-items $ITEMS") --page-size $PAGE_SIZE --page-cache-mb $PAGE_CACHE_MB --threads $SERVER_THREADS --public Public --templates Templates${extra_args[*]:+ ${extra_args[*]}}\` (release build)
- nginx: worker_processes $SERVER_THREADS, access_log off, sendfile, tcp_nopush, keepalive_requests 1000000, open_file_cache; \`location = /fragment { try_files /\$fragments/\$arg_page.html =404; }\` (\`\$fragments\`: fragments/, or cursors/ when the request carries \`after=\`: the answers to the next links' URLs) with the same Content-Type and the same five extra headers warmfeed sends
- load: \`wrk ${wrk_args[*]} URL/\` ($([ "$AS_READERS" = 1 ] && echo "readers' requests: ${READERS:-200} readers with their wf cookies, ORDER=${ORDER:-random}, Sec-CH-DPR ${DPR-1}, Sec-Fetch-*, the client's URLs of pages 1..$PAGES (\`/fragment?page=N&after=CURSOR\`, the next links)" || echo "uniformly random \`/fragment?page=1..$PAGES\`, seeded per thread")), $([ "$ACCEPT_GZIP" = 1 ] && echo "Accept-Encoding: gzip (nginx: $([ "$GZIP_STATIC" = 1 ] && echo "gzip_static, files compressed at level $GZIP_LEVEL" || echo "gzip on, gzip_comp_level $GZIP_LEVEL"))" || echo "no Accept-Encoding (plain bodies from both)"); order warmfeed, nginx, warmfeed, nginx, …; $([ "$PIN" = 1 ] && echo "each server pinned to CPU $SERVER_CPU (taskset), wrk and PostgreSQL to CPU $LOAD_CPUS" || echo "wrk shares the same $(nproc) cores with the server under test (and with whatever else runs on the machine: see the load column)")
- warm-up: every page fetched once from warmfeed before measuring ($dump_line); then $WARMUP of wrk against each server, not recorded
- warmfeed memory: RSS $wf_rss_after_warmup after the warm-up pass, $wf_rss after the rounds (peak $wf_hwm)
- server logs during the run: warmfeed stderr lines with error/warning: $wf_errors; nginx error-log lines at error or worse: $ng_errors

Same bytes, compared before the rounds:

\`\`\`
$compare_out
\`\`\`

$wrk_table

### Crawl: from page 1 through the next links (page $PAGES, then page 1 again), one connection, $CRAWL_DURATION each

$crawl_table

### Cold render per page (\`warmfeed measure-render --data TMP --page-size $PAGE_SIZE --pages $RENDER_PAGES\`, $RENDER_RUNS runs, no cache)

$render_table

### Thin client

\`/static/feed.js\` as the server sends it: **$feedjs_gz bytes** gzipped ($feedjs_raw bytes plain, without its comment lines); goal ≤ 2,560 bytes (2.5 KiB, issue 11): $([ "$feedjs_gz" -le 2560 ] && echo MET || echo 'NOT MET')
EOF
)
echo
echo "$report"
mkdir -p bench/out
out=bench/out/pages-$(date -u +%Y%m%dT%H%M%SZ).md
echo "$report" >"$out"
log "report also written to $out"
