//===- CacheStoreRef.cpp - calls into a plugin's cache store table --------===//
//
// A store is advisory: get and put never fail, their errors are logged and
// become misses. Runtime core: no LLVM or MLIR header may be included here.
//
//===----------------------------------------------------------------------===//

#include "PluginInternal.h"

using namespace kjit::plugin;
using namespace kjit::plugin::detail;
using kjit::strCat;

namespace {

/// Logs a store error with what it means for the caller, and frees it.
void warn(LoadedPlugin &p, const char *entry, kjit_status *status,
          std::string_view consequence) {
  absl::Status s = toAbsl(p, entry, status);
  p.context.host->log(LogLevel::Warning, "kjit",
                      strCat(text(s), "; ", consequence));
}

} // namespace

std::string_view CacheStoreRef::name() const {
  return view(plugin->store.name, plugin->store.name_len);
}

std::optional<std::string> CacheStoreRef::get(std::string_view key,
                                              uint32_t timeoutMs) const {
  LoadedPlugin &p = *plugin;
  if (!p.store.get)
    return std::nullopt;
  auto args = zeroed<kjit_cache_get_args>();
  args.key = reinterpret_cast<const uint8_t *>(key.data());
  args.key_size = key.size();
  args.timeout_ms = timeoutMs;
  args.value = emptyBuffer();
  kjit_status *status = nullptr;
  if (!p.call([&] { status = p.store.get(p.self, &args); }))
    return std::nullopt;
  absl::StatusOr<std::string> bytes =
      takeBuffer(p, "cache store get", args.value, kMaxBufferBytes);
  if (status) {
    // Advisory store: an error is a miss, reported so outages are visible.
    warn(p, "cache store get", status, "treated as a miss");
    return std::nullopt;
  }
  if (!args.found)
    return std::nullopt;
  if (!bytes.ok()) {
    p.context.host->log(LogLevel::Warning, "kjit",
                        strCat(text(bytes.status()), "; treated as a miss"));
    return std::nullopt;
  }
  return *std::move(bytes);
}

CacheStoreRef::PutResult CacheStoreRef::put(std::string_view key,
                                            std::string_view value,
                                            const PutOptions &options) const {
  LoadedPlugin &p = *plugin;
  if (!p.store.put)
    return PutResult::Failed;
  // A 1.0 store cannot see flags: it would overwrite where the caller asked
  // it not to. (A TTL it cannot see only keeps the entry longer, which a
  // cache can afford.)
  if (options.flags && p.minor < 1) {
    p.context.host->log(
        LogLevel::Warning, "kjit",
        strCat(p.describe(), ": cache store put flags 0x",
               absl::Hex(options.flags),
               " need a store of ABI 1.1, but this one was built for ABI 1.",
               p.minor, "; entry not stored"));
    return PutResult::Failed;
  }
  auto args = zeroed<kjit_cache_put_args>();
  args.key = reinterpret_cast<const uint8_t *>(key.data());
  args.key_size = key.size();
  args.value = reinterpret_cast<const uint8_t *>(value.data());
  args.value_size = value.size();
  args.timeout_ms = options.timeoutMs;
  args.flags = options.flags;
  args.ttl_seconds = options.ttlSeconds;
  kjit_status *status = nullptr;
  if (!p.call([&] { status = p.store.put(p.self, &args); }))
    return PutResult::Failed;
  if (status && (options.flags & KJIT_CACHE_PUT_IF_ABSENT)) {
    TakenStatus taken = takeStatus(status);
    if (taken.code == KJIT_STATUS_ALREADY_EXISTS)
      return PutResult::Exists;
    p.context.host->log(LogLevel::Warning, "kjit",
                        strCat(p.describe(), ": cache store put failed: ",
                               taken.message, "; entry not stored"));
    return PutResult::Failed;
  }
  if (status) {
    warn(p, "cache store put", status, "entry not stored");
    return PutResult::Failed;
  }
  return PutResult::Stored;
}

absl::StatusOr<bool> CacheStoreRef::remove(std::string_view key,
                                           uint32_t timeoutMs) const {
  LoadedPlugin &p = *plugin;
  if (!p.store.remove)
    return unsupported(p, "cache store", "remove");
  auto args = zeroed<kjit_cache_remove_args>();
  args.key = reinterpret_cast<const uint8_t *>(key.data());
  args.key_size = key.size();
  args.timeout_ms = timeoutMs;
  kjit_status *status = nullptr;
  if (!p.call([&] { status = p.store.remove(p.self, &args); }))
    return gone(p);
  if (status)
    return toAbsl(p, "cache store remove", status);
  return args.found != 0;
}

absl::StatusOr<CacheStoreRef::Description> CacheStoreRef::describe() const {
  LoadedPlugin &p = *plugin;
  Description out;
  if (!p.store.describe)
    return out; // the ABI's meaning of a NULL slot: no limit known, local
  auto args = zeroed<kjit_cache_store_describe_args>();
  kjit_status *status = nullptr;
  if (!p.call([&] { status = p.store.describe(p.self, &args); }))
    return gone(p);
  if (status)
    return toAbsl(p, "cache store describe", status);
  out.maxValueSize = args.max_value_size;
  out.isRemote = args.is_remote != 0;
  return out;
}
