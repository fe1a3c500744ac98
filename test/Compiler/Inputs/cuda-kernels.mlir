// Small kernels for the cuda target's tests (test/Compiler/cuda-*.test).

// y = a * x + y with a separate multiply and add: what enable_fp_fusion
// decides about (fma.rn with it, mul.rn + add.rn without).
kjit.kernel @axpy(%a: f32, %x: !kjit.ptr<f32> {kjit.const}, %y: !kjit.ptr<f32>,
                  %n: i32) {
  %pid = kjit.program_id x
  %tid_index = gpu.thread_id x
  %threads_index = gpu.block_dim x
  %tid = arith.index_cast %tid_index : index to i32
  %threads = arith.index_cast %threads_index : index to i32
  %start = arith.muli %pid, %threads : i32
  %i = arith.addi %start, %tid : i32
  %in = arith.cmpi slt, %i, %n : i32
  %xv = kjit.load %x[%i] mask %in : !kjit.ptr<f32>, i32 -> f32
  %yv = kjit.load %y[%i] mask %in : !kjit.ptr<f32>, i32 -> f32
  %ax = arith.mulf %a, %xv : f32
  %r = arith.addf %ax, %yv : f32
  kjit.store %r, %y[%i] mask %in : f32, !kjit.ptr<f32>, i32
  kjit.return
}

// Parameters of every width the runtime passes: a bool (one byte), a half
// (two bytes), a 64-bit integer, a stride specialized as 1 (still passed),
// a constexpr (not passed) and a pointer.
kjit.kernel @widths(%out: !kjit.ptr<f32>, %flag: i1, %h: f16, %big: i64,
                    %stride: i32,
                    %SCALE: i32 {kjit.constexpr, kjit.default = 3 : i32}) {
  %pid = kjit.program_id x
  %i = arith.muli %pid, %stride : i32
  %hf = arith.extf %h : f16 to f32
  %bf = arith.sitofp %big : i64 to f32
  %s = arith.sitofp %SCALE : i32 to f32
  %sum = arith.addf %hf, %bf : f32
  %scaled = arith.mulf %sum, %s : f32
  %zero = arith.constant 0.0 : f32
  %v = arith.select %flag, %scaled, %zero : f32
  kjit.store %v, %out[%i] : f32, !kjit.ptr<f32>, i32
  kjit.return
}
