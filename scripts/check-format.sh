#!/usr/bin/env bash
# Checks that the tree's C and C++ files are formatted as clang-format 22
# (the LLVM 22 toolchain kjit builds with) formats them under .clang-format,
# and lists the files that are not. Exits 0 when none drifts, 1 when some
# do, 2 when clang-format 22 is missing.
#
#   scripts/check-format.sh              every tracked C/C++ file
#   scripts/check-format.sh FILE...      only these (e.g. the ones a change
#                                        touches)
#
# Fix a file with: clang-format-22 -i FILE
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

drift=()
for f in "${files[@]}"; do
  if ! "$CLANG_FORMAT" --dry-run --Werror "$f" >/dev/null 2>&1; then
    drift+=("$f")
  fi
done

if [ ${#drift[@]} -gt 0 ]; then
  echo "check-format: ${#drift[@]} of ${#files[@]} file(s) differ from" \
       "clang-format 22 (clang-format-22 -i FILE fixes one):"
  printf '  %s\n' "${drift[@]}"
  exit 1
fi
echo "check-format: ${#files[@]} file(s), all formatted"
