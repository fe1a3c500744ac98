// The workgroup limit's kernel: 16 GiB of workgroup memory.
memref.global "private" @big : memref<4294967296xf32, #gpu.address_space<workgroup>>
kjit.kernel @wg(%out: !kjit.ptr<f32>) {
  %tid_i = gpu.thread_id x
  %tid = arith.index_cast %tid_i : index to i32
  %big = memref.get_global @big : memref<4294967296xf32, #gpu.address_space<workgroup>>
  %c0 = arith.constant 0 : index
  %one = arith.constant 1.0 : f32
  memref.store %one, %big[%tid_i] : memref<4294967296xf32, #gpu.address_space<workgroup>>
  gpu.barrier
  %v = memref.load %big[%c0] : memref<4294967296xf32, #gpu.address_space<workgroup>>
  kjit.store %v, %out[%tid] : f32, !kjit.ptr<f32>, i32
  kjit.return
}
