//===- CacheContext.cpp - a runtime's disk cache and build identity -------===//

#include "CacheContext.h"

#include "CacheKey.h"
#include "kjit/Cache/BuildId.h"
#include "kjit/Model/InputFile.h"
#include "kjit/Runtime/BuildConfig.h"
#include "kjit/Support/StrCat.h"

#include <cstdlib>

namespace kjit::rt {

namespace {
const char *env(const char *name) { return std::getenv(name); }
} // namespace

std::unique_ptr<CacheContext> makeCacheContext(const RuntimeOptions &options,
                                               bool fromEnvironment) {
  auto context = std::make_unique<CacheContext>();
  // The environment is read now, once, like the runtime's other settings.
  std::function<const char *(const char *)> lookup = env;
  if (!fromEnvironment)
    lookup = [](const char *) -> const char * { return nullptr; };
  context->environment = codegenEnvironmentKey(lookup);
  if (options.cacheDirectory)
    context->directory = *options.cacheDirectory;
  else if (fromEnvironment) {
    const char *dir = env("KJIT_CACHE_DIR");
    // Set but empty: off. Unset: the user's cache home.
    context->directory = dir ? std::string(dir) : cache::defaultDirectory();
  }
  cache::DiskCacheOptions &settings = context->settings;
  if (options.cacheMaxSize)
    settings.maxSize = *options.cacheMaxSize;
  else if (const char *size =
               fromEnvironment ? env("KJIT_CACHE_MAX_SIZE") : nullptr;
           size && *size) {
    if (std::optional<uint64_t> parsed = cache::parseSize(size))
      settings.maxSize = *parsed;
    else
      context->settingsWarnings.push_back(
          strCat("KJIT_CACHE_MAX_SIZE='", size,
                 "' is not a size (1073741824, 512M, 2G); the default, ",
                 cache::formatSize(cache::kDefaultMaxSize), ", is used"));
  }
  if (const char *timeout =
          fromEnvironment ? env("KJIT_CACHE_LOCK_TIMEOUT") : nullptr;
      timeout && *timeout) {
    if (auto parsed = cache::parseDuration(timeout))
      settings.lockTimeout = *parsed;
    else
      context->settingsWarnings.push_back(
          strCat("KJIT_CACHE_LOCK_TIMEOUT='", timeout,
                 "' is not a duration (500ms, 30s, 2m); the default, ",
                 cache::kDefaultLockTimeout.count(), " ms, is used"));
  }
  if (options.remoteCacheKeyFile)
    context->remoteSettings.keyFile = *options.remoteCacheKeyFile;
  else if (const char *file =
               fromEnvironment ? env("KJIT_REDIS_KEY_FILE") : nullptr)
    context->remoteSettings.keyFile = file;
  if (const char *ttl =
          fromEnvironment ? env("KJIT_REMOTE_CACHE_TTL") : nullptr;
      ttl && *ttl) {
    auto parsed = cache::parseDuration(ttl);
    if (parsed && *parsed >= std::chrono::seconds(1))
      context->remoteSettings.ttl =
          std::chrono::duration_cast<std::chrono::seconds>(*parsed);
    else
      context->settingsWarnings.push_back(strCat(
          "KJIT_REMOTE_CACHE_TTL='", ttl,
          "' is not a duration of a second or more (3600s, 12h, 7d); the "
          "default, ",
          context->remoteSettings.ttl.count(), " s, is used"));
  }
  if (fromEnvironment) {
    const char *fsync = env("KJIT_CACHE_FSYNC");
    settings.durable = fsync && std::string_view(fsync) == "1";
    const char *verbose = env("KJIT_CACHE_VERBOSE");
    settings.verbose = verbose && std::string_view(verbose) == "1";
  }
  return context;
}

cache::DiskCache *openDiskCache(CacheContext &context,
                                plugin::PluginHost &host) {
  std::call_once(context.openOnce, [&] {
    for (const std::string &warning : context.settingsWarnings)
      host.log(plugin::LogLevel::Warning, "kjit", warning);
    if (context.directory.empty())
      return;
    cache::DiskCacheOptions options = context.settings;
    options.directory = context.directory;
    options.warn = [&host](std::string_view message) {
      host.log(plugin::LogLevel::Warning, "kjit", message);
    };
    options.note = [&host](std::string_view message) {
      host.log(plugin::LogLevel::Info, "kjit", message);
    };
    absl::StatusOr<std::unique_ptr<cache::DiskCache>> disk =
        cache::DiskCache::open(std::move(options));
    if (!disk.ok()) {
      host.log(plugin::LogLevel::Warning, "kjit",
               strCat("disk cache off: ", disk.status().message(),
                      " (KJIT_CACHE_DIR= turns it off quietly)"));
      return;
    }
    context.disk = std::move(*disk);
  });
  return context.disk.get();
}

RemoteCache *openRemoteCache(CacheContext &context, plugin::PluginHost &host) {
  std::call_once(context.remoteOnce, [&] {
    context.remote = RemoteCache::open(context.remoteSettings, host,
                                       openDiskCache(context, host));
  });
  return context.remote.get();
}

const std::string &buildIdentity(CacheContext &context,
                                 const std::string &compilerPath) {
  std::call_once(context.identityOnce, [&] {
    // The compiler's ELF notes are read only from a regular file (a FIFO
    // would block the read); any other names no build, and openCompiler
    // refuses it.
    absl::Status regular = checkRegularFile(compilerPath);
    std::string compiler =
        regular.ok() || regular.code() == absl::StatusCode::kNotFound
            ? cache::libraryClosureIdentity(compilerPath)
            : strCat("unusable (", regular.message(), ")");
    context.identity =
        strCat("kjit ", kBuildVersion, "; runtime=",
               cache::loadedObjectIdentity(
                   reinterpret_cast<const void *>(&makeCacheContext)),
               "; compiler=", compiler);
  });
  return context.identity;
}

} // namespace kjit::rt
