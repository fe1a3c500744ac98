//===- RemoteCache.cpp - the fleet cache tier over a cache store ----------===//

#include "RemoteCache.h"

#include "kjit/Cache/RemoteEnvelope.h"
#include "kjit/Runtime/BuildConfig.h"
#include "kjit/Support/StrCat.h"

#include <unistd.h>

namespace kjit::rt {

namespace {

// The publication queue's bounds: a process that compiles faster than the
// store takes entries drops the excess (counted) instead of growing.
constexpr size_t kMaxQueuedEntries = 64;
constexpr size_t kMaxQueuedBytes = size_t(256) << 20;

std::string writerId() {
  char host[256] = {};
  if (gethostname(host, sizeof(host) - 1) != 0)
    host[0] = '\0';
  return strCat(host[0] ? host : "unknown-host", ":", getpid());
}

bool isRemoteCounter(cache::Counter counter) {
  return counter >= cache::Counter::RemoteHits &&
         counter < cache::Counter::Count;
}

} // namespace

std::string RemoteCache::storeKey(std::string_view key, cache::EntryKind kind) {
  const char *part = "/a/";
  switch (kind) {
  case cache::EntryKind::Artifact:
    break;
  case cache::EntryKind::Manifest:
    part = "/m/";
    break;
  case cache::EntryKind::Tuning:
    part = "/t/";
    break;
  case cache::EntryKind::Choice:
    part = "/c/";
    break;
  }
  return strCat("kjit-", kBuildVersion, "/e", cache::kEnvelopeVersion, part,
                key);
}

std::unique_ptr<RemoteCache>
RemoteCache::open(const RemoteCacheSettings &settings, plugin::PluginHost &host,
                  cache::DiskCache *disk) {
  std::vector<plugin::CacheStoreRef> stores = host.cacheStores();
  if (stores.empty())
    return nullptr;
  std::string name(stores[0].name());
  auto off = [&](std::string_view why) {
    host.log(plugin::LogLevel::Warning, "kjit",
             strCat("remote cache off: ", why,
                    "; kernels are compiled or read from disk as usual"));
    return nullptr;
  };
  if (stores.size() > 1)
    host.log(plugin::LogLevel::Warning, "kjit",
             strCat(stores.size(),
                    " cache stores are loaded; only the first, '", name,
                    "', is used"));
  if (settings.keyFile.empty())
    return off(strCat("cache store '", name,
                      "' is loaded but KJIT_REDIS_KEY_FILE is not set, and "
                      "values cannot be verified without the shared key"));
  absl::StatusOr<std::string> secret = cache::readSecretFile(settings.keyFile);
  if (!secret.ok())
    return off(std::string(secret.status().message()));
  absl::StatusOr<plugin::CacheStoreRef::Description> description =
      stores[0].describe();
  if (!description.ok())
    return off(strCat("cache store '", name, "' cannot describe itself: ",
                      description.status().message()));
  return std::unique_ptr<RemoteCache>(
      new RemoteCache(host, stores[0], *std::move(secret), settings,
                      description->maxValueSize, disk));
}

RemoteCache::RemoteCache(plugin::PluginHost &host, plugin::CacheStoreRef store,
                         std::string secret,
                         const RemoteCacheSettings &settings,
                         uint64_t maxValueSize, cache::DiskCache *disk)
    : host_(host), store_(std::move(store)), secret_(std::move(secret)),
      writerId_(writerId()), settings_(settings), maxValueSize_(maxValueSize),
      disk_(disk) {}

RemoteCache::~RemoteCache() { drain(settings_.drainTimeout); }

void RemoteCache::add(cache::Counter counter, uint64_t amount) {
  counts_[size_t(counter)].fetch_add(amount, std::memory_order_relaxed);
  if (disk_)
    disk_->count(counter, amount);
}

uint64_t RemoteCache::count(cache::Counter counter) const {
  return isRemoteCounter(counter)
             ? counts_[size_t(counter)].load(std::memory_order_relaxed)
             : 0;
}

void RemoteCache::storeError(const absl::Status &status,
                             std::string_view operation) {
  // CANCELLED: the store did not try (its breaker is open, or writes are
  // denied); it said why once, when that began.
  if (status.code() == absl::StatusCode::kCancelled) {
    add(cache::Counter::RemoteSkipped);
    return;
  }
  add(status.code() == absl::StatusCode::kDeadlineExceeded
          ? cache::Counter::RemoteTimeouts
          : cache::Counter::RemoteErrors);
  host_.log(plugin::LogLevel::Warning, "kjit",
            strCat("remote cache ", operation, ": ", status.message(),
                   operation == "get" ? "; treated as a miss"
                                      : "; entry not published"));
}

std::optional<cache::EntryData> RemoteCache::get(std::string_view key,
                                                 bool *replaceable,
                                                 cache::EntryKind kind) {
  bool ignored;
  bool &replace = replaceable ? *replaceable : ignored;
  replace = false;
  std::string storeKey = RemoteCache::storeKey(key, kind);
  absl::StatusOr<std::optional<std::string>> value = store_.get(storeKey, 0);
  if (!value.ok()) {
    // OUT_OF_RANGE: the store holds a value above its size limit and would
    // not hand it over. That is a bad value, as one that fails the checks
    // below is, not a failing store: count it as a rejection.
    if (value.status().code() == absl::StatusCode::kOutOfRange)
      reject(key, std::string(value.status().message()), kind);
    else
      storeError(value.status(), "get");
    return std::nullopt;
  }
  if (!*value) {
    add(cache::Counter::RemoteMisses);
    return std::nullopt;
  }
  add(cache::Counter::RemoteBytesRead, (*value)->size());
  if (maxValueSize_ && (*value)->size() > maxValueSize_) {
    reject(key,
           strCat("it is ", (*value)->size(),
                  " bytes, more than the store's limit of ", maxValueSize_),
           kind);
    return std::nullopt;
  }
  absl::StatusOr<cache::OpenedEnvelope> opened =
      cache::openEnvelope(secret_, storeKey, **value);
  if (!opened.ok()) {
    replace = opened.status().code() != absl::StatusCode::kUnauthenticated;
    reject(key, std::string(opened.status().message()), kind);
    return std::nullopt;
  }
  absl::StatusOr<cache::EntryData> entry =
      cache::decodeEntry(opened->payload, key);
  if (!entry.ok() || entry->kind != kind) {
    replace = true;
    reject(key,
           strCat("its entry (written by ", opened->writerId, ") ",
                  entry.ok() ? strCat("is not a ", cache::kindName(kind))
                             : std::string(entry.status().message())),
           kind);
    return std::nullopt;
  }
  return *std::move(entry);
}

void RemoteCache::reject(std::string_view key, std::string_view why,
                         cache::EntryKind kind) {
  add(cache::Counter::RemoteVerifyFailures);
  bool tuning =
      kind == cache::EntryKind::Tuning || kind == cache::EntryKind::Choice;
  host_.log(plugin::LogLevel::Warning, "kjit",
            strCat("remote cache: the value for ", key.substr(0, 16),
                   "... from store '", store_.name(), "' was rejected: ", why,
                   tuning ? "; timing instead" : "; compiling instead"));
}

absl::Status RemoteCache::publishNow(const cache::EntryData &entry,
                                     bool replace) {
  std::string storeKey = RemoteCache::storeKey(entry.key, entry.kind);
  std::string value = cache::sealEnvelope(secret_, storeKey, writerId_,
                                          cache::encodeEntry(entry));
  if (maxValueSize_ && value.size() > maxValueSize_)
    return absl::ResourceExhaustedError(strCat("the value is ", value.size(),
                                               " bytes, more than the store's "
                                               "limit of ",
                                               maxValueSize_));
  plugin::CacheStoreRef::PutOptions options;
  options.flags = replace ? 0 : KJIT_CACHE_PUT_IF_ABSENT;
  options.ttlSeconds = uint32_t(std::min<int64_t>(
      settings_.ttl.count(), std::numeric_limits<uint32_t>::max()));
  options.timeoutMs = 0; // the store's own bound
  absl::StatusOr<plugin::CacheStoreRef::PutResult> put =
      store_.put(storeKey, value, options);
  if (!put.ok()) {
    add(put.status().code() == absl::StatusCode::kDeadlineExceeded
            ? cache::Counter::RemoteTimeouts
        : put.status().code() == absl::StatusCode::kCancelled
            ? cache::Counter::RemoteSkipped
            : cache::Counter::RemoteErrors);
    return put.status();
  }
  if (*put == plugin::CacheStoreRef::PutResult::Stored) {
    add(cache::Counter::RemotePuts);
    add(cache::Counter::RemoteBytesWritten, value.size());
  }
  return absl::OkStatus();
}

void RemoteCache::publish(cache::EntryData entry, bool replace) {
  std::lock_guard<std::mutex> lock(queueMutex_);
  size_t bytes = entry.payload.size() + entry.metadata.size();
  if (stopping_ || queue_.size() >= kMaxQueuedEntries ||
      queuedBytes_ + bytes > kMaxQueuedBytes) {
    add(cache::Counter::RemoteDropped);
    return;
  }
  queue_.push_back({std::move(entry), replace});
  queuedBytes_ += bytes;
  if (!worker_.joinable())
    worker_ = std::thread([this] { work(); });
  queueChanged_.notify_all();
}

void RemoteCache::drain(std::chrono::milliseconds timeout) {
  std::unique_lock<std::mutex> lock(queueMutex_);
  queueChanged_.wait_for(lock, timeout,
                         [&] { return queue_.empty() && !busy_; });
  if (!queue_.empty())
    add(cache::Counter::RemoteDropped, queue_.size());
  queue_.clear();
  queuedBytes_ = 0;
  stopping_ = true;
  queueChanged_.notify_all();
  lock.unlock();
  // At most the one put in flight, which the store bounds by its timeout.
  if (worker_.joinable())
    worker_.join();
}

void RemoteCache::work() {
  std::unique_lock<std::mutex> lock(queueMutex_);
  for (;;) {
    queueChanged_.wait(lock, [&] { return stopping_ || !queue_.empty(); });
    if (queue_.empty())
      return; // stopping
    Publication publication = std::move(queue_.front());
    queue_.pop_front();
    const cache::EntryData &entry = publication.entry;
    queuedBytes_ -= entry.payload.size() + entry.metadata.size();
    busy_ = true;
    lock.unlock();

    std::string storeKey = RemoteCache::storeKey(entry.key, entry.kind);
    std::string value = cache::sealEnvelope(secret_, storeKey, writerId_,
                                            cache::encodeEntry(entry));
    if (maxValueSize_ && value.size() > maxValueSize_) {
      add(cache::Counter::RemoteDropped);
    } else {
      plugin::CacheStoreRef::PutOptions options;
      // The first writer wins: entries of one key are equivalent, and
      // rewriting them would only churn the fleet's caches.
      options.flags = publication.replace ? 0 : KJIT_CACHE_PUT_IF_ABSENT;
      options.ttlSeconds = uint32_t(std::min<int64_t>(
          settings_.ttl.count(), std::numeric_limits<uint32_t>::max()));
      options.timeoutMs = 0;
      absl::StatusOr<plugin::CacheStoreRef::PutResult> put =
          store_.put(storeKey, value, options);
      if (!put.ok())
        storeError(put.status(), "put");
      else if (*put == plugin::CacheStoreRef::PutResult::Stored) {
        add(cache::Counter::RemotePuts);
        add(cache::Counter::RemoteBytesWritten, value.size());
      }
    }

    lock.lock();
    busy_ = false;
    queueChanged_.notify_all();
  }
}

} // namespace kjit::rt
