// Parameters whose launch signature type their IR type does not spell: a
// read-only tensor for a plain pointer (*kfp32), None (*i8) and an integer
// above the i64 range for an unannotated parameter (u64). For
// host-pipeline.test.
kjit.kernel @kinds(%src: !kjit.ptr<f32>, %bias: !kjit.ptr<f32>,
                   %big: !kjit.any, %out: !kjit.ptr<i64>) {
  %pid = kjit.program_id x
  %tid = gpu.thread_id x
  %c0 = arith.constant 0 : index
  %first = arith.cmpi eq, %tid, %c0 : index
  scf.if %first {
    %b = kjit.cast %big : !kjit.any to i64
    %v = kjit.load %src[%pid] : !kjit.ptr<f32>, i32 -> f32
    %vi = arith.fptosi %v : f32 to i64
    %r = arith.addi %b, %vi : i64
    kjit.store %r, %out[%pid] : i64, !kjit.ptr<i64>, i32
  }
  kjit.return
}
