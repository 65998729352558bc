#!/usr/bin/env bash
# Issue 3, benchmark (a): cached thumbnails served by Warmfeed against nginx
# serving the very same bytes as static files, side by side in one run.
#
# Warmfeed (release) starts on a demo feed (its demo origin serves originals
# from its pool); every thumbnail (WebP) the newest THUMBS items' pages name
# (/thumbs/<id>-<tag>/1x, as a reader asks) is fetched once, which makes it and
# keeps it in Warmfeed's memory, and its bytes are written for nginx at the same URL. wrk asks both for uniformly random thumbnails,
# alternating rounds. Usage: bench/thumbs.sh   (ROUNDS, DURATION, THUMBS knobs)
#
#   PIN=1 bench/thumbs.sh          # one core each: warmfeed (--threads 1) and nginx (one worker)
#                                  # on SERVER_CPU (1), wrk on LOAD_CPUS (0); reports each server's
#                                  # CPU a request and how busy the server's core was (issue 35)
#   WARMFEED_BIN=path bench/thumbs.sh  # measure that binary, build nothing
#
# Each round also reports each server's CPU time a request (user + system, from
# /proc, nginx's master and workers summed): steadier than requests/s on a shared machine.
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
cd "$repo"
. bench/nginx.sh  # nginx_conf, nginx_static
. bench/common.sh  # bench_folder, log, bench_binary
ROUNDS=${ROUNDS:-5}; DURATION=${DURATION:-10s}; THUMBS=${THUMBS:-120}; CONNECTIONS=${CONNECTIONS:-32}
export THUMBS
PIN=${PIN:-0}; SERVER_CPU=${SERVER_CPU:-1}; LOAD_CPUS=${LOAD_CPUS:-0}
on_server=(); on_load=(); threads=2
if [ "$PIN" = 1 ]; then on_server=(taskset -c "$SERVER_CPU"); on_load=(taskset -c "$LOAD_CPUS"); threads=1; fi
bench_folder thumbs

scripts/setup --bench
bench_binary
cp "$built" "$tmp/warmfeed"

mkdir -p "$tmp/data" "$tmp/nginx/root/thumbs" "$tmp/nginx/tmp"
chmod 755 "$tmp" "$tmp/nginx" "$tmp/nginx/root" "$tmp/nginx/root/thumbs"
${on_server[@]+"${on_server[@]}"} "$tmp/warmfeed" serve --port 0 --data "$tmp/data" --demo-items 1000 \
  --prewarm 0 --origin-latency 0 --threads "$threads" --public Public --templates Templates \
  >"$tmp/wf.out" 2>"$tmp/wf.err" &
wf_pid=$!
pids+=("$wf_pid")
for _ in $(seq 600); do grep -q "^Warmfeed is serving" "$tmp/wf.out" 2>/dev/null && break; sleep 0.1; done
wf=$(sed -n 's|^Warmfeed is serving \(http://[^ ]*\)/$|\1|p' "$tmp/wf.out")
[ -n "$wf" ] || { log "warmfeed did not start"; cat "$tmp/wf.err" >&2; exit 1; }

# The newest THUMBS items, by the addresses their pages give (/thumbs/<id>-<tag>/1x): a
# reader asks by picture, which memory answers with no store read.
log "making $THUMBS thumbnails once (this also caches them in warmfeed)"
: >"$tmp/list"
for page in $(seq 1 $(((THUMBS + 29) / 30))); do
  curl -sf "$wf/?page=$page" | grep -o 'src="/thumbs/[0-9]*-[0-9a-f]*/1x"' | sed 's/^src="//; s/"$//' >>"$tmp/list"
done
head -n "$THUMBS" "$tmp/list" >"$tmp/list.n" && mv "$tmp/list.n" "$tmp/list"
[ "$(wc -l <"$tmp/list")" -eq "$THUMBS" ] || { log "the pages name $(wc -l <"$tmp/list") thumbnails, not $THUMBS"; exit 1; }
while read -r path; do
  name=${path#/thumbs/}; name=${name%/1x}
  curl -sf -H 'Accept: image/webp,*/*' -o "$tmp/nginx/root/thumbs/$name.webp" -D "$tmp/h" "$wf$path" \
    || { log "thumbnail $path failed"; exit 1; }
  grep -qi '^content-type: image/webp' "$tmp/h" || { log "thumbnail $path is not WebP (a placeholder?)"; exit 1; }
done <"$tmp/list"
# Both servers are asked for the same addresses, nginx's files named by picture.
bytes=$(cat "$tmp/nginx/root/thumbs/"*.webp | wc -c)
log "$THUMBS thumbnails, $bytes bytes (mean $((bytes / THUMBS)) B)"

port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
nginx_conf "$tmp/nginx" "$threads" "$(nginx_static)
    server {
        listen 127.0.0.1:$port;
        root $tmp/nginx/root;
        location ~ ^/thumbs/([0-9]+-[0-9a-f]+)/1x\$ {
            types { } default_type image/webp;
            add_header Cache-Control \"public, max-age=86400\"; add_header Vary Accept;
            try_files /thumbs/\$1.webp =404;
        }
    }"
${on_server[@]+"${on_server[@]}"} nginx -p "$tmp/nginx" -c "$tmp/nginx/nginx.conf" -g 'daemon off;' &
ng_pid=$!
pids+=("$ng_pid")
sleep 0.5
ng="http://127.0.0.1:$port"

export THUMB_LIST="$tmp/list"
cp bench/random_thumb.lua "$tmp/ng.lua"; cp bench/random_thumb.lua "$tmp/wf.lua"
one=$(head -1 "$tmp/list"); one_file="$tmp/nginx/root/thumbs/$(basename "$(dirname "$one")").webp"
cmp -s <(curl -s -H 'Accept: image/webp' "$wf$one") "$one_file" || { log "bytes differ"; exit 1; }
cmp -s <(curl -s "$ng$one") "$one_file" || { log "nginx bytes differ"; exit 1; }

run() { ${on_load[@]+"${on_load[@]}"} wrk -t1 -c"$CONNECTIONS" -d"$DURATION" --latency -s "$2" "$1" 2>&1; }
rps() { awk '/^Requests\/sec/ {print $2}'; }
requests() { awk '/requests in/ {print $1}'; }
# shellcheck source=bench/cpu.sh
source bench/cpu.sh   # cpu_ticks, core_ticks, core_busy
measured() {  # measured URL SCRIPT PIDS...: wrk's output, then a line "CPU CPU_US BUSY" (BUSY: a percent, or - unpinned)
  local url=$1 script=$2; shift 2
  local t0 t1 c0 out
  t0=$(cpu_ticks "$@"); c0=$(core_ticks)
  out=$(run "$url" "$script")
  t1=$(cpu_ticks "$@")
  echo "$out"
  awk -v t=$((t1 - t0)) -v hz="$(getconf CLK_TCK)" -v n="$(echo "$out" | requests)" -v busy="$(core_busy "$c0" "$(core_ticks)")" \
    'BEGIN { printf "CPU %.1f %s\n", t * 1e6 / hz / n, busy }'
}
ng_pids() { echo "$ng_pid $(pgrep -P "$ng_pid" | tr '\n' ' ')"; }
p99() { awk '$1=="99%" {v=$2; if (v ~ /ms$/) {sub("ms","",v); print v} else if (v ~ /us$/) {sub("us","",v); print v/1000} else {sub("s","",v); print v*1000}}'; }
run "$wf" "$tmp/wf.lua" >/dev/null; run "$ng" "$tmp/ng.lua" >/dev/null   # warm-up, not recorded
echo "| round | warmfeed req/s | nginx req/s | ratio | warmfeed p99 ms | nginx p99 ms | server CPU µs/req (wf / nginx) | CPU ratio | server core busy (wf / nginx) | load avg |"
echo "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
ratios=(); cpu_ratios=()
for round in $(seq "$ROUNDS"); do
  # shellcheck disable=SC2046 # the pids are meant to split into words
  w=$(measured "$wf" "$tmp/wf.lua" "$wf_pid"); n=$(measured "$ng" "$tmp/ng.lua" $(ng_pids))
  wr=$(echo "$w" | rps); nr=$(echo "$n" | rps); wp=$(echo "$w" | p99); np=$(echo "$n" | p99)
  read -r _ wc wb <<<"$(echo "$w" | grep '^CPU ')"; read -r _ nc nb <<<"$(echo "$n" | grep '^CPU ')"
  ratio=$(python3 -c "print(f'{$wr/$nr:.3f}')"); cpu_ratio=$(python3 -c "print(f'{$wc/$nc:.3f}')")
  ratios+=("$ratio"); cpu_ratios+=("$cpu_ratio")
  busy="-"; [ "$PIN" = 1 ] && busy="$wb% / $nb%"
  echo "| $round | $wr | $nr | $ratio | $wp | $np | $wc / $nc | $cpu_ratio | $busy | $(cut -d' ' -f1 /proc/loadavg) |"
  echo "$w$n" | grep -E "Non-2xx|Socket errors" >&2 || true
done
median() { printf '%s\n' "$@" | sort -n | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }
echo
echo "cached thumbnails, requests/s warmfeed/nginx: median of per-round ratios $(median "${ratios[@]}") (goal >= 0.8)"
echo "cached thumbnails, server CPU a request warmfeed/nginx: median of per-round ratios $(median "${cpu_ratios[@]}")$([ "$PIN" = 1 ] && echo " (pinned: goal <= 1.0, issue 35)")"
