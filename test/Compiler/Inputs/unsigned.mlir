// Unsigned scalar parameters: `kjit.unsigned` on a signless integer. The
// launch value is u8..u64 (its range, its signature type); the body reads
// the bits with unsigned operations (extui, uitofp, cmpi ugt), as Triton's
// code for an unsigned argument does.
kjit.kernel @widen(%n: i32 {kjit.unsigned}, %b: i8 {kjit.unsigned},
                   %h: i16 {kjit.unsigned}, %w: i64 {kjit.unsigned},
                   %ints: !kjit.ptr<i64>, %reals: !kjit.ptr<f64>,
                   %big: !kjit.ptr<i1>) {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %c2 = arith.constant 2 : i32
  %n64 = arith.extui %n : i32 to i64
  %b64 = arith.extui %b : i8 to i64
  %h64 = arith.extui %h : i16 to i64
  kjit.store %n64, %ints[%c0] : i64, !kjit.ptr<i64>, i32
  kjit.store %b64, %ints[%c1] : i64, !kjit.ptr<i64>, i32
  kjit.store %h64, %ints[%c2] : i64, !kjit.ptr<i64>, i32
  %nf = arith.uitofp %n : i32 to f64
  %wf = arith.uitofp %w : i64 to f64
  kjit.store %nf, %reals[%c0] : f64, !kjit.ptr<f64>, i32
  kjit.store %wf, %reals[%c1] : f64, !kjit.ptr<f64>, i32
  %int_max = arith.constant 2147483647 : i32
  %above = arith.cmpi ugt, %n, %int_max : i32
  kjit.store %above, %big[%c0] : i1, !kjit.ptr<i1>, i32
  kjit.return
}

// A constexpr and a default read as unsigned too.
kjit.kernel @scale(%out: !kjit.ptr<i64>, %k: i32 {kjit.unsigned, kjit.constexpr},
                   %d: i32 {kjit.unsigned, kjit.default = 4000000000 : i32}) {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %k64 = arith.extui %k : i32 to i64
  %d64 = arith.extui %d : i32 to i64
  kjit.store %k64, %out[%c0] : i64, !kjit.ptr<i64>, i32
  kjit.store %d64, %out[%c1] : i64, !kjit.ptr<i64>, i32
  kjit.return
}

// A signed parameter, for the mismatch the test checks.
kjit.kernel @signed(%n: i32) { kjit.return }
