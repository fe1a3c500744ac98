//===- CacheKey.h - the keys of the disk cache ------------------*- C++ -*-===//
//
// An artifact's key is one SHA-256 over everything its bytes depend on
// (docs/DiskCache.md "The key"); a module manifest's key over the kernel
// file's bytes and the build that analysed it. Functions of their inputs
// only, so that unittests/Runtime/CacheKeyTest.cpp can show that each input
// changes the key.
//
//===----------------------------------------------------------------------===//

#ifndef KJIT_LIB_RUNTIME_CACHEKEY_H
#define KJIT_LIB_RUNTIME_CACHEKEY_H

#include "absl/types/span.h"

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace kjit::rt {

/// Everything an artifact's bytes depend on.
struct ArtifactKeyInputs {
  /// The kjit build: runtime and compiler closure (cache/BuildId.h).
  std::string_view buildIdentity;
  /// codegenEnvironmentKey's text.
  std::string_view environment;
  /// Runtime::compilerExtensions(): the MLIR plugins' identities and the
  /// extra passes, which change the code as much as the build does.
  std::string_view compilerExtensions;
  /// The backend: described target, arch, accepted formats, the options it
  /// passes to every compile, and its fingerprint (toolchain, CPU features).
  std::string_view target;
  std::string_view arch;
  absl::Span<const std::string> formats;
  absl::Span<const std::pair<std::string, std::string>> compileOptions;
  std::string_view fingerprint;
  /// The kernel: its dependency key (its text, its callees', its line, the
  /// globals' values at analysis), its specialization key (signature,
  /// specialization, constexprs, launch options) and the global values it
  /// bakes in.
  std::string_view dependencyKey;
  std::string_view specializationKey;
  absl::Span<const std::pair<std::string, uint64_t>> globals;
  /// The kernel file's name as the module was loaded, for code that embeds
  /// it (a debug compile's assert messages and line tables), so that its
  /// reports name this file, not another checkout's; empty for code that
  /// does not, which the same file anywhere shares.
  std::string_view embeddedSourceName;
};

/// 64 hex digits.
std::string artifactKey(const ArtifactKeyInputs &inputs);

class KeyDigest;
/// Adds the backend a key is for (described target, arch, accepted
/// formats, the options it passes to every compile) to `digest`, named as
/// the artifact key and the device class both name them.
void addBackend(
    KeyDigest &digest, std::string_view target, std::string_view arch,
    absl::Span<const std::string> formats,
    absl::Span<const std::pair<std::string, std::string>> compileOptions);

/// The key of a module's manifest: the bytes of its kernel file and the
/// build that analyses it.
std::string manifestKey(std::string_view buildIdentity, std::string_view text);

/// The values of the codegen variables (cache::codegenEnvironment()) as
/// `lookup` gives them, one "NAME=value" per line; unset and empty are one.
std::string
codegenEnvironmentKey(const std::function<const char *(const char *)> &lookup);

} // namespace kjit::rt

#endif // KJIT_LIB_RUNTIME_CACHEKEY_H
