//===- BackendSpecializer.h - a backend's own specialization ----*- C++ -*-===//
//
// The binder's BackendAttributes over a backend's specialize entry (plugin
// ABI 1.3) for one device: which of the backend's attributes hold for a
// launch value. Made on the stack of a launch, warmup or preload, and only
// for a backend that describes attributes, so the others pay nothing.
//
//===----------------------------------------------------------------------===//

#ifndef KJIT_LIB_RUNTIME_BACKENDSPECIALIZER_H
#define KJIT_LIB_RUNTIME_BACKENDSPECIALIZER_H

#include "kjit/Model/ArgEncoding.h"
#include "kjit/Model/Binder.h"
#include "kjit/Runtime/Runtime.h"
#include "kjit/Support/StrCat.h"

#include <optional>

namespace kjit::rt {

class BackendSpecializer final : public BackendAttributes {
public:
  BackendSpecializer(const Backend &backend, int32_t device)
      : backend_(backend), device_(device) {}

  /// One for `backend` on `device`, or nothing when the backend has no
  /// attributes of its own (or is not known yet: its error comes later).
  static std::optional<BackendSpecializer>
  forBackend(const absl::StatusOr<const Backend *> &backend, int32_t device) {
    if (!backend.ok() || (*backend)->specAttributes.empty())
      return std::nullopt;
    return BackendSpecializer(**backend, device);
  }

  const std::vector<std::string> &names() const override {
    return backend_.specAttributes;
  }

  bool asks(SigType type) const override { return applicable(type) != 0; }

  absl::StatusOr<uint32_t> of(size_t param, SigType type,
                              const Argument &value) const override {
    kjit_arg arg;
    std::memset(&arg, 0, sizeof(arg));
    arg.struct_size = sizeof(arg);
    if (absl::Status s = encodeArgument(type, value, arg); !s.ok())
      return s;
    absl::StatusOr<uint32_t> bits = backend_.ref.specialize(
        device_, uint32_t(param), arg.dtype, arg.flags, arg.bits);
    if (!bits.ok())
      return bits.status();
    // Every answer is checked: a bit the backend did not describe, or one
    // for another kind of value, would key and compile on a lie.
    size_t count = backend_.specAttributes.size();
    if (uint32_t beyond = *bits & ~((1u << count) - 1))
      return absl::InternalError(
          kjit::strCat(backend_.ref.pluginDescription(),
                       ": specialize answered bits 0x", absl::Hex(beyond),
                       " beyond the ", count, " attributes it describes"));
    if (uint32_t wrong = *bits & ~applicable(type)) {
      size_t bit = 0;
      while (!(wrong & (1u << bit)))
        ++bit;
      return absl::InternalError(kjit::strCat(
          backend_.ref.pluginDescription(), ": specialize says attribute '",
          backend_.specAttributes[bit], "' holds for a value of type ",
          toString(type), ", a kind it does not describe it for"));
    }
    return *bits;
  }

private:
  /// The bits of the attributes that apply to values of `type`.
  uint32_t applicable(SigType type) const {
    if (type.kind == SigType::Kind::Pointer ||
        type.kind == SigType::Kind::ConstPointer)
      return backend_.specPointerAttributes;
    if (type.kind == SigType::Kind::Scalar && isInteger(type.dtype) &&
        type.dtype != DType::I1)
      return backend_.specIntegerAttributes;
    return 0;
  }

  const Backend &backend_;
  int32_t device_;
};

} // namespace kjit::rt

#endif // KJIT_LIB_RUNTIME_BACKENDSPECIALIZER_H
