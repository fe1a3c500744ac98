// out = x + y over n float32 elements.
//
// Written as a fast GPU kernel is: every thread moves 16 bytes per access
// (one vector<4xf32>, a single 128-bit load or store once specialization
// proves the pointers 16-byte aligned), and a program of 128 threads
// (num_warps = 4) sweeps BLOCK = 1024 elements in two rounds. The mask of a
// vector access is one bit for all four lanes, so the last partial vector
// takes a scalar path with one mask per element.
//
// Launch: grid = ceil(n / BLOCK) programs.

kjit.kernel @add(%x: !kjit.ptr<f32> {kjit.const},
                 %y: !kjit.ptr<f32> {kjit.const},
                 %out: !kjit.ptr<f32>,
                 %n: i32,
                 %BLOCK: i32 {kjit.constexpr, kjit.default = 1024 : i32}) {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %c4 = arith.constant 4 : i32
  %pid = kjit.program_id x
  %tid_index = gpu.thread_id x
  %threads_index = gpu.block_dim x
  %tid = arith.index_cast %tid_index : index to i32
  %threads = arith.index_cast %threads_index : index to i32
  %block_start = arith.muli %pid, %BLOCK : i32
  %lane = arith.muli %tid, %c4 : i32
  %sweep = arith.muli %threads, %c4 : i32
  scf.for %round = %c0 to %BLOCK step %sweep : i32 {
    %round_start = arith.addi %block_start, %round : i32
    %offset = arith.addi %round_start, %lane : i32
    %end = arith.addi %offset, %c4 : i32
    %full = arith.cmpi sle, %end, %n : i32
    scf.if %full {
      %a = kjit.load %x[%offset] : !kjit.ptr<f32>, i32 -> vector<4xf32>
      %b = kjit.load %y[%offset] : !kjit.ptr<f32>, i32 -> vector<4xf32>
      %sum = arith.addf %a, %b : vector<4xf32>
      kjit.store %sum, %out[%offset] : vector<4xf32>, !kjit.ptr<f32>, i32
    } else {
      // At most three elements remain past the last full vector.
      scf.for %k = %c0 to %c4 step %c1 : i32 {
        %i = arith.addi %offset, %k : i32
        %in_bounds = arith.cmpi slt, %i, %n : i32
        %a = kjit.load %x[%i] mask %in_bounds : !kjit.ptr<f32>, i32 -> f32
        %b = kjit.load %y[%i] mask %in_bounds : !kjit.ptr<f32>, i32 -> f32
        %sum = arith.addf %a, %b : f32
        kjit.store %sum, %out[%i] mask %in_bounds : f32, !kjit.ptr<f32>, i32
      }
    }
  }
  kjit.return
}
