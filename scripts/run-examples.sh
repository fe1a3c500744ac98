#!/usr/bin/env bash
# The README's first command: on a fresh Debian 12 machine, install what kjit
# needs, build it, and run the main job: every example kernel is verified by
# kjit-opt, launched on the host backend by kjit-run, and its outputs are
# checked against a reference computed independently (plain Python).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
# The launches and their references (shared with scripts/run-on-gpu.sh).
source "$KJIT_ROOT/scripts/examples.sh"

kjit_install_packages
kjit_build --target kjit-opt kjit-run

examples="$KJIT_ROOT/examples"
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
reference="$KJIT_ROOT/test/Runtime/Inputs/reference.py"
run="$KJIT_BUILD/bin/kjit-run"

# name  file  kernel  reference-parameters  kjit-run arguments...
# (set -e does not apply inside a function called from kjit_for_each_example,
# hence the explicit returns; the script fails after the last example.)
launch() {
  local name=$1 file=$2 kernel=$3 params=$4
  shift 4
  echo "=== $name: $file, kernel @$kernel"
  "$KJIT_BUILD/bin/kjit-opt" "$examples/$file" > /dev/null || return 1
  mkdir -p "$out/$name"
  "$run" "$examples/$file" --kernel "$kernel" --output-dir "$out/$name" "$@" ||
    return 1
  # shellcheck disable=SC2086
  python3 "$reference" "$kernel" "$out/$name" $params
}

if ! kjit_for_each_example launch; then
  echo "=== some examples failed" >&2
  exit 1
fi
echo "=== all $KJIT_EXAMPLE_COUNT examples ran on the host backend and match their references"
