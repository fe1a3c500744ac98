#!/usr/bin/env bash
# Checks that the tree's C and C++ files are formatted as clang-format 22
# (the LLVM 22 toolchain kjit builds with) formats them under .clang-format,
# and lists the files that are not, and that each starts with its banner
# line (below). Exits 0 when none drifts, 1 when some do, 2 when
# clang-format 22 is missing.
#
#   scripts/check-format.sh              every tracked C/C++ file
#   scripts/check-format.sh FILE...      only these (e.g. the ones a change
#                                        touches)
#
# Fix a file with: clang-format-22 -i FILE
#
# The banner: the first line names the file and says what it holds, LLVM
# style, exactly 80 columns, on one line:
#   //===- Name.cpp - what it holds ---------------------------------------===//
#   //===- Name.h - what it holds ---------------------------*- C++ -*-===//
#   /*===- Name.c - what it holds ---------------------------------------===*\
#   /*===- Name.h - what it holds -----------------------------*- C -*-===*\
# (the mode marker is optional; the name may carry leading directories, as
# kjit-c/Plugin.h does). clang-format splits a banner longer than 80
# columns over two lines, which is what this catches besides a wrong name.
set -euo pipefail

KJIT_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$KJIT_ROOT"

# The version is pinned: another major formats some constructs differently,
# so "clean" would depend on the machine.
CLANG_FORMAT=${CLANG_FORMAT:-}
if [ -z "$CLANG_FORMAT" ]; then
  for candidate in /usr/lib/llvm-22/bin/clang-format clang-format-22; do
    if command -v "$candidate" >/dev/null 2>&1; then
      CLANG_FORMAT=$candidate
      break
    fi
  done
fi
if [ -z "$CLANG_FORMAT" ]; then
  echo "check-format: clang-format 22 not found; install it with" \
       "'apt-get install clang-format-22' (or set CLANG_FORMAT)" >&2
  exit 2
fi
version=$("$CLANG_FORMAT" --version)
if ! [[ $version =~ version\ 22\. ]]; then
  echo "check-format: $CLANG_FORMAT is not clang-format 22: $version" >&2
  exit 2
fi

files=()
if [ $# -gt 0 ]; then
  for f in "$@"; do
    f=${f#./}
    case "$f" in
      *.c | *.h | *.cpp) files+=("$f") ;;
    esac
  done
else
  # A tracked file deleted in the working tree has nothing to format.
  while IFS= read -r -d '' f; do
    [ -e "$f" ] && files+=("$f")
  done < <(git ls-files -z -- '*.c' '*.h' '*.cpp')
fi

# Files whose banner is still to be fixed, skipped meanwhile; drop an
# entry once its banner is right.
banner_pending=" "

# Prints why the first line of $1 is not its banner, nothing when it is.
banner_problem() {
  local f=$1 first name
  IFS= read -r first <"$f" || true
  local cxx='^//===- ([^ ]+) - .*[^ ] -+(\*- C\+\+ -\*-)?===//$'
  local c='^/\*===- ([^ ]+) - .*[^ ] -+(\*- C -\*-)?===\*[\\/]$'
  case "$f" in
    *.cpp) [[ $first =~ $cxx ]] || { echo "no '//===- $(basename "$f") - ... ===//' banner"; return; } ;;
    *.c) [[ $first =~ $c ]] || { echo "no '/*===- $(basename "$f") - ... ===*\\' banner"; return; } ;;
    *) [[ $first =~ $cxx || $first =~ $c ]] || { echo "no '//===- $(basename "$f") - ... ===//' banner"; return; } ;;
  esac
  name=${BASH_REMATCH[1]}
  case "/$f" in
    */"$name") ;;
    *) echo "the banner names $name"; return ;;
  esac
  if [ ${#first} -ne 80 ]; then
    echo "the banner line is ${#first} columns, not 80"
  fi
}

bad_banners=()
for f in "${files[@]}"; do
  case "$banner_pending" in *" $f "*) continue ;; esac
  problem=$(banner_problem "$f")
  if [ -n "$problem" ]; then
    bad_banners+=("$f:1: $problem")
  fi
done

drift=()
for f in "${files[@]}"; do
  if ! "$CLANG_FORMAT" --dry-run --Werror "$f" >/dev/null 2>&1; then
    drift+=("$f")
  fi
done

status=0
if [ ${#drift[@]} -gt 0 ]; then
  echo "check-format: ${#drift[@]} of ${#files[@]} file(s) differ from" \
       "clang-format 22 (clang-format-22 -i FILE fixes one):"
  printf '  %s\n' "${drift[@]}"
  status=1
fi
if [ ${#bad_banners[@]} -gt 0 ]; then
  echo "check-format: ${#bad_banners[@]} file(s) without a one-line," \
       "80-column banner naming the file (the header of this script shows it):"
  printf '  %s\n' "${bad_banners[@]}"
  status=1
fi
[ $status -eq 0 ] || exit $status
echo "check-format: ${#files[@]} file(s), all formatted, banners in place"
