// y = a * x + y over n float32 elements, one element per thread and round.
//
// `a` is left unannotated (!kjit.any), like an untyped Python parameter: its
// type comes from the value bound at launch, and the body reads it through
// kjit.cast, which specialization resolves (a float) or rejects.
//
// Launch: grid = ceil(n / BLOCK) programs.

kjit.kernel @saxpy(%a: !kjit.any,
                   %x: !kjit.ptr<f32> {kjit.const},
                   %y: !kjit.ptr<f32>,
                   %n: i32,
                   %BLOCK: i32 {kjit.constexpr, kjit.default = 256 : i32}) {
  %alpha = kjit.cast %a : !kjit.any to f32
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
    %r = math.fma %alpha, %xv, %yv : f32
    kjit.store %r, %y[%i] mask %in_bounds : f32, !kjit.ptr<f32>, i32
  }
  kjit.return
}
