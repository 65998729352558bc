#!/usr/bin/env bash
# Crowds and memory (issue 9, parts 1 and 5): 512 connections of mixed
# traffic — 60% random pages, 30% random thumbnails of a 100,000-item feed
# (so nearly all cold: fetched from the origin and resized), 10% the static
# script — against a release server with small caches (--cache-mb 16
# --page-cache-mb 8), for DURATION (60 s for the crowd figures;
# DURATION=600s is the 10-minute soak).
#
# ORIGIN=nginx (the default): a healthy origin, nginx on loopback serving 100
# distinct 1600x1200 JPEGs under 100,000 URLs, for a feed of 100,000 items
# imported with --source. ORIGIN=demo: the demo feed and its in-process demo
# origin, which paints every original with libvips (0.1-0.5 s of CPU each) on
# one thread, so that painting, not the server, sets the pace.
#
# wrk waits at most 5 s for an answer, so its timeouts are the requests over
# 5 s. Printed: requests/s, non-2xx, placeholders among the thumbnails (the
# origin is healthy, so every one is a failure of ours), timeouts, p99, and
# the server's resident memory every 10 s beside the configured budgets, with
# /admin/cache's memory_use at the end. If WARMFEED_BEFORE names another
# binary, it runs the same load after ours, for a side-by-side.
#
#   bench/mixed.sh                          # ~2 minutes
#   DURATION=600s bench/mixed.sh            # the soak
#   WARMFEED_BIN=path WARMFEED_BEFORE=path bench/mixed.sh
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/common.sh  # bench_folder, log, bench_binary
. bench/nginx.sh  # nginx_conf, nginx_static, nginx_page
repo=$PWD
DURATION=${DURATION:-60s}; CONNECTIONS=${CONNECTIONS:-512}; ITEMS=${ITEMS:-100000}
CACHE_MB=${CACHE_MB:-16}; PAGE_CACHE_MB=${PAGE_CACHE_MB:-8}; ORIGIN=${ORIGIN:-nginx}
# libvips' decodes have a budget of their own (--decode-mb), counted with the
# others as test_decode_bombs.py counts it: the bench's pictures (1600x1200
# JPEGs, two decodes at once) hold about 13 MB of it.
DECODE_MB=${DECODE_MB:-32}
# Every memory budget the server is given: the two caches, originals (32,
# --originals-mb's default), the disk index (16) and the originals' own (1), and
# the decodes'. The goal (issues 22 and 34): resident memory within them + 96 MB.
BUDGETS_MB=$((CACHE_MB + PAGE_CACHE_MB + 32 + 16 + 1 + DECODE_MB))
bench_folder mixed

scripts/setup --bench
bench_binary

source_args=(--demo-items "$ITEMS")
if [ "$ORIGIN" = nginx ]; then
  mkdir -p "$tmp/origin/img" "$tmp/origin/tmp"
  chmod 755 "$tmp" "$tmp/origin" "$tmp/origin/img"   # nginx's workers run as nobody
  log "painting 100 originals for the nginx origin"
  for n in $(seq 0 99); do
    vips perlin "$tmp/origin/p.v" 1600 1200 --cell-size $((64 + n)) --uchar --seed "$n"
    vips copy "$tmp/origin/p.v" "$tmp/origin/img/$n.jpg[Q=85]"
    [ "$n" -lt 10 ] && cp "$tmp/origin/img/$n.jpg" "$tmp/origin/img/0$n.jpg"
  done
  rm -f "$tmp/origin/p.v"; chmod 644 "$tmp/origin/img/"*
  origin_port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
  nginx_conf "$tmp/origin" 1 "$(nginx_static)
    types { image/jpeg jpg; }
    server {
        listen 127.0.0.1:$origin_port;
        root $tmp/origin;
        # Item N's original is one of the 100 files, by N's last two digits.
        location /items/ { rewrite \"^/items/[0-9]*?([0-9]{1,2})[.]jpg\$\" /img/\$1.jpg break; }
    }"
  nginx -p "$tmp/origin" -c "$tmp/origin/nginx.conf" -g 'daemon off;' 2>>"$tmp/origin/error.log" &
  pids+=($!)
  for _ in $(seq 100); do curl -sf -o /dev/null "http://127.0.0.1:$origin_port/items/12345.jpg" && break; sleep 0.1; done
  curl -sf -o /dev/null "http://127.0.0.1:$origin_port/items/7.jpg" || { log "the nginx origin does not answer"; cat "$tmp/origin/error.log" >&2; exit 1; }
  IMAGE_BASE="http://127.0.0.1:$origin_port/items" python3 bench/make_feed.py rss "$ITEMS" "$tmp/feed.xml"
  source_args=(--source "$tmp/feed.xml")
fi

measure() {  # measure NAME BINARY
  local name=$1 bin=$2 url="" pid sampler
  mkdir -p "$tmp/$name"
  # The nginx origin is on loopback, which a feed's images reach only when allowed.
  local options=()
  # The help is read whole first: `serve --help | grep -q` under pipefail failed when grep,
  # done at its first match, closed the pipe while the help was still being written; then
  # --allow-origin was left out and every thumbnail of the loopback origin was a placeholder.
  local serve_help
  serve_help=$("$bin" serve --help 2>/dev/null || true)
  if [ "$ORIGIN" = nginx ] && grep -q -- '--allow-origin' <<<"$serve_help"; then options=(--allow-origin 127.0.0.0/8); fi
  if grep -q -- '--decode-mb' <<<"$serve_help"; then options+=(--decode-mb "$DECODE_MB"); fi
  WARMFEED_ADMIN_TOKEN=bench-token-of-thirty-two-characters "$bin" serve --port 0 --data "$tmp/$name" "${source_args[@]}" "${options[@]}" --page-size 20 \
    --cache-mb "$CACHE_MB" --page-cache-mb "$PAGE_CACHE_MB" --prewarm 2 --threads 2 \
    --public "$repo/Public" --templates "$repo/Templates" >"$tmp/$name.out" 2>"$tmp/$name.err" &
  pid=$!; pids+=("$pid")
  for _ in $(seq 1200); do
    url=$(sed -n 's|^Warmfeed is serving \(http://[^ ]*\)/$|\1|p' "$tmp/$name.out"); [ -n "$url" ] && break; sleep 0.1
  done
  [ -n "$url" ] || { log "$name did not start"; cat "$tmp/$name.err" >&2; exit 1; }
  # Wait until the last page exists (an imported feed is written in the background).
  for _ in $(seq 1200); do
    [ "$(curl -s -o /dev/null -w '%{http_code}' "$url/?page=$((ITEMS / 20))")" = 200 ] && break; sleep 0.5
  done
  static=$(curl -s "$url/" | grep -o 'src="/[^"]*"' | head -1 | sed 's/src="//; s/"$//' || true)
  log "$name at $url, static script $static; RSS at start $(awk '/^VmRSS/ {print $2}' /proc/$pid/status) kB"
  ( while kill -0 "$pid" 2>/dev/null; do
      echo "$(awk '/^VmRSS/ {print $2}' /proc/$pid/status 2>/dev/null)"; sleep 10
    done ) >"$tmp/$name.rss" &
  sampler=$!
  PAGES=$((ITEMS / 20)) ITEMS=$ITEMS STATIC=${static:-/} \
    wrk -t2 -c"$CONNECTIONS" -d"$DURATION" --timeout 5s -s bench/mixed.lua "$url" >"$tmp/$name.wrk" 2>&1 || true
  kill "$sampler" 2>/dev/null || true
  local rps mixed use
  rps=$(awk '/^Requests\/sec:/ {print $2}' "$tmp/$name.wrk")
  mixed=$(grep '^MIXED' "$tmp/$name.wrk" | cut -d' ' -f2-)
  use=$(curl -s -H 'Authorization: Bearer bench-token-of-thirty-two-characters' "$url/admin/cache" | python3 -c '
import json, sys
stats = json.load(sys.stdin)
m = stats.get("memory_use", {})
def show(prefix, d):
    for k, v in d.items():
        if isinstance(v, dict):
            yield from show(prefix + k + ".", v)
        elif k.endswith("_bytes"):
            yield f"{prefix}{k[:-6]}={(v or 0) / 1048576:.1f}MB"
        else:
            yield f"{prefix}{k}={v}"
c = stats.get("connections", {})
print(" ".join(show("", m)), "| waits shed=%s late=%s waiting=%s" % (c.get("waits_shed"), c.get("waits_late"), c.get("waiting")))' 2>/dev/null || echo "-")
  echo "$name: $rps req/s; $mixed"
  echo "$name: RSS every 10 s (MB): $(awk '{printf "%d ", $1/1024}' "$tmp/$name.rss")"
  # Where the resident memory is: heap and other anonymous pages (what the
  # caches and the allocator hold) against file-backed pages (the code of the
  # server and its libraries), from the kernel's own accounting.
  echo "$name: at the end, resident $(awk '/^(Rss|Anonymous|Shared_Clean|Private_Clean):/ {printf "%s %d MB  ", $1, $2/1024}' /proc/$pid/smaps_rollup 2>/dev/null)"
  echo "$name: RSS max $(sort -n "$tmp/$name.rss" | tail -1 | awk '{printf "%d", $1/1024}') MB; budgets $BUDGETS_MB MB (caches $((CACHE_MB + PAGE_CACHE_MB)), originals 32, disk index 16 + 1, decodes $DECODE_MB), goal $((BUDGETS_MB + 96)) MB; at the end: $use"
  kill -TERM "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true
}
measure after "$built"
if [ -n "${WARMFEED_BEFORE:-}" ]; then measure before "$WARMFEED_BEFORE"; fi
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
