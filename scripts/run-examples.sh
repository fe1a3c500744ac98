#!/usr/bin/env bash
# The README's first command: on a fresh Debian 12 machine, install what kjit
# needs, build it, and run the main job: every example kernel is verified by
# kjit-opt, launched on the host backend by kjit-run, and its outputs are
# checked against a reference computed independently (plain Python).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

kjit_install_packages
kjit_build --target kjit-opt kjit-run

examples="$KJIT_ROOT/examples"
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
reference="$KJIT_ROOT/test/Runtime/Inputs/reference.py"
run="$KJIT_BUILD/bin/kjit-run"

# name  file  kernel  reference-parameters  kjit-run arguments...
launch() {
  local name=$1 file=$2 kernel=$3 params=$4
  shift 4
  echo "=== $name: $file, kernel @$kernel"
  "$KJIT_BUILD/bin/kjit-opt" "$examples/$file" > /dev/null
  mkdir -p "$out/$name"
  "$run" "$examples/$file" --kernel "$kernel" --output-dir "$out/$name" "$@"
  # shellcheck disable=SC2086
  python3 "$reference" "$kernel" "$out/$name" $params
}

launch "vector add" vector_add.mlir add "" --grid 4 --repeat 10 \
  --arg x=f32[4000]:random:const '--arg=y=f32[4000]:random(seed=1):const' \
  --arg out=f32[4000]:zeros --arg n=4000
launch "saxpy" saxpy.mlir saxpy "a=2.5" --grid 8 --arg a=2.5 \
  --arg x=f32[2000]:random:const --arg y=f32[2000]:arange --arg n=2000
launch "softmax" softmax.mlir softmax "rows=8 n_cols=500" --grid 8 \
  --arg in=f32[8,500]:random:const --arg out=f32[8,500]:zeros \
  --arg n_cols=500 --arg stride=500
launch "matmul" matmul.mlir matmul "M=48 N=40 K=30" --grid 3,3 \
  --option num_warps=8 --arg a=f32[48,30]:random:const \
  '--arg=b=f32[30,40]:random(seed=2):const' --arg c=f32[48,40]:zeros \
  --arg M=48 --arg N=40 --arg K=30 --arg stride_am=30 --arg stride_bk=40 \
  --arg stride_cm=40
launch "scaled residual" scaled_residual.mlir scaled_residual \
  "SCALE=0.5 SHIFT=1.0" --grid 4 --arg x=f32[1000]:random:const \
  --arg y=f32[1000]:ones --arg n=1000
echo "=== all 5 examples ran on the host backend and match their references"
