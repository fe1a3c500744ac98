//===- CompilerClient.cpp - opening the compiler library ------------------===//

#include "CompilerClient.h"

#include "kjit/Model/InputFile.h"
#include "kjit/Support/StrCat.h"

#include <dlfcn.h>

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

absl::StatusOr<std::unique_ptr<CompilerService>>
openCompiler(const std::string &path) {
  // dlopen would block on a FIFO without a writer; a device or directory is
  // no library. A missing file is left to dlopen's message.
  if (absl::Status regular = checkRegularFile(path);
      !regular.ok() && regular.code() != absl::StatusCode::kNotFound)
    return absl::FailedPreconditionError(
        kjit::strCat("cannot load the kjit compiler library '", path,
                     "': ", regular.message()));
  // RTLD_LOCAL: the compiler's LLVM stays out of the global namespace. The
  // handle is never closed: LLVM's static state does not survive dlclose.
  void *handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle)
    return absl::FailedPreconditionError(kjit::strCat(
        "cannot load the kjit compiler library '", path, "': ", dlerror()));
  auto create = reinterpret_cast<kjit_compiler_create_service_fn>(
      dlsym(handle, kCompilerServiceEntry));
  if (!create)
    return absl::FailedPreconditionError(
        kjit::strCat("'", path, "' is not the kjit compiler library (no ",
                     kCompilerServiceEntry, ")"));
  const char *error = "unknown error";
  CompilerService *service = create(kCompilerServiceVersion, &error);
  if (!service)
    return absl::FailedPreconditionError(kjit::strCat("'", path, "': ", error));
  return std::unique_ptr<CompilerService>(service);
}

} // namespace kjit::rt
