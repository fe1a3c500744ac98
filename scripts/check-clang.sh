#!/usr/bin/env bash
# The clang-22 stage of scripts/run-tests.sh (docs/Testing.md, "clang-22
# and clang-tidy"); also runs alone. In build-clang/, configured with
# clang-22 and warnings as errors:
#   1. every runtime-side file (scripts/runtime-side-files.py: the files that
#      include no LLVM/MLIR header) compiled, and the libraries, plugins,
#      tools and test programs that link without the compiler library;
#   2. the unit tests of those (the runtime, the disk cache, the binder, the
#      plugin host, kjit-run's support library), through lit;
#   3. scripts/run-clang-tidy.sh over the same files.
# The MLIR-heavy files (dialect, passes, lowerings, compiler) are built by
# g++ only: with clang they would add most of build/'s own build time.
# KJIT_TIDY=0 leaves step 3 out.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

kjit_install_packages
KJIT_BUILD=$KJIT_ROOT/build-clang
KJIT_CMAKE_OPTIONS=(-DCMAKE_C_COMPILER=clang-22 -DCMAKE_CXX_COMPILER=clang++-22
                    -DCMAKE_COMPILE_WARNING_AS_ERROR=ON
                    -DKJIT_BUNDLE=OFF -DKJIT_ENABLE_BENCHMARKS=OFF)
# The unit tests that need no compiler library (KJIT_TSAN_UNITTESTS in
# unittests/CMakeLists.txt, and kjit-run's), and what links without it.
tests=(KjitRuntimeTests KjitCacheTests KjitBinderTests KjitBinderAllocTests
       KjitPluginTests KjitRunTests KjitAutotuneThreadTests)
linked=(kjit-model kjit-disk-cache kjit-runtime kjit-run-support kjit-cache
        kjit-python kjit-host kjit-cuda kjit-trace kjit-redis
        kjit-plugin-driver kjit-host-driver kjit-cuda-driver
        kjit-backend-driver kjit-abi-layouts kjit-abi-header-cxx)

start=$SECONDS
# Configure (and build the model library, which the rest needs first).
kjit_build --target kjit-model
mapfile -t objects < <(/usr/bin/python3 "$KJIT_ROOT/scripts/runtime-side-files.py" \
  "$KJIT_BUILD" --objects)
cmake --build "$KJIT_BUILD" --target "${linked[@]}" "${tests[@]}" "${objects[@]}"
echo "kjit: clang-22 build of ${#objects[@]} runtime-side objects: $((SECONDS - start)) s"

filter=$(IFS='|'; echo "${tests[*]}")
"$(sed -n 's/^LLVM_EXTERNAL_LIT:[A-Z]*=//p' "$KJIT_BUILD/CMakeCache.txt")" -sv \
  --filter "($filter)/" "$KJIT_BUILD/unittests"

if [ "${KJIT_TIDY:-1}" = 0 ]; then
  echo "kjit: clang-tidy not run (KJIT_TIDY=0)"
  exit 0
fi
start=$SECONDS
"$KJIT_ROOT/scripts/run-clang-tidy.sh" "$KJIT_BUILD"
echo "kjit: clang-tidy: $((SECONDS - start)) s"
