// kjit-convert-host-to-llvm, one minimal case per pattern, on IR that is
// already specialized and prepared. Errors: convert-host-to-llvm-invalid.mlir.
// RUN: kjit-opt %s --split-input-file --kjit-convert-host-to-llvm | FileCheck %s

// The signature: the thread comes last; D is llvm.align on a pointer and an
// assumption on an integer. The entry loads each argument through args[i]
// (an i1 arrives as a byte) and the signature string spells each launch
// type: *k for kjit.const, kjit.signature_type where specialization set it.
// CHECK-LABEL: llvm.func internal @signature(
// CHECK-SAME:    %[[X:[^:]*]]: !llvm.ptr {llvm.align = 16 : i64}, %[[Y:[^:]*]]: !llvm.ptr, %[[N:[^:]*]]: i32, %[[FLAG:[^:]*]]: i1, %[[BIG:[^:]*]]: i64, %[[THREAD:[^:]*]]: !llvm.ptr)
// CHECK:         %[[MASK:.*]] = llvm.mlir.constant(15 : i32) : i32
// CHECK:         %[[LOW:.*]] = llvm.and %[[N]], %[[MASK]] : i32
// CHECK:         %[[ZERO:.*]] = llvm.mlir.constant(0 : i32) : i32
// CHECK:         %[[OK:.*]] = llvm.icmp "eq" %[[LOW]], %[[ZERO]] : i32
// CHECK:         llvm.intr.assume %[[OK]] : i1
// CHECK-LABEL: llvm.func @kjit_host_entry_signature(
// CHECK-SAME:    %[[ETHREAD:[^:]*]]: !llvm.ptr, %[[ARGS:[^:]*]]: !llvm.ptr)
// CHECK:         %[[SLOT0:.*]] = llvm.getelementptr %[[ARGS]][0] : (!llvm.ptr) -> !llvm.ptr, !llvm.ptr
// CHECK:         %[[ADDR0:.*]] = llvm.load %[[SLOT0]] : !llvm.ptr -> !llvm.ptr
// CHECK:         %[[A0:.*]] = llvm.load %[[ADDR0]] : !llvm.ptr -> !llvm.ptr
// CHECK:         %[[SLOT3:.*]] = llvm.getelementptr %[[ARGS]][3] : (!llvm.ptr) -> !llvm.ptr, !llvm.ptr
// CHECK:         %[[ADDR3:.*]] = llvm.load %[[SLOT3]] : !llvm.ptr -> !llvm.ptr
// CHECK:         %[[BYTE:.*]] = llvm.load %[[ADDR3]] : !llvm.ptr -> i8
// CHECK:         %[[A3:.*]] = llvm.trunc %[[BYTE]] : i8 to i1
// CHECK:         llvm.call @signature(%[[A0]], %{{.*}}, %{{.*}}, %[[A3]], %{{.*}}, %[[ETHREAD]])
// CHECK:       llvm.mlir.global external constant @kjit_host_flags_signature(0 : i32)
// CHECK:       llvm.mlir.global external constant @kjit_host_signature_signature("*kfp32,*kfp32,i32,i1,u64\00")
// CHECK:       llvm.mlir.global external constant @kjit_host_abi_version(1 : i32)
kjit.kernel @signature(%x: !kjit.ptr<f32> {kjit.const, kjit.divisibility = 16 : i64},
                       %y: !kjit.ptr<f32> {kjit.signature_type = #kjit.signature<const !kjit.ptr<f32>>},
                       %n: i32 {kjit.divisibility = 16 : i64},
                       %flag: i1,
                       %big: i64 {kjit.signature_type = #kjit.signature<ui64>}) {
  kjit.return
}

// -----

// A kernel without parameters has an empty signature.
// CHECK-LABEL: llvm.func internal @empty(
// CHECK:       llvm.mlir.global external constant @kjit_host_signature_empty("\00")
kjit.kernel @empty() {
  kjit.return
}

// -----

// Program ids and counts are loads of thread->program_id[axis] (field 2)
// and thread->num_programs[axis] (field 3).
// CHECK-LABEL: llvm.func internal @program_ids(
// CHECK-SAME:    %[[OUT:[^:]*]]: !llvm.ptr, %[[THREAD:[^:]*]]: !llvm.ptr)
// CHECK:         %[[PX:.*]] = llvm.getelementptr %[[THREAD]][0, 2, 0] : (!llvm.ptr) -> !llvm.ptr, !llvm.struct<(array<3 x i32>, array<3 x i32>, array<3 x i32>, array<3 x i32>, ptr, ptr, ptr)>
// CHECK:         %[[X:.*]] = llvm.load %[[PX]] : !llvm.ptr -> i32
// CHECK:         %[[PY:.*]] = llvm.getelementptr %[[THREAD]][0, 2, 1]
// CHECK:         %[[Y:.*]] = llvm.load %[[PY]] : !llvm.ptr -> i32
// CHECK:         %[[PZ:.*]] = llvm.getelementptr %[[THREAD]][0, 2, 2]
// CHECK:         %[[Z:.*]] = llvm.load %[[PZ]] : !llvm.ptr -> i32
// CHECK:         %[[PN:.*]] = llvm.getelementptr %[[THREAD]][0, 3, 1]
// CHECK:         %[[NY:.*]] = llvm.load %[[PN]] : !llvm.ptr -> i32
// CHECK:         llvm.store %[[X]],
// CHECK:         llvm.store %[[Y]],
// CHECK:         llvm.store %[[Z]],
// CHECK:         llvm.store %[[NY]],
kjit.kernel @program_ids(%out: !kjit.ptr<i32>) {
  %x = kjit.program_id x
  %y = kjit.program_id y
  %z = kjit.program_id z
  %n = kjit.num_programs y
  %c0 = arith.constant 0 : i32
  kjit.store %x, %out[%c0] : i32, !kjit.ptr<i32>, i32
  kjit.store %y, %out[%c0] : i32, !kjit.ptr<i32>, i32
  kjit.store %z, %out[%c0] : i32, !kjit.ptr<i32>, i32
  kjit.store %n, %out[%c0] : i32, !kjit.ptr<i32>, i32
  kjit.return
}

// -----

// gpu ids are the same fields (thread_id 0, block_dim 1, block_id 2,
// grid_dim 3), zero-extended to index.
// CHECK-LABEL: llvm.func internal @gpu_ids(
// CHECK-SAME:    %[[THREAD:[^:]*]]: !llvm.ptr)
// CHECK:         %[[PT:.*]] = llvm.getelementptr %[[THREAD]][0, 0, 2]
// CHECK:         %[[T:.*]] = llvm.load %[[PT]] : !llvm.ptr -> i32
// CHECK:         llvm.zext %[[T]] : i32 to i64
// CHECK:         llvm.getelementptr %[[THREAD]][0, 1, 0]
// CHECK:         llvm.getelementptr %[[THREAD]][0, 2, 1]
// CHECK:         llvm.getelementptr %[[THREAD]][0, 3, 0]
kjit.kernel @gpu_ids() {
  %t = gpu.thread_id z
  %d = gpu.block_dim x
  %b = gpu.block_id y
  %g = gpu.grid_dim x
  kjit.print "" %t, %d, %b, %g : index, index, index, index
  kjit.return
}

// -----

// A barrier calls slot 0 of the runtime table, and the kernel's flags say it
// needs fibers.
// CHECK-LABEL: llvm.func internal @barrier(
// CHECK-SAME:    %[[THREAD:[^:]*]]: !llvm.ptr)
// CHECK:         %[[PRT:.*]] = llvm.getelementptr %[[THREAD]][0, 4]
// CHECK:         %[[RT:.*]] = llvm.load %[[PRT]] : !llvm.ptr -> !llvm.ptr
// CHECK:         %[[PSLOT:.*]] = llvm.getelementptr %[[RT]][0, 0] : (!llvm.ptr) -> !llvm.ptr, !llvm.struct<(ptr, ptr, ptr, ptr, ptr)>
// CHECK:         %[[FN:.*]] = llvm.load %[[PSLOT]] : !llvm.ptr -> !llvm.ptr
// CHECK:         llvm.call %[[FN]](%[[THREAD]]) : !llvm.ptr, (!llvm.ptr) -> ()
// CHECK:       llvm.mlir.global external constant @kjit_host_flags_barrier(1 : i32)
kjit.kernel @barrier() {
  gpu.barrier
  kjit.return
}

// -----

// A warp barrier calls slot 4 (ABI 3): the kernel needs fibers too, and the
// object says it needs a backend of ABI 3.
// CHECK-LABEL: llvm.func internal @warp_barrier(
// CHECK-SAME:    %[[THREAD:[^:]*]]: !llvm.ptr)
// CHECK:         %[[PRT:.*]] = llvm.getelementptr %[[THREAD]][0, 4]
// CHECK:         %[[RT:.*]] = llvm.load %[[PRT]] : !llvm.ptr -> !llvm.ptr
// CHECK:         %[[PSLOT:.*]] = llvm.getelementptr %[[RT]][0, 4] : (!llvm.ptr) -> !llvm.ptr, !llvm.struct<(ptr, ptr, ptr, ptr, ptr)>
// CHECK:         %[[FN:.*]] = llvm.load %[[PSLOT]] : !llvm.ptr -> !llvm.ptr
// CHECK:         llvm.call %[[FN]](%[[THREAD]]) : !llvm.ptr, (!llvm.ptr) -> ()
// CHECK:       llvm.mlir.global external constant @kjit_host_flags_warp_barrier(1 : i32)
// CHECK:       llvm.mlir.global external constant @kjit_host_abi_version(3 : i32)
kjit.kernel @warp_barrier() {
  kjit.warp_barrier
  kjit.return
}

// -----

// Each print kind: {kind, bits_width, bits} per value in an array allocated
// in the entry block, then slot 1 with the prefix and the count. Pointers
// are kind 3 (ptrtoint), floats kind 2 (as a double's bits), i1 kind 1
// (zero-extended), other integers kind 0 (sign-extended).
// CHECK-LABEL: llvm.func internal @print_kinds(
// CHECK-SAME:    %[[P:[^:]*]]: !llvm.ptr, %[[H:[^:]*]]: f16, %[[F:[^:]*]]: f32, %[[D:[^:]*]]: f64, %[[B:[^:]*]]: i1, %[[S:[^:]*]]: i8, %[[L:[^:]*]]: i64, %[[THREAD:[^:]*]]: !llvm.ptr)
// CHECK:         %[[COUNT:.*]] = llvm.mlir.constant(7 : i64) : i64
// CHECK:         %[[ARRAY:.*]] = llvm.alloca %[[COUNT]] x !llvm.struct<(i32, i32, i64)>
// CHECK:         %[[PREFIX:.*]] = llvm.mlir.addressof @kjit_str_{{[0-9A-F]+}} : !llvm.ptr
// CHECK:         %[[PREFIXLEN:.*]] = llvm.mlir.constant(3 : i64) : i64
// CHECK:         %[[PBITS:.*]] = llvm.ptrtoint %[[P]] : !llvm.ptr to i64
// CHECK:         %[[PKIND:.*]] = llvm.mlir.constant(3 : i32) : i32
// CHECK:         llvm.store %[[PKIND]],
// CHECK:         %[[PWIDTH:.*]] = llvm.mlir.constant(64 : i32) : i32
// CHECK:         llvm.store %[[PWIDTH]],
// CHECK:         llvm.store %[[PBITS]],
// CHECK:         %[[HWIDE:.*]] = llvm.fpext %[[H]] : f16 to f64
// CHECK:         %[[HBITS:.*]] = llvm.bitcast %[[HWIDE]] : f64 to i64
// CHECK:         %[[HKIND:.*]] = llvm.mlir.constant(2 : i32) : i32
// CHECK:         llvm.store %[[HKIND]],
// CHECK:         %[[HWIDTH:.*]] = llvm.mlir.constant(16 : i32) : i32
// CHECK:         llvm.store %[[HWIDTH]],
// CHECK:         llvm.store %[[HBITS]],
// CHECK:         %[[FWIDE:.*]] = llvm.fpext %[[F]] : f32 to f64
// CHECK:         llvm.bitcast %[[FWIDE]] : f64 to i64
// CHECK:         %[[DBITS:.*]] = llvm.bitcast %[[D]] : f64 to i64
// CHECK:         llvm.store %[[DBITS]],
// CHECK:         %[[BBITS:.*]] = llvm.zext %[[B]] : i1 to i64
// CHECK:         %[[BKIND:.*]] = llvm.mlir.constant(1 : i32) : i32
// CHECK:         llvm.store %[[BKIND]],
// CHECK:         %[[BWIDTH:.*]] = llvm.mlir.constant(1 : i32) : i32
// CHECK:         llvm.store %[[BWIDTH]],
// CHECK:         llvm.store %[[BBITS]],
// CHECK:         %[[SBITS:.*]] = llvm.sext %[[S]] : i8 to i64
// CHECK:         %[[SKIND:.*]] = llvm.mlir.constant(0 : i32) : i32
// CHECK:         llvm.store %[[SKIND]],
// CHECK:         %[[SWIDTH:.*]] = llvm.mlir.constant(8 : i32) : i32
// CHECK:         llvm.store %[[SWIDTH]],
// CHECK:         llvm.store %[[SBITS]],
// CHECK:         %[[LSLOT:.*]] = llvm.getelementptr %[[ARRAY]][6, 2]
// CHECK:         llvm.store %[[L]], %[[LSLOT]] : i64, !llvm.ptr
// CHECK:         %[[N:.*]] = llvm.mlir.constant(7 : i64) : i64
// CHECK:         %[[PRT:.*]] = llvm.getelementptr %[[THREAD]][0, 4]
// CHECK:         %[[RT:.*]] = llvm.load %[[PRT]]
// CHECK:         %[[PSLOT:.*]] = llvm.getelementptr %[[RT]][0, 1] : (!llvm.ptr) -> !llvm.ptr, !llvm.struct<(ptr, ptr, ptr, ptr, ptr)>
// CHECK:         %[[FN:.*]] = llvm.load %[[PSLOT]]
// CHECK:         llvm.call %[[FN]](%[[THREAD]], %[[PREFIX]], %[[PREFIXLEN]], %[[ARRAY]], %[[N]])
kjit.kernel @print_kinds(%p: !kjit.ptr<f32>, %h: f16, %f: f32, %d: f64,
                         %b: i1, %s: i8, %l: i64) {
  kjit.print "v: " %p, %h, %f, %d, %b, %s, %l : !kjit.ptr<f32>, f16, f32, f64, i1, i8, i64
  kjit.return
}

// -----

// A print of no values passes a null array.
// CHECK-LABEL: llvm.func internal @print_nothing(
// CHECK-SAME:    %[[THREAD:[^:]*]]: !llvm.ptr)
// CHECK-NOT:     llvm.alloca
// CHECK:         %[[PREFIX:.*]] = llvm.mlir.addressof @kjit_str_{{[0-9A-F]+}} : !llvm.ptr
// CHECK:         %[[LEN:.*]] = llvm.mlir.constant(7 : i64) : i64
// CHECK:         %[[NULL:.*]] = llvm.mlir.zero : !llvm.ptr
// CHECK:         %[[N:.*]] = llvm.mlir.constant(0 : i64) : i64
// CHECK:         llvm.call %{{.*}}(%[[THREAD]], %[[PREFIX]], %[[LEN]], %[[NULL]], %[[N]])
kjit.kernel @print_nothing() {
  kjit.print "nothing"
  kjit.return
}

// -----

// An assert that is still there is checked: a failure calls slot 2 with the
// message, which does not return.
// CHECK-LABEL: llvm.func internal @check(
// CHECK-SAME:    %[[OK:[^:]*]]: i1, %[[THREAD:[^:]*]]: !llvm.ptr)
// CHECK:         llvm.cond_br %[[OK]], ^[[PASS:.*]], ^[[FAIL:[^ ]*]]
// CHECK:       ^[[FAIL]]:
// CHECK:         %[[MSG:.*]] = llvm.mlir.addressof @kjit_str_{{[0-9A-F]+}} : !llvm.ptr
// CHECK:         %[[LEN:.*]] = llvm.mlir.constant(6 : i64) : i64
// CHECK:         %[[PSLOT:.*]] = llvm.getelementptr %{{.*}}[0, 2] : (!llvm.ptr) -> !llvm.ptr, !llvm.struct<(ptr, ptr, ptr, ptr, ptr)>
// CHECK:         %[[FN:.*]] = llvm.load %[[PSLOT]]
// CHECK:         llvm.call %[[FN]](%[[THREAD]], %[[MSG]], %[[LEN]])
// CHECK-NEXT:    llvm.unreachable
// CHECK:       ^[[PASS]]:
// CHECK-NEXT:    llvm.return
kjit.kernel @check(%ok: i1) {
  kjit.assert %ok, "not ok"
  kjit.return
}

// -----

// A call with several results packs them in a struct; device functions take
// the thread last too, and noinline stays.
// CHECK-LABEL: llvm.func internal @pair(
// CHECK-SAME:    %[[A:[^:]*]]: i32, %{{[^:]*}}: !llvm.ptr) -> !llvm.struct<(i32, f32)>
// CHECK:         %[[F:.*]] = llvm.sitofp %[[A]] : i32 to f32
// CHECK:         %[[P:.*]] = llvm.mlir.poison : !llvm.struct<(i32, f32)>
// CHECK:         %[[P0:.*]] = llvm.insertvalue %[[A]], %[[P]][0]
// CHECK:         %[[P1:.*]] = llvm.insertvalue %[[F]], %[[P0]][1]
// CHECK:         llvm.return %[[P1]] : !llvm.struct<(i32, f32)>
// CHECK-LABEL: llvm.func internal @single(
// CHECK-SAME:    attributes {no_inline, passthrough = {{.*}}"probe-stack", "inline-asm"{{.*}}}
// CHECK-LABEL: llvm.func internal @calls(
// CHECK-SAME:    %[[OUT:[^:]*]]: !llvm.ptr, %[[X:[^:]*]]: i32, %[[THREAD:[^:]*]]: !llvm.ptr)
// CHECK:         %[[R:.*]] = llvm.call @pair(%[[X]], %[[THREAD]]) : (i32, !llvm.ptr) -> !llvm.struct<(i32, f32)>
// CHECK:         %[[I:.*]] = llvm.extractvalue %[[R]][0]
// CHECK:         %[[V:.*]] = llvm.extractvalue %[[R]][1]
// CHECK:         %[[J:.*]] = llvm.call @single(%[[I]], %[[THREAD]]) : (i32, !llvm.ptr) -> i32
// CHECK:         %[[ADDR:.*]] = llvm.getelementptr %[[OUT]][%[[J]]]
// CHECK:         llvm.store %[[V]], %[[ADDR]]
kjit.func @pair(%a: i32) -> (i32, f32) {
  %f = arith.sitofp %a : i32 to f32
  kjit.return %a, %f : i32, f32
}

kjit.func noinline @single(%a: i32) -> i32 {
  kjit.return %a : i32
}

kjit.kernel @calls(%out: !kjit.ptr<f32>, %x: i32) {
  %i, %f = kjit.call @pair(%x) : (i32) -> (i32, f32)
  %j = kjit.call @single(%i) : (i32) -> i32
  kjit.store %f, %out[%j] : f32, !kjit.ptr<f32>, i32
  kjit.return
}

// -----

// Loads and stores: a GEP over the element type, an i1 stored as a byte,
// vectors as LLVM vectors, the element's alignment; kjit.null is a zero
// pointer.
// CHECK-LABEL: llvm.func internal @memory(
// CHECK-SAME:    %[[BITS:[^:]*]]: !llvm.ptr, %[[V:[^:]*]]: !llvm.ptr, %[[I:[^:]*]]: i32, %{{[^:]*}}: !llvm.ptr)
// CHECK:         %[[BADDR:.*]] = llvm.getelementptr %[[BITS]][%[[I]]] : (!llvm.ptr, i32) -> !llvm.ptr, i8
// CHECK:         %[[BYTE:.*]] = llvm.load %[[BADDR]] {alignment = 1 : i64} : !llvm.ptr -> i8
// CHECK:         %[[B:.*]] = llvm.trunc %[[BYTE]] : i8 to i1
// CHECK:         %[[SADDR:.*]] = llvm.getelementptr %[[BITS]][%[[I]]] : (!llvm.ptr, i32) -> !llvm.ptr, i8
// CHECK:         %[[WIDE:.*]] = llvm.zext %[[B]] : i1 to i8
// CHECK:         llvm.store %[[WIDE]], %[[SADDR]] {alignment = 1 : i64} : i8, !llvm.ptr
// CHECK:         %[[VADDR:.*]] = llvm.getelementptr %[[V]][%[[I]]] : (!llvm.ptr, i32) -> !llvm.ptr, f32
// CHECK:         %[[W:.*]] = llvm.load %[[VADDR]] {alignment = 4 : i64} : !llvm.ptr -> vector<4xf32>
// CHECK:         llvm.store %[[W]], %{{.*}} {alignment = 4 : i64} : vector<4xf32>, !llvm.ptr
// CHECK:         %[[NULL:.*]] = llvm.mlir.zero : !llvm.ptr
// CHECK:         llvm.getelementptr %[[NULL]][%[[I]]]
kjit.kernel @memory(%bits: !kjit.ptr<i1>, %v: !kjit.ptr<f32>, %i: i32) {
  %b = kjit.load %bits[%i] : !kjit.ptr<i1>, i32 -> i1
  kjit.store %b, %bits[%i] : i1, !kjit.ptr<i1>, i32
  %w = kjit.load %v[%i] : !kjit.ptr<f32>, i32 -> vector<4xf32>
  kjit.store %w, %v[%i] : vector<4xf32>, !kjit.ptr<f32>, i32
  %null = kjit.null : !kjit.ptr<f32>
  %z = kjit.load %null[%i] : !kjit.ptr<f32>, i32 -> f32
  kjit.store %z, %v[%i] : f32, !kjit.ptr<f32>, i32
  kjit.return
}

// -----

// Globals are baked in before the lowering (kjit-bake-globals); the
// lowering drops the kjit.global operations.
// CHECK-LABEL: module {
// CHECK-NOT:     @SCALE
// CHECK:         llvm.func internal @no_reads(
kjit.global @SCALE : f32 = 5.000000e-01

kjit.kernel @no_reads() {
  kjit.return
}

// -----

// Workgroup memory is a thread-local global reached through an out-of-line
// accessor (docs/HostTarget.md says why).
// CHECK-LABEL: llvm.mlir.global private thread_local @tile()
// CHECK-LABEL: llvm.func internal @workgroup(
// CHECK:         %[[TILE:.*]] = llvm.call @__kjit_workgroup_tile() : () -> !llvm.ptr
// CHECK:         llvm.getelementptr %[[TILE]][0, 0]
// CHECK-LABEL: llvm.func hidden @__kjit_workgroup_tile() -> !llvm.ptr attributes {no_inline, passthrough = ["nounwind", "willreturn"]}
// CHECK:         %[[ADDR:.*]] = llvm.mlir.addressof @tile : !llvm.ptr
// CHECK:         %[[OPAQUE:.*]] = llvm.inline_asm "", "=r,0" %[[ADDR]] : (!llvm.ptr) -> !llvm.ptr
// CHECK:         llvm.return %[[OPAQUE]] : !llvm.ptr
memref.global "private" @tile : memref<16xf32, #gpu.address_space<workgroup>>

kjit.kernel @workgroup(%v: !kjit.ptr<f32>) {
  %m = memref.get_global @tile : memref<16xf32, #gpu.address_space<workgroup>>
  %c0 = arith.constant 0 : index
  %x = memref.load %m[%c0] : memref<16xf32, #gpu.address_space<workgroup>>
  %i = arith.constant 0 : i32
  kjit.store %x, %v[%i] : f32, !kjit.ptr<f32>, i32
  kjit.return
}

// -----

// scf is lowered to cf first (here with no arith operation in the input).
// CHECK-LABEL: llvm.func internal @loop(
// CHECK-SAME:    %[[OUT:[^:]*]]: !llvm.ptr, %[[LO:[^:]*]]: i32, %[[HI:[^:]*]]: i32, %[[STEP:[^:]*]]: i32, %{{[^:]*}}: !llvm.ptr)
// CHECK:         llvm.br ^[[HEAD:.*]](%[[LO]] : i32)
// CHECK:       ^[[HEAD]](%[[I:.*]]: i32):
// CHECK:         %[[MORE:.*]] = llvm.icmp "slt" %[[I]], %[[HI]] : i32
// CHECK:         llvm.cond_br %[[MORE]]
// CHECK:         %[[NEXT:.*]] = llvm.add %[[I]], %[[STEP]] : i32
// CHECK:         llvm.br ^[[HEAD]](%[[NEXT]] : i32)
kjit.kernel @loop(%out: !kjit.ptr<i32>, %lo: i32, %hi: i32, %step: i32) {
  scf.for %i = %lo to %hi step %step : i32 {
    kjit.store %i, %out[%i] : i32, !kjit.ptr<i32>, i32
  }
  kjit.return
}
