#!/usr/bin/env bash
# A newcomer's first `scripts/serve`: clones this repository's HEAD (or REV)
# into an empty folder, runs scripts/serve there, and prints the wall time from
# the clone to the first 200 from the feed, the build's own time and its step
# count (issue 24: "build what the default needs"). Nothing runs beside it:
# run it on an idle machine, and compare two commits in one session.
#
#   bench/first-serve.sh [REV]      (PORT=8088, FOLDER=/tmp/warmfeed-first-serve)
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
rev=${1:-HEAD}
port=${PORT:-8088}
folder=${FOLDER:-/tmp/warmfeed-first-serve}
log=$folder.log
if curl -s -o /dev/null "http://127.0.0.1:$port/"; then
    echo "something already answers on port $port; stop it or set PORT" >&2
    exit 1
fi
rm -rf "$folder"
start=$(date +%s.%N)
git clone -q "$repo" "$folder"
git -C "$folder" checkout -q "$rev"
(cd "$folder" && exec scripts/serve --port "$port" > "$log" 2>&1 < /dev/null) &
server=$!
trap 'pkill -f "warmfeed serve --port $port" 2>/dev/null || true; kill $server 2>/dev/null || true' EXIT
until curl -sf -o /dev/null "http://127.0.0.1:$port/"; do
    kill -0 $server 2>/dev/null || { echo "scripts/serve ended before answering; see $log" >&2; exit 1; }
    sleep 1
done
end=$(date +%s.%N)
echo "commit $(git -C "$folder" rev-parse --short HEAD), $(nproc) cores, $(date -u +%FT%TZ)"
echo "wall time, clone to first answer: $(echo "$end - $start" | bc) s"
grep "Build of product" "$log" || true
echo "build steps: $(grep -o '^\[[0-9]*/[0-9]*\]' "$log" | tail -1)"
echo "binary: $(stat -c %s "$folder/.build/release/warmfeed") bytes"
