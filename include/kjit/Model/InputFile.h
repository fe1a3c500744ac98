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

#include "absl/status/status.h"
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

/// OK when `path` names a regular file (after symbolic links). It is
/// looked at with stat, never opened: opening a FIFO without a writer
/// blocks, and a device or a directory is neither a library nor a kernel
/// file. Else NotFound for a missing file, InvalidArgument "it is a
/// directory" or "not a regular file (a device, FIFO or socket)", or the
/// system's reason; the message is the reason alone, and the caller says
/// what it was loading.
absl::Status checkRegularFile(const std::string &path);

/// The deepest nesting kjit lets MLIR's parsers see, counted in brackets
/// ('{', '(', '[' and '<', outside string literals and comments) and in
/// the operators of one affine map or set. The parsers recurse once per
/// nested region, attribute, type or affine operator and have no limit of
/// their own: about 4000 nested regions, 20000 nested types or 10000
/// chained affine negations (`- - d0`) overflow an 8 MiB stack. 1000
/// levels cost about 2 MiB and are far beyond any real kernel.
inline constexpr unsigned kMaxIRNesting = 1000;

/// "" when the textual IR `text` nests at most `maxDepth` levels deep, else
/// a message naming the line where it goes deeper ("line 1003: brackets
/// nest deeper than 1000 levels ..."). MLIR bytecode (which starts with
/// "ML\xefR") is not text and always passes.
std::string checkIRNesting(std::string_view text,
                           unsigned maxDepth = kMaxIRNesting);

} // namespace kjit::rt

#endif // KJIT_MODEL_INPUTFILE_H
