// Call cycles terminate, and every member of a cycle gets a record.
// RUN: kjit-opt %s --kjit-find-dependencies | FileCheck %s

// CHECK-LABEL: kjit.func @self(
// CHECK-SAME:    kjit.key = "{{[0-9a-f]+}}"
kjit.func @self(%n: i32) -> i32 {
  %r = kjit.call @self(%n) : (i32) -> i32
  kjit.return %r : i32
}

// CHECK-LABEL: kjit.func @even(
// CHECK-SAME:    kjit.used_globals = [{name = @LIMIT, value = 10 : i32}]
// CHECK-LABEL: kjit.func @odd(
// CHECK-SAME:    kjit.used_globals = [{name = @LIMIT, value = 10 : i32}]
kjit.global @LIMIT : i32 = 10
kjit.func @even(%n: i32) -> i32 {
  %r = kjit.call @odd(%n) : (i32) -> i32
  kjit.return %r : i32
}
kjit.func @odd(%n: i32) -> i32 {
  %l = kjit.get_global @LIMIT : i32
  %m = arith.addi %n, %l : i32
  %r = kjit.call @even(%m) : (i32) -> i32
  kjit.return %r : i32
}

// CHECK-LABEL: kjit.kernel @k(
// CHECK-SAME:    kjit.used_globals = [{name = @LIMIT, value = 10 : i32}]
kjit.kernel @k(%n: i32) {
  %a = kjit.call @even(%n) : (i32) -> i32
  %b = kjit.call @self(%a) : (i32) -> i32
  kjit.return
}
