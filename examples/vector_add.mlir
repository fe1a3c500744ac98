// out = x + y over n float32 elements.
//
// Written as a fast GPU kernel is: every access moves 16 bytes (one
// vector<4xf32>, a single 128-bit load or store once specialization proves
// the pointers 16-byte aligned), and each thread handles two such vectors
// per round, one in each half of the round's span, so that a warp's
// accesses stay contiguous. All four loads come before either store:
// nothing says `out` differs from `x`, so a load written after a store
// waits for it, and a thread would wait for memory twice (a kernel of 4096
// elements took 16% longer per CUDA-graph node that way). A program covers
// its BLOCK elements (a multiple of 4) in rounds of 8 x threads; with
// BLOCK = 1024 and num_warps = 4 that is one round. Vectors that reach past
// the program's block or past n take a scalar path with one mask per
// element.
//
// Launch: grid = ceil(n / BLOCK) programs.

kjit.kernel @add(%x: !kjit.ptr<f32> {kjit.const},
                 %y: !kjit.ptr<f32> {kjit.const},
                 %out: !kjit.ptr<f32>,
                 %n: i32,
                 %BLOCK: i32 {kjit.constexpr, kjit.default = 1024 : i32}) {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %c2 = arith.constant 2 : i32
  %c4 = arith.constant 4 : i32
  %c8 = arith.constant 8 : i32
  %pid = kjit.program_id x
  %tid_index = gpu.thread_id x
  %threads_index = gpu.block_dim x
  %tid = arith.index_cast %tid_index : index to i32
  %threads = arith.index_cast %threads_index : index to i32
  %block_start = arith.muli %pid, %BLOCK : i32
  %block_limit = arith.addi %block_start, %BLOCK : i32
  %block_end = arith.minsi %block_limit, %n : i32
  %lane = arith.muli %tid, %c4 : i32
  %sweep = arith.muli %threads, %c4 : i32
  %pair = arith.muli %sweep, %c2 : i32
  scf.for %round = %c0 to %BLOCK step %pair : i32 {
    %round_start = arith.addi %block_start, %round : i32
    %first = arith.addi %round_start, %lane : i32
    %second = arith.addi %first, %sweep : i32
    %end = arith.addi %second, %c4 : i32
    %full = arith.cmpi sle, %end, %block_end : i32
    scf.if %full {
      %a0 = kjit.load %x[%first] : !kjit.ptr<f32>, i32 -> vector<4xf32>
      %a1 = kjit.load %x[%second] : !kjit.ptr<f32>, i32 -> vector<4xf32>
      %b0 = kjit.load %y[%first] : !kjit.ptr<f32>, i32 -> vector<4xf32>
      %b1 = kjit.load %y[%second] : !kjit.ptr<f32>, i32 -> vector<4xf32>
      %s0 = arith.addf %a0, %b0 : vector<4xf32>
      %s1 = arith.addf %a1, %b1 : vector<4xf32>
      kjit.store %s0, %out[%first] : vector<4xf32>, !kjit.ptr<f32>, i32
      kjit.store %s1, %out[%second] : vector<4xf32>, !kjit.ptr<f32>, i32
    } else {
      // The block's or the tensor's end: element by element, masked.
      scf.for %k = %c0 to %c8 step %c1 : i32 {
        %in_vector = arith.remui %k, %c4 : i32
        %which = arith.divui %k, %c4 : i32
        %skip = arith.muli %which, %sweep : i32
        %start = arith.addi %first, %skip : i32
        %i = arith.addi %start, %in_vector : i32
        %in_bounds = arith.cmpi slt, %i, %block_end : i32
        %a = kjit.load %x[%i] mask %in_bounds : !kjit.ptr<f32>, i32 -> f32
        %b = kjit.load %y[%i] mask %in_bounds : !kjit.ptr<f32>, i32 -> f32
        %sum = arith.addf %a, %b : f32
        kjit.store %sum, %out[%i] mask %in_bounds : f32, !kjit.ptr<f32>, i32
      }
    }
  }
  kjit.return
}
