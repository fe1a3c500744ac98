// out = a * b + c, written as a separate multiply and add: whether they fuse
// into one rounding is the enable_fp_fusion launch option's business.
kjit.kernel @mad(%a: !kjit.ptr<f32> {kjit.const}, %b: !kjit.ptr<f32> {kjit.const},
                 %c: !kjit.ptr<f32> {kjit.const}, %out: !kjit.ptr<f32>, %n: i32) {
  %pid = kjit.program_id x
  %tid_index = gpu.thread_id x
  %threads_index = gpu.block_dim x
  %tid = arith.index_cast %tid_index : index to i32
  %threads = arith.index_cast %threads_index : index to i32
  %start = arith.muli %pid, %threads : i32
  %i = arith.addi %start, %tid : i32
  %in = arith.cmpi slt, %i, %n : i32
  scf.if %in {
    %av = kjit.load %a[%i] : !kjit.ptr<f32>, i32 -> f32
    %bv = kjit.load %b[%i] : !kjit.ptr<f32>, i32 -> f32
    %cv = kjit.load %c[%i] : !kjit.ptr<f32>, i32 -> f32
    %ab = arith.mulf %av, %bv : f32
    %r = arith.addf %ab, %cv : f32
    kjit.store %r, %out[%i] : f32, !kjit.ptr<f32>, i32
  }
  kjit.return
}

// The same with `fast` flags: without fusion they lose `contract` (which
// `fast` includes) and keep the others.
kjit.kernel @mad_fast(%a: !kjit.ptr<f32> {kjit.const}, %b: !kjit.ptr<f32> {kjit.const},
                      %c: !kjit.ptr<f32> {kjit.const}, %out: !kjit.ptr<f32>, %n: i32) {
  %pid = kjit.program_id x
  %av = kjit.load %a[%pid] : !kjit.ptr<f32>, i32 -> f32
  %bv = kjit.load %b[%pid] : !kjit.ptr<f32>, i32 -> f32
  %cv = kjit.load %c[%pid] : !kjit.ptr<f32>, i32 -> f32
  %ab = arith.mulf %av, %bv fastmath<fast> : f32
  %r = arith.addf %ab, %cv fastmath<fast> : f32
  kjit.store %r, %out[%pid] : f32, !kjit.ptr<f32>, i32
  kjit.return
}
