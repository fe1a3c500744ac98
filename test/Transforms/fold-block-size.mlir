// kjit-fold-block-size: every backend runs a program as (32 * num_warps,
// 1, 1) threads, so gpu.block_dim is a constant and gpu.thread_id y and z
// are 0, in device functions as in kernels; gpu.thread_id x stays.
// RUN: kjit-opt %s --kjit-fold-block-size | FileCheck %s
// RUN: kjit-opt %s --kjit-fold-block-size=num-warps=8 | FileCheck %s --check-prefix=EIGHT
// RUN: kjit-opt %s --kjit-fold-block-size=num-warps=8 --canonicalize | FileCheck %s --check-prefix=LOOP
// RUN: not kjit-opt %s --kjit-fold-block-size=num-warps=33 2>&1 | FileCheck %s --check-prefix=BAD
// RUN: not kjit-opt %s --kjit-fold-block-size=num-warps=0 2>&1 | FileCheck %s --check-prefix=ZERO

// CHECK-LABEL: kjit.func private @threads() -> index
// CHECK-NEXT:    %[[T:.*]] = arith.constant 128 : index
// CHECK-NEXT:    kjit.return %[[T]] : index
// EIGHT-LABEL: kjit.func private @threads() -> index
// EIGHT-NEXT:    arith.constant 256 : index
kjit.func private @threads() -> index {
  %t = gpu.block_dim x
  kjit.return %t : index
}

// CHECK-LABEL: kjit.kernel @block_shape(
// CHECK-NEXT:    kjit.call @threads()
// CHECK-NEXT:    arith.constant 1 : index
// CHECK-NEXT:    arith.constant 1 : index
// CHECK-NEXT:    arith.constant 0 : index
// CHECK-NEXT:    arith.constant 0 : index
// CHECK-NEXT:    gpu.thread_id x
// CHECK-NOT:     gpu.block_dim
// CHECK-NOT:     gpu.thread_id
// CHECK:         kjit.return
kjit.kernel @block_shape(%out: !kjit.ptr<i32>) {
  %t = kjit.call @threads() : () -> index
  %by = gpu.block_dim y
  %bz = gpu.block_dim z
  %ty = gpu.thread_id y
  %tz = gpu.thread_id z
  %tx = gpu.thread_id x
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %c2 = arith.constant 2 : i32
  %c3 = arith.constant 3 : i32
  %c4 = arith.constant 4 : i32
  %c5 = arith.constant 5 : i32
  %v0 = arith.index_cast %t : index to i32
  %v1 = arith.index_cast %by : index to i32
  %v2 = arith.index_cast %bz : index to i32
  %v3 = arith.index_cast %ty : index to i32
  %v4 = arith.index_cast %tz : index to i32
  %v5 = arith.index_cast %tx : index to i32
  kjit.store %v0, %out[%c0] : i32, !kjit.ptr<i32>, i32
  kjit.store %v1, %out[%c1] : i32, !kjit.ptr<i32>, i32
  kjit.store %v2, %out[%c2] : i32, !kjit.ptr<i32>, i32
  kjit.store %v3, %out[%c3] : i32, !kjit.ptr<i32>, i32
  kjit.store %v4, %out[%c4] : i32, !kjit.ptr<i32>, i32
  kjit.store %v5, %out[%c5] : i32, !kjit.ptr<i32>, i32
  kjit.return
}

// A sweep over 1024 elements, 4 per thread: with 256 threads it is one
// round, and the canonicalizer leaves no loop; the assert that the block
// size decides goes with it.
// LOOP-LABEL: kjit.kernel @sweep(
// LOOP-NOT:     scf.for
// LOOP-NOT:     kjit.assert
// LOOP:         kjit.store
// LOOP-NOT:     scf.for
// LOOP:         kjit.return
kjit.kernel @sweep(%out: !kjit.ptr<f32>) {
  %c0 = arith.constant 0 : i32
  %c4 = arith.constant 4 : i32
  %c1024 = arith.constant 1024 : i32
  %limit = arith.constant 1024 : index
  %one = arith.constant 1.0 : f32
  %threads_index = gpu.block_dim x
  %fits = arith.cmpi ule, %threads_index, %limit : index
  kjit.assert %fits, "at most 1024 threads"
  %tid_index = gpu.thread_id x
  %threads = arith.index_cast %threads_index : index to i32
  %tid = arith.index_cast %tid_index : index to i32
  %lane = arith.muli %tid, %c4 : i32
  %step = arith.muli %threads, %c4 : i32
  scf.for %round = %c0 to %c1024 step %step : i32 {
    %offset = arith.addi %round, %lane : i32
    kjit.store %one, %out[%offset] : f32, !kjit.ptr<f32>, i32
  }
  kjit.return
}

// BAD: error: kjit-fold-block-size: num-warps must be 1 to 32, got 33
// ZERO: error: kjit-fold-block-size: num-warps must be 1 to 32, got 0
