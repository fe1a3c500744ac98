//===- ArgEncoding.h - launch arguments as ABI storage ----------*- C++ -*-===//
//
// How a bound launch argument crosses the plugin ABI (include/kjit-c/Plugin.h,
// kjit_arg): the stable dtype code, the pointer flags, and the value encoded
// in the parameter's signature type (`bits`, `bits_size`), next to ABI 1.0's
// kind and value fields. The runtime encodes each argument once per launch,
// so that backends copy bytes and never convert again. Part of the model
// library (it applies the binder's value rules): no LLVM or MLIR header.
//
//===----------------------------------------------------------------------===//

#ifndef KJIT_MODEL_ARGENCODING_H
#define KJIT_MODEL_ARGENCODING_H

#include "kjit-c/Plugin.h"
#include "kjit/Model/Argument.h"
#include "kjit/Model/DType.h"
#include "kjit/Model/Specialization.h"

#include "absl/status/status.h"

#include <cstdint>
#include <optional>

namespace kjit::rt {

/// The ABI's stable code of a dtype (KJIT_DTYPE_*; never 0).
int32_t abiDTypeCode(DType dtype);

/// The dtype of an ABI code; nullopt for KJIT_DTYPE_UNKNOWN and codes this
/// runtime does not know.
std::optional<DType> dtypeFromAbiCode(int32_t code);

/// Encodes `value` as the launch argument of a parameter of signature type
/// `type`. Writes the value fields of `arg` and nothing else (name, type
/// text, struct_size, is_constexpr are the caller's): the 1.1 storage fields
/// dtype, flags, bits and bits_size, and the 1.0 fields kind and
/// int/uint/float value, so that a backend built against ABI 1.0 keeps
/// working.
///
/// `value` is checked with the binder's own rules (lib/Model/ValueRules.h):
/// a value the binder bound to a parameter of this type always encodes (on
/// the launch path this is a no-op check); anything else is refused with the
/// binder's message, e.g. "integer 128 does not fit parameter type i8". Floats
/// round with FloatFormats.h (fp16 and bf16 straight from the double). A
/// scalar of an fp8 type has no encoding yet (Unimplemented). On an error the
/// value fields of `arg` are unspecified.
absl::Status encodeArgument(SigType type, const Argument &value, kjit_arg &arg);

} // namespace kjit::rt

#endif // KJIT_MODEL_ARGENCODING_H
