//===- DType.cpp - tensor element types of the runtime --------------------===//

#include "kjit/Model/DType.h"

#include "absl/container/flat_hash_map.h"

namespace kjit::rt {
namespace {

/// The accessors index the table by enumerator, so each row must sit at its
/// enumerator, and the widths must agree with each other.
constexpr bool tableIsConsistent() {
  for (int i = 0; i < kNumDTypes; ++i) {
    const DTypeTraits &t = kDTypeTraits[i];
    if (static_cast<int>(t.dtype) != i || t.name.empty())
      return false;
    if (t.bytes * 8u < t.bits || (t.bytes - 1) * 8u >= t.bits)
      return false;
    // A float has a sign bit, an exponent of two bits at least and a
    // mantissa; nothing else has a mantissa.
    bool isFloat = t.kind == DTypeKind::Float;
    if (isFloat != (t.mantissaBits > 0) ||
        (isFloat && t.mantissaBits + 3u > t.bits))
      return false;
  }
  // No name stands for two dtypes.
  for (const DTypeTraits &a : kDTypeTraits)
    for (const DTypeTraits &b : kDTypeTraits)
      for (std::string_view x : a.frameworkNames)
        for (std::string_view y : b.frameworkNames)
          if ((a.name == b.name || x == b.name || (x == y && !x.empty())) &&
              a.dtype != b.dtype)
            return false;
  return true;
}
static_assert(tableIsConsistent(), "kDTypeTraits is out of order or wrong");

/// Every name of the table, canonical and framework, to its dtype.
const absl::flat_hash_map<std::string_view, DType> &nameTable() {
  static const auto *table = [] {
    auto *map = new absl::flat_hash_map<std::string_view, DType>();
    for (const DTypeTraits &entry : kDTypeTraits) {
      map->emplace(entry.name, entry.dtype);
      for (std::string_view name : entry.frameworkNames)
        if (!name.empty())
          map->emplace(name, entry.dtype);
    }
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

} // namespace kjit::rt
