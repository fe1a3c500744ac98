//===- Npy.h - numpy .npy files for kjit-run --------------------*- C++ -*-===//
//
// Reading and writing numpy's .npy format, so that kjit-run can take inputs
// from and hand outputs to Python. Reads format versions 1.0, 2.0 and 3.0
// (3.0 differs only in allowing a UTF-8 header); writes 1.0, or 2.0 when the
// header would not fit 1.0's 16-bit length, as numpy does. Little-endian,
// C-order arrays of the plain numeric dtypes only.
//
// bf16 has no numpy dtype: it is written as '<u2' holding the raw bits and a
// bf16 tensor reads '<u2' data as raw bits, so a round trip is lossless and
// Python recovers the values with `a.view(ml_dtypes.bfloat16)` or
// `torch.from_numpy(a.view(np.int16)).view(torch.bfloat16)`. The fp8 dtypes
// have no numpy dtype either and are refused.
//
//===----------------------------------------------------------------------===//

#ifndef KJIT_TOOLS_KJIT_RUN_NPY_H
#define KJIT_TOOLS_KJIT_RUN_NPY_H

#include "Buffer.h"

#include "absl/status/status.h"
#include "absl/status/statusor.h"

#include <optional>
#include <string>
#include <string_view>

namespace kjit::run {

/// The numpy type string of `dtype` as written to a file ('<f4', '|u1',
/// '|b1', '<f2', ...; '<u2' for bf16), or an empty view for the fp8 dtypes.
std::string_view npyDescr(rt::DType dtype);

/// The dtype of a numpy type string, for a file read as `expected` (which
/// decides between u16 and bf16 for '<u2'). Accepts the byte-order marks
/// '<', '=' and, for one-byte types, '|'; big-endian data and types kjit
/// has no dtype for (complex, strings, records, ...) are errors.
absl::StatusOr<rt::DType> dtypeOfNpyDescr(std::string_view descr,
                                          std::optional<rt::DType> expected);

/// What a .npy header says, before the data is read.
struct NpyHeader {
  /// The 'descr' entry as written ("<f4").
  std::string descr;
  /// The dtype it maps to.
  rt::DType dtype = rt::DType::FP32;
  Shape shape;
  /// Byte offset of the data in the file.
  uint64_t dataOffset = 0;
};

/// Parses the preamble and header at the start of `bytes` (the file's first
/// bytes, at least the whole header), for a file of `fileSize` bytes, and
/// checks that the data size the header implies is exactly what the file
/// holds after it. `expected`, when given, maps '<u2' to bf16 (see above).
/// Errors say what is wrong without naming the file; readNpy adds it.
absl::StatusOr<NpyHeader> parseNpyHeader(std::string_view bytes,
                                         uint64_t fileSize,
                                         std::optional<rt::DType> expected);

/// Reads the .npy file at `path` into a new buffer. `expected` maps '<u2' to
/// bf16 when it is bf16; dtype and shape checks against what the user asked
/// for are the caller's. The header and the data size are validated against
/// the file size before anything is allocated, so a corrupt or truncated
/// file is an error, never a crash or a huge allocation. Messages start
/// with "npy file 'PATH': ".
absl::StatusOr<HostBuffer>
readNpy(const std::string &path,
        std::optional<rt::DType> expected = std::nullopt);

/// The complete .npy encoding of `buffer` (preamble, header, data).
absl::StatusOr<std::string> encodeNpy(const HostBuffer &buffer);

/// Writes `buffer` to `path` as a .npy file (format 1.0 unless the header
/// needs 2.0). Fails for fp8 and on any I/O error, naming the file.
absl::Status writeNpy(const std::string &path, const HostBuffer &buffer);

} // namespace kjit::run

#endif // KJIT_TOOLS_KJIT_RUN_NPY_H
