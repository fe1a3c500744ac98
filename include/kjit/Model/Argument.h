//===- Argument.h - launch argument values of the runtime -------*- C++ -*-===//
//
// The values a kernel launch binds to parameters: tensors (a device address
// with a dtype and const-ness), integers (Int128, from DType.h), floats,
// bools, None, and the values only a constexpr parameter accepts (a dtype; a
// callable, which is modelled so that it can be rejected with a clear
// message). Part of the model library (docs/Architecture.md): no LLVM or MLIR
// header may be included here.
//
//===----------------------------------------------------------------------===//

#ifndef KJIT_MODEL_ARGUMENT_H
#define KJIT_MODEL_ARGUMENT_H

#include "kjit/Model/DType.h"

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <string_view>

namespace kjit::rt {

/// The kinds of launch values.
enum class ArgKind : uint8_t {
  None,
  Bool,
  Int,
  Float,
  Tensor,
  DType,
  Callable,
};

/// One launch value. Trivially copyable and 32 bytes, so that binding copies
/// arguments into preallocated storage without touching the heap.
class Argument {
public:
  /// None (Python's `None`): a null pointer for pointer parameters.
  constexpr Argument() = default;

  /// None.
  static constexpr Argument none() { return Argument(); }
  /// A bool.
  static Argument boolean(bool value) {
    Argument arg(ArgKind::Bool);
    arg.int_ = value ? 1 : 0;
    return arg;
  }
  /// An integer of any width; whether it fits is decided at binding.
  static Argument integer(Int128 value) {
    Argument arg(ArgKind::Int);
    arg.int_ = value;
    return arg;
  }
  /// A floating-point number (Python floats are doubles).
  static Argument fp(double value) {
    Argument arg(ArgKind::Float);
    arg.float_ = value;
    return arg;
  }
  /// A tensor at device address `address` with element type `dtype`; a
  /// `readOnly` tensor binds as a const pointer (`*k`).
  static Argument tensor(uint64_t address, DType dtype, bool readOnly = false) {
    Argument arg(ArgKind::Tensor);
    arg.address_ = address;
    arg.dtype_ = dtype;
    arg.readOnly_ = readOnly;
    return arg;
  }
  /// A tensor known only by its dtype (warmup compiles without memory). Its
  /// address counts as 16-byte aligned, as the reference's MockTensor
  /// (data_ptr() 0, "optimistically assumes multiple of 16") does.
  static Argument mockTensor(DType dtype, bool readOnly = false) {
    Argument arg = tensor(0, dtype, readOnly);
    arg.mock_ = true;
    return arg;
  }
  /// A dtype, as a constexpr value (`tl.float32` passed to a kernel).
  static Argument dtypeValue(DType dtype) {
    Argument arg(ArgKind::DType);
    arg.dtype_ = dtype;
    return arg;
  }
  /// A host callable. Never valid as a kernel argument; it exists so that the
  /// binder can name the parameter that received one.
  static Argument callable(const void *function) {
    Argument arg(ArgKind::Callable);
    arg.pointer_ = function;
    return arg;
  }

  ArgKind kind() const { return kind_; }
  bool isNone() const { return kind_ == ArgKind::None; }

  /// The bool of a Bool argument.
  bool asBool() const { return int_ != 0; }
  /// The value of an Int argument (0 or 1 for a Bool).
  Int128 asInt() const { return int_; }
  /// The value of a Float argument.
  double asFloat() const { return float_; }
  /// The device address of a Tensor argument (0 for a mock tensor).
  uint64_t address() const { return address_; }
  /// The dtype of a Tensor or DType argument.
  DType dtype() const { return dtype_; }
  /// Whether a Tensor argument is read-only.
  bool isReadOnly() const { return readOnly_; }
  /// Whether a Tensor argument is a dtype-only warmup tensor.
  bool isMock() const { return mock_; }
  /// The opaque pointer of a Callable argument.
  const void *callablePointer() const { return pointer_; }

  /// Same kind and same value; floats compare bit for bit (a NaN constexpr
  /// equals itself, as the cache key requires).
  friend bool operator==(const Argument &a, const Argument &b);
  /// Every field the same, bit for bit (dtype, const-ness and mock-ness
  /// too, and an int and a float of equal value differ): what binds the
  /// same way, whatever the parameter. Never reads padding.
  bool identical(const Argument &other) const { return difference(other) == 0; }
  /// Zero when identical(), something else otherwise, without a branch: a
  /// launch compares all of its arguments with the last launch's at once
  /// (docs/Dispatch.md).
  uint64_t difference(const Argument &other) const {
    uint64_t mine[2], theirs[2];
    std::memcpy(mine, &int_, sizeof mine);
    std::memcpy(theirs, &other.int_, sizeof theirs);
    return (mine[0] ^ theirs[0]) | (mine[1] ^ theirs[1]) |
           (tags() ^ other.tags());
  }
  friend bool operator!=(const Argument &a, const Argument &b) {
    return !(a == b);
  }

private:
  explicit Argument(ArgKind kind) : kind_(kind) {}

  /// The four one-byte fields after the value, as one word.
  uint32_t tags() const {
    static_assert(sizeof(int_) == 16 && sizeof(kind_) == 1 &&
                      sizeof(dtype_) == 1 && sizeof(readOnly_) == 1 &&
                      sizeof(mock_) == 1,
                  "difference() compares the value and the tags as words");
    static_assert(
        offsetof(Argument, dtype_) == offsetof(Argument, kind_) + 1 &&
            offsetof(Argument, readOnly_) == offsetof(Argument, kind_) + 2 &&
            offsetof(Argument, mock_) == offsetof(Argument, kind_) + 3,
        "the tags are four adjacent bytes");
    // Through the object's bytes: the word spans four members.
    uint32_t word;
    std::memcpy(&word,
                reinterpret_cast<const unsigned char *>(this) +
                    offsetof(Argument, kind_),
                sizeof word);
    return word;
  }

  union {
    Int128 int_ = 0;
    double float_;
    uint64_t address_;
    const void *pointer_;
  };
  ArgKind kind_ = ArgKind::None;
  DType dtype_ = DType::I8;
  bool readOnly_ = false;
  bool mock_ = false;
};

/// A keyword argument of a launch: `name=value`. The name is borrowed.
struct KeywordArgument {
  std::string_view name;
  Argument value;
};

/// Decimal text of a 128-bit integer.
std::string int128ToString(Int128 value);

/// Parses an optionally signed decimal integer; nullopt when the text is not
/// one or does not fit in 128 bits.
std::optional<Int128> parseInt128(std::string_view text);

/// A short description of an argument for messages: "an int (17)", "a tensor
/// of fp32", "None", "a dtype (fp16)", "a callable".
std::string describeArgument(const Argument &arg);

} // namespace kjit::rt

#endif // KJIT_MODEL_ARGUMENT_H
