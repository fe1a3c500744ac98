// Every verifier and parser message of the matrix-unit types and operations.
// RUN: kjit-opt %s --split-input-file --verify-diagnostics

// expected-error @below {{'!kjit.tile' element type is 'f32'; the matrix units take bf16 or f16}}
kjit.kernel @k(%t: !kjit.tile<64x64xf32>) { kjit.return }

// -----

// expected-error @below {{'!kjit.tensor_desc' dimension 512 is outside 1 to 256}}
kjit.kernel @k(%t: !kjit.tensor_desc<512x64xbf16>) { kjit.return }

// -----

// expected-error @below {{'!kjit.tile' rows of 4 elements are 8 bytes, not a multiple of 16}}
kjit.kernel @k(%t: !kjit.tile<64x4xbf16>) { kjit.return }

// -----

// expected-error @below {{'!kjit.tile' has 3 dimensions; it takes two (rows x columns)}}
kjit.kernel @k(%t: !kjit.tile<2x64x64xbf16>) { kjit.return }

// -----

kjit.kernel @k(%a: !kjit.ptr<f16>, %n: i32) {
  %one = arith.constant 1 : i32
  // expected-error @below {{'kjit.tensor_desc' op describes 'bf16' tiles of a '!kjit.ptr<f16>' tensor}}
  %d = kjit.tensor_desc %a shape [%n, %n] strides [%n, %one]
      : !kjit.ptr<f16> -> !kjit.tensor_desc<64x64xbf16>
  kjit.return
}

// -----

kjit.kernel @k(%a: !kjit.ptr<bf16>, %n: i32) {
  %one = arith.constant 1 : i32
  // expected-error @below {{'kjit.tensor_desc' op takes two sizes and two strides (a matrix), got 1 and 2}}
  %d = kjit.tensor_desc %a shape [%n] strides [%n, %one]
      : !kjit.ptr<bf16> -> !kjit.tensor_desc<64x64xbf16>
  kjit.return
}

// -----

kjit.kernel @k(%a: !kjit.ptr<bf16>, %n: i32) {
  // expected-error @below {{'kjit.tensor_desc' op innermost stride is not the constant 1: tiles are read from row-major matrices}}
  %d = kjit.tensor_desc %a shape [%n, %n] strides [%n, %n]
      : !kjit.ptr<bf16> -> !kjit.tensor_desc<64x64xbf16>
  kjit.return
}

// -----

kjit.kernel @k(%a: !kjit.ptr<bf16>, %n: i32) {
  %one = arith.constant 1 : i32
  %m = arith.addi %n, %one : i32
  // expected-error @below {{'kjit.tensor_desc' op shape operand 1 is not a kernel parameter or a constant: a target may build the descriptor before the launch}}
  %d = kjit.tensor_desc %a shape [%n, %m] strides [%n, %one]
      : !kjit.ptr<bf16> -> !kjit.tensor_desc<64x64xbf16>
  kjit.return
}

// -----

kjit.kernel @k(%a: !kjit.ptr<bf16>, %n: i32) {
  %one = arith.constant 1 : i32
  %m = arith.addi %n, %one : i32
  // expected-error @below {{'kjit.tensor_desc' op stride operand 0 is not a kernel parameter or a constant}}
  %d = kjit.tensor_desc %a shape [%n, %n] strides [%m, %one]
      : !kjit.ptr<bf16> -> !kjit.tensor_desc<64x64xbf16>
  kjit.return
}

// -----

kjit.func @k(%d: !kjit.tensor_desc<64x64xbf16>, %n: i32) {
  // expected-error @below {{'kjit.tile_load' op loads '!kjit.tile<64x32xbf16>' through '!kjit.tensor_desc<64x64xbf16>'; the tile is the descriptor's}}
  %t = kjit.tile_load %d[%n, %n] : !kjit.tensor_desc<64x64xbf16> -> !kjit.tile<64x32xbf16>
  kjit.return
}

// -----

kjit.func @k(%d: !kjit.tensor_desc<64x64xbf16>, %n: i32) {
  // expected-error @below {{'kjit.tile_load' op takes 2 coordinates, got 1}}
  %t = kjit.tile_load %d[%n] : !kjit.tensor_desc<64x64xbf16> -> !kjit.tile<64x64xbf16>
  kjit.return
}

// -----

kjit.func @k(%d: !kjit.tensor_desc<64x64xbf16>, %n: i32) {
  %c0 = arith.constant 0 : i32
  %acc = arith.constant dense<0.0> : vector<32xf32>
  // expected-error @below {{'kjit.tile_load' op tile is used by 'scf.for'; a tile feeds only kjit.mma operations of the block that loaded it}}
  %t = kjit.tile_load %d[%n, %n] : !kjit.tensor_desc<64x64xbf16> -> !kjit.tile<64x64xbf16>
  %r = scf.for %i = %c0 to %n step %n iter_args(%x = %t) -> (!kjit.tile<64x64xbf16>) : i32 {
    scf.yield %t : !kjit.tile<64x64xbf16>
  }
  kjit.return
}

// -----

kjit.func @k(%a: !kjit.tile<64x64xbf16>, %b: !kjit.tile<64x64xf16>, %n: i32) {
  %acc = arith.constant dense<0.0> : vector<32xf32>
  // expected-error @below {{'kjit.mma' op A tile is 'bf16' but B tile is 'f16'}}
  %r = kjit.mma %a[%n], %b, %acc : !kjit.tile<64x64xbf16>, !kjit.tile<64x64xf16>, vector<32xf32>
  kjit.return
}

// -----

kjit.func @k(%a: !kjit.tile<128x32xbf16>, %b: !kjit.tile<64x256xbf16>, %n: i32) {
  %acc = arith.constant dense<0.0> : vector<128xf32>
  // expected-error @below {{'kjit.mma' op A tile is 128x32 but B tile is 64x256: K 32 and 64 differ}}
  %r = kjit.mma %a[%n], %b, %acc : !kjit.tile<128x32xbf16>, !kjit.tile<64x256xbf16>, vector<128xf32>
  kjit.return
}

// -----

kjit.func @k(%a: !kjit.tile<64x24xbf16>, %b: !kjit.tile<24x64xbf16>, %n: i32) {
  %acc = arith.constant dense<0.0> : vector<32xf32>
  // expected-error @below {{'kjit.mma' op K = 24 is not a multiple of 16 (one MMA step)}}
  %r = kjit.mma %a[%n], %b, %acc : !kjit.tile<64x24xbf16>, !kjit.tile<24x64xbf16>, vector<32xf32>
  kjit.return
}

// -----

kjit.func @k(%a: !kjit.tile<96x64xbf16>, %b: !kjit.tile<64x64xbf16>, %n: i32) {
  %acc = arith.constant dense<0.0> : vector<32xf32>
  // expected-error @below {{'kjit.mma' op A tile has 96 rows; a warpgroup multiplies 64-row slices, so they are a multiple of 64}}
  %r = kjit.mma %a[%n], %b, %acc : !kjit.tile<96x64xbf16>, !kjit.tile<64x64xbf16>, vector<32xf32>
  kjit.return
}

// -----

kjit.func @k(%a: !kjit.tile<64x64xbf16>, %b: !kjit.tile<64x256xbf16>, %n: i32) {
  %acc = arith.constant dense<0.0> : vector<64xf32>
  // expected-error @below {{'kjit.mma' op a 64x256 block gives each thread 'vector<128xf32>', got 'vector<64xf32>'}}
  %r = kjit.mma %a[%n], %b, %acc : !kjit.tile<64x64xbf16>, !kjit.tile<64x256xbf16>, vector<64xf32>
  kjit.return
}

// -----

kjit.kernel @k() {
  // expected-error @below {{'kjit.mma_coords' op N = 12 is not a multiple of 8 in [8, 256]}}
  %r, %c = kjit.mma_coords n = 12 : vector<6xi32>
  kjit.return
}

// -----

kjit.kernel @k() {
  // expected-error @below {{'kjit.mma_coords' op a 64x64 block gives each thread 32 elements, got 'vector<16xi32>'}}
  %r, %c = kjit.mma_coords n = 64 : vector<16xi32>
  kjit.return
}

// -----

kjit.kernel @k(%c: !kjit.ptr<i32>, %n: i32) {
  %acc = arith.constant dense<0.0> : vector<4xf32>
  // expected-error @below {{'kjit.mma_store' op stores to '!kjit.ptr<i32>'; fragments are stored as bf16, f16 or f32}}
  kjit.mma_store %acc, %c[%n, %n] stride %n bounds [%n, %n] : vector<4xf32>, !kjit.ptr<i32>
  kjit.return
}

// -----

kjit.kernel @k(%c: !kjit.ptr<f32>, %n: i32) {
  %acc = arith.constant dense<0.0> : vector<6xf32>
  // expected-error @below {{'kjit.mma_store' op N = 12 is not a multiple of 8 in [8, 256]}}
  kjit.mma_store %acc, %c[%n, %n] stride %n bounds [%n, %n] : vector<6xf32>, !kjit.ptr<f32>
  kjit.return
}

// -----

kjit.kernel @k(%c: !kjit.ptr<f32> {kjit.const}, %n: i32) {
  %acc = arith.constant dense<0.0> : vector<4xf32>
  // expected-error @below {{'kjit.mma_store' op stores through parameter 'c', which is marked 'kjit.const'}}
  kjit.mma_store %acc, %c[%n, %n] stride %n bounds [%n, %n] : vector<4xf32>, !kjit.ptr<f32>
  kjit.return
}
