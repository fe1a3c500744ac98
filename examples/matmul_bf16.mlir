// C = A * B on the matrix units: bf16 A (M x K) and B (K x N), f32
// accumulation, bf16 C (M x N), all row-major with row strides of their own.
//
// A program computes a 128 x 256 tile of C with two warpgroups (num_warps =
// 8), each owning 64 of its rows. For every 64-deep step along K the program
// loads a 128 x 64 tile of A and a 64 x 256 tile of B, which read zero
// outside the matrices, so any M, N and K work; each warpgroup multiplies its
// half of the A tile by the B tile into its fragment (128 f32 per thread),
// and finally stores the fragments below (M, N), rounded to bf16. The
// programs walk C's tiles in groups of 8 tile rows, so that programs that
// run at the same time share tiles of B in L2.
//
// Launch: grid = ceil(M / 128) * ceil(N / 256), num_warps = 8; num_stages
// (default 3) k-steps of tiles are in flight on the cuda target.
// examples/matmul_fp16.mlir is the same kernel for f16.

kjit.kernel @matmul_bf16(%a: !kjit.ptr<bf16> {kjit.const},
                         %b: !kjit.ptr<bf16> {kjit.const},
                         %c: !kjit.ptr<bf16>,
                         %M: i32, %N: i32, %K: i32,
                         %stride_am: i32, %stride_bk: i32, %stride_cm: i32) {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %c8 = arith.constant 8 : i32
  %c64 = arith.constant 64 : i32
  %c127 = arith.constant 127 : i32
  %c128 = arith.constant 128 : i32
  %c255 = arith.constant 255 : i32
  %c256 = arith.constant 256 : i32
  %threads = gpu.block_dim x
  %threads_256 = arith.constant 256 : index
  %two_groups = arith.cmpi eq, %threads, %threads_256 : index
  kjit.assert %two_groups, "matmul_bf16 runs two warpgroups (num_warps = 8)"
  %da = kjit.tensor_desc %a shape [%M, %K] strides [%stride_am, %c1]
      : !kjit.ptr<bf16> -> !kjit.tensor_desc<128x64xbf16>
  %db = kjit.tensor_desc %b shape [%K, %N] strides [%stride_bk, %c1]
      : !kjit.ptr<bf16> -> !kjit.tensor_desc<64x256xbf16>

  // Grouped order: program p takes tile (tm, tn), going down 8 tile rows
  // before moving one tile column right.
  %pid = kjit.program_id x
  %m_up = arith.addi %M, %c127 : i32
  %tiles_m = arith.divsi %m_up, %c128 : i32
  %n_up = arith.addi %N, %c255 : i32
  %tiles_n = arith.divsi %n_up, %c256 : i32
  %per_group = arith.muli %tiles_n, %c8 : i32
  %group = arith.divsi %pid, %per_group : i32
  %first_m = arith.muli %group, %c8 : i32
  %left = arith.subi %tiles_m, %first_m : i32
  %group_rows = arith.minsi %left, %c8 : i32
  %in_group = arith.remsi %pid, %per_group : i32
  %dm = arith.remsi %in_group, %group_rows : i32
  %tm = arith.addi %first_m, %dm : i32
  %tn = arith.divsi %in_group, %group_rows : i32
  %m0 = arith.muli %tm, %c128 : i32
  %n0 = arith.muli %tn, %c256 : i32

  // Warpgroup w owns rows 64w .. 64w + 63 of the tile.
  %tid = gpu.thread_id x
  %tid32 = arith.index_cast %tid : index to i32
  %wg = arith.divui %tid32, %c128 : i32
  %wg_row = arith.muli %wg, %c64 : i32
  %zero = arith.constant dense<0.0> : vector<128xf32>
  %k_up = arith.addi %K, %c64 : i32
  %k_up1 = arith.subi %k_up, %c1 : i32
  %k_tiles = arith.divsi %k_up1, %c64 : i32
  %acc = scf.for %kt = %c0 to %k_tiles step %c1
      iter_args(%part = %zero) -> (vector<128xf32>) : i32 {
    %k0 = arith.muli %kt, %c64 : i32
    %ta = kjit.tile_load %da[%m0, %k0]
        : !kjit.tensor_desc<128x64xbf16> -> !kjit.tile<128x64xbf16>
    %tb = kjit.tile_load %db[%k0, %n0]
        : !kjit.tensor_desc<64x256xbf16> -> !kjit.tile<64x256xbf16>
    %next = kjit.mma %ta[%wg_row], %tb, %part
        : !kjit.tile<128x64xbf16>, !kjit.tile<64x256xbf16>, vector<128xf32>
    scf.yield %next : vector<128xf32>
  }
  %row0 = arith.addi %m0, %wg_row : i32
  kjit.mma_store %acc, %c[%row0, %n0] stride %stride_cm bounds [%M, %N]
      : vector<128xf32>, !kjit.ptr<bf16>
  kjit.return
}
