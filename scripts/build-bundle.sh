#!/usr/bin/env bash
# Builds the device bundle: a self-contained copy of kjit for the GPU machine
# (Ubuntu 24.04, glibc 2.39, CUDA driver, no LLVM 22, no network), as
# .bundle/kjit-bundle.tar.xz, and copies the Triton/torch anchors into
# .anchors/. docs/Bundle.md explains the layout, the static compiler module
# and how the lead runs it there.
#
#   scripts/build-bundle.sh [--no-verify] [--no-build]
#
# It reuses build/ (KJIT_BUILD), builds what the bundle needs (the static
# compiler module among it: KJIT_BUNDLE=ON), lays the bundle out under
# build/bundle-stage/kjit-bundle, strips it, copies in every shared library
# the GPU machine may lack (Abseil, OpenSSL's libcrypto, Google Benchmark,
# ...: all but glibc, libstdc++/libgcc_s, zlib and zstd) with $ORIGIN-relative
# run paths, and packs it. Then, unless --no-verify, it unpacks the tarball
# into a temporary folder and runs every example through the bundle alone
# (kjit-run --backend host, the bundle's own static compiler, LD_LIBRARY_PATH
# unset; where `unshare -m` works, /usr/lib/llvm-22 and the checkout are
# hidden behind empty mounts) and checks that no LLVM/MLIR or build-tree
# library is loaded.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

verify=1
build=1
for a in "$@"; do
  case "$a" in
    --no-verify) verify=0 ;;
    --no-build) build=0 ;;
    *) echo "usage: $0 [--no-verify] [--no-build]" >&2; exit 2 ;;
  esac
done

KJIT_BUNDLE_OUT=${KJIT_BUNDLE_OUT:-$KJIT_ROOT/.bundle}
KJIT_ANCHORS_OUT=${KJIT_ANCHORS_OUT:-$KJIT_ROOT/.anchors}
KJIT_ANCHORS_SRC=${KJIT_ANCHORS_SRC:-/work/shared/anchors}
stage_root=$KJIT_BUILD/bundle-stage
stage=$stage_root/kjit-bundle

# What the bundle holds. kjit-cuda (plugins/cuda) joins when the build has it.
targets=(kjit-run kjit-host kjit-trace kjit-compiler-static kjit-raw-launch
  kjit-gpu-dispatch kjit-gpu-bench kjit-bench-dispatch kjit-bench-binder
  kjit-bench-null-backend kjit-cache kjit-bench-warm-start kjit-bench-empty)

if [ $build -eq 1 ]; then
  kjit_install_packages
  kjit_build --target kjit-run  # configures build/ (and checks it builds)
fi
if ! grep -q '^KJIT_BUNDLE:BOOL=ON' "$KJIT_BUILD/CMakeCache.txt"; then
  echo "build-bundle: $KJIT_BUILD is configured with KJIT_BUNDLE=OFF (are" \
       "llvm-22-dev's static archives installed?)" >&2
  exit 1
fi
plugins=(kjit-host kjit-trace)
# The build's targets, read once: `ninja -t targets | grep -q` under
# pipefail fails when grep exits on an early match and ninja gets SIGPIPE.
build_targets=$(ninja -C "$KJIT_BUILD" -t targets all 2>/dev/null || true)
has_target() { grep -q "^$1:" <<< "$build_targets"; }
if has_target kjit-cuda; then
  targets+=(kjit-cuda)
  plugins+=(kjit-cuda)
fi
# The Python package (python/) and the Python benchmarks' raw launcher.
python_targets=()
for t in kjit-python kjit-bench-python-raw-launch; do
  has_target "$t" && python_targets+=("$t")
done
targets+=("${python_targets[@]}")
# The backend conformance suite (tools/kjit-backend-conformance; GoogleTest
# is linked statically and the kernels compiled in, so it needs only the
# runtime's libraries), when the build has GoogleTest.
tests=0
if has_target kjit-backend-conformance; then
  targets+=(kjit-backend-conformance)
  tests=1
else
  echo "build-bundle: warning: $KJIT_BUILD has no kjit-backend-conformance" \
       "(no GoogleTest?): run-on-gpu.sh will fail that step" >&2
fi
# The cuda backend's libc-only smoke test (plugins/cuda's tests), when built.
smoke=0
if has_target kjit-cuda-smoke &&
   [ -f "$KJIT_ROOT/test/CudaBackend/Inputs/kernels.ptx" ]; then
  targets+=(kjit-cuda-smoke)
  smoke=1
fi
# The plugin host's driver of the cuda backend (test/CudaBackend), for the
# finalizers' checks on the GPU machine, which has no lit.
cuda_driver_tool=0
if has_target kjit-cuda-driver; then
  targets+=(kjit-cuda-driver)
  cuda_driver_tool=1
fi
[ $build -eq 1 ] && cmake --build "$KJIT_BUILD" --target "${targets[@]}"

echo "=== laying out $stage"
rm -rf "$stage_root"
mkdir -p "$stage"/{bin,lib,share/kjit,scripts,examples,anchors}
B=$KJIT_BUILD

# Programs: kjit-run and the LLVM-free benchmarks.
for p in kjit-run kjit-raw-launch kjit-gpu-dispatch kjit-gpu-bench \
         kjit-bench-dispatch kjit-bench-binder kjit-cache kjit-bench-warm-start \
         kjit-bench-empty; do
  cp "$B/bin/$p" "$stage/bin/"
done
# Libraries under the names the loader looks for (their sonames).
copy_lib() { # FILE [NAME]
  local name=${2:-$(basename "$1")}
  cp -L "$1" "$stage/lib/$name"
}
for l in kjit-model kjit-runtime; do
  so=$(readelf -d "$B/lib/lib$l.so" | sed -n 's/.*(SONAME).*\[\(.*\)\]/\1/p')
  copy_lib "$B/lib/lib$l.so" "$so"
  ln -sf "$so" "$stage/lib/lib$l.so"
done
copy_lib "$B/bundle/lib/libkjit-compiler.so"     # the static module
# Only the plugins the build defines (a stale file from another branch's
# build stays out).
for p in "${plugins[@]}"; do
  copy_lib "$B/lib/lib$p.so"
done
copy_lib "$B/bench/libkjit-bench-polluter.so"
copy_lib "$B/bench/libkjit-bench-null-backend.so"
cp "$B/share/kjit/empty.ptx" "$stage/share/kjit/"
[ $tests -eq 1 ] && cp "$B/bin/kjit-backend-conformance" "$stage/bin/"
if [ $smoke -eq 1 ]; then
  cp "$B/bin/kjit-cuda-smoke" "$stage/bin/"
  cp "$KJIT_ROOT/test/CudaBackend/Inputs/kernels.ptx" \
     "$stage/share/kjit/cuda-smoke-kernels.ptx"
fi
if [ $cuda_driver_tool -eq 1 ]; then
  cp "$B/bin/kjit-cuda-driver" "$stage/bin/"
  cp "$KJIT_ROOT/test/CudaBackend/Inputs/kernels.ptx" \
     "$KJIT_ROOT/test/CudaBackend/Inputs/bad-syntax.ptx" "$stage/share/kjit/"
fi
cp "$KJIT_ROOT"/examples/*.mlir "$stage/examples/"
# The Python package as build/python has it (kjit/ and the benchmarks' raw
# launcher), the Python examples, benchmarks and the GPU suite.
if [ ${#python_targets[@]} -gt 0 ]; then
  mkdir -p "$stage/python" "$stage/examples/python" "$stage/bench/python" \
           "$stage/test/python"
  cp -r "$B/python/kjit" "$stage/python/"
  find "$B/python" -maxdepth 1 -name '*.abi3.so' -exec cp {} "$stage/python/" \;
  rm -rf "$stage/python/kjit/__pycache__"
  cp "$KJIT_ROOT"/examples/python/*.py "$stage/examples/python/" 2>/dev/null || true
  cp -r "$KJIT_ROOT"/bench/python/. "$stage/bench/python/" 2>/dev/null || true
  # Bytecode of whoever ran the benchmarks here, not part of the bundle.
  rm -rf "$stage/bench/python/__pycache__"
  cp "$KJIT_ROOT"/test/Python/*.py "$KJIT_ROOT"/test/Python/Inputs/*.py \
     "$stage/test/python/" 2>/dev/null || true
fi
[ -f "$KJIT_ROOT/examples/README.md" ] && cp "$KJIT_ROOT/examples/README.md" "$stage/examples/"
cp "$KJIT_ROOT/scripts/run-on-gpu.sh" "$KJIT_ROOT/scripts/examples.sh" \
   "$KJIT_ROOT/scripts/dispatch-ab-on-gpu.sh" \
   "$KJIT_ROOT/test/Runtime/Inputs/reference.py" \
   "$KJIT_ROOT/bench/disk-cache/warm-start.py" \
   "$KJIT_ROOT/scripts/plot-gpu-results.py" "$stage/scripts/"
if [ -d "$KJIT_ANCHORS_SRC" ]; then
  cp "$KJIT_ANCHORS_SRC"/* "$stage/anchors/"
  rm -rf "$KJIT_ANCHORS_OUT"
  mkdir -p "$KJIT_ANCHORS_OUT"
  cp "$KJIT_ANCHORS_SRC"/* "$KJIT_ANCHORS_OUT/"
  chmod -R u+w "$KJIT_ANCHORS_OUT" "$stage/anchors"
else
  echo "build-bundle: warning: no anchors at $KJIT_ANCHORS_SRC" >&2
fi

# Shared libraries the GPU machine has for sure (Ubuntu 24.04: glibc 2.39,
# GCC 14's libstdc++, zlib, zstd) stay out; the driver's libcuda is
# dlopened there. Everything else a bundled ELF file needs is copied in.
is_base_lib() {
  case "$1" in
    linux-vdso.so.* | ld-linux-x86-64.so.* | libc.so.* | libm.so.* | \
    libdl.so.* | libpthread.so.* | librt.so.* | libstdc++.so.* | \
    libgcc_s.so.* | libz.so.* | libzstd.so.* | libcuda.so.* | libnvidia*)
      return 0 ;;
  esac
  return 1
}
elf_files() {
  find "$stage/bin" "$stage/lib" $( [ -d "$stage/python" ] && echo "$stage/python" ) \
    -type f -name '*' -exec sh -c \
    'head -c4 "$1" | grep -q ELF && echo "$1"' _ {} \;
}
echo "=== copying shared-library dependencies"
for round in 1 2 3 4 5; do
  added=0
  while IFS= read -r f; do
    while read -r name arrow path _; do
      [ "$arrow" = "=>" ] || continue
      is_base_lib "$name" && continue
      [ -e "$stage/lib/$name" ] && continue
      if [ "$path" = "not" ]; then
        echo "build-bundle: $f needs $name, which is not found here" >&2
        exit 1
      fi
      case "$path" in
        */llvm-22/* | *libLLVM* | *libMLIR* | *libz3* | *libicu*)
          echo "build-bundle: $f needs $path: the bundle must not" >&2
          exit 1 ;;
      esac
      cp -L "$path" "$stage/lib/$name"
      echo "  lib/$name  (from $path)"
      added=1
    done < <(LD_LIBRARY_PATH="$stage/lib" ldd "$f" 2>/dev/null || true)
  done < <(elf_files)
  [ $added -eq 0 ] && break
done

echo "=== stripping, run paths relative to \$ORIGIN"
command -v patchelf > /dev/null || {
  echo "build-bundle: patchelf is missing (apt-get install patchelf)" >&2
  exit 1
}
while IFS= read -r f; do
  chmod u+w "$f"
  strip --strip-unneeded "$f"
  case "$f" in
    "$stage"/bin/*) patchelf --set-rpath '$ORIGIN/../lib' "$f" ;;
    "$stage"/python/kjit/*) patchelf --set-rpath '$ORIGIN/../../lib' "$f" ;;
    "$stage"/python/*) patchelf --set-rpath '$ORIGIN/../lib' "$f" ;;
    *) patchelf --set-rpath '$ORIGIN' "$f" ;;
  esac
done < <(elf_files)

{
  echo "kjit device bundle"
  echo "commit: $(git -C "$KJIT_ROOT" rev-parse HEAD 2>/dev/null || echo unknown)$(git -C "$KJIT_ROOT" diff --quiet 2>/dev/null || echo ' (+ local changes)')"
  echo "built: $(date -u +%Y-%m-%dT%H:%M:%SZ) on $(. /etc/os-release && echo "$PRETTY_NAME"), $(ldd --version | head -1)"
  echo "cuda backend: $([ -f "$stage/lib/libkjit-cuda.so" ] && echo yes || echo 'no (libkjit-cuda.so was not in the build)')"
  echo
  echo "files:"
  (cd "$stage" && find . -type f | sort | while read -r f; do
     printf '  %10d  %s\n' "$(stat -c %s "$f")" "${f#./}"
   done)
} > "$stage/MANIFEST"

echo "=== packing"
mkdir -p "$KJIT_BUNDLE_OUT"
tarball=$KJIT_BUNDLE_OUT/kjit-bundle.tar.xz
tar -C "$stage_root" -cf - kjit-bundle | xz -6 -T2 > "$tarball.tmp"
mv "$tarball.tmp" "$tarball"
uncompressed=$(du -sb "$stage" | cut -f1)
compressed=$(stat -c %s "$tarball")
echo "bundle: $tarball"
echo "  uncompressed $((uncompressed / 1024 / 1024)) MiB ($uncompressed bytes)," \
     "xz $((compressed / 1024 / 1024)) MiB ($compressed bytes)"
echo "  cuda backend: $([ -f "$stage/lib/libkjit-cuda.so" ] && echo included || echo 'not built (plugins/cuda missing)')"
if [ "$compressed" -gt $((64 * 1024 * 1024)) ]; then
  echo "build-bundle: the tarball is over 64 MiB: it cannot travel" >&2
  exit 1
fi

# .bundle/ and .anchors/ must be ignored, so that only `carry` sends them.
for d in .bundle .anchors; do
  if ! git -C "$KJIT_ROOT" check-ignore -q "$d/x" 2>/dev/null; then
    echo "build-bundle: $d/ is not ignored here; add this line to" \
         "$(git -C "$KJIT_ROOT" rev-parse --git-path info/exclude) or .gitignore:"
    echo "  /$d/"
  fi
done

[ $verify -eq 1 ] || exit 0
"$KJIT_ROOT/scripts/verify-bundle.sh" "$tarball"
