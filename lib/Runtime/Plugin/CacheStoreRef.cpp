//===- CacheStoreRef.cpp - calls into a plugin's cache store table --------===//
//
// Errors keep the store's code and message; what they mean (a miss, a
// counted remote error) is the runtime's remote tier's to decide. Runtime
// core: no LLVM or MLIR header may be included here.
//
//===----------------------------------------------------------------------===//

#include "PluginInternal.h"

using namespace kjit::plugin;
using namespace kjit::plugin::detail;

std::string_view CacheStoreRef::name() const {
  return view(plugin->store.name, plugin->store.name_len);
}

absl::StatusOr<std::optional<std::string>>
CacheStoreRef::get(std::string_view key, uint32_t timeoutMs) const {
  LoadedPlugin &p = *plugin;
  if (!p.store.get)
    return std::nullopt; // the ABI's meaning of a NULL slot: never a hit
  auto args = zeroed<kjit_cache_get_args>();
  args.key = reinterpret_cast<const uint8_t *>(key.data());
  args.key_size = key.size();
  args.timeout_ms = timeoutMs;
  args.value = emptyBuffer();
  kjit_status *status = nullptr;
  if (!p.call([&] { status = p.store.get(p.self, &args); }))
    return gone(p);
  // Taken first so that it is freed whatever else the store answered.
  absl::StatusOr<std::string> bytes =
      takeBuffer(p, "cache store get", args.value, kMaxBufferBytes);
  if (status)
    return toAbsl(p, "cache store get", status);
  if (!args.found)
    return std::nullopt;
  if (!bytes.ok())
    return bytes.status();
  return std::optional<std::string>(*std::move(bytes));
}

absl::StatusOr<CacheStoreRef::PutResult>
CacheStoreRef::put(std::string_view key, std::string_view value,
                   const PutOptions &options) const {
  LoadedPlugin &p = *plugin;
  if (!p.store.put)
    return unsupported(p, "cache store", "put");
  // A 1.0 store cannot see flags: it would overwrite where the caller asked
  // it not to. (A TTL it cannot see only keeps the entry longer, which a
  // cache can afford.)
  if (options.flags && p.minor < 1)
    return absl::FailedPreconditionError(strCat(
        p.describe(), ": cache store put flags 0x", absl::Hex(options.flags),
        " need a store of ABI 1.1, but this one was built for ABI 1.",
        p.minor));
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
    return gone(p);
  if (!status)
    return PutResult::Stored;
  absl::Status error = toAbsl(p, "cache store put", status);
  if ((options.flags & KJIT_CACHE_PUT_IF_ABSENT) &&
      error.code() == absl::StatusCode::kAlreadyExists)
    return PutResult::Exists;
  return error;
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
