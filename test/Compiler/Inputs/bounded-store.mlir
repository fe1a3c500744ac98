// A kernel whose assert depends on an argument, so specialization cannot
// decide it and a debug build keeps it (cuda-sass.test).
kjit.kernel @bounded(%out: !kjit.ptr<i32>, %n: i32) {
  %pid = kjit.program_id x
  %ok = arith.cmpi slt, %pid, %n : i32
  kjit.assert %ok, "program id below n"
  kjit.store %pid, %out[%pid] : i32, !kjit.ptr<i32>, i32
  kjit.return
}
