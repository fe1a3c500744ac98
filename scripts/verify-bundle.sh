#!/usr/bin/env bash
# Checks a device bundle on this machine, as the GPU machine would see it:
# unpacks the tarball into a fresh folder under /tmp and runs the bundle's
# own scripts/run-on-gpu.sh --host-only (every example on the host backend
# through the bundle's static compiler, checked against the references, and
# the LLVM-free benches) in an environment that cannot see the build:
#   - env -i: no LD_LIBRARY_PATH, no KJIT_* variables;
#   - where `unshare -m` works (root): /usr/lib/llvm-22 and /work behind empty
#     read-only mounts, and libLLVM*/libMLIR*/libz3*/libicu*, Abseil,
#     libcrypto and Google Benchmark in /usr/lib/x86_64-linux-gnu replaced by
#     /dev/null, so that a library the bundle forgot fails loudly;
#   - LD_DEBUG=libs: every object any process loads (dlopen too) is listed,
#     and none may come from outside the bundle but glibc, libstdc++,
#     libgcc_s, zlib, zstd and python's own.
#
#   scripts/verify-bundle.sh [.bundle/kjit-bundle.tar.xz]
set -euo pipefail
KJIT_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
tarball=${1:-$KJIT_ROOT/.bundle/kjit-bundle.tar.xz}
tmp=$(mktemp -d /tmp/kjit-bundle-verify.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
tar xJf "$tarball" -C "$tmp"
b=$tmp/kjit-bundle
mkdir -p "$tmp/ld" "$tmp/out"

inner="cd '$tmp' && env -i PATH=/usr/bin:/bin HOME='$tmp' OUT='$tmp/out' \
  LD_DEBUG=libs LD_DEBUG_OUTPUT='$tmp/ld/ld' '$b/scripts/run-on-gpu.sh' --host-only"
isolated=0
if [ "$(id -u)" -eq 0 ] && unshare -m true 2>/dev/null; then
  isolated=1
  hide="mount -t tmpfs -o ro none /usr/lib/llvm-22 && mount -t tmpfs -o ro none /work"
  for f in /usr/lib/x86_64-linux-gnu/lib{LLVM,MLIR,z3,icu,absl_,crypto,ssl,benchmark}*.so*; do
    [ -f "$f" ] && [ ! -L "$f" ] && hide="$hide && mount --bind /dev/null '$f'"
  done
  echo "=== verify: unshare -m (build tree, LLVM 22 and the bundled system libraries hidden)"
  unshare -m bash -c "$hide && $inner" || rc=$?
else
  echo "=== verify: no mount namespace here: env -i and LD_DEBUG only"
  bash -c "$inner" || rc=$?
fi
rc=${rc:-0}

# Every object loaded by any process of the run (kjit-run, python3 for the
# references, the system linker the host target runs, coreutils).
loaded=$(grep -h 'calling init:' "$tmp"/ld/ld.* | sed 's/.*calling init: //' |
  sed 's|/bin/\.\./lib/|/lib/|' | sort -u)
outside=$(echo "$loaded" | grep -v "^$b/" | grep -v '^/proc/self/fd/' || true)
echo "=== bundle libraries loaded:"
echo "$loaded" | grep "^$b/" | sed "s|^$b/|  |"
echo "=== loaded from the system (glibc, the C toolchain, python):"
echo "$outside" | sed 's/^/  /'
status=0
if ! echo "$loaded" | grep -q "^$b/lib/libkjit-compiler.so$"; then
  echo "verify: the bundle's compiler module was never loaded" >&2
  status=1
fi
# LLVM/MLIR, the build tree, or a system copy of a library the bundle has.
forbidden=$(echo "$outside" | grep -E \
  'llvm-22|libLLVM|libMLIR|libz3|libicu|^/work/|libabsl|libcrypto|libbenchmark|libkjit' || true)
if [ -n "$forbidden" ]; then
  echo "verify: loaded from outside the bundle, but must not be:" >&2
  echo "$forbidden" | sed 's/^/  /' >&2
  status=1
fi
cat "$tmp/out/summary.txt" 2>/dev/null | tail -3
if [ "$rc" -ne 0 ]; then
  echo "verify: run-on-gpu.sh --host-only failed (rc $rc)" >&2
  status=1
fi
[ $status -eq 0 ] && echo "=== verify: the bundle runs on its own (isolated=$isolated)"
exit $status
