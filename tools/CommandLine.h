//===- CommandLine.h - what kjit-run and kjit-cache add to CLI11 ----------===//
//
// The runtime-side tools parse their command lines with CLI11 (header-only,
// no LLVM). These are the value checks they share, as CLI11 validators:
// their messages follow the option's name ("--repeat: '0' is not a count
// from 1 to 2147483647").
//
//===----------------------------------------------------------------------===//

#ifndef KJIT_TOOLS_COMMANDLINE_H
#define KJIT_TOOLS_COMMANDLINE_H

#include <CLI/CLI.hpp>

#include <cctype>
#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <optional>
#include <string>

namespace kjit::cli {

/// A decimal count in [min, max]; anything else (a sign, spaces, a value
/// past max or past what an int64_t holds) is refused, never wrapped.
inline bool parseCount(const std::string &text, int64_t min, int64_t max,
                       int64_t &out) {
  if (text.empty() || !std::isdigit(static_cast<unsigned char>(text[0])))
    return false;
  char *end = nullptr;
  errno = 0;
  long long value = std::strtoll(text.c_str(), &end, 10);
  if (*end || errno == ERANGE || value < min || value > max)
    return false;
  out = value;
  return true;
}

/// A count in [min, max], for transform(): the value is rewritten in plain
/// decimal for CLI11's conversion to read. CLI::Range is not used because
/// CLI11 reads integers with strtoll(..., 0): it takes " 3", "+3", "0x10"
/// and "010" (8), and saturates a value past INT64_MAX instead of refusing
/// it. `what` names the unit in messages ("count", "number of seconds").
class Count : public CLI::Validator {
public:
  Count(int64_t min, int64_t max, const std::string &what = "count")
      : Validator("[" + std::to_string(min) + "-" + std::to_string(max) + "]") {
    func_ = [min, max, what](std::string &text) -> std::string {
      int64_t value;
      if (!parseCount(text, min, max, value))
        return "'" + text + "' is not a " + what + " from " +
               std::to_string(min) + " to " + std::to_string(max);
      text = std::to_string(value);
      return {};
    };
  }
};

/// A value that may not be empty: `what` is what it names ("file name").
class NonEmpty : public CLI::Validator {
public:
  explicit NonEmpty(const std::string &what) : Validator("") {
    func_ = [what](const std::string &text) -> std::string {
      return text.empty() ? "'' is not a " + what : std::string();
    };
  }
};

/// The first `--name=` among the arguments, as a message. CLI11 reads an
/// empty inline value as none, and takes the next argument as the value
/// (`--dir= stats` would be --dir stats): no option of these tools takes
/// an empty value, so such an argument is refused before CLI11 sees it.
inline std::optional<std::string> emptyInlineValue(int argc, char **argv) {
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--")
      break;
    if (arg.size() > 3 && arg.rfind("--", 0) == 0 && arg.back() == '=' &&
        arg.find('=') == arg.size() - 1)
      return arg.substr(0, arg.size() - 1) + ": '' is not a value (" + arg +
             ")";
  }
  return std::nullopt;
}

} // namespace kjit::cli

#endif // KJIT_TOOLS_COMMANDLINE_H
