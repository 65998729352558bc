#!/usr/bin/env bash
# Issue 4: import rate (items/s) and peak memory for a 100,000-item RSS file and
# a 100,000-item JSON Feed, first import into an empty store and the idempotent
# re-import, each ROUNDS times; prints per-run figures and medians.
# Usage: bench/import.sh   (ITEMS, ROUNDS knobs)
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
cd "$repo"
ITEMS=${ITEMS:-100000}; ROUNDS=${ROUNDS:-3}
tmp=$(mktemp -d /tmp/warmfeed-bench-import.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
log() { echo "bench $(date +%T): $*" >&2; }

scripts/setup --bench
swift build -c release --product warmfeed >"$tmp/build.log" 2>&1 || { tail -20 "$tmp/build.log" >&2; exit 1; }
cp .build/release/warmfeed "$tmp/warmfeed"

python3 bench/make_feed.py rss "$ITEMS" "$tmp/feed.xml"
python3 bench/make_feed.py json "$ITEMS" "$tmp/feed.json"
log "feeds: $(du -h "$tmp/feed.xml" | cut -f1) RSS, $(du -h "$tmp/feed.json" | cut -f1) JSON Feed, $ITEMS items each; load $(cut -d' ' -f1-3 /proc/loadavg)"

# One import: prints "seconds peak_kib".
run() {  # data-folder source
  /usr/bin/time -f "%e %M" -o "$tmp/time" "$tmp/warmfeed" import --data "$1" --quiet "$2" >"$tmp/out" 2>"$tmp/err" \
    || { cat "$tmp/err" >&2; exit 1; }
  grep -q "imported" "$tmp/out" || { cat "$tmp/out" >&2; exit 1; }
  cat "$tmp/time"
}

printf "%-10s %-9s %8s %10s %9s\n" format import seconds items/s peak_MiB
results=()
for format in rss json; do
  file="$tmp/feed.xml"; [ "$format" = json ] && file="$tmp/feed.json"
  for round in $(seq "$ROUNDS"); do
    rm -rf "$tmp/data"
    for pass in first again; do
      read -r secs kib < <(run "$tmp/data" "$file")
      rate=$(python3 -c "print(round($ITEMS / max($secs, 0.01)))")
      printf "%-10s %-9s %8s %10s %9s\n" "$format" "$pass" "$secs" "$rate" "$((kib / 1024))"
      results+=("$format $pass $secs $rate $((kib / 1024))")
    done
  done
done
printf '%s\n' "${results[@]}" | python3 -c '
import sys, statistics
rows = [line.split() for line in sys.stdin if line.strip()]
print("\nmedians:")
for fmt in ("rss", "json"):
    for p in ("first", "again"):
        sel = [r for r in rows if r[0] == fmt and r[1] == p]
        print(f"  {fmt:5} {p:6} {statistics.median(int(r[3]) for r in sel):>8} items/s   peak {statistics.median(int(r[4]) for r in sel)} MiB")
'
