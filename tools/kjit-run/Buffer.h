//===- Buffer.h - host buffers of kjit-run ----------------------*- C++ -*-===//
//
// The host memory kjit-run hands to kernels: an aligned, owning buffer with a
// dtype and a shape; the element conversions it needs (fp16 and bf16 with
// round-to-nearest-even); the reproducible initializers (random, arange,
// fill); and the text kjit-run prints for an output (its leading and trailing
// elements, or a checksum). Links only kjit-runtime: kjit-run must start
// without loading LLVM.
//
//===----------------------------------------------------------------------===//

#ifndef KJIT_TOOLS_KJIT_RUN_BUFFER_H
#define KJIT_TOOLS_KJIT_RUN_BUFFER_H

#include "kjit/Model/Argument.h"
#include "kjit/Model/DType.h"
#include "kjit/Model/FloatFormats.h"

#include "absl/status/statusor.h"

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace kjit::run {

/// A tensor shape: one non-negative extent per dimension; empty for a 0-d
/// tensor (one element).
using Shape = std::vector<int64_t>;

/// "[4096]", "[64,128]", "[]": the shape as the argument syntax writes it,
/// so that printed shapes can be pasted back into `--arg`.
std::string formatShape(const Shape &shape);

/// Number of elements of `shape`, or nullopt when it overflows int64_t.
std::optional<int64_t> numElementsOf(const Shape &shape);

//===----------------------------------------------------------------------===//
// HostBuffer
//===----------------------------------------------------------------------===//

/// An owning, zero-initialized block of host memory holding a tensor. The
/// address is 64-byte aligned, so a tensor argument made from it always gets
/// the binder's 16-byte divisibility specialization (`D`), as a framework
/// allocation would; that also suits vector loads of any width the host
/// backend emits. Move-only.
class HostBuffer {
public:
  /// Alignment of every buffer's address in bytes.
  static constexpr size_t kAlignment = 64;

  /// An empty buffer without memory (fp32, shape [0]).
  HostBuffer() = default;

  /// Allocates a zero-filled buffer. Fails when the byte size overflows or
  /// exceeds the machine's physical memory (a typo such as f32[10000000000]
  /// is reported instead of swapping or being killed), or when the
  /// allocation fails. A buffer of zero elements still has a valid, aligned
  /// address.
  static absl::StatusOr<HostBuffer> allocate(rt::DType dtype, Shape shape);

  HostBuffer(HostBuffer &&) = default;
  HostBuffer &operator=(HostBuffer &&) = default;
  HostBuffer(const HostBuffer &) = delete;
  HostBuffer &operator=(const HostBuffer &) = delete;

  rt::DType dtype() const { return dtype_; }
  const Shape &shape() const { return shape_; }
  int64_t numElements() const { return numElements_; }
  /// Bytes of tensor data (numElements * byteWidth(dtype)).
  size_t sizeInBytes() const { return sizeInBytes_; }

  void *data() { return memory_.get(); }
  const void *data() const { return memory_.get(); }
  /// The address to pass as a tensor argument.
  uint64_t address() const {
    return static_cast<uint64_t>(reinterpret_cast<uintptr_t>(memory_.get()));
  }
  /// A tensor argument for this buffer.
  rt::Argument toArgument(bool readOnly = false) const {
    return rt::Argument::tensor(address(), dtype_, readOnly);
  }

private:
  struct Free {
    void operator()(void *pointer) const { std::free(pointer); }
  };

  std::unique_ptr<void, Free> memory_;
  rt::DType dtype_ = rt::DType::FP32;
  Shape shape_ = {0};
  int64_t numElements_ = 0;
  size_t sizeInBytes_ = 0;
};

// The fp16/bf16 conversions live in the model library, whose users convert
// global values too (kjit/Model/FloatFormats.h).
using rt::bf16FromDouble;
using rt::bf16ToDouble;
using rt::decodeBinaryFormat;
using rt::fp16FromDouble;
using rt::fp16ToDouble;
using rt::roundToBinaryFormat;

/// Whether kjit-run can convert numbers to and from `dtype`: every dtype but
/// the fp8 ones, whose encodings it does not implement (they support only
/// `zeros` and are printed as raw bits).
bool hasNumericConversion(rt::DType dtype);

//===----------------------------------------------------------------------===//
// Initializers
//===----------------------------------------------------------------------===//

/// The splitmix64 generator (Steele, Lea and Flood, 2014): a 64-bit state
/// advanced by a constant, then mixed. kjit-run writes its own generator
/// because the standard distributions (std::uniform_real_distribution, ...)
/// are implementation-defined: the same seed would give different inputs
/// with another standard library.
class SplitMix64 {
public:
  explicit SplitMix64(uint64_t seed) : state_(seed) {}
  /// The next 64-bit output.
  uint64_t next() {
    uint64_t z = (state_ += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }

private:
  uint64_t state_;
};

/// The seed `random` uses without `seed=N`.
inline constexpr uint64_t kDefaultSeed = 0;

/// Fills `buffer` with element i taken from the i-th output r of
/// SplitMix64(seed). Floats are uniform in [-1, 1) on the grid of 2^-p where
/// p is the dtype's stored mantissa width (fp32: -1 + (r >> 40) * 2^-23),
/// so every value is exact in the dtype and no rounding is involved;
/// integers are uniform in [0, 100) as (r * 100) >> 64 (i1: [0, 2)).
/// Requires hasNumericConversion(dtype).
void fillRandom(HostBuffer &buffer, uint64_t seed);

/// Fills element i with i converted to the dtype: rounded to nearest even
/// for floats, modulo 2^bits for integers (as numpy's astype), i % 2 for i1.
/// Requires hasNumericConversion(dtype).
void fillArange(HostBuffer &buffer);

/// Fills every element with `value`, an Int, Float or Bool argument already
/// checked to be representable (see ArgSpec.h). Requires
/// hasNumericConversion(dtype).
void fillValue(HostBuffer &buffer, const rt::Argument &value);

//===----------------------------------------------------------------------===//
// Output
//===----------------------------------------------------------------------===//

/// "fp32[4096]": the canonical dtype name and the shape.
std::string formatType(const HostBuffer &buffer);

/// The text of element `index`: the shortest decimal that reads back to the
/// same value of the dtype for floats ("0.1", "-inf", "nan"), decimal for
/// integers, "true"/"false" for i1, hex bits ("0x3c") for fp8.
std::string formatElement(const HostBuffer &buffer, int64_t index);

/// "fp32[4] [0.5, -0.25, 1, 1.75]". When the buffer has more than
/// `maxElements` elements, the first (maxElements + 1) / 2 and the last
/// maxElements / 2 are shown around "...": "fp32[4096] [0, 1, ..., 4095]".
std::string formatBuffer(const HostBuffer &buffer, size_t maxElements = 8);

/// A digest of an output, for buffers too large to print.
struct Checksum {
  /// Sum of the element values as doubles, in index order (so it is the same
  /// on every machine); nullopt for fp8, which has no conversion.
  std::optional<double> sum;
  /// 64-bit FNV-1a hash of the data bytes: equal hashes mean equal bits.
  uint64_t fnv1a = 0;
};

/// The checksum of `buffer`.
Checksum computeChecksum(const HostBuffer &buffer);

/// 64-bit FNV-1a of `size` bytes at `data`.
uint64_t fnv1a64(const void *data, size_t size);

/// "fp32[4096] sum=12.5 fnv1a=0x0123456789abcdef" (sum=n/a for fp8).
std::string formatChecksum(const HostBuffer &buffer);

} // namespace kjit::run

#endif // KJIT_TOOLS_KJIT_RUN_BUFFER_H
