#!/usr/bin/env bash
# Anonymous traffic (issue 9): `GET /` without the reader cookie in a loop —
# every first visit, crawler and health check — against the same server with
# pre-warm on (--prewarm 2) and off (--prewarm 0), side by side in one run.
#
# Two release servers on the same 10,000-item demo store, 2 threads each; wrk
# (which keeps no cookies, so every request is a first visit) asks each for
# `/` with the same connections and duration, alternating which goes first,
# for ROUNDS rounds. Prints each round, the medians, the ratio on/off (goal
# >= 0.8) and the readers each server tracks at the end (/admin/cache).
#
#   bench/anonymous.sh                     # ~2 minutes
#   ROUNDS=7 DURATION=15s bench/anonymous.sh
#   WARMFEED_BIN=path bench/anonymous.sh   # measure that binary, build nothing
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/common.sh  # bench_folder, log, bench_binary
repo=$PWD
ROUNDS=${ROUNDS:-5}; DURATION=${DURATION:-10s}; CONNECTIONS=${CONNECTIONS:-32}
bench_folder anon

scripts/setup --bench
bench_binary
cp "$built" "$tmp/warmfeed"

start() {  # start NAME PREWARM (in this shell, so cleanup knows the pid)
  local name=$1 prewarm=$2
  mkdir -p "$tmp/$name"
  WARMFEED_ADMIN_TOKEN=bench-token-of-thirty-two-characters "$tmp/warmfeed" serve --port 0 --data "$tmp/$name" --demo-items 10000 \
    --prewarm "$prewarm" --threads 2 --public "$repo/Public" --templates "$repo/Templates" \
    >"$tmp/$name.out" 2>"$tmp/$name.err" &
  pids+=($!)
}
address() {  # address NAME: the URL once it is serving
  for _ in $(seq 600); do
    url=$(sed -n 's|^Warmfeed is serving \(http://[^ ]*\)/$|\1|p' "$tmp/$1.out")
    [ -n "$url" ] && { echo "$url"; return; }
    sleep 0.1
  done
  log "$1 did not start"; cat "$tmp/$1.err" >&2; exit 1
}
start on 2
start off 0
on=$(address on)
off=$(address off)
log "pre-warm on at $on, off at $off"
rate() { wrk -t1 -c"$CONNECTIONS" -d"$DURATION" "$1/" | awk '/^Requests\/sec:/ {print $2}'; }
non2xx() { wrk -t1 -c4 -d1s "$1/" | awk '/Non-2xx/ {print $NF}'; }
for url in "$on" "$off"; do wrk -t1 -c4 -d2s "$url/" >/dev/null; done  # warm the page cache
echo "round | pre-warm on req/s | pre-warm off req/s | on/off"
ratios=(); ons=(); offs=()
for round in $(seq "$ROUNDS"); do
  if [ $((round % 2)) = 1 ]; then r_on=$(rate "$on"); r_off=$(rate "$off"); else r_off=$(rate "$off"); r_on=$(rate "$on"); fi
  ratio=$(python3 -c "print(f'{$r_on/$r_off:.3f}')")
  echo "$round | $r_on | $r_off | $ratio"
  ratios+=("$ratio"); ons+=("$r_on"); offs+=("$r_off")
done
median() { printf '%s\n' "$@" | sort -g | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }
echo "median: on $(median "${ons[@]}") req/s, off $(median "${offs[@]}") req/s; median of per-round ratios $(median "${ratios[@]}") (goal >= 0.8)"
for name in on off; do
  url=$([ $name = on ] && echo "$on" || echo "$off")
  readers=$(curl -s -H 'Authorization: Bearer bench-token-of-thirty-two-characters' "$url/admin/cache" | python3 -c 'import json,sys; print(json.load(sys.stdin)["prewarm"]["readers"])')
  bad=$(non2xx "$url")
  echo "pre-warm $name: readers tracked after the run: $readers; non-2xx in a 1 s check: ${bad:-0}"
done
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
