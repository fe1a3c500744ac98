// A loop that stores a[i + 1] from a[i]: the value stored in one iteration
// is the one loaded in the next (cuda-llvm-pipeline.test).
kjit.kernel @recur(%a: !kjit.ptr<f32>, %n: i32) {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %two = arith.constant 2.0 : f32
  scf.for %i = %c0 to %n step %c1 : i32 {
    %v = kjit.load %a[%i] : !kjit.ptr<f32>, i32 -> f32
    %w = arith.mulf %v, %two : f32
    %next = arith.addi %i, %c1 : i32
    kjit.store %w, %a[%next] : f32, !kjit.ptr<f32>, i32
  }
  kjit.return
}
