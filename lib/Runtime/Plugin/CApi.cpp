//===- CApi.cpp - the host's side of the C ABI: statuses, log, host api ---===//
//
// Runtime core: no LLVM or MLIR header may be included here.
//
//===----------------------------------------------------------------------===//

#include "PluginInternal.h"

#include "absl/container/flat_hash_set.h"

#include <algorithm>

using namespace kjit::plugin;

namespace {

/// Returned when allocating a status fails: a status must never be NULL (that
/// would read as success), and allocating again would fail again.
kjit_status outOfMemoryStatus{KJIT_STATUS_RESOURCE_EXHAUSTED,
                              "out of memory while creating a status"};

/// Every status statusCreate made and statusDestroy has not freed yet. A
/// plugin may return a pointer to anything (a struct of its own, freed
/// memory); looking it up here first means the host never reads or frees
/// what it did not make. Statuses are errors, so the lock is off the hot
/// path. Never destroyed: plugins may create statuses during static
/// destruction.
struct StatusRegistry {
  std::mutex mutex;
  absl::flat_hash_set<const kjit_status *> live;
};
StatusRegistry &registry() {
  static auto *r = new StatusRegistry;
  return *r;
}

bool isHostStatus(const kjit_status *status) {
  if (status == &outOfMemoryStatus)
    return true;
  StatusRegistry &r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  return r.live.contains(status);
}

int32_t statusCode(const kjit_status *status) {
  if (!status)
    return KJIT_STATUS_OK;
  return isHostStatus(status) ? status->code : KJIT_STATUS_INTERNAL;
}

void statusMessage(const kjit_status *status, const char **message,
                   size_t *messageLen) {
  static const char empty[] = "";
  static const char foreign[] = "not a status of this host";
  bool ours = status && isHostStatus(status);
  const char *text = ours ? status->message.data() : status ? foreign : empty;
  if (message)
    *message = text;
  if (messageLen)
    *messageLen = ours ? status->message.size() : std::strlen(text);
}

void hostLog(kjit_host_context *ctx, int32_t level, const char *message,
             size_t messageLen) {
  if (!ctx || !ctx->host)
    return;
  level = std::clamp<int32_t>(level, KJIT_LOG_ERROR, KJIT_LOG_DEBUG);
  try {
    ctx->host->log(static_cast<LogLevel>(level), ctx->name,
                   detail::boundedMessage(message, messageLen));
  } catch (...) {
    // Nothing may cross back into the plugin.
  }
}

void reportAsyncError(kjit_host_context *ctx, const char *kernelName,
                      size_t kernelNameLen, kjit_status *status) {
  if (!status)
    return;
  if (!ctx || !ctx->plugin) {
    detail::statusDestroy(status);
    return;
  }
  try {
    ctx->plugin->reportAsyncError(
        detail::boundedMessage(kernelName, kernelNameLen), status);
  } catch (...) {
    // Nothing may cross back into the plugin (the status is gone already).
  }
}

void reportDeviceTime(kjit_host_context *ctx, const kjit_device_time *time) {
  if (!ctx || !ctx->host || !time ||
      !KJIT_HAS_FIELD(time, kjit_device_time, end_ns))
    return;
  try {
    ctx->host->runLaunchCompleteHooks(*time);
  } catch (...) {
    // Nothing may cross back into the plugin.
  }
}

} // namespace

kjit_status *detail::statusCreate(int32_t code, const char *message,
                                  size_t messageLen) {
  try {
    auto *status =
        new kjit_status{code == KJIT_STATUS_OK ? KJIT_STATUS_UNKNOWN : code,
                        std::string(boundedMessage(message, messageLen))};
    StatusRegistry &r = registry();
    std::lock_guard<std::mutex> lock(r.mutex);
    r.live.insert(status);
    return status;
  } catch (...) {
    return &outOfMemoryStatus;
  }
}

void detail::statusDestroy(kjit_status *status) {
  if (!status || status == &outOfMemoryStatus)
    return;
  {
    StatusRegistry &r = registry();
    std::lock_guard<std::mutex> lock(r.mutex);
    if (r.live.erase(status) == 0)
      return; // not ours (or freed already): never free it
  }
  delete status;
}

detail::TakenStatus detail::takeStatus(kjit_status *status) {
  if (!isHostStatus(status))
    return {KJIT_STATUS_INTERNAL,
            "returned a status that kjit_host_api.status_create did not make "
            "(the host neither reads nor frees it)"};
  TakenStatus taken{status->code, status->message};
  statusDestroy(status);
  return taken;
}

std::string detail::checkName(const char *data, size_t size,
                              std::string_view what) {
  if (!data)
    return size ? strCat(what, " is NULL with length ", size) : std::string();
  size_t scan = std::min(size, kMaxNameBytes);
  if (const void *nul = std::memchr(data, 0, scan))
    return strCat(what, " has length ", size, " but ends at byte ",
                  static_cast<const char *>(nul) - data,
                  " (a NUL byte): the length is wrong");
  if (size > kMaxNameBytes)
    return strCat(what, " is ", size, " bytes long, more than the limit of ",
                  kMaxNameBytes);
  for (size_t i = 0; i < size; ++i) {
    unsigned char c = static_cast<unsigned char>(data[i]);
    if (c < 0x20 || c == 0x7f)
      return strCat(what, " has the control byte 0x",
                    absl::Hex(c, absl::kZeroPad2), " at byte ", i);
  }
  return std::string();
}

std::string_view detail::boundedMessage(const char *data, size_t size) {
  if (!data)
    return std::string_view();
  size_t scan = std::min(size, kMaxMessageBytes);
  const void *nul = std::memchr(data, 0, scan);
  return std::string_view(
      data,
      nul ? static_cast<size_t>(static_cast<const char *>(nul) - data) : scan);
}

const kjit_host_api detail::kHostApi = {
    sizeof(kjit_host_api),
    nullptr,
    KJIT_ABI_MAJOR,
    KJIT_ABI_MINOR,
    detail::statusCreate,
    detail::statusDestroy,
    statusCode,
    statusMessage,
    hostLog,
    reportAsyncError,
    reportDeviceTime,
};

void LoadedPlugin::reportAsyncError(std::string_view kernel,
                                    kjit_status *status) {
  detail::TakenStatus taken = detail::takeStatus(status);
  std::string message = strCat(
      describe(), ": asynchronous error",
      kernel.empty() ? std::string() : strCat(" in kernel '", kernel, "'"),
      ": ", taken.message, " (status ", taken.code, ")");
  context.host->asyncErrors.fetch_add(1, std::memory_order_relaxed);
  context.host->log(LogLevel::Error, "kjit", message);
}

//===----------------------------------------------------------------------===//
// Helpers shared by the host's files
//===----------------------------------------------------------------------===//

absl::StatusOr<std::string> detail::takeBuffer(const LoadedPlugin &plugin,
                                               const char *entry,
                                               kjit_buffer &buffer,
                                               uint64_t limit) {
  absl::StatusOr<std::string> bytes;
  if (!buffer.data && buffer.size)
    bytes = absl::InternalError(strCat(plugin.describe(), ": ", entry,
                                       " returned a NULL buffer of ",
                                       buffer.size, " bytes"));
  else if (buffer.size > limit)
    bytes = absl::InternalError(
        strCat(plugin.describe(), ": ", entry, " returned ", buffer.size,
               " bytes, more than the limit of ", limit));
  else
    bytes = std::string(reinterpret_cast<const char *>(buffer.data),
                        buffer.data ? buffer.size : 0);
  if (buffer.release)
    buffer.release(buffer.owner, buffer.data, buffer.size);
  buffer.data = nullptr;
  buffer.release = nullptr;
  return bytes;
}

absl::Status detail::toAbsl(const LoadedPlugin &plugin, const char *entry,
                            kjit_status *status) {
  if (!status)
    return absl::OkStatus();
  TakenStatus taken = takeStatus(status);
  int32_t code = taken.code;
  if (code <= KJIT_STATUS_OK || code > KJIT_STATUS_DATA_LOSS)
    code = KJIT_STATUS_UNKNOWN;
  // kjit's codes are the canonical ones, so they map one to one.
  return absl::Status(
      static_cast<absl::StatusCode>(code),
      strCat(plugin.describe(), ": ", entry, " failed: ", taken.message));
}

absl::Status detail::unsupported(const LoadedPlugin &plugin, const char *table,
                                 const char *entry) {
  return absl::UnimplementedError(
      strCat(plugin.describe(), ": ", table, " does not implement ", entry));
}

absl::Status detail::gone(const LoadedPlugin &plugin) {
  return absl::FailedPreconditionError(
      strCat(plugin.describe(), " has been shut down"));
}
