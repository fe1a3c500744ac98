#!/usr/bin/env bash
#===- dispatch-cache-proxy.sh - a hit launch's cost with cold caches ------===#
#
# The build machine's proxy for what the launch path costs inside a GPU
# launch loop, where the driver's cuLaunchKernel evicts the L1 caches
# between two of the runtime's launches (docs/Dispatch.md, "A proxy for
# cold caches"). kjit-bench-dispatch runs with the null backend in its
# polluting mode (KJIT_BENCH_NULL_POLLUTE=1: each launch runs 80 KiB of
# other code and writes 128 KiB of other data) under callgrind's cache
# simulation, with fixed caches (an H200 host's Xeon: 32 KiB 8-way L1i,
# 48 KiB 12-way L1d, 2 MiB 16-way L2 as the last level). Events are
# collected inside Kernel::launch only, leaving out the backend's launch
# (and so the polluter) and the miss path (findEntry); the simulation
# still sees them. Each benchmark runs twice, for two lengths, and the
# difference over the difference in launches is the cost of one launch,
# free of the process's first launches.
#
# Prints per launch: instructions (Ir), instruction-cache misses (I1mr:
# code lines touched), data-cache read and write misses (D1mr, D1mw: data
# lines touched), and the last level's misses.
#
# Usage: scripts/dispatch-cache-proxy.sh [BENCHMARK...]
#   (default: oneArgument eightArguments eightArgumentsNumWarps)
#   BUILD=dir picks the build tree (default build); KJIT_BENCH_NULL_POLLUTE=0
#   measures with warm caches instead.
#
#===----------------------------------------------------------------------===#
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD:-$root/build}
bench=$build/bin/kjit-bench-dispatch
backend=$build/bench/libkjit-bench-null-backend.so
pollute=${KJIT_BENCH_NULL_POLLUTE:-1}
if [ $# -eq 0 ]; then
  set -- oneArgument eightArguments eightArgumentsNumWarps
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# One run: "launches Ir Dr Dw I1mr D1mr D1mw ILmr DLmr DLmw".
measure() {
  local name=$1 seconds=$2 out=$work/$1.$2.out
  KJIT_BENCH_NULL_POLLUTE=$pollute KJIT_BENCH_NULL_BACKEND=$backend \
    valgrind --tool=callgrind --callgrind-out-file="$out" \
    --cache-sim=yes --I1=32768,8,64 --D1=49152,12,64 --LL=2097152,16,64 \
    --collect-atstart=no --compress-strings=no --compress-pos=no \
    --toggle-collect='kjit::rt::Kernel::launch(*' \
    --toggle-collect='null_launch' \
    --toggle-collect='kjit::rt::Kernel::Impl::findEntry(*' \
    "$bench" --benchmark_filter="^$name/real_time(/threads:1)?\$" \
    --benchmark_min_time="$seconds" >/dev/null 2>&1
  awk '/^cfn=kjit::rt::Kernel::launch\(/ { want = 1; next }
       want && /^calls=/ { split($0, c, "[= ]"); launches += c[2] }
       { want = 0 }
       /^summary:/ { $1 = ""; summary = $0 }
       END { print launches summary }' "$out"
}

# Once outside valgrind first: a kernel not yet in the disk cache compiles
# in whichever run comes first, which would tell the two runs apart.
KJIT_BENCH_NULL_BACKEND=$backend "$bench" --benchmark_min_time=0.01 \
  --benchmark_filter="^($(IFS='|'; echo "$*"))/real_time" >/dev/null 2>&1

printf '%-24s %8s %8s %8s %8s %8s %8s %8s\n' benchmark launches Ir I1mr \
  D1mr D1mw ILmr DLmr
for name in "$@"; do
  short=$(measure "$name" 0.2)
  long=$(measure "$name" 1)
  paste -d' ' <(echo "$short") <(echo "$long") | awk -v name="$name" '{
    n = $11 - $1
    printf "%-24s %8d %8.1f %8.1f %8.1f %8.1f %8.2f %8.2f\n", name, n,
      ($12 - $2) / n, ($15 - $5) / n, ($16 - $6) / n, ($17 - $7) / n,
      ($18 - $8) / n, ($19 - $9) / n
  }'
done
