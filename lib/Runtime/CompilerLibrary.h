//===- CompilerLibrary.h - the compiler, loaded on demand -------*- C++ -*-===//
//
// The runtime core loads libkjit-compiler.so with dlopen the first time it
// must analyse or compile, so that a process launching only cached kernels
// never loads LLVM (BRIEF section 2).
//
//===----------------------------------------------------------------------===//

#ifndef KJIT_LIB_RUNTIME_COMPILERLIBRARY_H
#define KJIT_LIB_RUNTIME_COMPILERLIBRARY_H

#include "kjit/Compiler/CompilerAPI.h"

#include "absl/status/statusor.h"

namespace kjit::rt {

/// The compiler's C API, loading the library on first use: from
/// KJIT_COMPILER_LIBRARY if set, else libkjit-compiler.so beside
/// libkjit-runtime.so. The error says where it looked.
absl::StatusOr<const kjit_compiler_api *> getCompiler();

/// The directory libkjit-runtime.so was loaded from (where the in-tree
/// libraries and plugins are).
std::string getRuntimeLibraryDir();

} // namespace kjit::rt

#endif // KJIT_LIB_RUNTIME_COMPILERLIBRARY_H
