//===- CacheContext.h - the disk cache, build identity ----------*- C++ -*-===//
//
// What a Runtime keeps for the disk and fleet caches: their settings (read from
// the options and the environment when the runtime is created), the cache,
// opened on first use, and the identity of the build, computed on first use
// without loading the compiler. Runtime.cpp owns one; KernelCompile.cpp and
// Module.cpp reach it through Runtime::diskCache() and friends.
//
//===----------------------------------------------------------------------===//

#ifndef KJIT_LIB_RUNTIME_CACHECONTEXT_H
#define KJIT_LIB_RUNTIME_CACHECONTEXT_H

#include "RemoteCache.h"
#include "kjit/Cache/DiskCache.h"
#include "kjit/Plugin/PluginHost.h"
#include "kjit/Runtime/Runtime.h"

#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace kjit::rt {

struct CacheContext {
  /// Empty: the disk cache is off.
  std::string directory;
  cache::DiskCacheOptions settings;
  /// codegenEnvironmentKey(getenv) at creation.
  std::string environment;
  /// Problems with the settings, each logged when the cache is first
  /// wanted (also when the disk cache is off).
  std::vector<std::string> settingsWarnings;

  std::once_flag openOnce;
  std::unique_ptr<cache::DiskCache> disk;
  std::once_flag identityOnce;
  std::string identity;

  RemoteCacheSettings remoteSettings;
  std::once_flag remoteOnce;
  std::unique_ptr<RemoteCache> remote;
};

/// The settings of a runtime created with `options`.
std::unique_ptr<CacheContext> makeCacheContext(const RuntimeOptions &options,
                                               bool fromEnvironment);

/// The cache, opened on the first call (null when off or unusable; why is
/// logged once through `host`).
cache::DiskCache *openDiskCache(CacheContext &context,
                                plugin::PluginHost &host);

/// The fleet cache over the first cache store plugin, made on the first
/// call after the disk cache (null when there is no store or it cannot be
/// used; why is logged once through `host`).
RemoteCache *openRemoteCache(CacheContext &context, plugin::PluginHost &host);

/// The build identity (computed once): kjit's version, the runtime's build
/// id and the compiler closure at `compilerPath`.
const std::string &buildIdentity(CacheContext &context,
                                 const std::string &compilerPath);

} // namespace kjit::rt

#endif // KJIT_LIB_RUNTIME_CACHECONTEXT_H
