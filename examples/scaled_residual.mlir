// y = y + scale(x) with scale(v) = v * SCALE + SHIFT, where SCALE and SHIFT
// are module globals and scale is a noinline device function.
//
// The globals are the analogue of Python module globals a Triton kernel
// reads: the host may change them between launches, a compiled kernel bakes
// in the values it saw, and the runtime checks they have not changed.
//
// Launch: grid = ceil(n / BLOCK) programs.

kjit.global @SCALE : f32 = 5.000000e-01
kjit.global @SHIFT : f32 = 1.000000e+00

kjit.func noinline @scale(%v: f32) -> f32 {
  %s = kjit.get_global @SCALE : f32
  %t = kjit.get_global @SHIFT : f32
  %r = math.fma %v, %s, %t : f32
  kjit.return %r : f32
}

kjit.kernel @scaled_residual(%x: !kjit.ptr<f32> {kjit.const},
                             %y: !kjit.ptr<f32>,
                             %n: i32,
                             %BLOCK: i32 {kjit.constexpr, kjit.default = 256 : i32}) {
  %pid = kjit.program_id x
  %tid_index = gpu.thread_id x
  %threads_index = gpu.block_dim x
  %tid = arith.index_cast %tid_index : index to i32
  %threads = arith.index_cast %threads_index : index to i32
  %block_start = arith.muli %pid, %BLOCK : i32
  scf.for %j = %tid to %BLOCK step %threads : i32 {
    %i = arith.addi %block_start, %j : i32
    %in_bounds = arith.cmpi slt, %i, %n : i32
    %xv = kjit.load %x[%i] mask %in_bounds : !kjit.ptr<f32>, i32 -> f32
    %yv = kjit.load %y[%i] mask %in_bounds : !kjit.ptr<f32>, i32 -> f32
    %scaled = kjit.call @scale(%xv) : (f32) -> f32
    %r = arith.addf %yv, %scaled : f32
    kjit.store %r, %y[%i] mask %in_bounds : f32, !kjit.ptr<f32>, i32
  }
  kjit.return
}
