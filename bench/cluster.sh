#!/usr/bin/env bash
# The cluster benchmark (issue 13): bench/cluster.py on a release build.
#
#   bench/cluster.sh                    # ~6 minutes
#   WARMFEED_BIN=path bench/cluster.sh  # measure that binary, build nothing
#   bench/cluster.sh --readers 30 --pages 6 --rounds 3 --duration 10s
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup --bench >&2
if [ -z "${WARMFEED_BIN:-}" ]; then
  swift build -c release --product warmfeed >&2
  WARMFEED_BIN="$PWD/.build/release/warmfeed"
fi
mkdir -p bench/out
WARMFEED_BIN="$WARMFEED_BIN" .venv/bin/python bench/cluster.py "$@" | tee "bench/out/cluster-$(date +%Y%m%d-%H%M%S).txt"
