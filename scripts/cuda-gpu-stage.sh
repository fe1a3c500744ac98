#!/usr/bin/env bash
# Stages what the cuda backend's checks on a GPU machine need into one
# folder, build/cuda-gpu/ (or $1): the plugin, kjit-cuda-smoke (libc only),
# kjit-cuda-driver with the runtime's libraries and the abseil libraries it
# links (the GPU machine has a driver and a toolkit, not kjit's build
# dependencies, LLVM, lit or FileCheck), the test kernels, and run.sh, which
# runs the checks there with plain shell assertions. docs/CudaBackend.md,
# "On a GPU machine", says what they cover.
#
#   scripts/cuda-gpu-stage.sh            # here, after building
#   build/cuda-gpu/run.sh                # there (CUDA_HOME defaults to
#                                        # /usr/local/cuda)
set -euo pipefail

KJIT_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUILD=${BUILD:-$KJIT_ROOT/build}
OUT=${1:-$BUILD/cuda-gpu}

ninja -C "$BUILD" kjit-cuda kjit-cuda-smoke kjit-cuda-driver >/dev/null
rm -rf "$OUT"
mkdir -p "$OUT"
cp -L "$BUILD/lib/libkjit-cuda.so" "$BUILD/bin/kjit-cuda-smoke" \
  "$BUILD/bin/kjit-cuda-driver" "$OUT/"
# The driver's shared libraries, except glibc's, libstdc++ and libgcc, which
# every Linux has (the GPU machine's are newer).
ldd "$BUILD/bin/kjit-cuda-driver" | awk '$3 ~ /^\// {print $3}' |
  grep -Ev '/(libc|libm|libstdc\+\+|libgcc_s|ld-linux[^/]*)\.so' |
  while read -r lib; do cp -L "$lib" "$OUT/"; done
cp "$KJIT_ROOT/test/CudaBackend/Inputs/kernels.ptx" "$OUT/"

cat >"$OUT/run.sh" <<'EOF'
#!/usr/bin/env bash
# The cuda backend on this machine's GPU (staged by scripts/cuda-gpu-stage.sh).
# Prints every output; the last line says how many checks failed.
cd "$(dirname "${BASH_SOURCE[0]}")"
export LD_LIBRARY_PATH=$PWD${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export KJIT_CUDA_HOME=${KJIT_CUDA_HOME:-${CUDA_HOME:-/usr/local/cuda}}
unset KJIT_CUDA_DRIVER KJIT_CUDA_FINALIZER
fails=0
expect() { # expect FILE TEXT: TEXT (a fixed string) is in FILE
  if grep -qF -- "$2" "$1"; then echo "ok: $2"; else
    echo "FAIL: '$2' not in $1"; fails=$((fails + 1)); fi
}
absent() {
  if grep -qF -- "$2" "$1"; then
    echo "FAIL: '$2' in $1"; fails=$((fails + 1)); else echo "ok: no '$2'"; fi
}
D="./kjit-cuda-driver --plugin=$PWD/libkjit-cuda.so"
A="x=buf:fp32:40:iota y=buf:fp32:40:3 out=buf:fp32:40 n=i32:40"
R="buf2 = 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22 23 24 25 26 27 28 29 30 31 32 33 34 35 36 37 38 39 40 41 42"

for f in auto ptxas nvjitlink; do
  echo "== kjit-cuda-smoke, KJIT_CUDA_FINALIZER=$f"
  KJIT_CUDA_VERBOSE=1 KJIT_CUDA_FINALIZER=$f ./kjit-cuda-smoke \
    ./libkjit-cuda.so kernels.ptx 100000 >smoke-$f.out 2>&1
  fails=$((fails + $?))
  cat smoke-$f.out
done

echo "== kjit-cuda-driver: describe, launches, attributes, threads"
KJIT_CUDA_VERBOSE=1 $D describe load:ptx:kernels.ptx:add launch:2:1 $A \
  --repeat=100000 --time launch:2:1 $A \
  launch:1:1 x=buf:fp32:4 y=hostbuf:fp32:4 out=buf:fp32:4 n=i32:4 \
  --flags=3 launch:2:1 $A --cluster=2 launch:2:1 $A \
  --shared=100000 launch:2:1 $A --stream=0x2 launch:2:1 $A \
  --threads=8 --repeat=1000 launch:2:1 $A \
  load:ptx:kernels.ptx:scalars \
  launch:1:1 buf:u64:4 i1:1 fp16:1.0 u32:4294967295 fp64:0.5 >driver.out 2>&1
cat driver.out
expect driver.out "describe target=cuda arch=sm_"
expect driver.out "fingerprint stable"
expect driver.out "$R"
expect driver.out "time: "
expect driver.out "Pointer argument (at 1) cannot be accessed from Triton (cpu tensor?)"
expect driver.out "8 threads: launch ok"
expect driver.out "buf0 = 1 15360 4294967295 4602678819172646912"
absent driver.out "disagrees"
[ "$(grep -c '^launch ok' driver.out)" -ge 6 ] && echo "ok: 6 launches ok" ||
  { echo "FAIL: fewer than 6 launches ok"; fails=$((fails + 1)); }

echo "== sticky errors (a process each)"
$D load:ptx:kernels.ptx:trap_kernel launch:1:1 buf:u64:1 alloc:16 async \
  >trap.out 2>&1
cat trap.out
expect trap.out "is unusable after CUDA_ERROR_"
expect trap.out "in kernel 'trap_kernel' (found by synchronize)"
expect trap.out "async errors: 1"
$D load:ptx:kernels.ptx:store_null launch:1:1 buf:u64:1 >null.out 2>&1
cat null.out
expect null.out "unusable after CUDA_ERROR_ILLEGAL_ADDRESS"

echo "== no driver: the plugin still loads"
KJIT_CUDA_DRIVER=/nonexistent/libcuda.so.1 $D describe >nodriver.out 2>&1
cat nodriver.out
expect nodriver.out "device_count 0"
expect nodriver.out "no CUDA device: /nonexistent/libcuda.so.1 cannot be opened"

echo "$fails check(s) failed"
exit $((fails > 99 ? 99 : fails))
EOF
chmod +x "$OUT/run.sh"
echo "staged $(ls "$OUT" | wc -l) files ($(du -sh "$OUT" | cut -f1)) in $OUT"
