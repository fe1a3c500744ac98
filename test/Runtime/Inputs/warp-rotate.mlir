// Each warp rotates its threads' values by one lane through workgroup
// memory, `rounds` times for warp 0 and once for the others, meeting at a
// warp barrier after each write and each read: warps do not wait for each
// other. Threads of warp 0 at or past lane `cut` return first.
memref.global "private" @lanes : memref<64xi32, #gpu.address_space<workgroup>>
kjit.kernel @rotate(%out: !kjit.ptr<i32>, %rounds: i32, %cut: i32) {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %c31 = arith.constant 31 : i32
  %c32 = arith.constant 32 : i32
  %lanes = memref.get_global @lanes : memref<64xi32, #gpu.address_space<workgroup>>
  %tid = gpu.thread_id x
  %t = arith.index_cast %tid : index to i32
  %warp = arith.divui %t, %c32 : i32
  %lane = arith.remui %t, %c32 : i32
  %first = arith.cmpi eq, %warp, %c0 : i32
  %past = arith.cmpi sge, %lane, %cut : i32
  %leave = arith.andi %first, %past : i1
  %n = arith.select %first, %rounds, %c1 : i32
  %base = arith.subi %t, %lane : i32
  %next_lane = arith.addi %lane, %c1 : i32
  %wrapped = arith.andi %next_lane, %c31 : i32
  %from_i32 = arith.addi %base, %wrapped : i32
  %from = arith.index_cast %from_i32 : i32 to index
  %true = arith.constant true
  %stay = arith.xori %leave, %true : i1
  scf.if %stay {
  %last = scf.for %i = %c0 to %n step %c1 iter_args(%v = %t) -> (i32) : i32 {
    memref.store %v, %lanes[%tid] : memref<64xi32, #gpu.address_space<workgroup>>
    kjit.warp_barrier
    %got = memref.load %lanes[%from] : memref<64xi32, #gpu.address_space<workgroup>>
    kjit.warp_barrier
    scf.yield %got : i32
  }
  kjit.store %last, %out[%t] : i32, !kjit.ptr<i32>, i32
  }
  kjit.return
}
