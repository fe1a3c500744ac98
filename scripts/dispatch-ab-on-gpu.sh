#!/usr/bin/env bash
# An A/B of the launch hit path on the GPU machine, in one device call: the
# bundle as built (B) against the same bundle with another build's runtime
# library and, when BASE holds one, cuda plugin (A: libkjit-runtime.so.* and
# libkjit-cuda.so of the revision to compare with, in the folder BASE),
# process by process in turn, kjit-gpu-dispatch --raw-module in each (the raw driver,
# the plugin alone and kjit, round by round; docs/Dispatch.md "How it is
# measured"). Instances differ by up to 1.8x in CPU speed, so only two
# builds measured this way in one call compare.
#
#   dispatch-ab-on-gpu.sh BASE [PAIRS]
#
# Run from the unpacked bundle (bin/, lib/ and share/ beside scripts/).
# PAIRS (default 6) processes per build with the same arguments and 1 warp;
# then PAIRS/2 each with 4 warps and with --vary. Prints one line per
# kjit_over_raw / plugin_over_raw figure, prefixed with the mode and the
# build ("A" or "B"). Making the base library: docs/Dispatch.md.
set -euo pipefail
runtime=$(ls "${1:-/nonexistent}"/libkjit-runtime.so.* 2>/dev/null | head -1 || true)
if [ $# -lt 1 ] || [ -z "$runtime" ]; then
  echo "usage: $0 BASE [PAIRS]  (BASE: a folder with libkjit-runtime.so.*" \
    "and, optionally, libkjit-cuda.so)" >&2
  exit 2
fi
here=$(cd "$(dirname "$0")/.." && pwd)
pairs=${2:-6}
base=$(mktemp -d)
trap 'rm -rf "$base"' EXIT
cp -a "$here/." "$base/"
cp "$runtime" "$base/lib/libkjit-runtime.so.0.1"
if [ -f "$1/libkjit-cuda.so" ]; then
  cp "$1/libkjit-cuda.so" "$base/lib/libkjit-cuda.so"
fi
export KJIT_CACHE_DIR=
export CUDA_HOME=${CUDA_HOME:-/usr/local/cuda}
unset KJIT_COMPILER_LIBRARY KJIT_PLUGINS KJIT_INTERPRET

one() { # build-label root mode args...
  local label=$1 root=$2 mode=$3
  shift 3
  "$root/bin/kjit-gpu-dispatch" --backend cuda \
    --raw-module "$here/share/kjit/empty.ptx" --iters 10000 --rounds 21 "$@" |
    grep '_over_raw' | sed "s/^/$mode $label /"
}
for ((r = 0; r < pairs; ++r)); do
  one A "$base" same
  one B "$here" same
done
for ((r = 0; r < (pairs + 1) / 2; ++r)); do
  one A "$base" warps4 --num-warps 4
  one B "$here" warps4 --num-warps 4
  one A "$base" vary --vary
  one B "$here" vary --vary
done
