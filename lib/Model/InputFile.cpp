//===- InputFile.cpp - reading kernel IR files and records ----------------===//

#include "kjit/Model/InputFile.h"

#include "kjit/Support/StrCat.h"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace kjit::rt {

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
  if (S_ISDIR(info.st_mode))
    return absl::InvalidArgumentError(prefix + "it is a directory");
  if (!S_ISREG(info.st_mode))
    return absl::InvalidArgumentError(
        prefix + "not a regular file (a device, FIFO or socket)");
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
    } else if (c == '{' || c == '(' || c == '[') {
      if (++depth > maxDepth)
        return kjit::strCat(
            "line ", line, ": brackets nest deeper than ", maxDepth,
            " levels; MLIR's parser recurses once per level and would "
            "overflow its stack, so kjit does not parse it");
    } else if ((c == '}' || c == ')' || c == ']') && depth > 0) {
      --depth;
    }
  }
  return std::string();
}

} // namespace kjit::rt
