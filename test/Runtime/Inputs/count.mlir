// o[0] += 1 and o[1] += C by thread 0 of the one program: how many launches
// ran, and of which configuration (the autotuner's tests).
kjit.kernel @count(%o: !kjit.ptr<i32>, %n: i32, %C: i32 {kjit.constexpr}) {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %i0 = arith.constant 0 : index
  %tid = gpu.thread_id x
  %first = arith.cmpi eq, %tid, %i0 : index
  %launches = kjit.load %o[%c0] mask %first : !kjit.ptr<i32>, i32 -> i32
  %more = arith.addi %launches, %c1 : i32
  kjit.store %more, %o[%c0] mask %first : i32, !kjit.ptr<i32>, i32
  %sum = kjit.load %o[%c1] mask %first : !kjit.ptr<i32>, i32 -> i32
  %added = arith.addi %sum, %C : i32
  kjit.store %added, %o[%c1] mask %first : i32, !kjit.ptr<i32>, i32
  kjit.return
}
