//===- Kjit.h - the kjit dialect --------------------------------*- C++ -*-===//
//
// Public header of the kjit dialect: the dialect, its types and operations.
//
//===----------------------------------------------------------------------===//

#ifndef KJIT_DIALECT_KJIT_IR_KJIT_H
#define KJIT_DIALECT_KJIT_IR_KJIT_H

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Dialect.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/CallInterfaces.h"
#include "mlir/Interfaces/ControlFlowInterfaces.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include "kjit/Dialect/Kjit/IR/KjitEnums.h.inc"
#include "kjit/Dialect/Kjit/IR/KjitOpsDialect.h.inc"

#define GET_TYPEDEF_CLASSES
#include "kjit/Dialect/Kjit/IR/KjitOpsTypes.h.inc"

#define GET_ATTRDEF_CLASSES
#include "kjit/Dialect/Kjit/IR/KjitAttrs.h.inc"

#define GET_OP_CLASSES
#include "kjit/Dialect/Kjit/IR/KjitOps.h.inc"

namespace kjit {

/// Whether `type` may be the element type of a `!kjit.ptr`.
bool isValidPointeeType(mlir::Type type);

/// The type a value loaded from or stored to `!kjit.ptr<elementType>` has:
/// the element type with its signedness dropped (ui8 -> i8).
mlir::Type getValueTypeForPointee(mlir::Type elementType);

/// Whether `type` is a scalar kernels may take as a parameter, read from a
/// global or print: i1, i8, i16, i32, i64, f16, bf16, f32 or f64, the types
/// the runtime binds (at most 64 bits).
bool isScalarType(mlir::Type type);

/// Whether `name` is a valid kernel parameter name (a C identifier), the form
/// keyword arguments use at launch.
bool isValidParamName(llvm::StringRef name);

/// Reports the operations in `root` (itself included) that MLIR 22's
/// own verifiers crash on instead of reporting: an `arith.select` with a
/// vector condition and a scalar result (its shape check casts the result
/// to a shaped type). kjit.kernel and kjit.func run it on their bodies,
/// since MLIR verifies an operation before the ones inside it, and the
/// runtime on every module it reads, before verifying it.
mlir::LogicalResult verifyUpstreamVerifierHazards(mlir::Operation *root);

/// verifyUpstreamVerifierHazards for the operations of `module` (a
/// builtin.module) outside kjit functions, whose own verifiers report those
/// in their bodies (so that a kernel with one is set aside alone and no body
/// is walked twice): what a tool runs on a module before verifying it.
mlir::LogicalResult
verifyUpstreamVerifierHazardsOutsideKjitFunctions(mlir::Operation *module);

} // namespace kjit

#endif // KJIT_DIALECT_KJIT_IR_KJIT_H
