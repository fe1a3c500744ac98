//===- InputFile.cpp - reading kernel IR files and records ----------------===//

#include "kjit/Model/InputFile.h"

#include "kjit/Support/StrCat.h"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace kjit::rt {

namespace {

/// Why a file of `mode` is neither read nor loaded; empty for a regular
/// file.
std::string_view notRegular(mode_t mode) {
  if (S_ISDIR(mode))
    return "it is a directory";
  if (!S_ISREG(mode))
    return "not a regular file (a device, FIFO or socket)";
  return {};
}

bool isIdentifierStart(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}

bool isIdentifierChar(char c) {
  return isIdentifierStart(c) || (c >= '0' && c <= '9') || c == '.' || c == '$';
}

/// The identifier that ends right before `at`, spaces between allowed.
std::string_view wordBefore(std::string_view text, size_t at) {
  size_t end = at;
  while (end > 0 && (text[end - 1] == ' ' || text[end - 1] == '\t' ||
                     text[end - 1] == '\n' || text[end - 1] == '\r'))
    --end;
  size_t begin = end;
  while (begin > 0 && isIdentifierChar(text[begin - 1]))
    --begin;
  return text.substr(begin, end - begin);
}

} // namespace

absl::Status checkRegularFile(const std::string &path) {
  struct stat info;
  if (::stat(path.c_str(), &info) != 0) {
    int error = errno;
    return error == ENOENT ? absl::NotFoundError(std::strerror(error))
                           : absl::InvalidArgumentError(std::strerror(error));
  }
  if (std::string_view why = notRegular(info.st_mode); !why.empty())
    return absl::InvalidArgumentError(std::string(why));
  return absl::OkStatus();
}

absl::StatusOr<std::string> readInputFile(const std::string &path,
                                          uint64_t maxBytes,
                                          std::string_view what) {
  std::string prefix = kjit::strCat("cannot read ", what, " '", path, "': ");
  // O_NONBLOCK: opening a FIFO with no writer must not hang; it is refused
  // below as not a regular file anyway.
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) {
    int error = errno;
    std::string message = prefix + std::strerror(error);
    return error == ENOENT ? absl::NotFoundError(message)
                           : absl::InvalidArgumentError(message);
  }
  struct Closer {
    int fd;
    ~Closer() { ::close(fd); }
  } closer{fd};
  struct stat info;
  if (::fstat(fd, &info) != 0)
    return absl::InvalidArgumentError(prefix + std::strerror(errno));
  if (std::string_view why = notRegular(info.st_mode); !why.empty())
    return absl::InvalidArgumentError(kjit::strCat(prefix, why));
  uint64_t size = static_cast<uint64_t>(info.st_size);
  auto tooLarge = [&](uint64_t bytes) {
    return absl::InvalidArgumentError(kjit::strCat(
        prefix, "it is ", bytes, " bytes or more, above the limit of ",
        maxBytes, " bytes"));
  };
  if (size > maxBytes)
    return tooLarge(size);
  // Read until the end, not just st_size bytes: the file may grow while it
  // is read, and must not grow past the limit either.
  std::string bytes;
  bytes.reserve(size);
  char chunk[65536];
  for (;;) {
    ssize_t n = ::read(fd, chunk, sizeof chunk);
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0)
      return absl::InvalidArgumentError(prefix + std::strerror(errno));
    if (n == 0)
      break;
    if (bytes.size() + static_cast<size_t>(n) > maxBytes)
      return tooLarge(bytes.size() + static_cast<size_t>(n));
    bytes.append(chunk, static_cast<size_t>(n));
  }
  return bytes;
}

std::string checkIRNesting(std::string_view text, unsigned maxDepth) {
  if (text.substr(0, 4) == "ML\xefR")
    return std::string();
  unsigned depth = 0;
  // Inside an affine map or set: the depth of its '<' (0: outside one) and
  // its operators so far. The affine parser recurses once per operator
  // (`d0 + d0 + ...`, `- - d0`), brackets or not.
  unsigned affineDepth = 0, affineOperators = 0;
  size_t line = 1;
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (c == '\n') {
      ++line;
    } else if (c == '"') {
      // A string literal: brackets inside do not nest; \" does not end it.
      for (++i; i < text.size() && text[i] != '"'; ++i) {
        if (text[i] == '\\')
          ++i;
        else if (text[i] == '\n')
          ++line;
      }
    } else if (c == '/' && i + 1 < text.size() && text[i + 1] == '/') {
      while (i + 1 < text.size() && text[i + 1] != '\n')
        ++i;
    } else if (c == '{' || c == '(' || c == '[' || c == '<') {
      if (++depth > maxDepth)
        return kjit::strCat(
            "line ", line, ": brackets nest deeper than ", maxDepth,
            " levels; MLIR's parser recurses once per level and would "
            "overflow its stack, so kjit does not parse it");
      if (c == '<' && affineDepth == 0) {
        std::string_view keyword = wordBefore(text, i);
        if (keyword == "affine_map" || keyword == "affine_set") {
          affineDepth = depth;
          affineOperators = 0;
        }
      }
    } else if (c == '}' || c == ')' || c == ']' || c == '>') {
      // A '>' of `->` or `>=` closes nothing: counting it would let the
      // brackets around it nest deeper than counted.
      bool closes = c != '>' || ((i == 0 || text[i - 1] != '-') &&
                                 (i + 1 == text.size() || text[i + 1] != '='));
      if (closes && depth > 0) {
        if (depth == affineDepth)
          affineDepth = 0;
        --depth;
      }
    } else if (affineDepth != 0) {
      bool isOperator = false;
      if (isIdentifierStart(c)) {
        size_t end = i;
        while (end < text.size() && isIdentifierChar(text[end]))
          ++end;
        std::string_view word = text.substr(i, end - i);
        isOperator = word == "floordiv" || word == "ceildiv" || word == "mod";
        i = end - 1;
      } else {
        isOperator = c == '+' || c == '*' ||
                     (c == '-' && (i + 1 == text.size() || text[i + 1] != '>'));
      }
      if (isOperator && ++affineOperators > maxDepth)
        return kjit::strCat(
            "line ", line, ": an affine map or set has more than ", maxDepth,
            " operators; MLIR's parser recurses once per operator and would "
            "overflow its stack, so kjit does not parse it");
    }
  }
  return std::string();
}

} // namespace kjit::rt
