//===- CompilerLibrary.cpp - the compiler, loaded on demand ---------------===//

#include "CompilerLibrary.h"

#include <cstdlib>
#include <dlfcn.h>
#include <mutex>
#include <string>

namespace kjit::rt {

std::string getRuntimeLibraryDir() {
  Dl_info info;
  if (!dladdr(reinterpret_cast<void *>(&getRuntimeLibraryDir), &info) ||
      !info.dli_fname)
    return ".";
  std::string path = info.dli_fname;
  size_t slash = path.rfind('/');
  return slash == std::string::npos ? "." : path.substr(0, slash);
}

absl::StatusOr<const kjit_compiler_api *> getCompiler() {
  static std::once_flag once;
  static const kjit_compiler_api *api = nullptr;
  static std::string error;
  std::call_once(once, [] {
    const char *override = std::getenv("KJIT_COMPILER_LIBRARY");
    std::string path = override && *override
                           ? override
                           : getRuntimeLibraryDir() + "/libkjit-compiler.so";
    // RTLD_LOCAL: the compiler's LLVM stays out of the global namespace.
    void *handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!handle) {
      error =
          "cannot load the kjit compiler library '" + path + "': " + dlerror();
      return;
    }
    using GetApi = const kjit_compiler_api *(*)();
    auto get = reinterpret_cast<GetApi>(dlsym(handle, "kjit_compiler_get_api"));
    if (!get) {
      error = "'" + path +
              "' is not the kjit compiler library (no "
              "kjit_compiler_get_api)";
      return;
    }
    const kjit_compiler_api *candidate = get();
    if (!candidate || candidate->version != KJIT_COMPILER_API_VERSION) {
      error = "'" + path + "' is a kjit compiler of another build (API " +
              std::to_string(candidate ? candidate->version : 0) +
              ", this runtime needs " +
              std::to_string(KJIT_COMPILER_API_VERSION) + ")";
      return;
    }
    api = candidate;
  });
  if (!api)
    return absl::FailedPreconditionError(error);
  return api;
}

} // namespace kjit::rt
