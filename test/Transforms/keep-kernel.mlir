// kjit-keep-kernel erases every kernel but one; device functions and globals
// stay.
// RUN: kjit-opt %s --kjit-keep-kernel=kernel=add | FileCheck %s
// RUN: not kjit-opt %s --kjit-keep-kernel=kernel=mul 2>&1 | FileCheck %s --check-prefix=UNKNOWN
// RUN: not kjit-opt %s --kjit-keep-kernel 2>&1 | FileCheck %s --check-prefix=NONE

// UNKNOWN: error: kjit-keep-kernel: no kernel named '@mul'
// NONE: error: kjit-keep-kernel needs the kernel to keep (kernel=NAME)

// CHECK-LABEL: kjit.global @G : i32 = 1
kjit.global @G : i32 = 1

// CHECK-LABEL: kjit.func @helper(
kjit.func @helper(%v: i32) -> i32 {
  kjit.return %v : i32
}

// CHECK-LABEL: kjit.kernel @add(
kjit.kernel @add(%n: i32) {
  kjit.return
}

// CHECK-NOT: kjit.kernel @sub
kjit.kernel @sub(%n: i32) {
  kjit.return
}
