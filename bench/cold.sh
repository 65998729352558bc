#!/usr/bin/env bash
# Issue 3, benchmark (b): cold thumbnails, Warmfeed vs thumbor (PyPI), and CPU
# time per thumbnail vs `vipsthumbnail`, side by side in one run.
#
# Both servers make 160x120 WebP thumbnails (quality 75, centre crop) of the same
# THUMBS originals (the demo feed's, >= 1 MP, JPEG/PNG/WebP), fetched over
# loopback HTTP from one nginx origin serving those files: Warmfeed's items are
# pointed at it (their imageURL rewritten in a copy of the store), thumbor gets
# the same files in its unsafe URLs. Every thumbnail is asked for once, from a
# freshly started server (Warmfeed on a fresh copy of the data folder, so nothing
# is in its memory or disk tier), CONNECTIONS at a time, by bench/cold_helper.py,
# which checks each answer (200, image/webp, 160x120, no placeholder). Rounds
# alternate the order (W then T, T then W). Each round also times one
# `vipsthumbnail` process over the same files (same size, crop, format, quality).
#
#   bench/cold.sh                      # ~5 minutes
#   ROUNDS=6 THUMBS=400 bench/cold.sh  # knobs: see the defaults below
#   WARMFEED_BIN=path bench/cold.sh    # measure that binary, build nothing
#
# Originals are the demo origin's pool (painted in a few seconds at the seed
# server's start), one file per item. Everything lives in a mktemp folder under
# /tmp, removed on exit (KEEP_TMP=1 keeps it); a copy of the report goes to
# bench/out/.
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/nginx.sh  # nginx_conf, nginx_static, nginx_page
repo=$PWD

ROUNDS=${ROUNDS:-6}
THUMBS=${THUMBS:-400}
WARM=${WARM:-8}                       # thumbnails of other originals made first, not counted
CONNECTIONS=${CONNECTIONS:-8}
PROCESSES=${PROCESSES:-$(nproc)}      # thumbor processes; warmfeed gets as many libvips workers (one per core)
QUALITY=${QUALITY:-75}                # Warmfeed's WebP quality (Thumbnailer's default)
ITEMS=1000                            # demo feed size; the newest THUMBS+WARM items are used

tmp=$(mktemp -d /tmp/warmfeed-bench-cold.XXXXXX)
wf_pid="" th_pid="" ng_pid="" seed_pid=""

stop() {  # stop PID NAME [group]: SIGTERM (to the process group with "group"), then SIGKILL after 10 s
  local pid=$1 name=$2 target=$1
  [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null || return 0
  [ "${3:-}" = group ] && target=-$pid
  kill -TERM -- "$target" 2>/dev/null || true
  for _ in $(seq 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
  if kill -0 "$pid" 2>/dev/null; then
    echo "bench: $name ($pid) ignored SIGTERM for 10 s; killing it" >&2
    kill -KILL -- "$target" 2>/dev/null || true
  fi
  wait "$pid" 2>/dev/null || true
  # thumbor's forked workers go with their parent's group; make sure of it.
  [ "${3:-}" = group ] && kill -KILL -- "-$pid" 2>/dev/null || true
}
cleanup() {
  stop "$wf_pid" warmfeed group
  stop "$seed_pid" warmfeed group
  stop "$th_pid" thumbor group
  stop "$ng_pid" nginx
  if [ "${KEEP_TMP:-0}" = 1 ]; then echo "bench: kept $tmp" >&2; else rm -rf "$tmp"; fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

log() { echo "bench $(date +%T): $*" >&2; }
helper() { python3 "$repo/bench/cold_helper.py" "$@"; }
freeport() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
load1() { cut -d' ' -f1 /proc/loadavg; }

# --- 1. set up, build --------------------------------------------------------
log "setup (scripts/setup --bench)"
scripts/setup --bench
thumbor_bin=$repo/.venv-bench/bin/thumbor
[ -x "$thumbor_bin" ] || { log "no thumbor at $thumbor_bin (scripts/setup --bench makes it)"; exit 1; }
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
  built=$repo/.build/release/warmfeed
fi
[ -x "$built" ] || { log "no executable at $built"; exit 1; }
bin=$tmp/warmfeed   # a private copy: a build in the same checkout must not swap it mid-run
cp "$built" "$bin"

# Each server under test runs in a session of its own (setsid), so with the
# kernel's autogroup scheduling both compete for the cores on the same terms
# with everything else on the machine (and apart from this script, its client
# and the origin).
own_session() {  # own_session PID: make sure PID leads its own session (and so its process group)
  for _ in $(seq 50); do [ "$(ps -o sid= -p "$1" | tr -d ' ')" = "$1" ] && return 0; sleep 0.05; done
  log "process $1 is not a session leader"; exit 1
}
start_warmfeed() {  # start_warmfeed DATA OUT [serve options...]: sets wf_started_pid, wf_started_url
  local data=$1 out=$2; shift 2
  # The items' originals sit on the loopback nginx below, which a feed reaches only when allowed.
  local allow=()
  # The help is read whole first: `serve --help | grep -q` under pipefail fails when grep,
  # done at its first match, closes the pipe while the help is still being written.
  serve_help=$("$bin" serve --help 2>/dev/null || true)
  if grep -q -- '--allow-origin' <<<"$serve_help"; then allow=(--allow-origin 127.0.0.0/8); fi
  setsid "$bin" serve --port 0 --data "$data" --demo-items "$ITEMS" --prewarm 0 --origin-latency 0 \
    --threads 2 --public "$repo/Public" --templates "$repo/Templates" "${allow[@]}" "$@" >"$out.out" 2>"$out.err" &
  wf_started_pid=$!
  own_session "$wf_started_pid"
  wf_started_url=""
  for _ in $(seq 1200); do
    wf_started_url=$(sed -n 's|^Warmfeed is serving \(http://[^ ]*\)/$|\1|p' "$out.out")
    [ -n "$wf_started_url" ] && return 0
    kill -0 "$wf_started_pid" 2>/dev/null || { log "warmfeed exited:"; cat "$out.err" >&2; exit 1; }
    sleep 0.1
  done
  log "warmfeed did not start in 120 s"; exit 1
}

# --- 2. the originals: the demo origin's pool, one file per item ---------------
# Items share the pool's 40 pictures (item n gets picture n mod their count);
# each item still gets a file of its own name, so both servers fetch, decode
# and resize every item's original once, as they would distinct photos.
first=$((ITEMS - THUMBS - WARM + 1))
log "seeding the demo feed; its demo origin paints its pool before it listens"
paint_start=$SECONDS
start_warmfeed "$tmp/seed" "$tmp/seed"
seed_pid=$wf_started_pid
stop "$seed_pid" warmfeed group; seed_pid=""
mkdir -p "$tmp/items"
helper originals "$tmp/seed/feed.sqlite" "$tmp/seed/demo-origin/pool" "$first" "$ITEMS" "$tmp/items" >"$tmp/map.all"
log "originals ready after $((SECONDS - paint_start)) s"
head -n "$WARM" "$tmp/map.all" >"$tmp/map.warm"
tail -n "$THUMBS" "$tmp/map.all" >"$tmp/map.cold"

# --- 3. the one origin both servers fetch from: nginx over those files -------
mkdir -p "$tmp/origin/originals" "$tmp/origin/tmp"
chmod 755 "$tmp" "$tmp/origin" "$tmp/origin/originals"   # nginx's workers run as nobody
while read -r _ name; do cp "$tmp/items/$name" "$tmp/origin/originals/"; done <"$tmp/map.all"
chmod 644 "$tmp/origin/originals/"*
ng_port=$(freeport)
origin="127.0.0.1:$ng_port"
nginx_conf "$tmp/origin" 1 "$(nginx_static)
    types { image/jpeg jpeg; image/png png; image/webp webp; }
    server {
        listen $origin;
        root $tmp/origin;
        location /originals/ { add_header Cache-Control \"public, max-age=3600\"; }
    }"
nginx -p "$tmp/origin" -c "$tmp/origin/nginx.conf" -g 'daemon off;' 2>>"$tmp/origin/error.log" &
ng_pid=$!
probe=$(head -n 1 "$tmp/map.all" | cut -d' ' -f2)
for _ in $(seq 100); do curl -sf -o /dev/null "http://$origin/originals/$probe" && break; sleep 0.1; done
curl -sf -o "$tmp/probe" "http://$origin/originals/$probe" || { log "the origin does not answer:"; cat "$tmp/origin/error.log" >&2; exit 1; }
cmp -s "$tmp/probe" "$tmp/origin/originals/$probe" || { log "the origin serves other bytes"; exit 1; }
summary=$(cd "$tmp/origin/originals" && tail -n "$THUMBS" "$tmp/map.all" | cut -d' ' -f2 | xargs python3 -c '
import os, sys, collections
names = sys.argv[1:]
kinds = collections.Counter(n.rsplit(".", 1)[1] for n in names)
mp = [int(n.split("-")[1].split(".")[0].split("x")[0]) * int(n.split("-")[1].split(".")[0].split("x")[1]) / 1e6 for n in names]
size = sum(os.path.getsize(n) for n in names)
print(f"{len(names)} originals, {dict(kinds)}, {min(mp):.1f}-{max(mp):.1f} MP (mean {sum(mp)/len(mp):.2f}), {size/len(names)/1024:.0f} KiB mean")')
log "origin: nginx at http://$origin/originals/ (worker_processes 1): $summary"

# Warmfeed's store, with those items pointed at the origin; copied fresh for every round.
mkdir -p "$tmp/template"
cp "$tmp/seed"/feed.sqlite* "$tmp/template/"
helper point "$tmp/template/feed.sqlite" "http://$origin/originals" "$tmp/map.all"

# --- 4. thumbor: no storage, no result storage, Pillow, one process per core --
cat >"$tmp/thumbor.conf" <<EOF
STORAGE = 'thumbor.storages.no_storage'
LOADER = 'thumbor.loaders.http_loader'
ENGINE = 'thumbor.engines.pil'
ALLOW_UNSAFE_URL = True
QUALITY = $QUALITY
WEBP_QUALITY = $QUALITY
RESPECT_ORIENTATION = True
EOF
th_version=$("$repo/.venv-bench/bin/python" -c 'import thumbor, PIL; print("thumbor", thumbor.__version__, "Pillow", PIL.__version__)')

# --- 5. rounds ----------------------------------------------------------------
run_side() {  # run_side warmfeed|thumbor ROUND: one fresh server, WARM then THUMBS thumbnails once each
  local side=$1 round=$2 url pid port before after ng_before ng_after
  if [ "$side" = warmfeed ]; then
    rm -rf "$tmp/wf-data"; cp -r "$tmp/template" "$tmp/wf-data"
    start_warmfeed "$tmp/wf-data" "$tmp/wf-$round"
    wf_pid=$wf_started_pid; pid=$wf_pid; url=$wf_started_url
  else
    port=$(freeport)
    setsid "$thumbor_bin" -i 127.0.0.1 -p "$port" -c "$tmp/thumbor.conf" --processes "$PROCESSES" -l warning \
      >"$tmp/th-$round.out" 2>"$tmp/th-$round.err" &
    th_pid=$!; pid=$th_pid; url="http://127.0.0.1:$port"
    own_session "$th_pid"
    for _ in $(seq 600); do curl -sf -o /dev/null "$url/healthcheck" && break; sleep 0.1; done
    curl -sf -o /dev/null "$url/healthcheck" || { log "thumbor did not start:"; cat "$tmp/th-$round.err" >&2; exit 1; }
    # --processes N forks N workers: wait until all of them are up.
    for _ in $(seq 100); do [ "$(pgrep -c -P "$th_pid" || true)" -ge "$PROCESSES" ] && break; sleep 0.1; done
  fi
  helper load "$url" "$tmp/$side.warm" "$CONNECTIONS" "$tmp/$side-$round.warm.json" >/dev/null
  before=$(helper cpu "$pid"); ng_before=$(helper cpu "$ng_pid")
  helper load "$url" "$tmp/$side.cold.$round" "$CONNECTIONS" "$tmp/$side-$round.json" >/dev/null
  after=$(helper cpu "$pid"); ng_after=$(helper cpu "$ng_pid")
  echo "$before $after $ng_before $ng_after $(load1)" >"$tmp/$side-$round.cpu"
  if [ "$side" = warmfeed ]; then
    curl -s -H "Authorization: Bearer $(cat "$tmp/wf-data/admin-token")" "$url/admin/cache" >"$tmp/wf-$round.admin" || true
    stop "$wf_pid" warmfeed group; wf_pid=""
  else
    stop "$th_pid" thumbor group; th_pid=""
  fi
}

run_vips() {  # run_vips ROUND: one vipsthumbnail process over the same THUMBS files
  rm -rf "$tmp/vips"; mkdir -p "$tmp/vips"
  (cd "$tmp/origin/originals" && cut -d' ' -f2 "$tmp/map.cold" | xargs /usr/bin/time -f "%U %S %e" -o "$tmp/vips-$1.time" \
    env VIPS_CONCURRENCY=1 vipsthumbnail -s 160x120 --smartcrop centre -o "$tmp/vips/%s.webp[Q=$QUALITY,strip]")
  made=$(helper check-webp "$tmp/vips" 160 120)
  [ "$made" = "$THUMBS" ] || { log "vipsthumbnail made $made thumbnails of $THUMBS"; exit 1; }
}

# Warm-up thumbnails are the same few for both (other originals than the measured ones).
helper targets "$tmp/map.warm" 0 "$origin" "$tmp/warmfeed.warm" "$tmp/thumbor.warm"
log "$ROUNDS rounds: $THUMBS cold thumbnails each side, $CONNECTIONS connections, thumbor --processes $PROCESSES; load $(cut -d' ' -f1-3 /proc/loadavg)"
load_before=$(cut -d' ' -f1-3 /proc/loadavg)
for round in $(seq "$ROUNDS"); do
  helper targets "$tmp/map.cold" "$round" "$origin" "$tmp/warmfeed.cold.$round" "$tmp/thumbor.cold.$round"
  if [ $((round % 2)) = 1 ]; then order="warmfeed thumbor"; else order="thumbor warmfeed"; fi
  for side in $order; do log "round $round: $side"; run_side "$side" "$round"; done
  log "round $round: vipsthumbnail"; run_vips "$round"
done
load_after=$(cut -d' ' -f1-3 /proc/loadavg)

# --- 6. report ----------------------------------------------------------------
report=$tmp/report
python3 - "$tmp" "$ROUNDS" "$THUMBS" >"$report" <<'EOF'
import json, statistics, sys
tmp, rounds, thumbs = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
rows, ratios, wf_vips, th_vips, invalid = [], [], [], [], []
cols = {k: [] for k in ("wf", "th", "wfc", "thc", "vc", "ngw", "ngt")}
print("| round | order | warmfeed thumbs/s | thumbor thumbs/s | ratio | CPU ms/thumb warmfeed | thumbor | vipsthumbnail | warmfeed/vips | thumbor/vips | origin CPU ms/thumb (wf / th runs) | cores used (wf / th) | p50 ms (wf / th) | p99 ms (wf / th) | placeholders, errors (wf / th) | load avg (wf / th) |")
print("|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
for r in range(1, rounds + 1):
    w = json.load(open(f"{tmp}/warmfeed-{r}.json")); t = json.load(open(f"{tmp}/thumbor-{r}.json"))
    wb, wa, wnb, wna, wl = map(float, open(f"{tmp}/warmfeed-{r}.cpu").read().split())
    tb, ta, tnb, tna, tl = map(float, open(f"{tmp}/thumbor-{r}.cpu").read().split())
    vu, vs, ve = map(float, open(f"{tmp}/vips-{r}.time").read().split())
    wfc, thc, vc = 1000 * (wa - wb) / thumbs, 1000 * (ta - tb) / thumbs, 1000 * (vu + vs) / thumbs
    ratio = w["per_second"] / t["per_second"]
    for side, s in (("warmfeed", w), ("thumbor", t)):
        bad = s["targets"] - s["good"]
        if bad or s["placeholders"] or s["errors"]:
            invalid.append(f"round {r} {side}: {bad} of {s['targets']} not a good thumbnail "
                           f"(placeholders {s['placeholders']}, errors {s['errors']}, non-200 {s['non_200']}, "
                           f"not WebP {s['not_webp']}, wrong size {s['wrong_size']}) {s['first_errors']}")
    ratios.append(ratio); wf_vips.append(wfc / vc); th_vips.append(thc / vc)
    for k, v in (("wf", w["per_second"]), ("th", t["per_second"]), ("wfc", wfc), ("thc", thc), ("vc", vc),
                 ("ngw", 1000 * (wna - wnb) / thumbs), ("ngt", 1000 * (tna - tnb) / thumbs)):
        cols[k].append(v)
    order = "W, T" if r % 2 else "T, W"
    print(f"| {r} | {order} | {w['per_second']:.1f} | {t['per_second']:.1f} | {ratio:.2f} | {wfc:.1f} | {thc:.1f} | {vc:.1f} | "
          f"{wfc / vc:.2f} | {thc / vc:.2f} | {cols['ngw'][-1]:.2f} / {cols['ngt'][-1]:.2f} | "
          f"{(wa - wb) / w['elapsed']:.2f} / {(ta - tb) / t['elapsed']:.2f} | {w['p50_ms']:.0f} / {t['p50_ms']:.0f} | "
          f"{w['p99_ms']:.0f} / {t['p99_ms']:.0f} | {w['placeholders']}, {w['errors']} / {t['placeholders']}, {t['errors']} | {wl:.2f} / {tl:.2f} |")
m = statistics.median
print(f"| **median** | | **{m(cols['wf']):.1f}** | **{m(cols['th']):.1f}** | **{m(ratios):.2f}** | **{m(cols['wfc']):.1f}** | "
      f"**{m(cols['thc']):.1f}** | **{m(cols['vc']):.1f}** | **{m(wf_vips):.2f}** | **{m(th_vips):.2f}** | "
      f"{m(cols['ngw']):.2f} / {m(cols['ngt']):.2f} | | | | | |")
print()
goal_t = "MET" if m(ratios) >= 3 else "NOT MET"
goal_c = "MET" if m(wf_vips) <= 1.5 else "NOT MET"
print(f"cold thumbnails/s, warmfeed/thumbor: median of per-round ratios {m(ratios):.2f} (range {min(ratios):.2f}-{max(ratios):.2f}); goal >= 3: {goal_t}")
print(f"CPU per thumbnail, warmfeed/vipsthumbnail: median of per-round ratios {m(wf_vips):.2f} (range {min(wf_vips):.2f}-{max(wf_vips):.2f}); goal <= 1.5: {goal_c}")
print(f"CPU per thumbnail, thumbor/vipsthumbnail: median of per-round ratios {m(th_vips):.2f} (context, no goal)")
print(f"mean thumbnail bytes, last round: warmfeed {w['mean_bytes']:.0f}, thumbor {t['mean_bytes']:.0f}")
if invalid:
    print("INVALID RUN: " + "; ".join(invalid))
EOF
{
  echo "cold thumbnails: $(date -u '+%Y-%m-%d %H:%M UTC'), HEAD $(git rev-parse --short HEAD)$(git diff --quiet HEAD -- Sources Package.swift || echo ' (Sources changed)'), nproc $(nproc), $th_version, $(vipsthumbnail --vips-version 2>/dev/null | head -n 1)"
  echo "ROUNDS=$ROUNDS THUMBS=$THUMBS WARM=$WARM CONNECTIONS=$CONNECTIONS PROCESSES=$PROCESSES QUALITY=$QUALITY; $summary"
  echo "load before/after: $load_before / $load_after"
  echo
  cat "$report"
  echo
  echo "warmfeed's /admin/cache after round 1: $(python3 -c 'import json, sys; print(json.dumps(json.load(open(sys.argv[1])), separators=(",", ":")))' "$tmp/wf-1.admin" 2>/dev/null || echo unavailable)"
} | tee "$repo/bench/out/cold-$(date -u +%Y%m%d-%H%M%S).txt"
grep -q '^INVALID RUN' "$report" && exit 1
exit 0
