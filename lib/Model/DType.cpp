//===- DType.cpp - tensor element types of the runtime -------------------===//

#include "kjit/Model/DType.h"

#include "absl/container/flat_hash_map.h"

#include <array>

namespace kjit::rt {
namespace {

struct DTypeInfo {
  DType dtype;
  std::string_view canonical;
  unsigned bytes;
  std::string_view kernelIR;
};

// Indexed by the DType enumerator.
constexpr std::array<DTypeInfo, kNumDTypes> kInfo = {{
    {DType::I1, "i1", 1, "i1"},
    {DType::I8, "i8", 1, "i8"},
    {DType::I16, "i16", 2, "i16"},
    {DType::I32, "i32", 4, "i32"},
    {DType::I64, "i64", 8, "i64"},
    {DType::U8, "u8", 1, "ui8"},
    {DType::U16, "u16", 2, "ui16"},
    {DType::U32, "u32", 4, "ui32"},
    {DType::U64, "u64", 8, "ui64"},
    {DType::FP16, "fp16", 2, "f16"},
    {DType::BF16, "bf16", 2, "bf16"},
    {DType::FP32, "fp32", 4, "f32"},
    {DType::FP64, "fp64", 8, "f64"},
    {DType::FP8E4NV, "fp8e4nv", 1, "f8E4M3FN"},
    {DType::FP8E5, "fp8e5", 1, "f8E5M2"},
    {DType::FP8E4B15, "fp8e4b15", 1, ""},
    {DType::FP8E4B8, "fp8e4b8", 1, "f8E4M3FNUZ"},
    {DType::FP8E5B16, "fp8e5b16", 1, "f8E5M2FNUZ"},
}};

const DTypeInfo &info(DType dtype) { return kInfo[static_cast<int>(dtype)]; }

/// The framework spellings of the reference's canonicalisation table; every
/// canonical name also maps to itself.
const absl::flat_hash_map<std::string_view, DType> &nameTable() {
  static const auto *table = [] {
    auto *map = new absl::flat_hash_map<std::string_view, DType>{
        {"bool", DType::I1},
        {"float8e4nv", DType::FP8E4NV},
        {"float8e5", DType::FP8E5},
        {"float8e4b15", DType::FP8E4B15},
        {"float8_e4m3fn", DType::FP8E4NV},
        {"float8e4b8", DType::FP8E4B8},
        {"float8_e4m3fnuz", DType::FP8E4B8},
        {"float8_e5m2", DType::FP8E5},
        {"float8e5b16", DType::FP8E5B16},
        {"float8_e5m2fnuz", DType::FP8E5B16},
        {"float16", DType::FP16},
        {"bfloat16", DType::BF16},
        {"float32", DType::FP32},
        {"float64", DType::FP64},
        {"int8", DType::I8},
        {"int16", DType::I16},
        {"int32", DType::I32},
        {"int64", DType::I64},
        {"uint8", DType::U8},
        {"uint16", DType::U16},
        {"uint32", DType::U32},
        {"uint64", DType::U64},
    };
    for (const DTypeInfo &entry : kInfo)
      map->emplace(entry.canonical, entry.dtype);
    return map;
  }();
  return *table;
}

} // namespace

std::optional<DType> parseDType(std::string_view name) {
  // Framework dtypes print qualified ("torch.float32"); the table keys on
  // the last component, as the reference does.
  if (size_t dot = name.rfind('.'); dot != std::string_view::npos)
    name.remove_prefix(dot + 1);
  auto it = nameTable().find(name);
  if (it == nameTable().end())
    return std::nullopt;
  return it->second;
}

std::string_view canonicalName(DType dtype) { return info(dtype).canonical; }

unsigned byteWidth(DType dtype) { return info(dtype).bytes; }

std::string_view kernelIRTypeName(DType dtype) { return info(dtype).kernelIR; }

} // namespace kjit::rt
