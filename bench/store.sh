#!/usr/bin/env bash
# Issue 12: the feed store on SQLite beside PostgreSQL, in one run on one
# machine (PostgreSQL from Debian, started here by scripts/postgres in the
# temporary folder, fsync off as in the tests: a loopback server, not a disk).
#
#   1. import rate of a 100,000-item RSS file into each (first import and the
#      idempotent re-import), ROUNDS times;
#   2. copy-store rate: a 1,000,000-item demo feed from SQLite into PostgreSQL
#      and back into a new SQLite file;
#   3. cold page (store read + render, `warmfeed measure-render`) on each
#      1,000,000-item store, RENDER_RUNS runs of RENDER_PAGES random pages.
#
#   bench/store.sh                         # ~6 minutes
#   WARMFEED_BIN=path bench/store.sh       # measure that binary, build nothing
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
cd "$repo"
ITEMS=${ITEMS:-100000}; ROUNDS=${ROUNDS:-3}
DEEP_ITEMS=${DEEP_ITEMS:-1000000}; RENDER_RUNS=${RENDER_RUNS:-3}; RENDER_PAGES=${RENDER_PAGES:-500}
tmp=$(mktemp -d /tmp/warmfeed-bench-store.XXXXXX)
chmod 755 "$tmp"  # PostgreSQL runs as its own user in "$tmp/pg"
cleanup() {
  [ -f "$tmp/pg/port" ] && scripts/postgres stop "$tmp/pg" 2>/dev/null || true
  rm -rf "$tmp"
}
trap cleanup EXIT
log() { echo "bench $(date +%T): $*" >&2; }

scripts/setup --bench
if [ -n "${WARMFEED_BIN:-}" ]; then
  cp "$WARMFEED_BIN" "$tmp/warmfeed"
else
  swift build -c release --product warmfeed >"$tmp/build.log" 2>&1 || { tail -20 "$tmp/build.log" >&2; exit 1; }
  cp .build/release/warmfeed "$tmp/warmfeed"
fi
wf=$tmp/warmfeed
admin=$(scripts/postgres start "$tmp/pg")
db() {  # db NAME -> the URL of a new, empty database NAME
  psql "$admin" -qAtc "CREATE DATABASE $1" >/dev/null
  echo "${admin%/postgres*}/$1?sslmode=disable"
}
log "PostgreSQL $(psql "$admin" -Atc 'SHOW server_version') at ${admin/:warmfeed@/:***@}; load $(cut -d' ' -f1-3 /proc/loadavg)"

# --- 1. import rate ---------------------------------------------------------
python3 bench/make_feed.py rss "$ITEMS" "$tmp/feed.xml"
secs() { python3 -c "import sys; print(f'{float(sys.argv[1]):.2f}')" "$1"; }
import_once() {  # import_once STORE-URL -> "seconds"
  local start end
  start=$(date +%s.%N)
  "$wf" import --data "$tmp/importdata" --store "$1" --quiet "$tmp/feed.xml" >"$tmp/out" 2>"$tmp/err" || { cat "$tmp/err" >&2; exit 1; }
  grep -q "imported" "$tmp/out" || { cat "$tmp/out" >&2; exit 1; }
  end=$(date +%s.%N)
  python3 -c "print(f'{$end - $start:.2f}')"
}
: >"$tmp/imports"
for round in $(seq "$ROUNDS"); do
  for store in sqlite postgres; do
    if [ "$store" = sqlite ]; then rm -f "$tmp/import.sqlite"*; url="sqlite:$tmp/import.sqlite"; else url=$(db "imp$round"); fi
    first=$(import_once "$url"); again=$(import_once "$url")
    log "import round $round, $store: first ${first} s, again ${again} s"
    echo "$store $first $again" >>"$tmp/imports"
  done
done

# --- 2. copy-store ----------------------------------------------------------
log "seeding $DEEP_ITEMS demo items into SQLite (warmfeed serve --demo-items, stopped once listening)"
mkdir -p "$tmp/deep"
"$wf" serve --port 0 --data "$tmp/deep" --demo-items "$DEEP_ITEMS" --prewarm 0 --public Public --templates Templates \
  >"$tmp/serve.out" 2>"$tmp/serve.err" &
pid=$!
until grep -q "Warmfeed is serving" "$tmp/serve.out"; do
  kill -0 "$pid" 2>/dev/null || { cat "$tmp/serve.err" >&2; exit 1; }
  sleep 0.5
done
kill -TERM "$pid"; wait "$pid" || true
deep_pg=$(db deep)
copy() {  # copy FROM TO -> the summary line
  "$wf" copy-store --quiet "$1" "$2" 2>"$tmp/err" || { cat "$tmp/err" >&2; exit 1; }
}
to_pg=$(copy "sqlite:$tmp/deep/feed.sqlite" "$deep_pg")
log "$to_pg"
to_sqlite=$(copy "$deep_pg" "sqlite:$tmp/back.sqlite")
log "$to_sqlite"

# --- 3. cold page -------------------------------------------------------------
: >"$tmp/render"
for run in $(seq "$RENDER_RUNS"); do
  for store in sqlite postgres; do
    url="sqlite:$tmp/deep/feed.sqlite"; [ "$store" = postgres ] && url=$deep_pg
    line=$("$wf" measure-render --data "$tmp/deep" --store "$url" --pages "$RENDER_PAGES" --public Public --templates Templates)
    log "measure-render $store run $run: $line"
    echo "$store $line" >>"$tmp/render"
  done
done

python3 - "$tmp/imports" "$tmp/render" "$ITEMS" "$to_pg" "$to_sqlite" <<'PY'
import json, statistics, sys
imports, render, items, to_pg, to_sqlite = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4], sys.argv[5]
rows = [line.split() for line in open(imports)]
print(f"\n### Import of the {items:,}-item RSS file (median of {len(rows)//2} rounds)\n")
print("| store | first import s | items/s | re-import s | items/s |\n|---|---:|---:|---:|---:|")
med = {}
for store in ("sqlite", "postgres"):
    first = statistics.median(float(r[1]) for r in rows if r[0] == store)
    again = statistics.median(float(r[2]) for r in rows if r[0] == store)
    med[store] = first
    print(f"| {store} | {first:.2f} | {items/first:,.0f} | {again:.2f} | {items/again:,.0f} |")
print(f"\nPostgreSQL / SQLite first-import time: {med['postgres']/med['sqlite']:.2f}×")
print(f"\n### copy-store\n\n- {to_pg}\n- {to_sqlite}")
data = {}
for line in open(render):
    store, payload = line.split(" ", 1)
    data.setdefault(store, []).append(json.loads(payload))
print(f"\n### Cold page on a 1,000,000-item store (measure-render, median of runs' medians)\n")
print("| store | store read µs (p50) | p90 | render µs (p50) | read + render µs |\n|---|---:|---:|---:|---:|")
total = {}
for store in ("sqlite", "postgres"):
    runs = data[store]
    read = statistics.median(r["store_median_us"] for r in runs)
    p90 = statistics.median(r["store_p90_us"] for r in runs)
    rend = statistics.median(r["render_median_us"] for r in runs)
    total[store] = read + rend
    print(f"| {store} | {read:.0f} | {p90:.0f} | {rend:.0f} | {read + rend:.0f} |")
print(f"\nPostgreSQL / SQLite cold page: {total['postgres']/total['sqlite']:.1f}×")
PY
