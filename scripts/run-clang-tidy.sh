#!/usr/bin/env bash
# Runs clang-tidy 22 with the repository's .clang-tidy over kjit's own C and
# C++ files, as a build tree's compile_commands.json compiles them, and
# exits 1 when it reports anything (every check is an error). By default
# only the files that include no LLVM/MLIR header: the model, the disk
# cache, the runtime, the plugins, the runtime-side tools, the Python
# extension, the test plugins and drivers and the unit tests of those
# (scripts/runtime-side-files.py picks them).
# clang-tidy over an MLIR-heavy file takes about as long as compiling it
# several times over (docs/Testing.md, "clang-22 and clang-tidy").
#
#   scripts/run-clang-tidy.sh [BUILD_DIR]          runtime-side files
#   scripts/run-clang-tidy.sh --all [BUILD_DIR]    every file of the tree
#
# BUILD_DIR defaults to build-clang/ (scripts/run-tests.sh configures it
# with clang-22, so every flag is one clang-tidy knows); it must have been
# configured, and the generated headers its files include built.
# KJIT_TIDY_JOBS sets the parallel runs (default: the number of cores).
set -euo pipefail

KJIT_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
all=0
if [ "${1:-}" = --all ]; then
  all=1
  shift
fi
build=${1:-$KJIT_ROOT/build-clang}
CLANG_TIDY=${CLANG_TIDY:-clang-tidy-22}
if ! command -v "$CLANG_TIDY" >/dev/null 2>&1; then
  echo "run-clang-tidy: $CLANG_TIDY not found; install clang-tidy-22" >&2
  exit 2
fi
if [ ! -f "$build/compile_commands.json" ]; then
  echo "run-clang-tidy: no $build/compile_commands.json (configure it first)" >&2
  exit 2
fi

# One entry per source file of the tree (scripts/runtime-side-files.py).
mode=()
[ "$all" = 1 ] && mode=(--all)
# Their first compile commands alone, in a database of their own: a file
# built for several targets (the test plugins, TestEnvironment.cpp) is
# checked once.
database=$build/clang-tidy
mapfile -t files < <(/usr/bin/python3 "$KJIT_ROOT/scripts/runtime-side-files.py" \
  "$build" ${mode[@]+"${mode[@]}"} --database "$database")
echo "run-clang-tidy: ${#files[@]} file(s) with $("$CLANG_TIDY" --version | grep -o 'version [0-9.]*')"
printf '%s\n' "${files[@]}" |
  xargs -d '\n' -n 1 -P "${KJIT_TIDY_JOBS:-$(nproc)}" \
    "$CLANG_TIDY" -p "$database" --quiet --warnings-as-errors='*' ||
  { echo "run-clang-tidy: findings above (.clang-tidy lists the checks)" >&2; exit 1; }
echo "run-clang-tidy: no findings"
