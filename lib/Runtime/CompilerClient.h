//===- CompilerClient.h - opening the compiler library ----------*- C++ -*-===//
//
// The runtime opens libkjit-compiler.so with dlopen the first time it must
// analyse or compile, so that a process launching only cached kernels never
// loads LLVM or MLIR (starting a binary linked to libLLVM costs ~47 ms here).
//
//===----------------------------------------------------------------------===//

#ifndef KJIT_LIB_RUNTIME_COMPILERCLIENT_H
#define KJIT_LIB_RUNTIME_COMPILERCLIENT_H

#include "kjit/Runtime/CompilerService.h"

#include "absl/status/statusor.h"

#include <memory>
#include <string>

namespace kjit::rt {

/// Opens the compiler module at `path` and creates its service. The library
/// stays loaded for the life of the process. Errors say where it looked.
absl::StatusOr<std::unique_ptr<CompilerService>>
openCompiler(const std::string &path);

/// The directory libkjit-runtime.so was loaded from (where the in-tree
/// libraries and plugins are).
std::string getRuntimeLibraryDir();

} // namespace kjit::rt

#endif // KJIT_LIB_RUNTIME_COMPILERCLIENT_H
