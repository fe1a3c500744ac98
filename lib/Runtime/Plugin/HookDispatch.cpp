//===- HookDispatch.cpp - runs the plugins' hooks -------------------------===//
//
// Cache, compiled, pre-run and launch hooks, in load order (launch exits in
// reverse), over an immutable snapshot of the plugin list. Runtime core: no
// LLVM or MLIR header may be included here.
//
//===----------------------------------------------------------------------===//

#include "PluginInternal.h"

#include <algorithm>

using namespace kjit::plugin;
using namespace kjit::plugin::detail;
using kjit::strCat;

detail::ArgArray::ArgArray(absl::Span<const ArgInfo> args) {
  storage.resize(args.size());
  pointers.resize(args.size());
  for (size_t i = 0; i < args.size(); ++i) {
    const ArgInfo &a = args[i];
    kjit_arg &c = storage[i];
    std::memset(&c, 0, sizeof(c));
    c.struct_size = sizeof(c);
    c.name = a.name.data();
    c.name_len = a.name.size();
    c.type = a.type.data();
    c.type_len = a.type.size();
    c.kind = a.kind;
    c.is_constexpr = a.isConstexpr;
    c.int_value = a.intValue;
    c.uint_value = a.uintValue;
    c.float_value = a.floatValue;
    c.dtype = a.dtype;
    c.flags = a.flags;
    c.bits = a.bits;
    c.bits_size = a.bitsSize;
    pointers[i] = &c;
  }
}

namespace {

kjit_compile_info toC(const CompileInfo &info) {
  kjit_compile_info c;
  std::memset(&c, 0, sizeof(c));
  c.struct_size = sizeof(c);
  c.kernel_name = info.kernelName.data();
  c.kernel_name_len = info.kernelName.size();
  c.key = info.key.data();
  c.key_len = info.key.size();
  c.repr = info.repr.data();
  c.repr_len = info.repr.size();
  c.compile_json = info.compileJson.data();
  c.compile_json_len = info.compileJson.size();
  c.target = info.target.data();
  c.target_len = info.target.size();
  c.device = info.device;
  c.is_warmup = info.isWarmup;
  return c;
}

kjit_launch_event toC(const LaunchInfo &info, const ArgArray &args, uint64_t id,
                      int32_t launchStatus) {
  kjit_launch_event c;
  std::memset(&c, 0, sizeof(c));
  c.struct_size = sizeof(c);
  c.correlation_id = id;
  c.kernel_name = info.kernelName.data();
  c.kernel_name_len = info.kernelName.size();
  c.key = info.key.data();
  c.key_len = info.key.size();
  for (int i = 0; i < 3; ++i)
    c.grid[i] = info.grid[i];
  c.num_warps = info.numWarps;
  c.device = info.device;
  c.stream = info.stream;
  c.metadata_json = info.metadataJson.data();
  c.metadata_json_len = info.metadataJson.size();
  c.num_args = args.size();
  c.args = args.data();
  c.launch_status = launchStatus;
  return c;
}

} // namespace

/// Reports a status a plugin returned from `entry` and frees it.
static void reportStatus(const PluginHost &host, const LoadedPlugin &plugin,
                         const char *entry, std::string_view kernel,
                         kjit_status *status) {
  if (!status)
    return;
  TakenStatus taken = takeStatus(status);
  std::string message =
      strCat(plugin.describe(), ": ", entry,
             kernel.empty() ? "" : strCat(" for kernel '", kernel, "'"),
             " failed: ", taken.message, " (status ", taken.code, ")");
  host.log(LogLevel::Error, "kjit", message);
}

CacheDecision PluginHost::runCacheHook(const CompileInfo &info) {
  auto snap = snapshot();
  kjit_compile_info cInfo = toC(info);
  kjit_cache_event event;
  std::memset(&event, 0, sizeof(event));
  event.struct_size = sizeof(event);
  event.info = &cInfo;
  CacheDecision result = CacheDecision::Continue;
  for (const auto &p : snap->plugins) {
    if (!p->hooks.cache)
      continue;
    int32_t decision = KJIT_CACHE_CONTINUE;
    kjit_status *status = nullptr;
    p->call([&] { status = p->hooks.cache(p->self, &event, &decision); });
    if (status) {
      // A failing hook has no say: the compile goes on.
      reportStatus(*this, *p, "cache hook", info.kernelName, status);
      continue;
    }
    if (decision == KJIT_CACHE_SKIP)
      result = CacheDecision::Skip;
    else if (decision != KJIT_CACHE_CONTINUE)
      log(LogLevel::Warning, "kjit",
          strCat(p->describe(), ": cache hook answered unknown decision ",
                 decision, "; treated as continue"));
  }
  return result;
}

void PluginHost::runCompiledHook(const CompileInfo &info,
                                 const CompiledInfo &compiled) {
  auto snap = snapshot();
  kjit_compile_info cInfo = toC(info);
  kjit_compiled_event event;
  std::memset(&event, 0, sizeof(event));
  event.struct_size = sizeof(event);
  event.info = &cInfo;
  event.artifact_format = compiled.artifactFormat.data();
  event.artifact_format_len = compiled.artifactFormat.size();
  event.artifact = reinterpret_cast<const uint8_t *>(compiled.artifact.data());
  event.artifact_size = compiled.artifact.size();
  event.metadata_json = compiled.metadataJson.data();
  event.metadata_json_len = compiled.metadataJson.size();
  event.compile_ns = compiled.compileNanos;
  for (const auto &p : snap->plugins) {
    if (!p->hooks.compiled)
      continue;
    kjit_status *status = nullptr;
    p->call([&] { status = p->hooks.compiled(p->self, &event); });
    reportStatus(*this, *p, "compiled hook", info.kernelName, status);
  }
}

absl::Status PluginHost::runPreRunHooks(std::string_view kernelName,
                                        absl::Span<const ArgInfo> args) {
  if (!hasPreRunHooks())
    return absl::OkStatus();
  auto snap = snapshot();
  ArgArray cArgs(args);
  kjit_pre_run_event event;
  std::memset(&event, 0, sizeof(event));
  event.struct_size = sizeof(event);
  event.kernel_name = kernelName.data();
  event.kernel_name_len = kernelName.size();
  event.num_args = cArgs.size();
  event.args = cArgs.data();
  for (const auto &p : snap->plugins) {
    if (!p->hooks.pre_run)
      continue;
    kjit_status *status = nullptr;
    p->call([&] { status = p->hooks.pre_run(p->self, &event); });
    if (status) {
      // As a Python pre-run hook that raises: the launch stops here.
      std::string message =
          strCat(p->describe(), ": pre-run hook refused the launch of '",
                 kernelName, "': ", takeStatus(status).message);
      return absl::FailedPreconditionError(message);
    }
  }
  return absl::OkStatus();
}

LaunchRecord PluginHost::runLaunchEnter(const LaunchInfo &info,
                                        uint64_t correlationId) {
  LaunchRecord record;
  if (!hasLaunchHooks())
    return record;
  record.snapshot = snapshot();
  record.id = correlationId
                  ? correlationId
                  : nextCorrelationId.fetch_add(1, std::memory_order_relaxed);
  record.slots.assign(record.snapshot->plugins.size(), 0);
  ArgArray cArgs(info.args);
  kjit_launch_event event = toC(info, cArgs, record.id, KJIT_STATUS_OK);
  const auto &plugins = record.snapshot->plugins;
  for (size_t i = 0; i < plugins.size(); ++i) {
    LoadedPlugin &p = *plugins[i];
    if (!p.hooks.launch_enter)
      continue;
    kjit_status *status = nullptr;
    p.call([&] {
      status = p.hooks.launch_enter(p.self, &event, &record.slots[i]);
    });
    reportStatus(*this, p, "launch_enter hook", info.kernelName, status);
  }
  return record;
}

void PluginHost::runLaunchExit(LaunchRecord &record, const LaunchInfo &info,
                               int32_t launchStatus) {
  if (!record.snapshot)
    return;
  ArgArray cArgs(info.args);
  kjit_launch_event event = toC(info, cArgs, record.id, launchStatus);
  const auto &plugins = record.snapshot->plugins;
  // Reverse order: the first plugin to see a launch is the last to leave it,
  // so nested instrumentation (profiler around logger) brackets properly.
  for (size_t i = plugins.size(); i-- > 0;) {
    LoadedPlugin &p = *plugins[i];
    if (!p.hooks.launch_exit)
      continue;
    kjit_status *status = nullptr;
    p.call([&] {
      status = p.hooks.launch_exit(p.self, &event, &record.slots[i]);
    });
    reportStatus(*this, p, "launch_exit hook", info.kernelName, status);
  }
  record.snapshot.reset();
}

void PluginHost::addDeviceTimeSink(DeviceTimeSink *sink) {
  std::lock_guard<std::mutex> lock(sinkMutex);
  deviceTimeSinks.push_back(sink);
  deviceTimeSinkCount.store(deviceTimeSinks.size(), std::memory_order_release);
}

void PluginHost::removeDeviceTimeSink(DeviceTimeSink *sink) {
  std::lock_guard<std::mutex> lock(sinkMutex);
  deviceTimeSinks.erase(
      std::remove(deviceTimeSinks.begin(), deviceTimeSinks.end(), sink),
      deviceTimeSinks.end());
  deviceTimeSinkCount.store(deviceTimeSinks.size(), std::memory_order_release);
}

void PluginHost::runLaunchCompleteHooks(const kjit_device_time &time) {
  if (deviceTimeSinkCount.load(std::memory_order_acquire) != 0) {
    // Under the lock, so that a removed sink is never called after its
    // removal returned (sinks do little: they file a sample).
    std::lock_guard<std::mutex> lock(sinkMutex);
    for (DeviceTimeSink *sink : deviceTimeSinks)
      sink->deviceTime(time);
  }
  if (!hasLaunchCompleteHooks())
    return;
  auto snap = snapshot();
  std::string_view kernel(time.kernel_name,
                          time.kernel_name ? time.kernel_name_len : 0);
  for (const auto &p : snap->plugins) {
    if (!p->hooks.launch_complete)
      continue;
    kjit_status *status = nullptr;
    p->call([&] { status = p->hooks.launch_complete(p->self, &time); });
    reportStatus(*this, *p, "launch_complete hook", kernel, status);
  }
}
