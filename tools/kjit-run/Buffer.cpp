//===- Buffer.cpp - host buffers of kjit-run ------------------------------===//

#include "Buffer.h"

#include "absl/strings/str_format.h"
#include "kjit/Support/StrCat.h"

#include <unistd.h>

#include <cassert>
#include <charconv>
#include <cmath>
#include <cstring>
#include <limits>

namespace kjit::run {

using rt::DType;

std::string formatShape(const Shape &shape) {
  std::string text = "[";
  for (size_t i = 0; i < shape.size(); ++i)
    kjit::strAppend(&text, i ? "," : "", shape[i]);
  text += "]";
  return text;
}

std::optional<int64_t> numElementsOf(const Shape &shape) {
  int64_t count = 1;
  for (int64_t extent : shape) {
    if (extent < 0 || __builtin_mul_overflow(count, extent, &count))
      return std::nullopt;
  }
  return count;
}

//===----------------------------------------------------------------------===//
// HostBuffer
//===----------------------------------------------------------------------===//

absl::StatusOr<HostBuffer> HostBuffer::allocate(DType dtype, Shape shape) {
  std::string type = kjit::strCat(rt::canonicalName(dtype), formatShape(shape));
  for (int64_t extent : shape)
    if (extent < 0)
      return absl::InvalidArgumentError(
          kjit::strCat(type, " has a negative dimension"));
  std::optional<int64_t> count = numElementsOf(shape);
  size_t bytes = 0;
  if (!count ||
      __builtin_mul_overflow(static_cast<size_t>(*count),
                             static_cast<size_t>(rt::byteWidth(dtype)), &bytes))
    return absl::InvalidArgumentError(
        kjit::strCat(type, " has more bytes than an address space holds"));
  // Refusing what cannot fit in memory turns a typo into a message instead
  // of minutes of swapping or the OOM killer (Linux overcommits, so a huge
  // allocation would otherwise succeed and die while being zeroed).
  long pages = sysconf(_SC_PHYS_PAGES);
  long pageSize = sysconf(_SC_PAGESIZE);
  if (pages > 0 && pageSize > 0) {
    unsigned __int128 physical = static_cast<unsigned __int128>(pages) *
                                 static_cast<unsigned __int128>(pageSize);
    if (bytes > physical)
      return absl::ResourceExhaustedError(kjit::strCat(
          type, " needs ", bytes, " bytes, more than this machine's ",
          static_cast<uint64_t>(physical), " bytes of memory"));
  }
  // aligned_alloc wants a multiple of the alignment; one block at least, so
  // that an empty tensor still has a valid, aligned address.
  size_t rounded = bytes == 0
                       ? kAlignment
                       : (bytes + kAlignment - 1) / kAlignment * kAlignment;
  if (rounded < bytes)
    return absl::InvalidArgumentError(
        kjit::strCat(type, " has more bytes than an address space holds"));
  void *memory = std::aligned_alloc(kAlignment, rounded);
  if (!memory)
    return absl::ResourceExhaustedError(
        kjit::strCat("cannot allocate ", bytes, " bytes for ", type));
  std::memset(memory, 0, rounded);

  HostBuffer buffer;
  buffer.memory_.reset(memory);
  buffer.dtype_ = dtype;
  buffer.shape_ = std::move(shape);
  buffer.numElements_ = *count;
  buffer.sizeInBytes_ = bytes;
  return buffer;
}

bool hasNumericConversion(DType dtype) {
  // kjit-run converts fp16, bf16, fp32 and fp64, but no fp8 format.
  return !rt::isFloat(dtype) || rt::bitWidth(dtype) > 8;
}

//===----------------------------------------------------------------------===//
// Element access
//===----------------------------------------------------------------------===//

namespace {

template <typename T> void store(void *at, T value) {
  std::memcpy(at, &value, sizeof(T));
}
template <typename T> T load(const void *at) {
  T value;
  std::memcpy(&value, at, sizeof(T));
  return value;
}

void storeFloat(DType dtype, void *at, double value) {
  switch (dtype) {
  case DType::FP16:
    return store(at, fp16FromDouble(value));
  case DType::BF16:
    return store(at, bf16FromDouble(value));
  case DType::FP32:
    // The conversion rounds to nearest even (the default rounding mode).
    return store(at, static_cast<float>(value));
  case DType::FP64:
    return store(at, value);
  default:
    assert(false && "not a float dtype");
  }
}

/// Stores `value` modulo 2^bits (i1: modulo 2), or converted for floats.
void storeInt(DType dtype, void *at, rt::Int128 value) {
  if (rt::isFloat(dtype))
    return storeFloat(dtype, at, static_cast<double>(value));
  uint64_t low = static_cast<uint64_t>(static_cast<unsigned __int128>(value));
  switch (rt::byteWidth(dtype)) {
  case 1:
    return store(at, static_cast<uint8_t>(dtype == DType::I1 ? low & 1 : low));
  case 2:
    return store(at, static_cast<uint16_t>(low));
  case 4:
    return store(at, static_cast<uint32_t>(low));
  default:
    return store(at, low);
  }
}

/// The value of a float element.
double loadFloat(DType dtype, const void *at) {
  switch (dtype) {
  case DType::FP16:
    return fp16ToDouble(load<uint16_t>(at));
  case DType::BF16:
    return bf16ToDouble(load<uint16_t>(at));
  case DType::FP32:
    return load<float>(at);
  default:
    return load<double>(at);
  }
}

/// The value of an integer element (i1: 0 or nonzero).
rt::Int128 loadInt(DType dtype, const void *at) {
  // One return per type: `isSigned ? int32_t : uint32_t` would be unsigned
  // and lose the sign.
  bool isSigned = rt::isSigned(dtype);
  switch (rt::byteWidth(dtype)) {
  case 1:
    if (isSigned)
      return load<int8_t>(at);
    return load<uint8_t>(at);
  case 2:
    if (isSigned)
      return load<int16_t>(at);
    return load<uint16_t>(at);
  case 4:
    if (isSigned)
      return load<int32_t>(at);
    return load<uint32_t>(at);
  default:
    if (isSigned)
      return load<int64_t>(at);
    return load<uint64_t>(at);
  }
}

char *elementAt(HostBuffer &buffer, int64_t index) {
  return static_cast<char *>(buffer.data()) +
         index * static_cast<int64_t>(rt::byteWidth(buffer.dtype()));
}
const char *elementAt(const HostBuffer &buffer, int64_t index) {
  return static_cast<const char *>(buffer.data()) +
         index * static_cast<int64_t>(rt::byteWidth(buffer.dtype()));
}

} // namespace

//===----------------------------------------------------------------------===//
// Initializers
//===----------------------------------------------------------------------===//

void fillRandom(HostBuffer &buffer, uint64_t seed) {
  DType dtype = buffer.dtype();
  assert(hasNumericConversion(dtype) && "no conversion for this dtype");
  SplitMix64 generator(seed);
  if (rt::isFloat(dtype)) {
    // k has mantissa + 1 bits, so -1 + k * 2^-mantissa lies on a grid the
    // dtype represents exactly over all of [-1, 1).
    unsigned m = rt::mantissaBits(dtype);
    for (int64_t i = 0; i < buffer.numElements(); ++i) {
      uint64_t k = generator.next() >> (63 - m);
      storeFloat(dtype, elementAt(buffer, i),
                 std::ldexp(static_cast<double>(k), -int(m)) - 1.0);
    }
    return;
  }
  // Multiply-shift instead of `r % range`: no modulo bias, same cost.
  unsigned __int128 range = dtype == DType::I1 ? 2 : 100;
  for (int64_t i = 0; i < buffer.numElements(); ++i) {
    uint64_t value = static_cast<uint64_t>(
        (static_cast<unsigned __int128>(generator.next()) * range) >> 64);
    storeInt(dtype, elementAt(buffer, i), value);
  }
}

void fillArange(HostBuffer &buffer) {
  assert(hasNumericConversion(buffer.dtype()) && "no conversion");
  for (int64_t i = 0; i < buffer.numElements(); ++i)
    storeInt(buffer.dtype(), elementAt(buffer, i), i);
}

void fillValue(HostBuffer &buffer, const rt::Argument &value) {
  DType dtype = buffer.dtype();
  assert(hasNumericConversion(dtype) && "no conversion");
  if (buffer.numElements() == 0)
    return;
  // Convert once, then replicate the bytes.
  char *first = elementAt(buffer, 0);
  if (value.kind() == rt::ArgKind::Float)
    storeFloat(dtype, first, value.asFloat());
  else
    storeInt(dtype, first, value.asInt());
  unsigned width = rt::byteWidth(dtype);
  for (int64_t i = 1; i < buffer.numElements(); ++i)
    std::memcpy(elementAt(buffer, i), first, width);
}

//===----------------------------------------------------------------------===//
// Output
//===----------------------------------------------------------------------===//

std::string formatType(const HostBuffer &buffer) {
  return kjit::strCat(rt::canonicalName(buffer.dtype()),
                      formatShape(buffer.shape()));
}

namespace {

template <typename T> std::string shortest(T value) {
  char text[64];
  auto result = std::to_chars(text, text + sizeof(text), value);
  return std::string(text, result.ptr);
}

/// The shortest "%g"-style text of `value` that reads back to the same bits
/// of a narrow format (fp16: 5 digits at most, bf16: 4); std::to_chars only
/// knows float and double, whose shortest forms are too long for these
/// ("0.1" in fp16 is 0.0999755859375).
std::string shortestNarrow(double value, uint16_t (*encode)(double)) {
  uint16_t bits = encode(value);
  char text[64];
  for (int precision = 1; precision <= 17; ++precision) {
    auto result = std::to_chars(text, text + sizeof(text), value,
                                std::chars_format::general, precision);
    double reread = 0;
    std::from_chars(text, result.ptr, reread);
    // The shortest form of the digits found, so that to_chars picks fixed
    // or scientific notation by length ("0.1", not "1e-01").
    if (encode(reread) == bits)
      return shortest(reread);
  }
  auto result = std::to_chars(text, text + sizeof(text), value);
  return std::string(text, result.ptr);
}

} // namespace

std::string formatElement(const HostBuffer &buffer, int64_t index) {
  const char *at = elementAt(buffer, index);
  DType dtype = buffer.dtype();
  switch (dtype) {
  case DType::FP16:
  case DType::BF16: {
    double value = loadFloat(dtype, at);
    // Integers print exactly ("65504", not "6.55e+04"); so do inf and nan.
    if (!std::isfinite(value) ||
        (std::nearbyint(value) == value && std::fabs(value) < 0x1p53))
      return shortest(value);
    return shortestNarrow(value, dtype == DType::FP16 ? fp16FromDouble
                                                      : bf16FromDouble);
  }
  case DType::FP32:
    return shortest(load<float>(at));
  case DType::FP64:
    return shortest(load<double>(at));
  case DType::I1:
    return load<uint8_t>(at) ? "true" : "false";
  default:
    break;
  }
  if (!hasNumericConversion(dtype))
    return absl::StrFormat("0x%02x", load<uint8_t>(at));
  return rt::int128ToString(loadInt(dtype, at));
}

std::string formatBuffer(const HostBuffer &buffer, size_t maxElements) {
  std::string text = formatType(buffer) + " [";
  int64_t count = buffer.numElements();
  auto append = [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i)
      kjit::strAppend(&text, i == begin ? "" : ", ", formatElement(buffer, i));
  };
  if (static_cast<uint64_t>(count) <= maxElements) {
    append(0, count);
  } else {
    int64_t head = static_cast<int64_t>((maxElements + 1) / 2);
    int64_t tail = static_cast<int64_t>(maxElements / 2);
    append(0, head);
    text += head ? ", ..." : "...";
    if (tail) {
      text += ", ";
      append(count - tail, count);
    }
  }
  text += "]";
  return text;
}

uint64_t fnv1a64(const void *data, size_t size) {
  uint64_t hash = 0xcbf29ce484222325ull;
  const auto *bytes = static_cast<const unsigned char *>(data);
  for (size_t i = 0; i < size; ++i) {
    hash ^= bytes[i];
    hash *= 0x100000001b3ull;
  }
  return hash;
}

Checksum computeChecksum(const HostBuffer &buffer) {
  Checksum checksum;
  checksum.fnv1a = fnv1a64(buffer.data(), buffer.sizeInBytes());
  DType dtype = buffer.dtype();
  if (!hasNumericConversion(dtype))
    return checksum;
  double sum = 0;
  for (int64_t i = 0; i < buffer.numElements(); ++i) {
    const char *at = elementAt(buffer, i);
    sum += rt::isFloat(dtype) ? loadFloat(dtype, at)
                              : static_cast<double>(loadInt(dtype, at));
  }
  checksum.sum = sum;
  return checksum;
}

std::string formatChecksum(const HostBuffer &buffer) {
  Checksum checksum = computeChecksum(buffer);
  return kjit::strCat(formatType(buffer),
                      " sum=", checksum.sum ? shortest(*checksum.sum) : "n/a",
                      absl::StrFormat(" fnv1a=0x%016x", checksum.fnv1a));
}

} // namespace kjit::run
