// Every verifier and parser message of the kjit dialect.
// RUN: kjit-opt %s --split-input-file --verify-diagnostics

// expected-error @below {{'!kjit.ptr' element type must be i1, i8, i16, i32, i64, their unsigned forms or a float type, not 'vector<4xf32>'}}
kjit.kernel @k(%p: !kjit.ptr<vector<4xf32>>) { kjit.return }

// -----

// expected-error @below {{'!kjit.ptr' element type must be i1, i8, i16, i32, i64, their unsigned forms or a float type, not 'index'}}
kjit.kernel @k(%p: !kjit.ptr<index>) { kjit.return }

// -----

// expected-error @below {{'!kjit.ptr' element type must be i1, i8, i16, i32, i64, their unsigned forms or a float type, not 'si32'}}
kjit.kernel @k(%p: !kjit.ptr<si32>) { kjit.return }

// -----

// expected-error @below {{'!kjit.ptr' element type must be i1, i8, i16, i32, i64, their unsigned forms or a float type, not 'i7'}}
kjit.kernel @k(%p: !kjit.ptr<i7>) { kjit.return }

// -----

//===----------------------------------------------------------------------===//
// Parameter attributes
//===----------------------------------------------------------------------===//

// expected-error @below {{'kjit.kernel' op unknown parameter attribute 'kjit.constant' on parameter #0; kjit knows kjit.constexpr, kjit.do_not_specialize, kjit.do_not_specialize_on_alignment, kjit.const, kjit.unsigned, kjit.default, kjit.divisibility, kjit.signature_type and kjit.spec_attrs}}
kjit.kernel @k(%n: i32 {kjit.constant}) { kjit.return }

// -----

// expected-error @below {{'kjit.func' op 'kjit.constexpr' applies to kernel parameters only}}
kjit.func @f(%n: i32 {kjit.constexpr}) { kjit.return }

// -----

// expected-error @below {{'kjit.kernel' op 'kjit.const' on parameter #0 is a flag and takes no value}}
kjit.kernel @k(%p: !kjit.ptr<f32> {kjit.const = true}) { kjit.return }

// -----

// expected-error @below {{'kjit.kernel' op 'kjit.spec_attrs' on parameter #0 must be a non-empty array of attribute names (["pointer_range_32"]), not []}}
kjit.kernel @k(%p: !kjit.ptr<f32> {kjit.spec_attrs = []}) { kjit.return }

// -----

// expected-error @below {{'kjit.kernel' op 'kjit.spec_attrs' on parameter #0 must be a non-empty array of attribute names (["pointer_range_32"]), not ["pointer_range_32", 3]}}
kjit.kernel @k(%p: !kjit.ptr<f32> {kjit.spec_attrs = ["pointer_range_32", 3]}) { kjit.return }

// -----

// expected-error @below {{'kjit.func' op 'kjit.spec_attrs' applies to kernel parameters only}}
kjit.func @f(%p: !kjit.ptr<f32> {kjit.spec_attrs = ["pointer_range_32"]}) { kjit.return }

// -----

// expected-error @below {{'kjit.kernel' op 'kjit.signature_type' on parameter #0 must be a signature type (#kjit.signature<const !kjit.ptr<f32>>), not 3 : i64}}
kjit.kernel @k(%p: !kjit.ptr<f32> {kjit.signature_type = 3}) { kjit.return }

// -----

// The type's spelling as text is not a signature type.
// expected-error @below {{'kjit.kernel' op 'kjit.signature_type' on parameter #0 must be a signature type (#kjit.signature<const !kjit.ptr<f32>>), not "*kfp32"}}
kjit.kernel @k(%p: !kjit.ptr<f32> {kjit.signature_type = "*kfp32"}) { kjit.return }

// -----

// expected-error @+1 {{only a pointer signature type is const, not 'i32'}}
kjit.kernel @k(%n: i32 {kjit.signature_type = #kjit.signature<const i32>}) { kjit.return }

// -----

// expected-error @+1 {{a signature type is a !kjit.ptr or a scalar (i1, i8..i64, ui8..ui64, f16, bf16, f32, f64), not 'si32'}}
kjit.kernel @k(%n: i32 {kjit.signature_type = #kjit.signature<si32>}) { kjit.return }

// -----

// expected-error @below {{'kjit.kernel' op 'kjit.divisibility' on parameter #0 must be a positive power of two, not 12 : i64}}
kjit.kernel @k(%p: !kjit.ptr<f32> {kjit.divisibility = 12}) { kjit.return }

// -----

// expected-error @below {{'kjit.kernel' op 'kjit.divisibility' applies to pointer and integer parameters; parameter #0 has type 'f32'}}
kjit.kernel @k(%v: f32 {kjit.divisibility = 16}) { kjit.return }

// -----

// expected-error @below {{'kjit.kernel' op constexpr parameter 'p' cannot have pointer type '!kjit.ptr<f32>'; a constexpr is a compile-time value}}
kjit.kernel @k(%p: !kjit.ptr<f32> {kjit.constexpr}) { kjit.return }

// -----

// expected-error @below {{'kjit.kernel' op parameter 'n' is constexpr, so 'kjit.do_not_specialize' cannot apply to it}}
kjit.kernel @k(%n: i32 {kjit.constexpr, kjit.do_not_specialize}) { kjit.return }

// -----

// expected-error @below {{'kjit.kernel' op 'kjit.const' marks read-only pointers, but parameter 'n' has type 'i32'}}
kjit.kernel @k(%n: i32 {kjit.const}) { kjit.return }

// -----

// expected-error @below {{'kjit.kernel' op 'kjit.unsigned' marks integer parameters (i8, i16, i32, i64), but parameter 'x' has type 'f32'}}
kjit.kernel @k(%x: f32 {kjit.unsigned}) { kjit.return }

// -----

// expected-error @below {{'kjit.kernel' op 'kjit.unsigned' marks integer parameters (i8, i16, i32, i64), but parameter 'flag' has type 'i1'}}
kjit.kernel @k(%flag: i1 {kjit.unsigned}) { kjit.return }

// -----

// expected-error @below {{'kjit.kernel' op 'kjit.unsigned' marks integer parameters (i8, i16, i32, i64), but parameter 'p' has type '!kjit.ptr<ui8>'}}
kjit.kernel @k(%p: !kjit.ptr<ui8> {kjit.unsigned}) { kjit.return }

// -----

// expected-error @below {{'kjit.unsigned' on parameter #0 is a flag and takes no value}}
kjit.kernel @k(%n: i32 {kjit.unsigned = 1 : i32}) { kjit.return }

// -----

// expected-error @below {{'kjit.func' op 'kjit.unsigned' applies to kernel parameters only}}
kjit.func @f(%n: i32 {kjit.unsigned}) { kjit.return }

// -----

// expected-error @below {{'kjit.kernel' op parameter 'n' of type 'i32' cannot default to None (unit); only pointer and '!kjit.any' parameters can}}
kjit.kernel @k(%n: i32 {kjit.default}) { kjit.return }

// -----

// expected-error @below {{'kjit.kernel' op default value of parameter 'n' must be an integer or float constant, or unit for None; got "four"}}
kjit.kernel @k(%n: i32 {kjit.default = "four"}) { kjit.return }

// -----

// expected-error @below {{'kjit.kernel' op pointer parameter 'p' can only default to None (unit), not 0 : i64}}
kjit.kernel @k(%p: !kjit.ptr<f32> {kjit.default = 0}) { kjit.return }

// -----

// expected-error @below {{'kjit.kernel' op default value 1.000000e+00 : f32 of parameter 'n' does not match its type 'i32'}}
kjit.kernel @k(%n: i32 {kjit.default = 1.0 : f32}) { kjit.return }

// -----

// expected-error @below {{'kjit.kernel' op parameter 'a' has a default value but parameter 'b' after it does not; only trailing parameters can have defaults}}
kjit.kernel @k(%a: i32 {kjit.default = 1 : i32}, %b: i32) { kjit.return }

// -----

//===----------------------------------------------------------------------===//
// Kernels
//===----------------------------------------------------------------------===//

// expected-error @below {{kernel parameters need names, as in '(%x: !kjit.ptr<f32>)'}}
kjit.kernel @k(i32) { kjit.return }

// -----

// expected-error @below {{'kjit.kernel' op parameter #0 is named '0'; parameter names are identifiers (letters, digits and '_', not starting with a digit) because launches bind arguments by name}}
kjit.kernel @k(%0: i32) { kjit.return }

// -----

// expected-error @below {{'kjit.kernel' op two parameters are named 'a'}}
"kjit.kernel"() <{function_type = (i32, i32) -> (), param_names = ["a", "a"], sym_name = "k"}> ({
^bb0(%x: i32, %y: i32):
  kjit.return
}) : () -> ()

// -----

// expected-error @below {{'kjit.kernel' op has 1 parameter names for 2 parameters}}
"kjit.kernel"() <{function_type = (i32, i32) -> (), param_names = ["a"], sym_name = "k"}> ({
^bb0(%x: i32, %y: i32):
  kjit.return
}) : () -> ()

// -----

// expected-error @below {{'kjit.kernel' op kernel '@k' needs a body}}
"kjit.kernel"() <{function_type = () -> (), param_names = [], sym_name = "k"}> ({
}) : () -> ()

// -----

// expected-error @below {{'kjit.kernel' op kernel '@k' returns values; kernels return nothing and write results through pointer parameters}}
kjit.kernel @k(%n: i32) -> i32 { kjit.return %n : i32 }

// -----

// expected-error @below {{'kjit.kernel' op parameter 'i' has type 'index'; parameters are i1, i8, i16, i32, i64, f16, bf16, f32, f64, '!kjit.ptr<...>' or '!kjit.any'}}
kjit.kernel @k(%i: index) { kjit.return }

// -----

// expected-error @below {{'kjit.kernel' op parameter 'w' has type 'i128'; parameters are i1, i8, i16, i32, i64, f16, bf16, f32, f64, '!kjit.ptr<...>' or '!kjit.any'}}
kjit.kernel @k(%w: i128) { kjit.return }

// -----

// expected-error @below {{'kjit.global' op global '@Q' has type 'f128'; globals hold i1, i8, i16, i32, i64, f16, bf16, f32 or f64}}
kjit.global @Q : f128 = 1.0

// -----

kjit.kernel @k(%v: i32) {
  %w = arith.extsi %v : i32 to i128
  // expected-error @below {{'kjit.print' op operand #0 must be variadic of i1, i8, i16, i32, i64, f16, bf16, f32 or f64 or index or pointer to global memory, but got 'i128'}}
  kjit.print "w" %w : i128
  kjit.return
}

// -----

// expected-error @below {{'kjit.kernel' op parameter 'v' has type 'vector<4xf32>'; parameters are i1, i8, i16, i32, i64, f16, bf16, f32, f64, '!kjit.ptr<...>' or '!kjit.any'}}
kjit.kernel @k(%v: vector<4xf32>) { kjit.return }

// -----

kjit.kernel @k(%a: !kjit.any) {
  // expected-error @below {{'kjit.print' op uses parameter 'a' of type '!kjit.any' directly; read it through 'kjit.cast' to a concrete type}}
  kjit.print "a" %a : !kjit.any
  kjit.return
}

// -----

// The kernel walks its body in order: the first direct use is the one
// reported, also inside a nested region.
kjit.kernel @k(%a: !kjit.any, %c: i1) {
  scf.if %c {
    // expected-error @below {{'kjit.print' op uses parameter 'a' of type '!kjit.any' directly; read it through 'kjit.cast' to a concrete type}}
    kjit.print "first" %a : !kjit.any
  }
  kjit.print "second" %a : !kjit.any
  kjit.return
}

// -----

"kjit.kernel"() <{function_type = () -> (), param_names = [], sym_name = "k"}> ({
  // expected-error @below {{'kjit.kernel' op expects parent op 'builtin.module'}}
  kjit.kernel @inner() { kjit.return }
  kjit.return
}) : () -> ()

// -----

//===----------------------------------------------------------------------===//
// Device functions, returns and calls
//===----------------------------------------------------------------------===//

// expected-error @below {{'kjit.func' op device function '@f' needs a body}}
kjit.func @f(i32)

// -----

// expected-error @below {{'kjit.func' op device function '@f' uses '!kjit.any'; only kernel parameters may have it}}
kjit.func @f(%a: !kjit.any) { kjit.return }

// -----

kjit.func @f(%a: i32) -> (i32, i32) {
  // expected-error @below {{'kjit.return' op returns 1 value(s) but '@f' declares 2}}
  kjit.return %a : i32
}

// -----

kjit.func @f(%a: i32) -> f32 {
  // expected-error @below {{'kjit.return' op value #0 has type 'i32' but '@f' returns 'f32'}}
  kjit.return %a : i32
}

// -----

kjit.kernel @k() {
  // expected-error @below {{'kjit.call' op calls @missing, but no device function has that name}}
  kjit.call @missing() : () -> ()
  kjit.return
}

// -----

kjit.kernel @other() { kjit.return }
kjit.kernel @k() {
  // expected-error @below {{'kjit.call' op calls kernel @other; kernels are launched from the host, only device functions ('kjit.func') can be called}}
  kjit.call @other() : () -> ()
  kjit.return
}

// -----

kjit.global @G : i32 = 1
kjit.kernel @k() {
  // expected-error @below {{'kjit.call' op calls @G, which is a 'kjit.global', not a device function ('kjit.func')}}
  kjit.call @G() : () -> ()
  kjit.return
}

// -----

kjit.func @f(%a: i32) { kjit.return }
kjit.kernel @k(%a: i32) {
  // expected-error @below {{'kjit.call' op passes 2 argument(s) but @f takes 1}}
  kjit.call @f(%a, %a) : (i32, i32) -> ()
  kjit.return
}

// -----

kjit.func @f(%a: f32) { kjit.return }
kjit.kernel @k(%a: i32) {
  // expected-error @below {{'kjit.call' op argument #0 has type 'i32' but @f expects 'f32'}}
  kjit.call @f(%a) : (i32) -> ()
  kjit.return
}

// -----

kjit.func @f(%a: i32) -> i32 { kjit.return %a : i32 }
kjit.kernel @k(%a: i32) {
  // expected-error @below {{'kjit.call' op expects 0 result(s) but @f returns 1}}
  kjit.call @f(%a) : (i32) -> ()
  kjit.return
}

// -----

kjit.func @f(%a: i32) -> i32 { kjit.return %a : i32 }
kjit.kernel @k(%a: i32) {
  // expected-error @below {{'kjit.call' op result #0 has type 'i64' but @f returns 'i32'}}
  %r = kjit.call @f(%a) : (i32) -> i64
  kjit.return
}

// -----

//===----------------------------------------------------------------------===//
// Globals
//===----------------------------------------------------------------------===//

// expected-error @below {{'kjit.global' op global '@V' has type 'vector<2xf32>'; globals hold i1, i8, i16, i32, i64, f16, bf16, f32 or f64}}
kjit.global @V : vector<2xf32> = dense<1.0>

// -----

// expected-error @below {{'kjit.global' op initial value of '@S' must be an integer or float constant}}
"kjit.global"() <{sym_name = "S", type = i32, value = "text"}> : () -> ()

// -----

// expected-error @below {{'kjit.global' op initial value of '@M' has type 'f32' but the global is declared 'i32'}}
"kjit.global"() <{sym_name = "M", type = i32, value = 1.0 : f32}> : () -> ()

// -----

// expected-error @+1 {{expected an integer initial value for a global of type 'i32'}}
kjit.global @P : i32 = 1.5

// -----

// expected-error @+1 {{initial value does not fit in 'i8'}}
kjit.global @P : i8 = 300

// -----

// expected-error @+1 {{expected an integer initial value for a global of type 'i1'}}
kjit.global @P : i1 = yes

// -----

// expected-error @+1 {{expected floating point literal}}
kjit.global @P : f32 = true

// -----

kjit.kernel @k() {
  // expected-error @below {{'kjit.get_global' op reads unknown global @BLOCK}}
  %b = kjit.get_global @BLOCK : i32
  kjit.return
}

// -----

kjit.kernel @k() {
  // expected-error @below {{'kjit.get_global' op reads @nope::@BLOCK, but there is no module @nope}}
  %b = kjit.get_global @nope::@BLOCK : i32
  kjit.return
}

// -----

module @inner {
  kjit.global @SCALE : f32 = 2.0
}
kjit.kernel @k() {
  // expected-error @below {{'kjit.get_global' op reads unknown global @inner::@BLOCK: module @inner has no symbol @BLOCK}}
  %b = kjit.get_global @inner::@BLOCK : i32
  kjit.return
}

// -----

module @a {
  module @b {
    kjit.global @G : i32 = 1
  }
}
kjit.kernel @k() {
  // expected-error @below {{'kjit.get_global' op reads @a::@c::@G, but there is no module @a::@c}}
  %b = kjit.get_global @a::@c::@G : i32
  kjit.return
}

// -----

kjit.func @f() { kjit.return }
kjit.kernel @k() {
  // expected-error @below {{'kjit.get_global' op reads @f::@G, but @f is a 'kjit.func', not a module}}
  %b = kjit.get_global @f::@G : i32
  kjit.return
}

// -----

module @inner {
  kjit.global @SCALE : f32 = 2.0
}
kjit.kernel @k() {
  // expected-error @below {{'kjit.get_global' op reads @inner::@SCALE as 'i32' but it is declared 'f32'}}
  %b = kjit.get_global @inner::@SCALE : i32
  kjit.return
}

// -----

// expected-error @+1 {{'kjit.global' op global '@"a::b"' has '::' in its name, which separates module names in the runtime's global names}}
kjit.global @"a::b" : i32 = 1

// -----

kjit.global @H : i32 = 0
module @"x::y" {
  // expected-error @+1 {{'kjit.global' op global '@G' is in module '@"x::y"', whose name has '::', which separates module names in the runtime's global names}}
  kjit.global @G : i32 = 1
}

// -----

kjit.func @f() { kjit.return }
kjit.kernel @k() {
  // expected-error @below {{'kjit.get_global' op reads @f, which is a 'kjit.func', not a 'kjit.global'}}
  %b = kjit.get_global @f : i32
  kjit.return
}

// -----

kjit.global @G : i32 = 1
kjit.kernel @k() {
  // expected-error @below {{'kjit.get_global' op reads @G as 'f32' but it is declared 'i32'}}
  %b = kjit.get_global @G : f32
  kjit.return
}

// -----

//===----------------------------------------------------------------------===//
// Casts and grid ids
//===----------------------------------------------------------------------===//

kjit.kernel @k(%n: i32) {
  %a = builtin.unrealized_conversion_cast %n : i32 to !kjit.any
  // expected-error @below {{'kjit.cast' op reads a '!kjit.any' value that is not a kernel parameter}}
  %b = kjit.cast %a : !kjit.any to i32
  kjit.return
}

// -----

kjit.kernel @k(%a: !kjit.any) {
  // expected-error @below {{'kjit.cast' op result #0 must be scalar or kjit pointer, but got 'vector<4xf32>'}}
  %b = kjit.cast %a : !kjit.any to vector<4xf32>
  kjit.return
}

// -----

kjit.kernel @k() {
  // expected-error @below {{expected a grid axis: x, y or z, not 'w'}}
  %p = kjit.program_id w
  kjit.return
}

// -----

kjit.kernel @k() {
  // expected-error @below {{expected a grid axis: x, y or z}}
  %p = kjit.num_programs 0
  kjit.return
}

// -----

//===----------------------------------------------------------------------===//
// Loads and stores
//===----------------------------------------------------------------------===//

kjit.kernel @k(%p: !kjit.ptr<f32>, %i: i32) {
  // expected-error @below {{'kjit.load' op result type 'f16' does not match '!kjit.ptr<f32>', whose elements are 'f32'}}
  %v = kjit.load %p[%i] : !kjit.ptr<f32>, i32 -> f16
  kjit.return
}

// -----

kjit.kernel @k(%p: !kjit.ptr<ui8>, %i: i32) {
  // expected-error @below {{'kjit.load' op result type 'ui8' does not match '!kjit.ptr<ui8>', whose elements are 'i8'}}
  %v = kjit.load %p[%i] : !kjit.ptr<ui8>, i32 -> ui8
  kjit.return
}

// -----

kjit.kernel @k(%p: !kjit.ptr<f32>, %i: i32) {
  // expected-error @below {{'kjit.load' op result type 'vector<8xf32>' is 32 bytes; a vector access is at most 16 bytes (one 128-bit access)}}
  %v = kjit.load %p[%i] : !kjit.ptr<f32>, i32 -> vector<8xf32>
  kjit.return
}

// -----

kjit.kernel @k(%p: !kjit.ptr<f32>, %i: i32) {
  // expected-error @below {{'kjit.load' op result type 'vector<3xf32>' has 3 elements; vector accesses have a power of two}}
  %v = kjit.load %p[%i] : !kjit.ptr<f32>, i32 -> vector<3xf32>
  kjit.return
}

// -----

kjit.kernel @k(%p: !kjit.ptr<f32>, %i: i32) {
  // expected-error @below {{'kjit.load' op result type 'vector<2x2xf32>' must be a fixed-size 1-D vector}}
  %v = kjit.load %p[%i] : !kjit.ptr<f32>, i32 -> vector<2x2xf32>
  kjit.return
}

// -----

kjit.kernel @k(%p: !kjit.ptr<i1>, %i: i32) {
  // expected-error @below {{'kjit.load' op vector accesses of i1 are not supported; store booleans as i8}}
  %v = kjit.load %p[%i] : !kjit.ptr<i1>, i32 -> vector<4xi1>
  kjit.return
}

// -----

kjit.kernel @k(%p: !kjit.ptr<f32>, %i: i32, %m: i1, %o: f16) {
  // expected-error @below {{'kjit.load' op failed to verify that other has the result type}}
  %v = "kjit.load"(%p, %i, %m, %o) <{operandSegmentSizes = array<i32: 1, 1, 1, 1>}> : (!kjit.ptr<f32>, i32, i1, f16) -> f32
  kjit.return
}

// -----

kjit.kernel @k(%p: !kjit.ptr<f32>, %i: f32) {
  // expected-error @below {{'kjit.load' op operand #1 must be signless integer or index, but got 'f32'}}
  %v = kjit.load %p[%i] : !kjit.ptr<f32>, f32 -> f32
  kjit.return
}

// -----

kjit.kernel @k(%p: !kjit.ptr<f32>, %i: i32) {
  %v = arith.constant dense<1> : vector<4xi32>
  // expected-error @below {{'kjit.store' op stored value type 'vector<4xi32>' does not match '!kjit.ptr<f32>', whose elements are 'f32'}}
  kjit.store %v, %p[%i] : vector<4xi32>, !kjit.ptr<f32>, i32
  kjit.return
}

// -----

kjit.kernel @k(%p: !kjit.ptr<f32> {kjit.const}, %i: i32, %v: f32) {
  // expected-error @below {{'kjit.store' op stores through parameter 'p', which is marked 'kjit.const'}}
  kjit.store %v, %p[%i] : f32, !kjit.ptr<f32>, i32
  kjit.return
}

// -----

// The kernel's rule, checked over its whole body, nested regions included.
kjit.kernel @k(%p: !kjit.ptr<f32>, %q: !kjit.ptr<f32> {kjit.const}, %i: i32, %v: f32, %c: i1) {
  kjit.store %v, %p[%i] : f32, !kjit.ptr<f32>, i32
  scf.if %c {
    // expected-error @below {{'kjit.store' op stores through parameter 'q', which is marked 'kjit.const'}}
    kjit.store %v, %q[%i] : f32, !kjit.ptr<f32>, i32
  }
  kjit.return
}

// -----

kjit.kernel @k(%c: i32) {
  // expected-error @below {{'kjit.assert' op operand #0 must be 1-bit signless integer, but got 'i32'}}
  "kjit.assert"(%c) <{message = "c"}> : (i32) -> ()
  kjit.return
}

// -----

// MLIR 22's own verifier of arith.select crashes on a vector condition with
// a scalar result; the kjit function around it reports it first.
kjit.kernel @k(%out: !kjit.ptr<i32>, %a: i32, %flag: i1) {
  %c0 = arith.constant 0 : i32
  %vc = vector.broadcast %flag : i1 to vector<2xi1>
  // expected-error @below {{'arith.select' op has a condition of type 'vector<2xi1>' but a result of type 'i32': a vector condition selects element by element, so the values and the result must be vectors of its shape}}
  %r = arith.select %vc, %a, %a : vector<2xi1>, i32
  kjit.store %r, %out[%c0] : i32, !kjit.ptr<i32>, i32
  kjit.return
}

// -----

kjit.func @pick(%c: vector<4xi1>, %x: !kjit.ptr<f32>, %y: !kjit.ptr<f32>) -> !kjit.ptr<f32> {
  // expected-error @below {{'arith.select' op has a condition of type 'vector<4xi1>' but a result of type '!kjit.ptr<f32>'}}
  %p = arith.select %c, %x, %y : vector<4xi1>, !kjit.ptr<f32>
  kjit.return %p : !kjit.ptr<f32>
}
