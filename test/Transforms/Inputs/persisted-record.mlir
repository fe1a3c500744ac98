module {
  kjit.global @SCALE : f32 = 5.000000e-01
  kjit.global @SHIFT : f32 = 1.000000e+00
  kjit.func noinline @scale(%arg0: f32) -> f32 attributes {kjit.content_hash = "bee99adce50f397cb7d429f918eb1999a142b4aa159da20f6dc353e7eaced119", kjit.key = "c5f6b7e97bb6074fcae3c954692f6b0eed6aca1437ecde817b13000a2f631a81", kjit.used_globals = [{name = @SCALE, value = 5.000000e-01 : f32}, {name = @SHIFT, value = 1.000000e+00 : f32}]} {
    %0 = kjit.get_global @SCALE : f32
    %1 = kjit.get_global @SHIFT : f32
    %2 = math.fma %arg0, %0, %1 : f32
    kjit.return %2 : f32
  }
  kjit.kernel @scaled_residual(%x: !kjit.ptr<f32> {kjit.const}, %y: !kjit.ptr<f32>, %n: i32, %BLOCK: i32 {kjit.constexpr, kjit.default = 256 : i32}) attributes {kjit.content_hash = "f52696b0fc7bec489bb7f67299fc6c3fa724e19156cb8f160cc74d567309117c", kjit.key = "57505c0d63c3c308bac8ed92a9df8aaff52be05752122e47a6c2415dcdcca194", kjit.used_globals = []} {
    %0 = kjit.program_id x
    %thread_id_x = gpu.thread_id  x
    %block_dim_x = gpu.block_dim  x
    %1 = arith.index_cast %thread_id_x : index to i32
    %2 = arith.index_cast %block_dim_x : index to i32
    %3 = arith.muli %0, %BLOCK : i32
    scf.for %arg0 = %1 to %BLOCK step %2  : i32 {
      %4 = arith.addi %3, %arg0 : i32
      %5 = arith.cmpi slt, %4, %n : i32
      %6 = kjit.load %x[%4] mask %5 : !kjit.ptr<f32>, i32 -> f32
      %7 = kjit.load %y[%4] mask %5 : !kjit.ptr<f32>, i32 -> f32
      %8 = kjit.call @scale(%6) : (f32) -> f32
      %9 = arith.addf %7, %8 : f32
      kjit.store %9, %y[%4] mask %5 : f32, !kjit.ptr<f32>, i32
    }
    kjit.return
  }
}


// Examples/scaled_residual.mlir after `kjit-opt | kjit-opt
// --kjit-find-dependencies`, with the kernel's kjit.used_globals emptied
// although it calls @scale, whose record reads @SCALE and @SHIFT. Its
// content hash still matches. persisted-record.test edits it further.
// (These comments are at the end: records include start lines.)
