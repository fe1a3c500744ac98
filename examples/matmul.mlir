// C = A * B for row-major float32 matrices A (M x K), B (K x N), C (M x N).
//
// Classic shared-memory tiling: a program computes one 16 x 16 tile of C
// with 256 threads (num_warps = 8), one output element per thread. For each
// step along K it stages a 16 x 16 tile of A and of B in workgroup memory,
// waits at a barrier, accumulates from the staged tiles and waits again
// before the tiles are overwritten. Out-of-range elements load as zero.
//
// Launch: grid = (ceil(N / 16), ceil(M / 16)), 256 threads.

memref.global "private" @tile_a : memref<16x16xf32, #gpu.address_space<workgroup>>
memref.global "private" @tile_b : memref<16x16xf32, #gpu.address_space<workgroup>>

kjit.kernel @matmul(%a: !kjit.ptr<f32> {kjit.const},
                    %b: !kjit.ptr<f32> {kjit.const},
                    %c: !kjit.ptr<f32>,
                    %M: i32, %N: i32, %K: i32,
                    %stride_am: i32, %stride_bk: i32, %stride_cm: i32) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : index
  %c256 = arith.constant 256 : index
  %k0 = arith.constant 0 : i32
  %tile = arith.constant 16 : i32
  %zero = arith.constant 0.000000e+00 : f32
  %threads = gpu.block_dim x
  %exact = arith.cmpi eq, %threads, %c256 : index
  kjit.assert %exact, "matmul runs 256 threads per program (num_warps = 8)"
  %tid = gpu.thread_id x
  %ty = arith.divui %tid, %c16 : index
  %tx = arith.remui %tid, %c16 : index
  %ty32 = arith.index_cast %ty : index to i32
  %tx32 = arith.index_cast %tx : index to i32
  %pid_n = kjit.program_id x
  %pid_m = kjit.program_id y
  %row_base = arith.muli %pid_m, %tile : i32
  %col_base = arith.muli %pid_n, %tile : i32
  %row = arith.addi %row_base, %ty32 : i32
  %col = arith.addi %col_base, %tx32 : i32
  %row_ok = arith.cmpi slt, %row, %M : i32
  %col_ok = arith.cmpi slt, %col, %N : i32
  %a_row = arith.muli %row, %stride_am : i32
  %tile_a = memref.get_global @tile_a : memref<16x16xf32, #gpu.address_space<workgroup>>
  %tile_b = memref.get_global @tile_b : memref<16x16xf32, #gpu.address_space<workgroup>>

  %acc = scf.for %k = %k0 to %K step %tile iter_args(%sum = %zero) -> (f32) : i32 {
    // Stage A[row, k + tx] and B[k + ty, col].
    %a_col = arith.addi %k, %tx32 : i32
    %a_col_ok = arith.cmpi slt, %a_col, %K : i32
    %a_ok = arith.andi %row_ok, %a_col_ok : i1
    %a_index = arith.addi %a_row, %a_col : i32
    %a_value = kjit.load %a[%a_index] mask %a_ok : !kjit.ptr<f32>, i32 -> f32
    memref.store %a_value, %tile_a[%ty, %tx] : memref<16x16xf32, #gpu.address_space<workgroup>>
    %b_row = arith.addi %k, %ty32 : i32
    %b_row_ok = arith.cmpi slt, %b_row, %K : i32
    %b_ok = arith.andi %b_row_ok, %col_ok : i1
    %b_row_start = arith.muli %b_row, %stride_bk : i32
    %b_index = arith.addi %b_row_start, %col : i32
    %b_value = kjit.load %b[%b_index] mask %b_ok : !kjit.ptr<f32>, i32 -> f32
    memref.store %b_value, %tile_b[%ty, %tx] : memref<16x16xf32, #gpu.address_space<workgroup>>
    gpu.barrier

    %partial = scf.for %kk = %c0 to %c16 step %c1 iter_args(%s = %sum) -> (f32) {
      %av = memref.load %tile_a[%ty, %kk] : memref<16x16xf32, #gpu.address_space<workgroup>>
      %bv = memref.load %tile_b[%kk, %tx] : memref<16x16xf32, #gpu.address_space<workgroup>>
      %next = math.fma %av, %bv, %s : f32
      scf.yield %next : f32
    }
    // The tiles are overwritten in the next step only after every thread
    // has finished reading them.
    gpu.barrier
    scf.yield %partial : f32
  }

  %c_ok = arith.andi %row_ok, %col_ok : i1
  %c_row = arith.muli %row, %stride_cm : i32
  %c_index = arith.addi %c_row, %col : i32
  kjit.store %acc, %c[%c_index] mask %c_ok : f32, !kjit.ptr<f32>, i32
  kjit.return
}
