//===- CApi.cpp - the host's side of the C ABI: statuses, log, host api ---===//
//
// Runtime core: no LLVM or MLIR header may be included here.
//
//===----------------------------------------------------------------------===//

#include "PluginInternal.h"

#include <algorithm>

using namespace kjit::plugin;
using kjit::strCat;

namespace {

/// Returned when allocating a status fails: a status must never be NULL (that
/// would read as success), and allocating again would fail again.
kjit_status outOfMemoryStatus{KJIT_STATUS_RESOURCE_EXHAUSTED,
                              "out of memory while creating a status"};

int32_t statusCode(const kjit_status *status) {
  return status ? status->code : KJIT_STATUS_OK;
}

void statusMessage(const kjit_status *status, const char **message,
                   size_t *messageLen) {
  static const char empty[] = "";
  if (message)
    *message = status ? status->message.data() : empty;
  if (messageLen)
    *messageLen = status ? status->message.size() : 0;
}

void hostLog(kjit_host_context *ctx, int32_t level, const char *message,
             size_t messageLen) {
  if (!ctx || !ctx->host)
    return;
  level = std::clamp<int32_t>(level, KJIT_LOG_ERROR, KJIT_LOG_DEBUG);
  try {
    ctx->host->log(static_cast<LogLevel>(level), ctx->name,
                   detail::view(message, messageLen));
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
    ctx->plugin->reportAsyncError(detail::view(kernelName, kernelNameLen),
                                  status);
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
    return new kjit_status{code == KJIT_STATUS_OK ? KJIT_STATUS_UNKNOWN : code,
                           std::string(view(message, messageLen))};
  } catch (...) {
    return &outOfMemoryStatus;
  }
}

void detail::statusDestroy(kjit_status *status) {
  if (status != &outOfMemoryStatus)
    delete status;
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
  std::string message = strCat(
      describe(), ": asynchronous error",
      kernel.empty() ? std::string() : strCat(" in kernel '", kernel, "'"),
      ": ", status->message, " (status ", status->code, ")");
  detail::statusDestroy(status);
  context.host->asyncErrors.fetch_add(1, std::memory_order_relaxed);
  context.host->log(LogLevel::Error, "kjit", message);
}

//===----------------------------------------------------------------------===//
// Helpers shared by the host's files
//===----------------------------------------------------------------------===//

std::string detail::takeBuffer(kjit_buffer &buffer) {
  std::string bytes(reinterpret_cast<const char *>(buffer.data),
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
  int32_t code = status->code;
  if (code <= KJIT_STATUS_OK || code > KJIT_STATUS_DATA_LOSS)
    code = KJIT_STATUS_UNKNOWN;
  // kjit's codes are the canonical ones, so they map one to one.
  absl::Status result(
      static_cast<absl::StatusCode>(code),
      strCat(plugin.describe(), ": ", entry, " failed: ", status->message));
  statusDestroy(status);
  return result;
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
