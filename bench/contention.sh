#!/usr/bin/env bash
# What contention costs, where two cores can show it (issue 23): the server
# with more HTTP threads than cores (--threads 8 by default) under wrk, and the
# kernel's count of what its threads did while wrk ran: futex system calls
# (a thread that waits on a lock another holds, or wakes one that waits),
# context switches, CPU, all per request. A request path that contends on
# nothing makes almost no futex calls; two cores hide the rest (the scaling
# bundle in ../shared/scaling/ runs the same on many cores).
#
#   bench/contention.sh                        # warm pages, 100,000 items, every page cached
#   DEEP=1 bench/contention.sh                 # random pages of 1,000,000 items, 64 MB page cache
#   THUMBS=120 bench/contention.sh             # random cached thumbnails (1x WebP) of the newest 120 items, by picture
#   THREADS=2 bench/contention.sh              # as many threads as cores
#   WARMFEED_BIN=path bench/contention.sh      # measure that binary, build nothing
#   STORE=postgres DEEP=1 bench/contention.sh  # the feed in PostgreSQL (scripts/postgres starts one
#                                              # in the temporary folder); its server's CPU is not counted
#   MODE=readers bench/contention.sh           # readers as browsers send them (bench/readers.lua): READERS
#                                              # (200) readers, each with its wf cookie, Accept-Encoding gzip
#                                              # and br, Sec-Fetch-*, and Sec-CH-DPR: DPR (1; DPR= for none,
#                                              # as Firefox and Safari send); ORDER=random|sequential;
#                                              # KIND=document|fragment; pre-warm on, on a feed of ITEMS
#                                              # (600) items whose pages and thumbnails are all made first, so
#                                              # pre-warm has nothing left to make (issue 35)
#   MODE=readers THUMBS=120 bench/contention.sh  # readers' thumbnail hits, with a browser's headers
#   MODE=readers COMPARE=1 bench/contention.sh  # then the same without the cookie, and the ratio of the two
#   MODE=readers COMPARE=1 ROUNDS=5 …          # readers and cookie-less in turn five times, and the medians
#   CONNECTIONS=256 … bench/contention.sh      # wrk's connections (64); each line also gives wrk's CPU a request
#                                              # and, for readers, the views pre-warm's planner heard and let go
#   CALLERS=1 … bench/contention.sh            # also which threads make the futex calls, and through what
#   CALLERS=dwarf … bench/contention.sh        # the same with whole call chains (DWARF unwinding; slower)
#   SLEEPS=1 … bench/contention.sh             # also every switch by where its thread was (kernel stacks):
#                                              # epoll_wait (an HTTP worker with nothing to do), a futex, elsewhere;
#                                              # recording costs the server CPU: read its CPU from a run without
#   PIN=1 … bench/contention.sh                # the server (and nginx) on CPU 1, wrk on CPU 0, --threads 1
#   PEER=1 … bench/contention.sh               # warm pages: then nginx (worker_processes THREADS) serving the
#                                              # same bytes, gzip_static, under the same wrk script, counted alike
#   PEER=1 ROUNDS=5 … bench/contention.sh      # both servers kept up, measured in turn ROUNDS times (warmfeed,
#                                              # nginx, warmfeed, …): the median of the rounds' CPU ratios, so a
#                                              # slow minute of a shared machine falls on both
#
# perf (Debian's linux-perf) counts the futex calls through the tracepoint
# syscalls:sys_enter_futex and the switches through the software event
# context-switches, for the server's threads only, over WINDOW seconds in
# the middle of the wrk run; /proc/PID/task/*/status gives the voluntary and
# involuntary switches besides. wrk shares the two cores: read the counts per
# request, not the requests/s.
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/nginx.sh  # nginx_conf, nginx_static, nginx_page
. bench/cpu.sh    # thread_ticks
repo=$PWD
DEEP=${DEEP:-0}
THUMBS=${THUMBS:-0}
STORE=${STORE:-sqlite}
THREADS=${THREADS:-$([ "${PIN:-0}" = 1 ] && echo 1 || echo 8)}
MODE=${MODE:-crawler}
if [ "$MODE" = readers ] && [ "$DEEP" != 1 ] && [ "${THUMBS:-0}" = 0 ]; then ITEMS=${ITEMS:-600}; fi
CONNECTIONS=${CONNECTIONS:-64}
DURATION=${DURATION:-20}
WINDOW=${WINDOW:-10}
PAGE_SIZE=${PAGE_SIZE:-30}
if [ "$DEEP" = 1 ]; then ITEMS=${ITEMS:-1000000}; PAGE_CACHE_MB=${PAGE_CACHE_MB:-64}; else ITEMS=${ITEMS:-100000}; PAGE_CACHE_MB=${PAGE_CACHE_MB:-256}; fi
PAGES=$(( (ITEMS + PAGE_SIZE - 1) / PAGE_SIZE ))
# PIN=1: the server (and nginx, with PEER=1) on CPU SERVER_CPU (1), wrk on LOAD_CPUS (0) with one
# thread; THREADS defaults to 1 then. The counts per request then have no load generator in them.
PIN=${PIN:-0} SERVER_CPU=${SERVER_CPU:-1} LOAD_CPUS=${LOAD_CPUS:-0}
on_server=() on_load=() WRK_THREADS=2
if [ "$PIN" = 1 ]; then on_server=(taskset -c "$SERVER_CPU") on_load=(taskset -c "$LOAD_CPUS") WRK_THREADS=1; fi
tmp=$(mktemp -d /tmp/warmfeed-bench-contention.XXXXXX)
wf_pid="" ng_pid=""
cleanup() {
  [ -n "$wf_pid" ] && kill -TERM "$wf_pid" 2>/dev/null
  [ -n "$ng_pid" ] && kill -QUIT "$ng_pid" 2>/dev/null
  wait 2>/dev/null || true
  [ -f "$tmp/pg/port" ] && scripts/postgres stop "$tmp/pg" 2>/dev/null || true
  [ "${KEEP_TMP:-0}" = 1 ] || rm -rf "$tmp"
}
trap cleanup EXIT
log() { echo "bench $(date +%T): $*" >&2; }

scripts/setup --bench
command -v perf >/dev/null || { log "installing linux-perf"; apt-get install -y -qq linux-perf >/dev/null; }
if [ -n "${WARMFEED_BIN:-}" ]; then built=$WARMFEED_BIN; else
  swift build -c release --product warmfeed >"$tmp/build.log" 2>&1 || { tail -20 "$tmp/build.log" >&2; exit 1; }
  built=.build/release/warmfeed
fi
cp "$built" "$tmp/warmfeed"
serve_args=()
# Thumbnails are made once before the measurement: from a demo origin with no latency.
if [ "$THUMBS" != 0 ] || [ "$MODE" = readers ]; then serve_args=(--origin-latency 0); fi
if [ "$THUMBS" != 0 ]; then ITEMS=${ITEMS_FOR_THUMBS:-1000}; PAGES=$(( (ITEMS + PAGE_SIZE - 1) / PAGE_SIZE )); fi
prewarm=0; [ "$MODE" = readers ] && prewarm=2
if [ "$STORE" = postgres ]; then
  log "starting PostgreSQL (scripts/postgres) for the feed"
  chmod 755 "$tmp"  # PostgreSQL runs as its own user in "$tmp/pg"
  serve_args+=(--store "$(scripts/postgres start "$tmp/pg")")
fi

log "seeding $ITEMS items, serving with --threads $THREADS on $(nproc) cores"
${on_server[@]+"${on_server[@]}"} "$tmp/warmfeed" serve --port 0 --data "$tmp/data" --demo-items "$ITEMS" --page-size "$PAGE_SIZE" \
  --page-cache-mb "$PAGE_CACHE_MB" --threads "$THREADS" --prewarm "$prewarm" \
  --public "$repo/Public" --templates "$repo/Templates" ${serve_args[@]+"${serve_args[@]}"} >"$tmp/out" 2>"$tmp/err" &
wf_pid=$!
pids=$wf_pid who="--threads $THREADS"  # what measure() counts, and how its line names it
url=""
for _ in $(seq 3000); do
  url=$(sed -n 's|^Warmfeed is serving \(http://[^ ]*\)/$|\1|p' "$tmp/out"); [ -n "$url" ] && break
  kill -0 "$wf_pid" 2>/dev/null || { cat "$tmp/err" >&2; exit 1; }
  sleep 0.1
done
[ -n "$url" ] || { log "warmfeed did not start"; exit 1; }
log "$(python3 bench/pages_helper.py rows-ready "$url" "$(cat "$tmp/data/admin-token")")"
if [ "$THUMBS" != 0 ]; then
  log "making the newest $THUMBS items' thumbnails once (kept in memory), by the addresses their pages give"
  : >"$tmp/thumbs"
  for page in $(seq 1 $(((THUMBS + 29) / 30))); do
    curl -sf "$url/?page=$page" | grep -o 'src="/thumbs/[0-9]*-[0-9a-f]*/1x"' | sed 's/^src="//; s/"$//' >>"$tmp/thumbs"
  done
  head -n "$THUMBS" "$tmp/thumbs" >"$tmp/thumbs.n" && mv "$tmp/thumbs.n" "$tmp/thumbs"
  export THUMB_LIST="$tmp/thumbs"
  while read -r path; do
    curl -sf -H 'Accept: image/webp,*/*' -o /dev/null "$url$path" || { log "thumbnail $path failed"; exit 1; }
  done <"$tmp/thumbs"
  if [ "$MODE" = readers ]; then
    # Readers' browsers take AVIF: their first hits on the WebP have pre-warm make each AVIF
    # (libvips and aom threads, seconds of CPU). Asked until every one is AVIF, so the
    # measurement is of the hits, not of that work.
    accept='image/avif,image/webp,image/apng,image/svg+xml,image/*,*/*;q=0.8'
    for _ in $(seq 120); do
      avif=0
      while read -r path; do
        type=$(curl -sf -H "Accept: $accept" -o /dev/null -w '%{content_type}' "$url$path") || true
        [ "$type" = image/avif ] && avif=$((avif + 1))
      done <"$tmp/thumbs"
      [ "$avif" = "$THUMBS" ] && break
      sleep 1
    done
    log "readers: $avif of $THUMBS thumbnails answered as AVIF before the measurement"
  fi
elif [ "$DEEP" != 1 ]; then
  log "warming every page once"
  python3 bench/pages_helper.py dump "$url" "$PAGES" "$tmp/pages" >/dev/null
fi
if [ "$MODE" = readers ] && [ "$DEEP" != 1 ]; then
  # Pre-warm is on: make what it would make (every page, documents and fragments, plain and
  # gzipped, and every thumbnail in 1x and 2x), so it finds nothing left to do.
  log "readers: making every page and thumbnail first, so pre-warm has nothing left to make"
  for page in $(seq 1 "$PAGES"); do
    for path in "/?page=$page" "/fragment?page=$page"; do
      curl -sf -o /dev/null "$url$path"; curl -sf -o /dev/null -H 'Accept-Encoding: gzip' "$url$path"
    done
    curl -sf "$url/?page=$page" | grep -o 'src="/thumbs/[0-9]*-[0-9a-f]*/1x"' | sed 's/^src="//; s/"$//; s|/1x$||' | while read -r thumb; do
      for variant in 1x 2x; do curl -sf -o /dev/null -H 'Accept: image/webp,*/*' "$url$thumb/$variant"; done
    done
  done
fi

if [ "$MODE" = readers ] && [ "${KIND:-document}" = fragment ]; then
  # Readers' fragments are the next links, each with its cursor (bench/readers.lua FRAGMENTS).
  fragments_line=$(python3 bench/pages_helper.py fragments "$url" "$PAGES" "$tmp/fragments" "" 1)
  log "$fragments_line"
  export FRAGMENTS=$tmp/fragments
fi

switches() {  # "TID VOLUNTARY INVOLUNTARY" for every thread of the server
  for task in $(for pid in $pids; do echo /proc/"$pid"/task/*; done); do
    awk -v tid="${task##*/}" '/^voluntary_ctxt_switches/ {v = $2} /^nonvoluntary_ctxt_switches/ {n = $2} END {if (v != "") print tid, v, n}' "$task/status" 2>/dev/null || true  # a thread that just ended
  done
}
# The switches between two samples of the threads alive at the second (a thread
# born between them counts from 0; one that ended is left out, rather than
# taking its whole count off the sum).
switch_delta() {
  awk 'NR == FNR {v[$1] = $2; n[$1] = $3; next} {dv += $2 - ($1 in v ? v[$1] : 0); dn += $3 - ($1 in n ? n[$1] : 0)} END {print dv + 0, dn + 0}' "$1" "$2"
}
cpu() { for pid in $pids; do cat "/proc/$pid/stat"; done | awk '{t += $14 + $15} END {print t}'; }
# wrk's CPU (its own process: env and taskset exec it): on shared cores what wrk spends a
# request is taken from the server, so a script that costs wrk more lowers the server's rate.
wrk_cpu() { awk '{print $14 + $15}' "/proc/$wrk_pid/stat" 2>/dev/null || echo 0; }
# Readers' page views pre-warm's planner heard of, and those let go for a full ring ("0 0" for nginx).
views() {
  [ "$MODE" = readers ] && [ "$pids" = "$wf_pid" ] || { echo 0 0; return; }
  curl -sf -H "Authorization: Bearer $(cat "$tmp/data/admin-token")" "$url/metrics" \
    | awk '/^warmfeed_prewarm_views_total / {v = $2} /^warmfeed_prewarm_views_dropped_total / {d = $2} END {print v + 0, d + 0}'
}
by_thread() {  # "TID NAME VOLUNTARY" for every thread of the server
  for task in $(for pid in $pids; do echo /proc/"$pid"/task/*; done); do
    printf '%s %s %s\n' "${task##*/}" "$({ tr ' ' '_' <"$task/comm"; } 2>/dev/null)" "$(awk '/^voluntary_ctxt_switches/ {print $2}' "$task/status" 2>/dev/null)"
  done
}

script=bench/random_page.lua what=pages
if [ "$THUMBS" != 0 ]; then script=bench/random_thumb.lua what=thumbnails; fi
if [ "$MODE" = readers ]; then
  script=bench/readers.lua
  what="readers' ${KIND:-document}s (${READERS:-200} readers, ${ORDER:-random}, Sec-CH-DPR ${DPR-1}${DPR:+}, gzip ${GZIP:-1})"
  [ "$THUMBS" != 0 ] && what="readers' thumbnail hits (${READERS:-200} readers)"
fi
measure() {  # measure LABEL [VAR=value ...]: one wrk run, perf over its middle, a line of figures
  local label=$1; shift
  log "wrk: $CONNECTIONS connections, $DURATION s, random $label; perf over the middle $WINDOW s"
  env "$@" WF_PAGES=$PAGES KIND=${KIND:-document} ${on_load[@]+"${on_load[@]}"} wrk -t"$WRK_THREADS" -c"$CONNECTIONS" -d"${DURATION}s" --timeout 10s -s "$script" "$url" >"$tmp/wrk.out" 2>&1 &
  wrk_pid=$!
  sleep $(( (DURATION - WINDOW) / 2 ))
  switches >"$tmp/switches0"
  by_thread >"$tmp/threads0"
  thread_ticks $pids >"$tmp/ticks0"
  c0=$(cpu) w0=$(wrk_cpu)
  read -r heard0 dropped0 < <(views)
  # CALLERS=1: also record where the futex calls come from, printed after the line.
  local record_pid=""
  if [ "${CALLERS:-0}" != 0 ]; then
    local graph=(-g); [ "$CALLERS" = dwarf ] && graph=(--call-graph dwarf,16384)
    perf record -q -e syscalls:sys_enter_futex "${graph[@]}" -p "${pids// /,}" -o "$tmp/futex.data" -- sleep "$WINDOW" >/dev/null 2>&1 &
    record_pid=$!
  fi
  # SLEEPS=1: also record every switch with its kernel stack, to say after the line where the threads slept.
  local sleeps_pid=""
  if [ "${SLEEPS:-0}" = 1 ]; then
    perf record -q -e sched:sched_switch -g -p "${pids// /,}" -o "$tmp/sleeps.data" -- sleep "$WINDOW" >/dev/null 2>&1 &
    sleeps_pid=$!
  fi
  perf stat -x, -e syscalls:sys_enter_futex,context-switches -p "${pids// /,}" -o "$tmp/perf.csv" -- sleep "$WINDOW" 2>/dev/null
  [ -n "$record_pid" ] && wait "$record_pid"
  [ -n "$sleeps_pid" ] && wait "$sleeps_pid"
  switches >"$tmp/switches1"
  thread_ticks $pids >"$tmp/ticks1"
  read -r vol invol < <(switch_delta "$tmp/switches0" "$tmp/switches1")
  by_thread >"$tmp/threads1"
  c1=$(cpu) w1=$(wrk_cpu)
  read -r heard1 dropped1 < <(views)
  wait "$wrk_pid" || true
  rps=$(awk '/^Requests\/sec:/ {print $2}' "$tmp/wrk.out")
  futex=$(awk -F, '/sys_enter_futex/ {print $1}' "$tmp/perf.csv")
  ctx=$(awk -F, '/context-switches/ {print $1}' "$tmp/perf.csv")
  # Requests/s, the server's CPU a request (µs), its voluntary switches a request and wrk's
  # CPU a request (µs): the COMPARE and ROUNDS summaries read them.
  echo "$rps $(awk -v t=$((c1 - c0)) -v l=$((w1 - w0)) -v hz="$(getconf CLK_TCK)" -v r="$rps" -v w="$WINDOW" -v v="$vol" \
    'BEGIN {printf "%.2f %.4f %.2f", t / hz * 1e6 / (r * w), v / (r * w), l / hz * 1e6 / (r * w)}')" >>"$tmp/rates"
  python3 - "$rps" "$futex" "$ctx" "$vol" "$invol" "$((c1 - c0))" "$WINDOW" "$THREADS" "$DEEP" "$(getconf CLK_TCK)" "$STORE" "$THUMBS" "$MODE" "$label" "$who" "$PIN" "$((w1 - w0))" <<'PY'
import sys
rps, futex, ctx, vol, invol, ticks, window, threads, deep, hz, store, thumbs, mode, label, who, pin, wrk_ticks = sys.argv[1:]
requests = float(rps) * float(window)
per = lambda x: float(x) / requests
what = f"cached thumbnails ({thumbs})" if thumbs != "0" else f"{'deep' if deep == '1' else 'warm'} pages ({store})"
if mode == "readers": what = f"{label}, {'deep' if deep == '1' else 'warm'} ({store})"
print(f"{what}, {who}: {float(rps):,.0f} req/s ({'pinned: the server on a core of its own, wrk on the other' if pin == '1' else 'wrk on the same cores'})")
print(f"  per request over {window} s: futex calls {per(futex):.3f}, context switches {per(ctx):.3f} "
      f"(voluntary {per(vol):.3f}, involuntary {per(invol):.3f}), server CPU {float(ticks) / float(hz) * 1e6 / requests:.1f} us, "
      f"wrk's CPU {float(wrk_ticks) / float(hz) * 1e6 / requests:.1f} us")
PY
  if [ "$MODE" = readers ] && [ "$pids" = "$wf_pid" ]; then
    awk -v h0="$heard0" -v h1="$heard1" -v d0="$dropped0" -v d1="$dropped1" -v r="$rps" -v w="$WINDOW" 'BEGIN {
      printf "  pre-warm: views handed to its planner %.3f a request, let go for a full ring %.3f\n", (h1 - h0) / (r * w), (d1 - d0) / (r * w)}'
  fi
  # Which threads switched voluntarily (by name, digits dropped), per request.
  python3 - "$tmp/threads0" "$tmp/threads1" "$rps" "$WINDOW" <<'PY'
import re, sys
def read(path):
    out = {}
    for line in open(path):
        parts = line.split()
        if len(parts) == 3 and parts[2].isdigit(): out[parts[0]] = (parts[1], int(parts[2]))
    return out
before, after = read(sys.argv[1]), read(sys.argv[2])
requests = float(sys.argv[3]) * float(sys.argv[4])
groups = {}
for tid, (name, count) in after.items():
    group = re.sub(r"[0-9]+", "N", name)
    threads, switches = groups.get(group, (0, 0))
    groups[group] = (threads + 1, switches + count - before.get(tid, (name, 0))[1])
top = sorted(groups.items(), key=lambda kv: -kv[1][1])[:6]
print("  voluntary switches per request by thread: " + ", ".join(f"{g} ({t}) {s / requests:.3f}" for g, (t, s) in top))
PY
  # How the work fell on the threads: with wrk's connections spread over all the workers,
  # each of the eight gets an eighth and sleeps between its few requests; gathered on two,
  # those two rarely wait. The switches, and the CPU they cost, follow that placement.
  echo "  the busiest threads' shares of the server's CPU over the window: $(join <(sort "$tmp/ticks0") <(sort "$tmp/ticks1") \
    | awk '{d = $3 - $2; if (d > 0) {print d; all += d}} END {print "all", all}' | sort -k1,1nr \
    | awk '$1 == "all" {all = $2; next} {v[n++] = $1} END {for (i = 0; i < n && i < 8; i++) printf "%d%% ", 100 * v[i] / all}')"
  if [ "${SLEEPS:-0}" = 1 ]; then
    # Each switch by what its thread was in when it left the core: waiting in epoll_wait
    # (an HTTP worker with nothing to do), on a futex (a lock, or a condition), elsewhere;
    # or preempted while it could still run (involuntary).
    perf script -i "$tmp/sleeps.data" >"$tmp/sleeps.txt" 2>/dev/null || true
    python3 - "$tmp/sleeps.txt" "$rps" "$WINDOW" <<'PY'
import re, sys
requests = float(sys.argv[2]) * float(sys.argv[3])
counts, threads = {}, {}
for event in open(sys.argv[1]).read().split("\n\n"):
    lines = event.strip().splitlines()
    if not lines or "sched_switch" not in lines[0]: continue
    frames = " ".join(line.split()[1] for line in lines[1:] if len(line.split()) > 1)
    if re.search(r"prev_state=R\+? ", lines[0]): where = "preempted"
    elif "ep_poll" in frames or "do_epoll_wait" in frames: where = "epoll_wait"
    elif "futex" in frames: where = "futex"
    else: where = "elsewhere"
    counts[where] = counts.get(where, 0) + 1
    thread = re.sub(r"[0-9]+", "N", lines[0].split()[0])
    threads[(where, thread)] = threads.get((where, thread), 0) + 1
def who(where):
    top = sorted(((n, t) for (w, t), n in threads.items() if w == where), reverse=True)[:2]
    return ", ".join(f"{t} {n / requests:.3f}" for n, t in top)
print("  switches per request by where the thread was (perf sched_switch, kernel stacks): "
      + "; ".join(f"{w} {counts.get(w, 0) / requests:.3f}" + (f" ({who(w)})" if counts.get(w) else "")
                  for w in ("epoll_wait", "futex", "elsewhere", "preempted")))
PY
  fi
  if [ "${CALLERS:-0}" = dwarf ]; then
    # The chains, unwound from the stack's copy (DWARF), heaviest first, each by its last
    # seven frames: who took the lock, and for what.
    echo "  where the futex calls come from (perf, DWARF chains, callers folded):"
    perf report -i "$tmp/futex.data" --stdio --no-children --sort comm -g folded,0.5,caller,count --percent-limit 1 2>/dev/null \
      | grep -v '^#' | grep -v '^$' | head -14 \
      | awk '$1 ~ /%$/ { print "    " $0; next }
             { c = $1; sub(/^[^ ]+ /, ""); gsub(/ \(inlined\)/, ""); n = split($0, f, ";"); s = f[n]
               for (i = n - 1; i > 0 && i > n - 7; i--) s = f[i] ";" s; print "    " c " " (n > 7 ? "…;" : "") s }' | cut -c1-600
  elif [ "${CALLERS:-0}" = 1 ]; then
    # By thread and the function that made the call: Debian's libraries keep no frame
    # pointers, so the chains above them are mostly lost; `perf script -i futex.data`
    # (KEEP_TMP=1) has what there is.
    echo "  which threads make the futex calls (perf, share of them, thread, function):"
    perf report -i "$tmp/futex.data" --stdio --no-children --sort comm,sym -g none --percent-limit 1 2>/dev/null \
      | grep -v '^#' | grep -v '^$' | head -20 | cut -c1-120 | sed 's/^/    /'
  fi
}
: >"$tmp/rates"
measure "$what"
# COMPARE=1 (readers): the same requests without the cookie and Sec-Fetch-* (a
# crawler's, not tracked) on the same server right after, and the ratio.
# ROUNDS=N: readers and cookie-less in turn N times, and the medians: which workers
# wrk's connections land on changes from one wrk run to the next, and with it how
# often the workers sleep (see the shares line), so one pair of runs can read
# 0.72x or 1.06x on the same build.
if [ "$MODE" = readers ] && [ "${COMPARE:-0}" = 1 ]; then
  head -n 1 "$tmp/rates" >"$tmp/readers.rounds"
  : >"$tmp/cookieless.rounds"
  for round in $(seq "${ROUNDS:-1}"); do
    if [ "$round" -gt 1 ]; then
      measure "$what"
      tail -n 1 "$tmp/rates" >>"$tmp/readers.rounds"
    fi
    measure "the same without the cookie (not tracked)" COOKIE=0
    tail -n 1 "$tmp/rates" >>"$tmp/cookieless.rounds"
  done
  paste -d' ' "$tmp/readers.rounds" "$tmp/cookieless.rounds" | python3 -c '
import statistics, sys
rounds = [tuple(map(float, line.split())) for line in sys.stdin if line.strip()]
n = len(rounds[0]) // 2  # columns of the readers, then of the cookie-less requests
rate = [r[0] / r[n] for r in rounds]
med = lambda i: statistics.median(r[i] for r in rounds)
print("readers / cookie-less requests/s in the same run: %s (%d round%s in turn%s); medians: CPU a request %.1f / %.1f us, "
      "voluntary switches a request %.3f / %.3f, wrk\x27s CPU a request %.1f / %.1f us" % (
    " ".join("%.3f" % x for x in rate), len(rounds), "s" if len(rounds) > 1 else "",
    ", median %.3f" % statistics.median(rate) if len(rounds) > 1 else "", med(1), med(n + 1), med(2), med(n + 2), med(3), med(n + 3)))'
fi
# PEER=1 (warm pages): nginx serving the same bytes (every page dumped from this server,
# plain and gzipped, sent with gzip_static) with as many workers as the server has
# threads, under the same wrk script on the same cores, counted the same way: what an
# event loop that shares nothing makes (its workers sleep in epoll_wait when their
# connections have nothing to read, as libmicrohttpd's do).
if [ "${PEER:-0}" = 1 ] && [ "$DEEP" != 1 ] && [ "$THUMBS" = 0 ]; then
  log "dumping every page (documents and fragments, plain and gzipped) for nginx"
  mkdir -p "$tmp/nginx/root/documents" "$tmp/nginx/root/fragments" "$tmp/nginx/tmp"
  chmod 755 "$tmp" "$tmp/nginx" "$tmp/nginx/root" "$tmp/nginx/root/documents" "$tmp/nginx/root/fragments"
  for page in $(seq 1 "$PAGES"); do
    for kind in documents fragments; do
      path="/?page=$page"; [ "$kind" = fragments ] && path="/fragment?page=$page"
      # Readers' fragments are asked for by their cursors: nginx serves those answers by page=.
      [ "$kind" = fragments ] && [ -n "${FRAGMENTS:-}" ] && path=$(sed -n "${page}p" "$FRAGMENTS")
      curl -sf -o "$tmp/nginx/root/$kind/$page.html" "$url$path"
      curl -sf -H 'Accept-Encoding: gzip' -o "$tmp/nginx/root/$kind/$page.html.gz" "$url$path"
    done
  done
  chmod -R a+r "$tmp/nginx/root"
  ROUNDS=${ROUNDS:-1}
  # One round: warmfeed is done with; more: it stays up (idle while nginx is measured).
  if [ "$ROUNDS" = 1 ]; then kill -TERM "$wf_pid"; wait "$wf_pid" 2>/dev/null || true; wf_pid=""; fi
  wf_url=$url wf_pids=$pids wf_who=$who
  ng_port=$(python3 bench/pages_helper.py freeport)
  nginx_conf "$tmp/nginx" "$THREADS" "$(nginx_static)
    gzip_static on;
    server {
        listen 127.0.0.1:$ng_port;
        root $tmp/nginx/root;
        location = / {
$(nginx_page)
            try_files /documents/\$arg_page.html =404;
        }
        location = /fragment {
$(nginx_page)
            try_files /fragments/\$arg_page.html =404;
        }
    }"
  ${on_server[@]+"${on_server[@]}"} nginx -p "$tmp/nginx" -c "$tmp/nginx/nginx.conf" -g 'daemon off;' 2>>"$tmp/nginx/error.log" &
  ng_pid=$!
  for _ in $(seq 100); do
    curl -sf -o /dev/null "http://127.0.0.1:$ng_port/?page=1" && break
    kill -0 "$ng_pid" 2>/dev/null || { log "nginx exited:"; cat "$tmp/nginx/error.log" >&2; exit 1; }
    sleep 0.1
  done
  url="http://127.0.0.1:$ng_port" pids="$ng_pid $(pgrep -P "$ng_pid" | tr '\n' ' ')" who="nginx, worker_processes $THREADS"
  pids=${pids% }
  ng_url=$url ng_pids=$pids ng_who=$who
  head -n 1 "$tmp/rates" >"$tmp/warmfeed.rounds"  # the first measurement: the readers' own
  : >"$tmp/nginx.rounds"
  for round in $(seq "$ROUNDS"); do
    if [ "$round" -gt 1 ]; then
      url=$wf_url pids=$wf_pids who=$wf_who
      measure "$what"
      tail -n 1 "$tmp/rates" >>"$tmp/warmfeed.rounds"
    fi
    url=$ng_url pids=$ng_pids who=$ng_who
    measure "$what"
    tail -n 1 "$tmp/rates" >>"$tmp/nginx.rounds"
  done
  if [ "$ROUNDS" -gt 1 ]; then
    paste -d' ' "$tmp/warmfeed.rounds" "$tmp/nginx.rounds" | python3 -c '
import statistics, sys
rounds = [tuple(map(float, line.split())) for line in sys.stdin if line.strip()]
n = len(rounds[0]) // 2  # columns of warmfeed, then of nginx
cpu = [r[1] / r[n + 1] for r in rounds]
rate = [r[0] / r[n] for r in rounds]
print("warmfeed / nginx, %d rounds in turn: CPU a request %s (median %.3f), requests/s %s (median %.3f); medians %.1f / %.1f us" % (
    len(rounds), " ".join("%.2f" % r for r in cpu), statistics.median(cpu), " ".join("%.2f" % r for r in rate), statistics.median(rate),
    statistics.median(r[1] for r in rounds), statistics.median(r[n + 1] for r in rounds)))'
  fi
fi
