# Sourced by the benches: the set-up most of them share, in one place.
#
#   bench_folder NAME   makes the temporary folder $tmp (/tmp/warmfeed-bench-NAME.XXXXXX)
#                       and the list $pids; on exit (or INT, TERM) every process in
#                       $pids gets SIGTERM, is waited for, and $tmp is removed.
#   log TEXT…           a timestamped line on stderr.
#   bench_binary        sets $built: WARMFEED_BIN when given, else a release build
#                       of this checkout (its log in $tmp/build.log, shown on failure).
bench_folder() {
  tmp=$(mktemp -d "/tmp/warmfeed-bench-$1.XXXXXX")
  pids=()
  trap bench_cleanup EXIT
  trap 'exit 130' INT TERM
}

bench_cleanup() {
  for p in "${pids[@]+"${pids[@]}"}"; do kill -TERM "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -rf "$tmp"
}

log() { echo "bench $(date +%T): $*" >&2; }

bench_binary() {
  if [ -n "${WARMFEED_BIN:-}" ]; then built=$WARMFEED_BIN; return; fi
  swift build -c release --product warmfeed >"$tmp/build.log" 2>&1 || { tail -20 "$tmp/build.log" >&2; exit 1; }
  built=.build/release/warmfeed
}
