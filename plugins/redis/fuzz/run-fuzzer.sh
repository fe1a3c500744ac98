#!/bin/bash
# Fuzzes the Redis store's RESP reply reader for a bounded time.
#
#   plugins/redis/fuzz/run-fuzzer.sh [SECONDS [BUILD_DIR]]   (60, build)
#
# Builds kjit-resp-reader-fuzzer in BUILD_DIR (configured where a clang that
# links libFuzzer was found), then runs it from the seed corpus beside this
# script with the RESP dictionary. What it finds goes to a scratch directory,
# printed at the end, never into the tree; so does a crashing input
# (crash-*), which the fuzzer replays when given as its argument.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
seconds=${1:-60}
build=${2:-$here/../../../build}
if ! ninja -C "$build" -t query kjit-resp-reader-fuzzer > /dev/null 2>&1; then
  echo "run-fuzzer.sh: $build has no fuzzer target: configure it where a clang" \
       "that links libFuzzer is on PATH" >&2
  exit 1
fi
ninja -C "$build" kjit-resp-reader-fuzzer
work=$(mktemp -d "${TMPDIR:-/tmp}/kjit-resp-fuzz.XXXXXX")
mkdir "$work/corpus"
"$build/plugins/redis/fuzz/resp-reader-fuzzer" -max_total_time="$seconds" \
  -print_final_stats=1 -dict="$here/resp.dict" -artifact_prefix="$work/" \
  "$work/corpus" "$here/corpus"
echo "run-fuzzer.sh: corpus, and any crashing input, in $work"
