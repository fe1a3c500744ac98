//===- BuildId.h - which kjit build compiled an entry -----------*- C++ -*-===//
//
// The disk key names the exact code that produced an entry: the runtime
// (its GNU build id, read from memory) and the compiler library with the
// kjit, LLVM and MLIR libraries it needs (their build ids, read from the
// files' ELF notes without loading them: a warm process must not dlopen the
// compiler to learn who it is). A rebuilt pass changes libkjit-mlir.so's
// build id even when libkjit-compiler.so, a thin module, relinks to the same
// bytes; a Debian update of libLLVM changes libLLVM's. A file without a
// build id is identified by its device, inode, size and modification time
// (ccache's "mtime" compiler check). docs/DiskCache.md "The key".
//
//===----------------------------------------------------------------------===//

#ifndef KJIT_CACHE_BUILDID_H
#define KJIT_CACHE_BUILDID_H

#include <string>

namespace kjit::cache {

/// "gnu:<hex>" (the file's NT_GNU_BUILD_ID), "stat:<dev>:<ino>:<size>:<ns>"
/// when it has none, "missing" when it cannot be read.
std::string fileIdentity(const std::string &path);

/// The identity of the library at `path` and of the libraries it needs
/// whose names start with libkjit-, libLLVM or libMLIR, found as the
/// dynamic loader would (LD_LIBRARY_PATH, then DT_RUNPATH with $ORIGIN,
/// then the system directories): "path=<id>;libkjit-mlir.so.0.1=<id>;...".
std::string libraryClosureIdentity(const std::string &path);

/// The build id of the loaded object that contains `address` ("gnu:<hex>"),
/// else its file's identity.
std::string loadedObjectIdentity(const void *address);

} // namespace kjit::cache

#endif // KJIT_CACHE_BUILDID_H
