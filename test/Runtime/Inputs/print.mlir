// A kernel whose first thread of each program prints; for print.test.
kjit.kernel @show(%x: !kjit.ptr<f32>, %n: i32, %flag: i1) {
  %pid = kjit.program_id x
  %tid = gpu.thread_id x
  %c0 = arith.constant 0 : index
  %first = arith.cmpi eq, %tid, %c0 : index
  scf.if %first {
    %v = kjit.load %x[%pid] : !kjit.ptr<f32>, i32 -> f32
    kjit.print "value: " %pid, %v, %n, %flag : i32, f32, i32, i1
  }
  kjit.return
}
