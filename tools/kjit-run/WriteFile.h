//===- WriteFile.h - whole files written by kjit-run ------------*- C++ -*-===//
//
// The one way kjit-run writes a file it produces (.npy outputs, the
// --record-out record): created or truncated, written in full, and closed
// with the close checked, since a full disk or a quota may show only there.
//
//===----------------------------------------------------------------------===//

#ifndef KJIT_TOOLS_KJIT_RUN_WRITEFILE_H
#define KJIT_TOOLS_KJIT_RUN_WRITEFILE_H

#include "absl/status/status.h"

#include <string>
#include <string_view>

namespace kjit::run {

/// Writes `bytes` to `path` (mode 0666 less the umask). On failure the
/// message is "cannot create: E" or "cannot write: E" with errno's text,
/// without the path: each caller says which file and why it was written.
/// A file that failed mid-way is left as far as it got.
absl::Status writeFile(const std::string &path, std::string_view bytes);

} // namespace kjit::run

#endif // KJIT_TOOLS_KJIT_RUN_WRITEFILE_H
