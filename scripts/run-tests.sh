#!/usr/bin/env bash
# The README's second command (and CI's, through .ci/run): install what kjit
# needs, build everything, and run every lit and GoogleTest test; then the
# same suite under AddressSanitizer + UndefinedBehaviorSanitizer and the
# runtime and plugin-host unit tests under ThreadSanitizer (docs/Testing.md).
# Between the two, the runtime side built with clang-22 and its unit tests,
# and clang-tidy over it (scripts/check-clang.sh). KJIT_CLANG=0 leaves the
# clang stage out, KJIT_SANITIZERS=0 the two sanitizer trees (local
# iteration); CI runs both.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

kjit_install_packages
# Formatting first: it takes a second and needs no build.
"$KJIT_ROOT/scripts/check-format.sh"
# Everything: with KJIT_BUNDLE (on when the static LLVM/MLIR archives are
# installed) that includes the device bundle's static compiler module, which
# test/Bundle checks (docs/Bundle.md).
kjit_build
cmake --build "$KJIT_BUILD" --target check-kjit

# clang-22 (build-clang/): the runtime-side files, warnings as errors, their
# unit tests, and clang-tidy over them.
if [ "${KJIT_CLANG:-1}" = 0 ]; then
  echo "kjit: clang-22 build and clang-tidy not run (KJIT_CLANG=0)"
else
  "$KJIT_ROOT/scripts/check-clang.sh"
fi

if [ "${KJIT_SANITIZERS:-1}" = 0 ]; then
  echo "kjit: sanitizer builds not run (KJIT_SANITIZERS=0)"
  exit 0
fi
# The sanitizer builds leave out the device bundle (its static LLVM/MLIR link
# is checked above and instruments nothing of kjit's) and the benchmarks.
KJIT_BUILD=$KJIT_ROOT/build-asan
KJIT_CMAKE_OPTIONS=(-DKJIT_BUNDLE=OFF -DKJIT_ENABLE_BENCHMARKS=OFF
                    -DKJIT_SANITIZE=address,undefined)
kjit_build --target check-kjit
# ThreadSanitizer: the unit tests of the runtime, the disk cache and the
# plugin host (check-kjit-tsan, unittests/CMakeLists.txt).
KJIT_BUILD=$KJIT_ROOT/build-tsan
KJIT_CMAKE_OPTIONS=(-DKJIT_BUNDLE=OFF -DKJIT_ENABLE_BENCHMARKS=OFF
                    -DKJIT_SANITIZE=thread)
kjit_build --target check-kjit-tsan
