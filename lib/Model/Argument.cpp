//===- Argument.cpp - launch argument values of the runtime ---------------===//

#include "kjit/Model/Argument.h"

#include "kjit/Support/StrCat.h"

#include "absl/strings/str_cat.h"

#include <cstring>

namespace kjit::rt {

bool operator==(const Argument &a, const Argument &b) {
  if (a.kind_ != b.kind_)
    return false;
  switch (a.kind_) {
  case ArgKind::None:
    return true;
  case ArgKind::Bool:
  case ArgKind::Int:
    return a.int_ == b.int_;
  case ArgKind::Float:
    // The bits, not the value: -0.0 is not 0.0, and a NaN equals itself.
    // NOLINTNEXTLINE(bugprone-suspicious-memory-comparison)
    return std::memcmp(&a.float_, &b.float_, sizeof(double)) == 0;
  case ArgKind::Tensor:
    return a.address_ == b.address_ && a.dtype_ == b.dtype_ &&
           a.readOnly_ == b.readOnly_ && a.mock_ == b.mock_;
  case ArgKind::DType:
    return a.dtype_ == b.dtype_;
  case ArgKind::Callable:
    return a.pointer_ == b.pointer_;
  }
  return false;
}

std::string int128ToString(Int128 value) {
  // Work on the magnitude as unsigned so that the most negative value does
  // not overflow when negated.
  unsigned __int128 magnitude = value < 0
                                    ? -static_cast<unsigned __int128>(value)
                                    : static_cast<unsigned __int128>(value);
  char buffer[48];
  char *end = buffer + sizeof(buffer);
  char *p = end;
  do {
    *--p = static_cast<char>('0' + static_cast<int>(magnitude % 10));
    magnitude /= 10;
  } while (magnitude != 0);
  if (value < 0)
    *--p = '-';
  return std::string(p, end);
}

std::optional<Int128> parseInt128(std::string_view text) {
  bool negative = false;
  if (!text.empty() && (text[0] == '-' || text[0] == '+')) {
    negative = text[0] == '-';
    text.remove_prefix(1);
  }
  if (text.empty())
    return std::nullopt;
  // The largest magnitude is 2^127 (for the negative end).
  const unsigned __int128 limit = static_cast<unsigned __int128>(1) << 127;
  unsigned __int128 magnitude = 0;
  for (char c : text) {
    if (c < '0' || c > '9')
      return std::nullopt;
    unsigned digit = static_cast<unsigned>(c - '0');
    if (magnitude > (limit - digit) / 10)
      return std::nullopt;
    magnitude = magnitude * 10 + digit;
  }
  if (!negative && magnitude == limit)
    return std::nullopt;
  return negative ? static_cast<Int128>(-magnitude)
                  : static_cast<Int128>(magnitude);
}

std::string describeArgument(const Argument &arg) {
  switch (arg.kind()) {
  case ArgKind::None:
    return "None";
  case ArgKind::Bool:
    return arg.asBool() ? "a bool (true)" : "a bool (false)";
  case ArgKind::Int:
    return kjit::strCat("an int (", int128ToString(arg.asInt()), ")");
  case ArgKind::Float:
    return kjit::strCat("a float (", arg.asFloat(), ")");
  case ArgKind::Tensor:
    return kjit::strCat("a tensor of ", canonicalName(arg.dtype()));
  case ArgKind::DType:
    return kjit::strCat("a dtype (", canonicalName(arg.dtype()), ")");
  case ArgKind::Callable:
    return "a callable";
  }
  return "an unknown value";
}

} // namespace kjit::rt
