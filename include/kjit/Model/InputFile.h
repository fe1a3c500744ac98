//===- InputFile.h - reading kernel IR files and records --------*- C++ -*-===//
//
// Every file kjit reads whole (kernel IR, specialization records) goes
// through readInputFile: only a regular file, and only up to a documented
// size, so that /dev/zero, a FIFO or a directory give a clear error instead
// of an allocation that never ends or an "empty" file (docs/Runtime.md,
// "Input files").
//
//===----------------------------------------------------------------------===//

#ifndef KJIT_MODEL_INPUTFILE_H
#define KJIT_MODEL_INPUTFILE_H

#include "absl/status/statusor.h"

#include <cstdint>
#include <string>
#include <string_view>

namespace kjit::rt {

/// The largest kernel IR file kjit reads (256 MiB: far beyond any kernel
/// module, well below what a process can allocate).
inline constexpr uint64_t kMaxKernelFileBytes = uint64_t(256) << 20;
/// The largest specialization record kjit reads (16 MiB).
inline constexpr uint64_t kMaxRecordFileBytes = uint64_t(16) << 20;

/// The contents of the regular file at `path`, at most `maxBytes` long. The
/// error (NotFound for a missing file, InvalidArgument for a directory,
/// another kind of file or one too large) says why, after "cannot read
/// <what> '<path>': ".
absl::StatusOr<std::string> readInputFile(const std::string &path,
                                          uint64_t maxBytes,
                                          std::string_view what);

/// The deepest bracket nesting ('{', '(', '[' outside string literals and
/// comments) kjit lets MLIR's parser see. The parser recurses once per
/// nested region or attribute and has no limit of its own: about 4000
/// nested regions overflow an 8 MiB stack (R15). 1000 levels cost it about
/// 2 MiB and are far beyond any real kernel.
inline constexpr unsigned kMaxIRNesting = 1000;

/// "" when the textual IR `text` nests at most `maxDepth` levels deep, else
/// a message naming the line where it goes deeper ("line 1003: brackets
/// nest deeper than 1000 levels ..."). MLIR bytecode (which starts with
/// "ML\xefR") is not text and always passes.
std::string checkIRNesting(std::string_view text,
                           unsigned maxDepth = kMaxIRNesting);

} // namespace kjit::rt

#endif // KJIT_MODEL_INPUTFILE_H
