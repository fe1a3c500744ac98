//===- DType.h - tensor element types of the runtime ------------*- C++ -*-===//
//
// The element types ("dtypes") a tensor argument can have, and one table of
// what kjit knows about each: the canonical name of the reference runtime's
// canonicalisation table (float32 -> fp32, uint8 -> u8, float8_e4m3fn ->
// fp8e4nv, ...), the framework spellings, the width, the kind of number, the
// mantissa of a float format and the MLIR element type. Every dtype
// predicate in the tree reads this table; none switches over DType on its
// own. Part of the model library (docs/Architecture.md): no LLVM or MLIR
// header may be included here.
//
//===----------------------------------------------------------------------===//

#ifndef KJIT_MODEL_DTYPE_H
#define KJIT_MODEL_DTYPE_H

#include <array>
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

/// A 128-bit signed integer. Launch integers are held this wide so that a
/// value beyond 2^64-1 (which a host language can pass) is representable and
/// can be rejected with its value in the message instead of wrapping.
__extension__ typedef __int128 Int128;

/// What kind of number an element holds.
enum class DTypeKind : uint8_t {
  /// i1: false or true. Not an integer here: a bool never takes the D or 1
  /// spec key, and an int bound to it must be 0 or 1.
  Bool,
  SignedInt,
  UnsignedInt,
  Float,
};

/// Most framework spellings one dtype has.
inline constexpr int kMaxFrameworkNames = 2;

/// Everything kjit knows about one dtype; one row of kDTypeTraits.
struct DTypeTraits {
  DType dtype;
  /// The canonical name used in signatures: "fp32", "u8", "i1", ...
  std::string_view name;
  DTypeKind kind;
  /// Bits of a value (i1: 1).
  uint8_t bits;
  /// Storage size of one element in bytes (i1 is stored as one byte).
  uint8_t bytes;
  /// Stored (explicit) mantissa bits of a float format; 0 for the others.
  uint8_t mantissaBits;
  /// The element type of the matching `!kjit.ptr<...>` as MLIR spells it,
  /// or empty where MLIR has no such type.
  std::string_view kernelIR;
  /// The framework spellings that the reference's canonicalisation table
  /// maps to this dtype ("float32"; "float8e4nv" and "float8_e4m3fn"). The
  /// unused slots are empty; the table spells them "" because GCC 12 cannot
  /// read a value-initialized string_view of a constexpr table in a
  /// constant expression.
  std::array<std::string_view, kMaxFrameworkNames> frameworkNames;
};

/// The table, indexed by the DType enumerator (lib/Model/DType.cpp checks
/// the order and the widths at compile time). The fp8 formats are Triton's:
/// fp8e4nv is OCP E4M3FN, fp8e5 is E5M2, fp8e4b15 is E4M3 with exponent bias
/// 15 (MLIR has no such type), fp8e4b8 and fp8e5b16 are the FNUZ variants
/// (no negative zero, one NaN) of E4M3 and E5M2.
// clang-format off
inline constexpr std::array<DTypeTraits, kNumDTypes> kDTypeTraits = {{
    // dtype          name        kind                   bits, bytes, mantissa
    //                MLIR type, framework names
    {DType::I1,       "i1",       DTypeKind::Bool,         1, 1,  0,
                      "i1", {"bool", ""}},
    {DType::I8,       "i8",       DTypeKind::SignedInt,    8, 1,  0,
                      "i8", {"int8", ""}},
    {DType::I16,      "i16",      DTypeKind::SignedInt,   16, 2,  0,
                      "i16", {"int16", ""}},
    {DType::I32,      "i32",      DTypeKind::SignedInt,   32, 4,  0,
                      "i32", {"int32", ""}},
    {DType::I64,      "i64",      DTypeKind::SignedInt,   64, 8,  0,
                      "i64", {"int64", ""}},
    {DType::U8,       "u8",       DTypeKind::UnsignedInt,  8, 1,  0,
                      "ui8", {"uint8", ""}},
    {DType::U16,      "u16",      DTypeKind::UnsignedInt, 16, 2,  0,
                      "ui16", {"uint16", ""}},
    {DType::U32,      "u32",      DTypeKind::UnsignedInt, 32, 4,  0,
                      "ui32", {"uint32", ""}},
    {DType::U64,      "u64",      DTypeKind::UnsignedInt, 64, 8,  0,
                      "ui64", {"uint64", ""}},
    {DType::FP16,     "fp16",     DTypeKind::Float,       16, 2, 10,
                      "f16", {"float16", ""}},
    {DType::BF16,     "bf16",     DTypeKind::Float,       16, 2,  7,
                      "bf16", {"bfloat16", ""}},
    {DType::FP32,     "fp32",     DTypeKind::Float,       32, 4, 23,
                      "f32", {"float32", ""}},
    {DType::FP64,     "fp64",     DTypeKind::Float,       64, 8, 52,
                      "f64", {"float64", ""}},
    {DType::FP8E4NV,  "fp8e4nv",  DTypeKind::Float,        8, 1,  3,
                      "f8E4M3FN", {"float8e4nv", "float8_e4m3fn"}},
    {DType::FP8E5,    "fp8e5",    DTypeKind::Float,        8, 1,  2,
                      "f8E5M2", {"float8e5", "float8_e5m2"}},
    {DType::FP8E4B15, "fp8e4b15", DTypeKind::Float,        8, 1,  3,
                      "", {"float8e4b15", ""}},
    {DType::FP8E4B8,  "fp8e4b8",  DTypeKind::Float,        8, 1,  3,
                      "f8E4M3FNUZ", {"float8e4b8", "float8_e4m3fnuz"}},
    {DType::FP8E5B16, "fp8e5b16", DTypeKind::Float,        8, 1,  2,
                      "f8E5M2FNUZ", {"float8e5b16", "float8_e5m2fnuz"}},
}};
// clang-format on

/// The row of `dtype`.
constexpr const DTypeTraits &dtypeTraits(DType dtype) {
  return kDTypeTraits[static_cast<int>(dtype)];
}

/// Looks up a dtype by any name of the canonicalisation table: the framework
/// spelling ("float32", "uint8", "float8_e5m2fnuz", "bool") or the canonical
/// one ("fp32", "u8", "fp8e5b16", "i1"). A qualified framework spelling
/// ("torch.float32") keys on its last component. Returns nullopt for unknown
/// names.
std::optional<DType> parseDType(std::string_view name);

/// The canonical name used in signatures: "fp32", "u8", "i1", ...
constexpr std::string_view canonicalName(DType dtype) {
  return dtypeTraits(dtype).name;
}

/// The framework spellings of `dtype`; unused slots are empty.
constexpr const std::array<std::string_view, kMaxFrameworkNames> &
frameworkNames(DType dtype) {
  return dtypeTraits(dtype).frameworkNames;
}

/// What kind of number `dtype` holds.
constexpr DTypeKind kindOf(DType dtype) { return dtypeTraits(dtype).kind; }

/// i1.
constexpr bool isBool(DType dtype) { return kindOf(dtype) == DTypeKind::Bool; }

/// i8 to i64 and u8 to u64; not i1 (see DTypeKind::Bool).
constexpr bool isInteger(DType dtype) {
  return kindOf(dtype) == DTypeKind::SignedInt ||
         kindOf(dtype) == DTypeKind::UnsignedInt;
}

/// Every floating-point format, fp8 included.
constexpr bool isFloat(DType dtype) {
  return kindOf(dtype) == DTypeKind::Float;
}

/// Whether `dtype` holds negative values: the signed integers and every
/// float format (torch's `dtype.is_signed`); not i1 or u8 to u64.
constexpr bool isSigned(DType dtype) {
  return kindOf(dtype) == DTypeKind::SignedInt || isFloat(dtype);
}

/// Bits of a value (i1: 1, fp8: 8).
constexpr unsigned bitWidth(DType dtype) { return dtypeTraits(dtype).bits; }

/// Storage size of one element in bytes (i1 is stored as one byte).
constexpr unsigned byteWidth(DType dtype) { return dtypeTraits(dtype).bytes; }

/// Stored mantissa bits of a float format (fp16: 10, fp8e5: 2); 0 for the
/// others.
constexpr unsigned mantissaBits(DType dtype) {
  return dtypeTraits(dtype).mantissaBits;
}

/// The least value of an integer dtype or i1 (0 for i1 and u*); 0 for
/// floats.
constexpr Int128 integerMin(DType dtype) {
  return kindOf(dtype) == DTypeKind::SignedInt
             ? -(static_cast<Int128>(1) << (bitWidth(dtype) - 1))
             : 0;
}

/// The greatest value of an integer dtype or i1 (1 for i1); 0 for floats.
constexpr Int128 integerMax(DType dtype) {
  if (isFloat(dtype))
    return 0;
  unsigned valueBits = bitWidth(dtype) - (isSigned(dtype) ? 1 : 0);
  return (static_cast<Int128>(1) << valueBits) - 1;
}

/// The element type of the matching `!kjit.ptr<...>` as MLIR spells it
/// ("f32", "ui8", "f8E4M3FN"), or an empty view where MLIR has no such type
/// (fp8e4b15).
constexpr std::string_view kernelIRTypeName(DType dtype) {
  return dtypeTraits(dtype).kernelIR;
}

} // namespace kjit::rt

#endif // KJIT_MODEL_DTYPE_H
