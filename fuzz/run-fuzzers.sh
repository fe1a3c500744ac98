#!/bin/bash
# Fuzzes the readers of what the disk cache stores, each for a bounded time.
#
#   fuzz/run-fuzzers.sh [SECONDS [BUILD_DIR]]   (60 per fuzzer, build)
#
# Builds kjit-entry-fuzzer, kjit-manifest-fuzzer and kjit-tuning-fuzzer in
# BUILD_DIR (configured where a clang++ that links libFuzzer was found)
# under the shared build lock, then runs each from its seed corpus
# (fuzz/corpus/entry, .../manifest, .../tuning) with its dictionary. What they find goes to a scratch directory, printed at
# the end, never into the tree; so does a crashing input (entry-crash-*,
# manifest-crash-*, tuning-crash-*), which the fuzzer replays when given as
# its argument. Exits 1 if a fuzzer found something.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
seconds=${1:-60}
build=${2:-$here/../build}
fuzzers=(entry manifest tuning)
for name in "${fuzzers[@]}"; do
  if ! ninja -C "$build" -t query "kjit-$name-fuzzer" > /dev/null 2>&1; then
    echo "run-fuzzers.sh: $build has no fuzzer targets: configure it where a" \
         "clang++ that links libFuzzer (and Abseil's pkg-config files) is" \
         "found" >&2
    exit 1
  fi
done
flock /tmp/kjit-build.lock ninja -C "$build" kjit-entry-fuzzer \
  kjit-manifest-fuzzer kjit-tuning-fuzzer
work=$(mktemp -d "${TMPDIR:-/tmp}/kjit-cache-fuzz.XXXXXX")
status=0
for name in "${fuzzers[@]}"; do
  mkdir "$work/$name"
  # -malloc_limit_mb: an input of a few KiB must never make a reader
  # allocate much (EntryFormat.h bounds every length for that reason), so a
  # large allocation is reported as a finding instead of passing unseen.
  rc=0
  "$build/fuzz/$name-fuzzer" -max_total_time="$seconds" -print_final_stats=1 \
    -malloc_limit_mb=256 -dict="$here/$name.dict" \
    -artifact_prefix="$work/$name-" "$work/$name" "$here/corpus/$name" \
    > "$work/$name.log" 2>&1 || rc=$?
  echo "== $name fuzzer"
  grep -E '^#[0-9]+[[:space:]]+DONE|^stat::|^==[0-9]+==|^SUMMARY' "$work/$name.log" || true
  if [ "$rc" -ne 0 ]; then
    echo "run-fuzzers.sh: the $name fuzzer found something: $work/$name.log" >&2
    status=1
  fi
done
echo "run-fuzzers.sh: corpora, logs and any crashing input in $work"
exit $status
