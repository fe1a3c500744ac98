#!/usr/bin/env bash
# Runs every example of scripts/examples.sh (the main job's launches) with
# kjit-run --backend cuda, in the environment the test set up (the fake
# driver and toolkit), and prints one line per example: "example NAME: ok",
# "example NAME: failed" after its output, or "example NAME: skipped (...)"
# for softmax when the toolkit has no libdevice (it calls expf).
#
#   examples-on-cuda.sh KJIT_SOURCE_DIR
set -uo pipefail
src=$1
# shellcheck source=../../../scripts/examples.sh
source "$src/scripts/examples.sh"

one() { # NAME FILE KERNEL REFERENCE-PARAMETERS ARGS...
  local name=$1 file=$2 kernel=$3 out
  shift 4
  if [ "$kernel" = softmax ] &&
    [ ! -f "$KJIT_CUDA_HOME/nvvm/libdevice/libdevice.10.bc" ]; then
    echo "example $name: skipped (the toolkit has no libdevice)"
    return 0
  fi
  if out=$(kjit-run "$src/examples/$file" --kernel "$kernel" --backend cuda \
    "$@" 2>&1); then
    echo "example $name: ok"
  else
    echo "$out"
    echo "example $name: failed"
    return 1
  fi
}
kjit_for_each_example one
