#!/usr/bin/env bash
#===- dispatch-cache-proxy.sh - a hit launch's cost with cold caches ------===#
#
# The build machine's proxy for what the launch path costs inside a GPU
# launch loop, where the driver's cuLaunchKernel evicts the L1 caches
# between two of the runtime's launches (docs/Dispatch.md, "A proxy for
# cold caches"). The launches run under callgrind's cache simulation, with
# fixed caches (an H200 host's Xeon: 32 KiB 8-way L1i, 48 KiB 12-way L1d,
# 2 MiB 16-way L2 as the last level), and each launch's backend call runs
# bench/CachePolluter.c (80 KiB of other code, 128 KiB of other data
# written) where the driver's launch would be:
#
# - by default, kjit-bench-dispatch with the null backend in its polluting
#   mode (KJIT_BENCH_NULL_POLLUTE=1): the runtime's path alone, events
#   collected inside Kernel::launch, leaving out the backend's launch;
# - with --cuda, kjit-gpu-dispatch --backend cuda with the cuda plugin on
#   the fake driver of test/CudaBackend (FAKE_CUDA_QUIET=2,
#   FAKE_CUDA_POLLUTE=1, the polluter preloaded) and a toolkit made of the
#   fake ptxas and nvJitLink and the real libdevice (CUDA_HOME, default
#   /usr/local/cuda): the runtime and the plugin, leaving out the fake
#   driver's cuLaunchKernel and cuCtxGetCurrent (the real driver's work).
#   BENCHMARKs are then `1` and `8` (arguments, with num_warps as a
#   keyword, as kjit-gpu-dispatch launches on the H200); `--cuda --vary`
#   changes the arguments at every launch (kjit-gpu-dispatch --vary).
#
# The miss path (findEntry) is left out too; the simulation still sees all
# of it. Each benchmark runs twice, for two lengths, and the difference over
# the difference in launches is the cost of one launch, free of the
# process's first launches.
#
# Prints per launch: instructions (Ir), instruction-cache misses (I1mr:
# code lines touched), data-cache read and write misses (D1mr, D1mw: data
# lines touched), and the last level's misses.
#
# Usage: scripts/dispatch-cache-proxy.sh [--cuda [--vary]] [BENCHMARK...]
#   (default: oneArgument eightArguments eightArgumentsNumWarps; with
#   --cuda: 1 8). BUILD=dir picks the build tree (default build);
#   KJIT_BENCH_NULL_POLLUTE=0 measures with warm caches instead.
#
#===----------------------------------------------------------------------===#
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD:-$root/build}
pollute=${KJIT_BENCH_NULL_POLLUTE:-1}
cuda=0
vary=()
if [ "${1:-}" = --cuda ]; then
  cuda=1
  shift
  if [ "${1:-}" = --vary ]; then
    vary=(--vary)
    shift
  fi
fi
if [ $# -eq 0 ]; then
  if [ $cuda -eq 1 ]; then
    set -- 1 8
  else
    set -- oneArgument eightArguments eightArgumentsNumWarps
  fi
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

cache_sim=(--cache-sim=yes --I1=32768,8,64 --D1=49152,12,64
  --LL=2097152,16,64 --collect-atstart=no --compress-strings=no
  --compress-pos=no --toggle-collect='kjit::rt::Kernel::launch(*'
  --toggle-collect='kjit::rt::Kernel::Impl::findEntry(*')

if [ $cuda -eq 1 ]; then
  fakes=$build/test/CudaBackend/fakes
  libdevice=${CUDA_HOME:-/usr/local/cuda}/nvvm/libdevice/libdevice.10.bc
  for need in "$fakes/libkjit-fake-cuda.so" "$build/lib/libkjit-cuda.so" \
    "$build/bench/libkjit-bench-polluter.so" "$libdevice"; do
    if [ ! -f "$need" ]; then
      echo "dispatch-cache-proxy: --cuda needs $need" >&2
      exit 2
    fi
  done
  toolkit=$work/toolkit
  mkdir -p "$toolkit/nvvm/libdevice"
  ln -s "$fakes/toolkit/bin" "$toolkit/bin"
  ln -s "$fakes/toolkit/lib64" "$toolkit/lib64"
  ln -s "$libdevice" "$toolkit/nvvm/libdevice/"
  if [ "$pollute" = 1 ]; then
    preload=$build/bench/libkjit-bench-polluter.so
  else
    preload=
  fi
fi

# run NAME LENGTH OUT: one run of benchmark NAME, LENGTH 0 short, 1 long.
run() {
  local name=$1 length=$2 out=$3
  if [ $cuda -eq 1 ]; then
    local iters=$((length ? 1000 : 200))
    FAKE_CUDA_QUIET=2 FAKE_CUDA_POLLUTE=1 LD_PRELOAD=$preload \
      KJIT_CUDA_DRIVER=$fakes/libkjit-fake-cuda.so KJIT_CUDA_HOME=$toolkit \
      KJIT_CACHE_DIR= valgrind --tool=callgrind --callgrind-out-file="$out" \
      "${cache_sim[@]}" --toggle-collect='fake_cuLaunchKernel' \
      --toggle-collect='fake_cuCtxGetCurrent' \
      "$build/bin/kjit-gpu-dispatch" --backend cuda --args "$name" \
      --iters $iters --rounds 1 "${vary[@]}" >/dev/null 2>&1
  else
    KJIT_BENCH_NULL_POLLUTE=$pollute \
      KJIT_BENCH_NULL_BACKEND=$build/bench/libkjit-bench-null-backend.so \
      valgrind --tool=callgrind --callgrind-out-file="$out" \
      "${cache_sim[@]}" --toggle-collect='null_launch' \
      "$build/bin/kjit-bench-dispatch" \
      --benchmark_filter="^$name/real_time(/threads:1)?\$" \
      --benchmark_min_time="$((length ? 1 : 0)).2" >/dev/null 2>&1
  fi
}

measure() {
  local name=$1 length=$2 out=$work/$1.$2.out
  run "$name" "$length" "$out"
  awk '/^cfn=kjit::rt::Kernel::launch\(/ { want = 1; next }
       want && /^calls=/ { split($0, c, "[= ]"); launches += c[2] }
       { want = 0 }
       /^summary:/ { $1 = ""; summary = $0 }
       END { print launches summary }' "$out"
}

printf '%-24s %8s %8s %8s %8s %8s %8s %8s\n' benchmark launches Ir I1mr \
  D1mr D1mw ILmr DLmr
for name in "$@"; do
  short=$(measure "$name" 0)
  long=$(measure "$name" 1)
  paste -d' ' <(echo "$short") <(echo "$long") | awk -v name="$name" '{
    n = $11 - $1
    printf "%-24s %8d %8.1f %8.1f %8.1f %8.1f %8.2f %8.2f\n", name, n,
      ($12 - $2) / n, ($15 - $5) / n, ($16 - $6) / n, ($17 - $7) / n,
      ($18 - $8) / n, ($19 - $9) / n
  }'
done
