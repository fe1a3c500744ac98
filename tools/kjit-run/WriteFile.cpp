//===- WriteFile.cpp - whole files written by kjit-run --------------------===//

#include "WriteFile.h"

#include "kjit/Support/StrCat.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace kjit::run {

absl::Status writeFile(const std::string &path, std::string_view bytes) {
  auto failed = [](std::string_view what) {
    return absl::InvalidArgumentError(
        kjit::strCat(what, ": ", std::strerror(errno)));
  };
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
  if (fd < 0)
    return failed("cannot create");
  const char *data = bytes.data();
  size_t left = bytes.size();
  while (left > 0) {
    ssize_t wrote = ::write(fd, data, left);
    if (wrote < 0 && errno == EINTR)
      continue;
    if (wrote <= 0) {
      // write(2) returns 0 only for a zero count; keep errno's text of the
      // failure, not close's.
      if (wrote == 0)
        errno = EIO;
      absl::Status status = failed("cannot write");
      ::close(fd);
      return status;
    }
    data += wrote;
    left -= static_cast<size_t>(wrote);
  }
  if (::close(fd) != 0)
    return failed("cannot write");
  return absl::OkStatus();
}

} // namespace kjit::run
