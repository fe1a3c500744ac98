// Row-wise softmax of a float32 matrix with row stride `stride`:
//   out[r, c] = exp(in[r, c] - max_r) / sum_c' exp(in[r, c'] - max_r)
//
// One program per row. Each thread reduces a strided slice of the row; the
// program combines the per-thread results through workgroup memory with a
// tree of barriers, first the maximum, then the sum of exponentials.
//
// Launch: grid = number of rows, at most 128 threads (num_warps <= 4).

memref.global "private" @partials : memref<128xf32, #gpu.address_space<workgroup>>

kjit.kernel @softmax(%in: !kjit.ptr<f32> {kjit.const},
                     %out: !kjit.ptr<f32>,
                     %n_cols: i32,
                     %stride: i32) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %levels = arith.constant 7 : index
  %c64 = arith.constant 64 : index
  %c128 = arith.constant 128 : index
  %zero = arith.constant 0.000000e+00 : f32
  %neg_inf = arith.constant 0xFF800000 : f32
  %tid = gpu.thread_id x
  %threads = gpu.block_dim x
  %fits = arith.cmpi ule, %threads, %c128 : index
  kjit.assert %fits, "softmax runs at most 128 threads per program"
  %row = kjit.program_id x
  %row_start = arith.muli %row, %stride : i32
  %n = arith.index_cast %n_cols : i32 to index
  %partials = memref.get_global @partials : memref<128xf32, #gpu.address_space<workgroup>>

  // Maximum of the row.
  %local_max = scf.for %col = %tid to %n step %threads
      iter_args(%m = %neg_inf) -> (f32) {
    %col32 = arith.index_cast %col : index to i32
    %i = arith.addi %row_start, %col32 : i32
    %v = kjit.load %in[%i] : !kjit.ptr<f32>, i32 -> f32
    %next = arith.maximumf %m, %v : f32
    scf.yield %next : f32
  }
  memref.store %local_max, %partials[%tid] : memref<128xf32, #gpu.address_space<workgroup>>
  gpu.barrier
  scf.for %level = %c0 to %levels step %c1 {
    %half = arith.shrui %c64, %level : index
    %partner = arith.addi %tid, %half : index
    %active = arith.cmpi ult, %tid, %half : index
    %partner_live = arith.cmpi ult, %partner, %threads : index
    %combine = arith.andi %active, %partner_live : i1
    scf.if %combine {
      %mine = memref.load %partials[%tid] : memref<128xf32, #gpu.address_space<workgroup>>
      %theirs = memref.load %partials[%partner] : memref<128xf32, #gpu.address_space<workgroup>>
      %both = arith.maximumf %mine, %theirs : f32
      memref.store %both, %partials[%tid] : memref<128xf32, #gpu.address_space<workgroup>>
    }
    gpu.barrier
  }
  %row_max = memref.load %partials[%c0] : memref<128xf32, #gpu.address_space<workgroup>>
  // Every thread has read slot 0 before it is overwritten below.
  gpu.barrier

  // Sum of exponentials.
  %local_sum = scf.for %col = %tid to %n step %threads
      iter_args(%s = %zero) -> (f32) {
    %col32 = arith.index_cast %col : index to i32
    %i = arith.addi %row_start, %col32 : i32
    %v = kjit.load %in[%i] : !kjit.ptr<f32>, i32 -> f32
    %shifted = arith.subf %v, %row_max : f32
    %e = math.exp %shifted : f32
    %next = arith.addf %s, %e : f32
    scf.yield %next : f32
  }
  memref.store %local_sum, %partials[%tid] : memref<128xf32, #gpu.address_space<workgroup>>
  gpu.barrier
  scf.for %level = %c0 to %levels step %c1 {
    %half = arith.shrui %c64, %level : index
    %partner = arith.addi %tid, %half : index
    %active = arith.cmpi ult, %tid, %half : index
    %partner_live = arith.cmpi ult, %partner, %threads : index
    %combine = arith.andi %active, %partner_live : i1
    scf.if %combine {
      %mine = memref.load %partials[%tid] : memref<128xf32, #gpu.address_space<workgroup>>
      %theirs = memref.load %partials[%partner] : memref<128xf32, #gpu.address_space<workgroup>>
      %both = arith.addf %mine, %theirs : f32
      memref.store %both, %partials[%tid] : memref<128xf32, #gpu.address_space<workgroup>>
    }
    gpu.barrier
  }
  %row_sum = memref.load %partials[%c0] : memref<128xf32, #gpu.address_space<workgroup>>

  // Normalize.
  scf.for %col = %tid to %n step %threads {
    %col32 = arith.index_cast %col : index to i32
    %i = arith.addi %row_start, %col32 : i32
    %v = kjit.load %in[%i] : !kjit.ptr<f32>, i32 -> f32
    %shifted = arith.subf %v, %row_max : f32
    %e = math.exp %shifted : f32
    %r = arith.divf %e, %row_sum : f32
    kjit.store %r, %out[%i] : f32, !kjit.ptr<f32>, i32
  }
  kjit.return
}
