# The example launches of the main job, shared by scripts/run-examples.sh
# (host backend, build tree) and scripts/run-on-gpu.sh (the device bundle,
# cuda and host backends): each line names an example, its file, its kernel,
# the parameters of its reference (test/Runtime/Inputs/reference.py, plain
# Python) and kjit-run's arguments. Sourced, not run.
#
# kjit_for_each_example FUNCTION calls
#   FUNCTION NAME FILE KERNEL REFERENCE-PARAMETERS KJIT-RUN-ARGUMENTS...
# for every example, in order, and returns the number of calls that failed
# (0: all passed), so a caller may go on after a failure.

kjit_for_each_example() {
  local fn=$1 _kjit_failed=0
  "$fn" "vector add" vector_add.mlir add "" --grid 4 --repeat 10 \
    --arg x=f32[4000]:random:const '--arg=y=f32[4000]:random(seed=1):const' \
    --arg out=f32[4000]:zeros --arg n=4000 || _kjit_failed=$((_kjit_failed + 1))
  "$fn" "saxpy" saxpy.mlir saxpy "a=2.5" --grid 8 --arg a=2.5 \
    --arg x=f32[2000]:random:const --arg y=f32[2000]:arange --arg n=2000 ||
    _kjit_failed=$((_kjit_failed + 1))
  "$fn" "softmax" softmax.mlir softmax "rows=8 n_cols=500" --grid 8 \
    --arg in=f32[8,500]:random:const --arg out=f32[8,500]:zeros \
    --arg n_cols=500 --arg stride=500 || _kjit_failed=$((_kjit_failed + 1))
  "$fn" "matmul" matmul.mlir matmul "M=48 N=40 K=30" --grid 3,3 \
    --option num_warps=8 --arg a=f32[48,30]:random:const \
    '--arg=b=f32[30,40]:random(seed=2):const' --arg c=f32[48,40]:zeros \
    --arg M=48 --arg N=40 --arg K=30 --arg stride_am=30 --arg stride_bk=40 \
    --arg stride_cm=40 || _kjit_failed=$((_kjit_failed + 1))
  # Odd sizes (partial tiles in M, N and K) and rows wider than the matrices.
  "$fn" "matmul bf16" matmul_bf16.mlir matmul_bf16 \
    "M=130 N=257 K=100 stride_am=104 stride_bk=264 stride_cm=260" --grid 4 \
    --option num_warps=8 --arg a=bf16[130,104]:random:const \
    '--arg=b=bf16[100,264]:random(seed=2):const' \
    '--arg=c=bf16[130,260]:random(seed=3)' --arg M=130 --arg N=257 \
    --arg K=100 --arg stride_am=104 --arg stride_bk=264 --arg stride_cm=260 ||
    _kjit_failed=$((_kjit_failed + 1))
  # Sizes and strides multiples of 16: the cuda target stages the blocks
  # wholly inside C through shared memory (16-byte stores) and stores the
  # others per pair, in program (1, 0) one warpgroup each way.
  "$fn" "matmul bf16 aligned" matmul_bf16.mlir matmul_bf16 \
    "M=200 N=384 K=96" --grid 4 --option num_warps=8 \
    --arg a=bf16[200,96]:random:const '--arg=b=bf16[96,384]:random(seed=2):const' \
    --arg c=bf16[200,384]:zeros --arg M=200 --arg N=384 --arg K=96 \
    --arg stride_am=96 --arg stride_bk=384 --arg stride_cm=384 ||
    _kjit_failed=$((_kjit_failed + 1))
  "$fn" "matmul fp16" matmul_fp16.mlir matmul_fp16 "M=67 N=129 K=33" \
    --grid 1 --option num_warps=8 --arg a=f16[67,33]:random:const \
    '--arg=b=f16[33,129]:random(seed=2):const' --arg c=f16[67,129]:zeros \
    --arg M=67 --arg N=129 --arg K=33 --arg stride_am=33 --arg stride_bk=129 \
    --arg stride_cm=129 || _kjit_failed=$((_kjit_failed + 1))
  "$fn" "scaled residual" scaled_residual.mlir scaled_residual \
    "SCALE=0.5 SHIFT=1.0" --grid 4 --arg x=f32[1000]:random:const \
    --arg y=f32[1000]:ones --arg n=1000 || _kjit_failed=$((_kjit_failed + 1))
  return $_kjit_failed
}

# The number of examples kjit_for_each_example runs.
KJIT_EXAMPLE_COUNT=8
