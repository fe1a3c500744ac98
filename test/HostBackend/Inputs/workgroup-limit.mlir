// Workgroup memory at and above the host target's 1 MiB limit.

// Exactly 1 MiB: accepted.
memref.global "private" @full : memref<262144xf32, #gpu.address_space<workgroup>>

// -----

// 16 GiB in one global.
memref.global "private" @big : memref<4294967296xf32, #gpu.address_space<workgroup>>

// -----

// Two globals of 768 KiB each: the second brings the total over.
memref.global "private" @first : memref<196608xf32, #gpu.address_space<workgroup>>
memref.global "private" @second : memref<196608xf32, #gpu.address_space<workgroup>>

// -----

// So large that the size would overflow 64 bits.
memref.global "private" @wide : memref<4294967296x4294967296x16xf32, #gpu.address_space<workgroup>>
