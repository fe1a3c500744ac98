//===- LittleEndian.h - fixed-width fields of cache formats -----*- C++ -*-===//
//
// The disk entry and the remote envelope store integers little-endian at
// fixed offsets; both formats read and write them with these.
//
//===----------------------------------------------------------------------===//

#ifndef KJIT_LIB_CACHE_LITTLEENDIAN_H
#define KJIT_LIB_CACHE_LITTLEENDIAN_H

#include <cstdint>
#include <string>
#include <string_view>

namespace kjit::cache::detail {

inline void put32(std::string &out, size_t at, uint32_t value) {
  for (int i = 0; i < 4; ++i)
    out[at + i] = char(value >> (8 * i));
}
inline void put64(std::string &out, size_t at, uint64_t value) {
  for (int i = 0; i < 8; ++i)
    out[at + i] = char(value >> (8 * i));
}
inline uint32_t get32(std::string_view in, size_t at) {
  uint32_t value = 0;
  for (int i = 0; i < 4; ++i)
    value |= uint32_t(uint8_t(in[at + i])) << (8 * i);
  return value;
}
inline uint64_t get64(std::string_view in, size_t at) {
  uint64_t value = 0;
  for (int i = 0; i < 8; ++i)
    value |= uint64_t(uint8_t(in[at + i])) << (8 * i);
  return value;
}

} // namespace kjit::cache::detail

#endif // KJIT_LIB_CACHE_LITTLEENDIAN_H
