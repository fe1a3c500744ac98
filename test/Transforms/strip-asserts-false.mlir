// An assert every thread of every program reaches (the kernel's entry
// block) whose condition folded to false is refused at its location,
// whether the asserts are erased or kept (debug mode): the kernel could
// only fail it, or run having broken its own precondition.
// RUN: not kjit-opt %s --kjit-strip-asserts 2>&1 | FileCheck %s
// RUN: not kjit-opt %s --kjit-strip-asserts=erase=false 2>&1 | FileCheck %s

// CHECK: strip-asserts-false.mlir:[[@LINE+3]]:3: error: always fails: its condition is false for this specialization ("runs two warpgroups (num_warps = 8)")
kjit.kernel @always() {
  %false = arith.constant false
  kjit.assert %false, "runs two warpgroups (num_warps = 8)"
  kjit.return
}
