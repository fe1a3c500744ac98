//===- ArgSpec.cpp - kjit-run's argument syntax ---------------------------===//

#include "ArgSpec.h"

#include "Npy.h"

#include "kjit/Model/FloatFormats.h"
#include "kjit/Support/StrCat.h"

#include <charconv>
#include <vector>

namespace kjit::run {

using rt::ArgKind;
using rt::Argument;
using rt::DType;
using rt::Int128;

namespace {

/// Aliases beyond rt::parseDType's table: the short float names of MLIR
/// and numpy's type codes (f16, f32, f64), MLIR's unsigned spelling (ui8),
/// and torch's unambiguous ones (half, double). "float" and "int" are left
/// out on purpose: they mean fp32/i32 in torch but fp64/i64 in numpy.
struct Alias {
  std::string_view name;
  DType dtype;
};
constexpr Alias kAliases[] = {
    {"f16", DType::FP16},  {"f32", DType::FP32},    {"f64", DType::FP64},
    {"half", DType::FP16}, {"double", DType::FP64}, {"ui8", DType::U8},
    {"ui16", DType::U16},  {"ui32", DType::U32},    {"ui64", DType::U64},
};

constexpr std::string_view kInitList =
    "zeros, ones, arange, random, random(seed=N), fill(VALUE) or npy(FILE)";

absl::Status error(std::string_view what, std::string_view message) {
  return absl::InvalidArgumentError(kjit::strCat(what, ": ", message));
}

std::string_view trim(std::string_view text) {
  while (!text.empty() && (text.front() == ' ' || text.front() == '\t'))
    text.remove_prefix(1);
  while (!text.empty() && (text.back() == ' ' || text.back() == '\t'))
    text.remove_suffix(1);
  return text;
}

bool isDigit(char c) { return c >= '0' && c <= '9'; }

int hexDigit(char c) {
  if (c >= '0' && c <= '9')
    return c - '0';
  if (c >= 'a' && c <= 'f')
    return c - 'a' + 10;
  if (c >= 'A' && c <= 'F')
    return c - 'A' + 10;
  return -1;
}

/// The integer syntax: [+-]DIGITS or [+-]0xHEX. Nullopt when `text` is not
/// written as an integer at all; an error when it is one but is malformed
/// or does not fit in 128 bits.
std::optional<absl::StatusOr<Int128>> parseInteger(std::string_view what,
                                                   std::string_view text) {
  std::string_view digits = text;
  bool negative = false;
  if (!digits.empty() && (digits[0] == '+' || digits[0] == '-')) {
    negative = digits[0] == '-';
    digits.remove_prefix(1);
  }
  if (digits.size() >= 2 && digits[0] == '0' &&
      (digits[1] == 'x' || digits[1] == 'X')) {
    std::string_view hex = digits.substr(2);
    size_t length = 0;
    while (length < hex.size() && hexDigit(hex[length]) >= 0)
      ++length;
    if (length == 0)
      return error(what, kjit::strCat("'", text, "' has no hex digits"));
    if (length < hex.size())
      return error(
          what,
          kjit::strCat("trailing characters '", hex.substr(length), "' after '",
                       text.substr(0, text.size() - hex.size() + length), "'"));
    // The largest magnitude is 2^127 (the negative end).
    const unsigned __int128 limit = static_cast<unsigned __int128>(1) << 127;
    unsigned __int128 magnitude = 0;
    for (char c : hex) {
      if (magnitude > (limit >> 4))
        return error(what, kjit::strCat("integer '", text,
                                        "' does not fit in 128 bits"));
      magnitude = (magnitude << 4) | static_cast<unsigned>(hexDigit(c));
    }
    if (magnitude > limit || (!negative && magnitude == limit))
      return error(
          what, kjit::strCat("integer '", text, "' does not fit in 128 bits"));
    return negative ? static_cast<Int128>(-magnitude)
                    : static_cast<Int128>(magnitude);
  }
  if (digits.empty())
    return std::nullopt;
  for (char c : digits)
    if (!isDigit(c))
      return std::nullopt;
  std::optional<Int128> value = rt::parseInt128(text);
  if (!value)
    return error(what,
                 kjit::strCat("integer '", text, "' does not fit in 128 bits"));
  return *value;
}

/// Splits `text` at the ':' that are not inside parentheses, so that
/// `npy(c:/x.npy)` stays one piece.
absl::StatusOr<std::vector<std::string_view>>
splitTopLevel(std::string_view what, std::string_view text) {
  std::vector<std::string_view> pieces;
  int depth = 0;
  size_t start = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '(') {
      ++depth;
    } else if (text[i] == ')') {
      if (--depth < 0)
        return error(what, kjit::strCat("unbalanced ')' in '", text, "'"));
    } else if (text[i] == ':' && depth == 0) {
      pieces.push_back(text.substr(start, i - start));
      start = i + 1;
    }
  }
  if (depth != 0)
    return error(what, kjit::strCat("unbalanced '(' in '", text, "'"));
  pieces.push_back(text.substr(start));
  return pieces;
}

/// Parses "DTYPE" or "DTYPE[D0,D1,...]".
absl::Status parseType(std::string_view what, std::string_view text,
                       TensorSpec &spec) {
  size_t bracket = text.find('[');
  std::string_view dtypeName = text.substr(0, bracket);
  if (dtypeName.empty())
    return error(what, kjit::strCat("missing dtype before '", text, "'"));
  std::optional<DType> dtype = parseDTypeName(dtypeName);
  if (!dtype)
    return error(what, kjit::strCat("unknown dtype '", dtypeName, "'"));
  spec.dtype = *dtype;
  if (bracket == std::string_view::npos)
    return absl::OkStatus();

  std::string_view shapeText = text.substr(bracket);
  if (shapeText.back() != ']' || shapeText.find(']') != shapeText.size() - 1)
    return error(what, kjit::strCat("bad shape '", shapeText,
                                    "' (expected [D0,D1,...])"));
  std::string_view inner = shapeText.substr(1, shapeText.size() - 2);
  Shape shape;
  if (!trim(inner).empty()) {
    size_t begin = 0;
    while (true) {
      size_t comma = inner.find(',', begin);
      std::string_view piece = trim(inner.substr(begin, comma - begin));
      bool negative = !piece.empty() && piece[0] == '-';
      std::string_view digits = negative ? piece.substr(1) : piece;
      if (piece.empty())
        return error(
            what, kjit::strCat("bad shape '", shapeText, "': empty dimension"));
      int64_t extent = 0;
      auto result =
          std::from_chars(digits.data(), digits.data() + digits.size(), extent);
      if (digits.empty() || !isDigit(digits[0]) ||
          result.ptr != digits.data() + digits.size())
        return error(what,
                     kjit::strCat("bad shape '", shapeText, "': dimension '",
                                  piece, "' is not an integer"));
      if (result.ec == std::errc::result_out_of_range)
        return error(what,
                     kjit::strCat("bad shape '", shapeText, "': dimension '",
                                  piece, "' is too large"));
      if (negative)
        return error(what, kjit::strCat("bad shape '", shapeText,
                                        "': negative dimension ", piece));
      shape.push_back(extent);
      if (comma == std::string_view::npos)
        break;
      begin = comma + 1;
    }
  }
  if (!numElementsOf(shape))
    return error(what, kjit::strCat("shape ", formatShape(shape),
                                    " has too many elements"));
  spec.shape = std::move(shape);
  return absl::OkStatus();
}

/// Checks that a `fill` value is representable in `dtype`.
/// A fill value as messages spell it: floats as "2.0", as written, rather
/// than to_chars's "2", which reads as an integer.
std::string formatNumber(const Argument &value) {
  if (value.kind() != ArgKind::Float)
    return rt::int128ToString(value.asInt());
  char text[32];
  auto result = std::to_chars(text, text + sizeof(text), value.asFloat());
  std::string number(text, result.ptr);
  if (number.find_first_of(".eni") == std::string::npos)
    number += ".0";
  return number;
}

absl::Status checkFillValue(std::string_view what, const Argument &value,
                            DType dtype) {
  std::string_view dtypeName = rt::canonicalName(dtype);
  if (rt::isFloat(dtype)) {
    double real = value.kind() == ArgKind::Float ? value.asFloat()
                  : value.kind() == ArgKind::Int ? double(value.asInt())
                                                 : 0.0;
    if (rt::roundsToInfinity(dtype, real))
      return error(what, kjit::strCat("fill value ", formatNumber(value),
                                      " is past the largest finite ", dtypeName,
                                      " and would become infinity"));
    return absl::OkStatus();
  }
  if (value.kind() == ArgKind::Bool)
    return absl::OkStatus();
  if (value.kind() == ArgKind::Float)
    return error(what,
                 kjit::strCat("fill value ", formatNumber(value),
                              " is not an integer, as ", dtypeName, " needs"));
  Int128 low = rt::integerMin(dtype), high = rt::integerMax(dtype);
  if (value.asInt() < low || value.asInt() > high)
    return error(what,
                 kjit::strCat("fill value ", rt::int128ToString(value.asInt()),
                              " is out of range for ", dtypeName, " [",
                              rt::int128ToString(low), ", ",
                              rt::int128ToString(high), "]"));
  return absl::OkStatus();
}

/// Parses one initializer: NAME or NAME(ARGS).
absl::Status parseInit(std::string_view what, std::string_view text,
                       TensorSpec &spec) {
  size_t paren = text.find('(');
  std::string_view name = text.substr(0, paren);
  std::optional<std::string_view> args;
  if (paren != std::string_view::npos) {
    // splitTopLevel checked the balance; the group must end the piece.
    int depth = 0;
    size_t close = paren;
    for (; close < text.size(); ++close) {
      if (text[close] == '(')
        ++depth;
      else if (text[close] == ')' && --depth == 0)
        break;
    }
    if (close + 1 != text.size())
      return error(what,
                   kjit::strCat("trailing characters '", text.substr(close + 1),
                                "' after '", text.substr(0, close + 1), "'"));
    args = text.substr(paren + 1, close - paren - 1);
  }

  auto noArguments = [&](TensorInit init) -> absl::Status {
    if (args)
      return error(what, kjit::strCat("'", name, "' takes no arguments"));
    spec.init = init;
    return absl::OkStatus();
  };
  if (name == "zeros")
    return noArguments(TensorInit::Zeros);
  if (name == "ones")
    return noArguments(TensorInit::Ones);
  if (name == "arange")
    return noArguments(TensorInit::Arange);
  if (name == "random") {
    spec.init = TensorInit::Random;
    if (!args)
      return absl::OkStatus();
    size_t equals = args->find('=');
    std::optional<absl::StatusOr<Int128>> seed;
    if (equals != std::string_view::npos &&
        trim(args->substr(0, equals)) == "seed")
      seed = parseInteger(what, trim(args->substr(equals + 1)));
    if (!seed || !seed->ok() || **seed < 0 ||
        **seed > static_cast<Int128>(UINT64_MAX))
      return error(what, kjit::strCat("random takes (seed=N) with N an "
                                      "unsigned 64-bit integer, not '(",
                                      *args, ")'"));
    spec.seed = static_cast<uint64_t>(**seed);
    return absl::OkStatus();
  }
  if (name == "fill") {
    spec.init = TensorInit::Fill;
    if (!args || trim(*args).empty())
      return error(what, "fill needs a value: fill(VALUE)");
    absl::StatusOr<Argument> value = parseScalar(what, trim(*args));
    if (!value.ok())
      return value.status();
    if (value->kind() != ArgKind::Int && value->kind() != ArgKind::Float &&
        value->kind() != ArgKind::Bool)
      return error(what, kjit::strCat("fill value must be a number, true or "
                                      "false, not '",
                                      trim(*args), "'"));
    spec.fillValue = *value;
    return absl::OkStatus();
  }
  if (name == "npy") {
    spec.init = TensorInit::Npy;
    if (!args || args->empty())
      return error(what, "npy needs a file: npy(FILE)");
    spec.npyPath = std::string(*args);
    return absl::OkStatus();
  }
  return error(what, kjit::strCat("unknown initializer '", text, "' (expected ",
                                  kInitList, ")"));
}

constexpr std::string_view initName(TensorInit init) {
  switch (init) {
  case TensorInit::Zeros:
    return "zeros";
  case TensorInit::Ones:
    return "ones";
  case TensorInit::Arange:
    return "arange";
  case TensorInit::Random:
    return "random";
  case TensorInit::Fill:
    return "fill";
  case TensorInit::Npy:
    return "npy";
  }
  return "";
}

absl::StatusOr<TensorSpec> parseTensor(std::string_view what,
                                       std::string_view text) {
  absl::StatusOr<std::vector<std::string_view>> pieces =
      splitTopLevel(what, text);
  if (!pieces.ok())
    return pieces.status();
  TensorSpec spec;
  bool sawConst = false;
  auto markConst = [&]() -> absl::Status {
    if (sawConst)
      return error(what, "'const' given twice");
    sawConst = spec.readOnly = true;
    return absl::OkStatus();
  };
  size_t next = 0;
  if ((*pieces)[0] == "const") {
    (void)markConst();
    ++next;
  }
  if (next == pieces->size() || (*pieces)[next].empty())
    return error(what, kjit::strCat("missing dtype in '", text, "'"));
  std::string_view typeText = (*pieces)[next++];
  if (absl::Status status = parseType(what, typeText, spec); !status.ok())
    return status;

  std::optional<std::string_view> initText;
  for (; next < pieces->size(); ++next) {
    std::string_view piece = (*pieces)[next];
    if (piece == "const") {
      if (absl::Status status = markConst(); !status.ok())
        return status;
      continue;
    }
    if (piece.empty())
      return error(what, kjit::strCat("empty initializer in '", text, "'"));
    if (initText)
      return error(what, kjit::strCat("more than one initializer ('", *initText,
                                      "' and '", piece, "')"));
    if (absl::Status status = parseInit(what, piece, spec); !status.ok())
      return status;
    initText = piece;
  }
  if (!initText)
    return error(what, kjit::strCat("missing initializer after '", typeText,
                                    "' (expected :", kInitList, ")"));
  if (!spec.shape && spec.init != TensorInit::Npy)
    return error(what, kjit::strCat("missing shape after '", typeText,
                                    "' (write ", typeText,
                                    "[D0,D1,...]; only npy(FILE) may omit "
                                    "it)"));
  if (!hasNumericConversion(spec.dtype) && spec.init != TensorInit::Zeros)
    return error(what,
                 kjit::strCat("initializer '", initName(spec.init),
                              "' is not supported for ",
                              rt::canonicalName(spec.dtype),
                              " (kjit-run has no fp8 conversions; use zeros)"));
  if (spec.init == TensorInit::Fill)
    if (absl::Status status = checkFillValue(what, spec.fillValue, spec.dtype);
        !status.ok())
      return status;
  return spec;
}

bool isNameStart(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}

/// An identifier: a letter or `_`, then letters, digits and `_`, and dots
/// (not last) when `allowDots`.
bool isIdentifier(std::string_view name, bool allowDots) {
  bool valid = !name.empty() && isNameStart(name[0]) && name.back() != '.';
  for (char c : name)
    valid = valid && (isNameStart(c) || isDigit(c) || (allowDots && c == '.'));
  return valid;
}

/// A global name: the global's symbol (which MLIR lets hold dots), after
/// the path of nested modules that holds it, joined by "::"
/// (`inner::SCALE`), as the runtime names globals (docs/Dependencies.md).
bool isGlobalName(std::string_view name) {
  for (size_t split; (split = name.find("::")) != std::string_view::npos;
       name = name.substr(split + 2))
    if (!isIdentifier(name.substr(0, split), /*allowDots=*/true))
      return false;
  return isIdentifier(name, /*allowDots=*/true);
}

/// Splits "NAME=VALUE" of option `option` ("--arg"); `isGlobal` takes NAME
/// as a global's name rather than a parameter's.
absl::StatusOr<std::pair<std::string_view, std::string_view>>
splitAssignment(std::string_view option, std::string_view text, bool isGlobal) {
  size_t equals = text.find('=');
  if (equals == std::string_view::npos || equals == 0)
    return absl::InvalidArgumentError(
        kjit::strCat(option, " '", text, "': expected NAME=VALUE"));
  std::string_view name = text.substr(0, equals);
  if (isGlobal && !isGlobalName(name))
    return absl::InvalidArgumentError(kjit::strCat(
        option, " '", text, "': '", name,
        "' is not a valid global name (NAME, or MODULE::NAME for a global "
        "of a nested module)"));
  if (!isGlobal && !isIdentifier(name, /*allowDots=*/false))
    return absl::InvalidArgumentError(kjit::strCat(
        option, " '", text, "': '", name, "' is not a valid name"));
  return std::make_pair(name, text.substr(equals + 1));
}

} // namespace

std::optional<DType> parseDTypeName(std::string_view name) {
  if (std::optional<DType> dtype = rt::parseDType(name))
    return dtype;
  for (const Alias &alias : kAliases)
    if (alias.name == name)
      return alias.dtype;
  return std::nullopt;
}

absl::StatusOr<Argument> parseScalar(std::string_view what,
                                     std::string_view text) {
  if (text.empty())
    return error(what, "empty value");
  if (text == "true" || text == "True")
    return Argument::boolean(true);
  if (text == "false" || text == "False")
    return Argument::boolean(false);
  if (text == "none" || text == "None")
    return Argument::none();
  constexpr std::string_view kDTypePrefix = "dtype:";
  if (text.substr(0, kDTypePrefix.size()) == kDTypePrefix) {
    std::string_view name = text.substr(kDTypePrefix.size());
    if (name.empty())
      return error(what, "missing dtype name after 'dtype:'");
    std::optional<DType> dtype = parseDTypeName(name);
    if (!dtype)
      return error(what, kjit::strCat("unknown dtype '", name, "'"));
    return Argument::dtypeValue(*dtype);
  }
  if (std::optional<absl::StatusOr<Int128>> integer =
          parseInteger(what, text)) {
    if (!integer->ok())
      return integer->status();
    return Argument::integer(**integer);
  }

  // std::from_chars is locale-independent (strtod would read "1,5" in a
  // German locale) and reads inf, nan and exponents; it rejects a leading
  // '+', which is skipped here.
  std::string_view number = text;
  if (number[0] == '+' && number.size() > 1 && number[1] != '-')
    number.remove_prefix(1);
  double value = 0;
  const char *end = number.data() + number.size();
  auto result = std::from_chars(number.data(), end, value);
  if (result.ptr == number.data())
    return error(what, kjit::strCat("cannot parse '", text,
                                    "' (expected an integer, a float, true, "
                                    "false, none or dtype:NAME)"));
  if (result.ptr != end)
    return error(
        what, kjit::strCat(
                  "trailing characters '",
                  std::string_view(result.ptr, end - result.ptr), "' after '",
                  text.substr(0, text.size() - (end - result.ptr)), "'"));
  if (result.ec == std::errc::result_out_of_range)
    return error(
        what, kjit::strCat("float '", text, "' is out of range of a double"));
  return Argument::fp(value);
}

absl::StatusOr<ArgValue> parseArgValue(std::string_view name,
                                       std::string_view text) {
  std::string what = kjit::strCat("argument '", name, "'");
  ArgValue value;
  bool isDTypeValue = text.substr(0, 6) == "dtype:";
  if (!isDTypeValue && text.find_first_of(":[") != std::string_view::npos) {
    absl::StatusOr<TensorSpec> tensor = parseTensor(what, text);
    if (!tensor.ok())
      return tensor.status();
    value.tensor = std::move(*tensor);
    return value;
  }
  absl::StatusOr<Argument> scalar = parseScalar(what, text);
  if (!scalar.ok())
    return scalar.status();
  value.scalar = *scalar;
  return value;
}

absl::StatusOr<NamedArg> parseArgOption(std::string_view text) {
  auto split = splitAssignment("--arg", text, /*isGlobal=*/false);
  if (!split.ok())
    return split.status();
  absl::StatusOr<ArgValue> value = parseArgValue(split->first, split->second);
  if (!value.ok())
    return value.status();
  return NamedArg{std::string(split->first), std::move(*value)};
}

absl::StatusOr<NamedGlobal> parseGlobalOption(std::string_view text) {
  auto split = splitAssignment("--global", text, /*isGlobal=*/true);
  if (!split.ok())
    return split.status();
  std::string what = kjit::strCat("global '", split->first, "'");
  std::string_view valueText = split->second;
  if (valueText.substr(0, 6) != "dtype:" &&
      valueText.find_first_of(":[") != std::string_view::npos)
    return error(what, kjit::strCat("'", valueText,
                                    "' is a tensor; a global value is an "
                                    "integer, a float, true, false, none or "
                                    "dtype:NAME"));
  absl::StatusOr<Argument> value = parseScalar(what, valueText);
  if (!value.ok())
    return value.status();
  return NamedGlobal{std::string(split->first), *value};
}

absl::StatusOr<HostBuffer> buildTensor(std::string_view name,
                                       const TensorSpec &spec) {
  std::string what = kjit::strCat("argument '", name, "'");
  auto prefixed = [&](const absl::Status &status) {
    return absl::Status(status.code(),
                        kjit::strCat(what, ": ", status.message()));
  };
  if (spec.init == TensorInit::Npy) {
    absl::StatusOr<HostBuffer> buffer = readNpy(spec.npyPath, spec.dtype);
    if (!buffer.ok())
      return prefixed(buffer.status());
    if (buffer->dtype() != spec.dtype)
      return error(what,
                   kjit::strCat("npy file '", spec.npyPath, "' holds '",
                                npyDescr(buffer->dtype()), "' (",
                                rt::canonicalName(buffer->dtype()), "), not ",
                                rt::canonicalName(spec.dtype)));
    if (spec.shape && buffer->shape() != *spec.shape)
      return error(what,
                   kjit::strCat("npy file '", spec.npyPath, "' has shape ",
                                formatShape(buffer->shape()), ", not ",
                                formatShape(*spec.shape)));
    return buffer;
  }

  absl::StatusOr<HostBuffer> buffer =
      HostBuffer::allocate(spec.dtype, spec.shape.value_or(Shape{}));
  if (!buffer.ok())
    return prefixed(buffer.status());
  switch (spec.init) {
  case TensorInit::Zeros:
  case TensorInit::Npy:
    break;
  case TensorInit::Ones:
    fillValue(*buffer, Argument::integer(1));
    break;
  case TensorInit::Arange:
    fillArange(*buffer);
    break;
  case TensorInit::Random:
    fillRandom(*buffer, spec.seed);
    break;
  case TensorInit::Fill:
    fillValue(*buffer, spec.fillValue);
    break;
  }
  return buffer;
}

} // namespace kjit::run
