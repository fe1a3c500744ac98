// Kernels for the fault tests: each does one thing a kernel must not, and
// the backend or the compiler must report it instead of dying with it.

// Out[0] = a / b (and a % b unsigned in @rem).
kjit.kernel @div(%out: !kjit.ptr<i32>, %a: i32, %b: i32) {
  %q = arith.divsi %a, %b : i32
  %c0 = arith.constant 0 : i32
  kjit.store %q, %out[%c0] : i32, !kjit.ptr<i32>, i32
  kjit.return
}

kjit.kernel @rem(%out: !kjit.ptr<i32>, %a: i32, %b: i32) {
  %q = arith.remui %a, %b : i32
  %c0 = arith.constant 0 : i32
  kjit.store %q, %out[%c0] : i32, !kjit.ptr<i32>, i32
  kjit.return
}

// Thread i of program p stores 1 at p * threads + i when that is
// <= n (off by one: `sle`), and copies in[i] to out[i] below n.
kjit.kernel @oob_store(%out: !kjit.ptr<f32>, %n: i32) {
  %pid = kjit.program_id x
  %tid_i = gpu.thread_id x
  %bd_i = gpu.block_dim x
  %tid = arith.index_cast %tid_i : index to i32
  %bd = arith.index_cast %bd_i : index to i32
  %base = arith.muli %pid, %bd : i32
  %i = arith.addi %base, %tid : i32
  %ok = arith.cmpi sle, %i, %n : i32
  %one = arith.constant 1.0 : f32
  kjit.store %one, %out[%i] mask %ok : f32, !kjit.ptr<f32>, i32
  kjit.return
}

kjit.kernel @oob_load(%in: !kjit.ptr<f32> {kjit.const}, %out: !kjit.ptr<f32>,
                      %n: i32) {
  %tid_i = gpu.thread_id x
  %tid = arith.index_cast %tid_i : index to i32
  %ok = arith.cmpi slt, %tid, %n : i32
  %v = kjit.load %in[%tid] mask %ok : !kjit.ptr<f32>, i32 -> f32
  kjit.store %v, %out[%tid] mask %ok : f32, !kjit.ptr<f32>, i32
  kjit.return
}

// Workgroup memory of 32 slots, indexed by the thread id.
memref.global "private" @slots : memref<32xf32, #gpu.address_space<workgroup>>
kjit.kernel @wg_index(%out: !kjit.ptr<f32>) {
  %tid_i = gpu.thread_id x
  %tid = arith.index_cast %tid_i : index to i32
  %slots = memref.get_global @slots : memref<32xf32, #gpu.address_space<workgroup>>
  %one = arith.constant 1.0 : f32
  memref.store %one, %slots[%tid_i] : memref<32xf32, #gpu.address_space<workgroup>>
  gpu.barrier
  %c0 = arith.constant 0 : index
  %v = memref.load %slots[%c0] : memref<32xf32, #gpu.address_space<workgroup>>
  kjit.store %v, %out[%tid] : f32, !kjit.ptr<f32>, i32
  kjit.return
}

// Recursion n deep (`m - s` keeps LLVM from making it a loop).
kjit.func noinline @down(%n: i32) -> i32 {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %done = arith.cmpi sle, %n, %c0 : i32
  %r = scf.if %done -> (i32) {
    scf.yield %c0 : i32
  } else {
    %m = arith.subi %n, %c1 : i32
    %s = kjit.call @down(%m) : (i32) -> i32
    %t = arith.subi %m, %s : i32
    scf.yield %t : i32
  }
  kjit.return %r : i32
}

kjit.kernel @rec(%out: !kjit.ptr<i32>, %n: i32) {
  %tid_i = gpu.thread_id x
  %tid = arith.index_cast %tid_i : index to i32
  %r = kjit.call @down(%n) : (i32) -> i32
  kjit.store %r, %out[%tid] : i32, !kjit.ptr<i32>, i32
  kjit.return
}

// With n = 255 the loop never ends.
kjit.kernel @spin(%out: !kjit.ptr<i32>, %n: i32) {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %r = scf.while (%i = %c0) : (i32) -> i32 {
    %go = arith.cmpi sge, %i, %c0 : i32
    scf.condition(%go) %i : i32
  } do {
  ^bb0(%j: i32):
    %k = arith.addi %j, %c1 : i32
    %m = arith.andi %k, %n : i32
    scf.yield %m : i32
  }
  kjit.store %r, %out[%c0] : i32, !kjit.ptr<i32>, i32
  kjit.return
}
