//===- Divisibility.h - what specialization proves about values -*- C++ -*-===//
//
// The largest power of two a value is known to be a multiple of, from the
// kernel's specialization (`kjit.divisibility`) and a few arithmetic rules.
//
//===----------------------------------------------------------------------===//

#ifndef KJIT_ANALYSIS_DIVISIBILITY_H
#define KJIT_ANALYSIS_DIVISIBILITY_H

#include "mlir/IR/Value.h"

#include <cstdint>

namespace kjit {

/// Divisors are tracked up to this power of two.
inline constexpr uint64_t kMaxDivisor = uint64_t(1) << 16;

/// The largest power of two (at most kMaxDivisor) that `value` is known to
/// be a multiple of, from a few arithmetic rules: constants, kernel
/// parameters specialized `D`, sums, products and shifts of such, casts,
/// selects, and the induction variable of an scf.for (its lower bound and
/// its step). Wrap-around keeps these facts for every power of two below
/// 2^width.
uint64_t knownDivisor(mlir::Value value, unsigned depth = 0);

} // namespace kjit

#endif // KJIT_ANALYSIS_DIVISIBILITY_H
