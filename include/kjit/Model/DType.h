//===- DType.h - tensor element types of the runtime ------------*- C++ -*-===//
//
// The element types ("dtypes") a tensor argument can have, with the canonical
// names of the reference runtime's canonicalisation table (float32 -> fp32,
// uint8 -> u8, float8_e4m3fn -> fp8e4nv, ...). Part of the model library (docs/Architecture.md): no
// LLVM or MLIR header may be included here.
//
//===----------------------------------------------------------------------===//

#ifndef KJIT_MODEL_DTYPE_H
#define KJIT_MODEL_DTYPE_H

#include <cstdint>
#include <optional>
#include <string_view>

namespace kjit::rt {

/// A tensor element type. The enumerator order is not an ABI; persist the
/// canonical name instead.
enum class DType : uint8_t {
  I1,
  I8,
  I16,
  I32,
  I64,
  U8,
  U16,
  U32,
  U64,
  FP16,
  BF16,
  FP32,
  FP64,
  FP8E4NV,
  FP8E5,
  FP8E4B15,
  FP8E4B8,
  FP8E5B16,
};

/// Number of DType enumerators.
inline constexpr int kNumDTypes = 18;

/// Looks up a dtype by any name of the canonicalisation table: the framework
/// spelling ("float32", "uint8", "float8_e5m2fnuz", "bool") or the canonical
/// one ("fp32", "u8", "fp8e5b16", "i1"). Returns nullopt for unknown names.
std::optional<DType> parseDType(std::string_view name);

/// The canonical name used in signatures: "fp32", "u8", "i1", ...
std::string_view canonicalName(DType dtype);

/// Storage size of one element in bytes (i1 is stored as one byte).
unsigned byteWidth(DType dtype);

/// The element type of the matching `!kjit.ptr<...>` as MLIR spells it
/// ("f32", "ui8", "f8E4M3FN"), or an empty view where MLIR has no such type
/// (fp8e4b15).
std::string_view kernelIRTypeName(DType dtype);

} // namespace kjit::rt

#endif // KJIT_MODEL_DTYPE_H
