//===- CacheKey.cpp - the keys of the disk cache --------------------------===//

#include "CacheKey.h"

#include "Digest.h"
#include "kjit/Cache/DiskCache.h"
#include "kjit/Cache/EntryFormat.h"
#include "kjit/Runtime/CompilerService.h"

#include "absl/strings/str_cat.h"

namespace kjit::rt {

void addBackend(
    KeyDigest &digest, std::string_view target, std::string_view arch,
    absl::Span<const std::string> formats,
    absl::Span<const std::pair<std::string, std::string>> compileOptions) {
  digest.add("target", target);
  digest.add("arch", arch);
  for (const std::string &format : formats)
    digest.add("format", format);
  for (const auto &[name, value] : compileOptions)
    digest.add("option:" + name, value);
}

std::string artifactKey(const ArtifactKeyInputs &in) {
  KeyDigest digest;
  // The domain: an artifact key never equals a manifest key.
  digest.add("kjit-artifact", std::to_string(cache::kFormatVersion));
  digest.add("compiler-service", std::to_string(kCompilerServiceVersion));
  digest.add("build", in.buildIdentity);
  digest.add("environment", in.environment);
  digest.add("extensions", in.compilerExtensions);
  addBackend(digest, in.target, in.arch, in.formats, in.compileOptions);
  digest.add("fingerprint", in.fingerprint);
  digest.add("dependencies", in.dependencyKey);
  digest.add("specialization", in.specializationKey);
  for (const auto &[name, bits] : in.globals)
    digest.add("global:" + name, absl::StrCat(absl::Hex(bits)));
  // Only when the code embeds it: every other key stays path-free.
  if (!in.embeddedSourceName.empty())
    digest.add("source-name", in.embeddedSourceName);
  return digest.finishHex();
}

std::string manifestKey(std::string_view buildIdentity, std::string_view text) {
  KeyDigest digest;
  digest.add("kjit-manifest", std::to_string(cache::kFormatVersion));
  digest.add("compiler-service", std::to_string(kCompilerServiceVersion));
  digest.add("build", buildIdentity);
  digest.add("text", text);
  return digest.finishHex();
}

std::string
codegenEnvironmentKey(const std::function<const char *(const char *)> &lookup) {
  std::string key;
  for (const std::string &name : cache::codegenEnvironment()) {
    const char *value = lookup(name.c_str());
    absl::StrAppend(&key, name, "=", value ? value : "", "\n");
  }
  return key;
}

} // namespace kjit::rt
