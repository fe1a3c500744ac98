//===- ArgSpec.h - kjit-run's argument syntax -------------------*- C++ -*-===//
//
// Parses the values of `--arg NAME=VALUE` and `--global NAME=VALUE` into
// runtime arguments, and builds the host buffers that tensor arguments
// describe. The syntax is documented in docs/KjitRun.md:
//
//   x=f32[4096]:random            a tensor: DTYPE[SHAPE]:INIT[:const]
//   w=const:fp16[64,128]:npy(w.npy)
//   n=4096  eps=1e-5  flag=true  bias=none  T=dtype:fp16
//
// Every malformed value is an error whose message names the argument and
// says what is wrong.
//
//===----------------------------------------------------------------------===//

#ifndef KJIT_TOOLS_KJIT_RUN_ARGSPEC_H
#define KJIT_TOOLS_KJIT_RUN_ARGSPEC_H

#include "Buffer.h"

#include "kjit/Model/Argument.h"
#include "kjit/Model/DType.h"

#include "absl/status/statusor.h"

#include <optional>
#include <string>
#include <string_view>

namespace kjit::run {

/// Looks up a dtype: any name rt::parseDType knows (canonical "fp32", "u8",
/// "i1"; framework "float32", "uint8", "bool") plus the aliases "f16",
/// "f32", "f64" (MLIR and numpy codes), "ui8".."ui64" (MLIR), "half" and
/// "double" (torch).
std::optional<rt::DType> parseDTypeName(std::string_view name);

/// How a tensor's buffer is initialized.
enum class TensorInit {
  Zeros,
  Ones,
  /// Element i is i (see fillArange).
  Arange,
  /// Reproducible uniform values (see fillRandom).
  Random,
  /// Every element is one value.
  Fill,
  /// The contents of a .npy file.
  Npy,
};

/// A parsed tensor value: what to allocate and how to fill it.
struct TensorSpec {
  rt::DType dtype = rt::DType::FP32;
  /// The shape; absent only for `npy` written without one (`f32:npy(f)`),
  /// where the file decides.
  std::optional<Shape> shape;
  TensorInit init = TensorInit::Zeros;
  /// The seed of `random`.
  uint64_t seed = kDefaultSeed;
  /// The value of `fill`: an Int, Float or Bool argument, already checked
  /// to be representable in `dtype`.
  rt::Argument fillValue;
  /// The file of `npy`.
  std::string npyPath;
  /// Marked `const`: binds as a read-only tensor.
  bool readOnly = false;
};

/// A parsed `--arg` value: a tensor to build or a scalar argument.
struct ArgValue {
  /// Set for a tensor.
  std::optional<TensorSpec> tensor;
  /// The value when `tensor` is not set: Int, Float, Bool, None or DType.
  rt::Argument scalar;

  bool isTensor() const { return tensor.has_value(); }
};

/// A parsed `--arg NAME=VALUE`.
struct NamedArg {
  std::string name;
  ArgValue value;
};

/// A parsed `--global NAME=VALUE`.
struct NamedGlobal {
  std::string name;
  rt::Argument value;
};

/// Parses the scalar syntax: integers (decimal or 0x hex, optionally signed,
/// any value that fits in 128 bits, so that the binder can reject what its
/// parameter cannot hold), floats (1.5, 1e-5, .5, inf, -inf, nan), true and
/// false (also True, False), none (also None), and `dtype:NAME`. `what`
/// names the value in messages ("argument 'n'").
absl::StatusOr<rt::Argument> parseScalar(std::string_view what,
                                         std::string_view text);

/// Parses the value of `--arg NAME=VALUE` (the part after '='): a tensor
/// when it contains ':' or '[' (other than `dtype:NAME`), else a scalar.
absl::StatusOr<ArgValue> parseArgValue(std::string_view name,
                                       std::string_view text);

/// Parses a whole `--arg` operand, "NAME=VALUE".
absl::StatusOr<NamedArg> parseArgOption(std::string_view text);

/// Parses a whole `--global` operand, "NAME=VALUE"; the value must be a
/// scalar. Global names may be dotted ("mod.BLOCK").
absl::StatusOr<NamedGlobal> parseGlobalOption(std::string_view text);

/// Allocates and fills the buffer `spec` describes; for `npy`, reads the
/// file and checks its dtype and shape against the spec. Messages start
/// with "argument 'NAME': ".
absl::StatusOr<HostBuffer> buildTensor(std::string_view name,
                                       const TensorSpec &spec);

} // namespace kjit::run

#endif // KJIT_TOOLS_KJIT_RUN_ARGSPEC_H
