//===- PluginHost.cpp - loads C ABI plugins and runs their hooks ----------===//
//
// Runtime core: no LLVM or MLIR header may be included here.
//
//===----------------------------------------------------------------------===//

#include "kjit/Plugin/PluginHost.h"

#include "absl/container/inlined_vector.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <dlfcn.h>
#include <fstream>
#include <new>
#include <thread>
#include <type_traits>

using namespace kjit::plugin;

namespace {

// Debian's Abseil is built as C++14, so its string_view is not
// std::string_view and absl::StrCat does not take ours; a small local
// concatenation keeps the host free of conversions.
void appendOne(std::string &out, std::string_view piece) { out += piece; }
void appendOne(std::string &out, const char *piece) { out += piece; }
template <typename T, typename = std::enable_if_t<std::is_arithmetic_v<T>>>
void appendOne(std::string &out, T value) {
  out += std::to_string(value);
}
template <typename... Pieces>
void append(std::string &out, const Pieces &...pieces) {
  (appendOne(out, pieces), ...);
}
template <typename... Pieces> std::string cat(const Pieces &...pieces) {
  std::string out;
  append(out, pieces...);
  return out;
}

} // namespace

//===----------------------------------------------------------------------===//
// C-side objects
//===----------------------------------------------------------------------===//

/// The opaque status of the C ABI. Only the host creates and frees these, so
/// one allocator owns every status whichever plugin returned it.
struct kjit_status {
  int32_t code;
  std::string message;
};

/// What init receives: identifies the plugin in log calls.
struct kjit_host_context {
  PluginHost *host;
  std::string name;
};

namespace {

/// Returned when allocating a status fails: a status must never be NULL (that
/// would read as success), and allocating again would fail again.
kjit_status outOfMemoryStatus{KJIT_STATUS_RESOURCE_EXHAUSTED,
                              "out of memory while creating a status"};

kjit_status *statusCreate(int32_t code, const char *message,
                          size_t messageLen) {
  try {
    return new kjit_status{
        code == KJIT_STATUS_OK ? KJIT_STATUS_UNKNOWN : code,
        std::string(message ? message : "", message ? messageLen : 0)};
  } catch (...) {
    return &outOfMemoryStatus;
  }
}

void statusDestroy(kjit_status *status) {
  if (status != &outOfMemoryStatus)
    delete status;
}

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
    ctx->host->log(
        static_cast<LogLevel>(level), ctx->name,
        std::string_view(message ? message : "", message ? messageLen : 0));
  } catch (...) {
    // Nothing may cross back into the plugin.
  }
}

const kjit_host_api kHostApi = {
    sizeof(kjit_host_api),
    nullptr,
    KJIT_ABI_MAJOR,
    KJIT_ABI_MINOR,
    statusCreate,
    statusDestroy,
    statusCode,
    statusMessage,
    hostLog,
};

/// The smallest plugin table this host accepts: everything ABI 1.0 defined.
constexpr size_t kMinPluginApiSize =
    KJIT_STRUCT_SIZE(kjit_plugin_api, cache_store);

/// Copies a plugin's table into a zeroed host-sized struct, so slots the
/// plugin's (older) header did not have read as NULL ("unsupported") and
/// slots of a newer header are ignored.
template <typename Table> Table copyTable(const Table *table) {
  Table copy;
  std::memset(&copy, 0, sizeof(copy));
  std::memcpy(&copy, table, std::min(table->struct_size, sizeof(Table)));
  return copy;
}

std::string_view view(const char *data, size_t size) {
  return data ? std::string_view(data, size) : std::string_view();
}

/// Hook nesting on this thread: shutdown must not wait for the hook it runs
/// inside of.
thread_local int hookDepth = 0;

} // namespace

//===----------------------------------------------------------------------===//
// LoadedPlugin
//===----------------------------------------------------------------------===//

struct kjit::plugin::LoadedPlugin {
  std::string path;
  std::string name;
  const kjit_plugin_api *api = nullptr;
  uint32_t minor = 0;
  void *self = nullptr;
  bool threadSafe = false;
  kjit_host_context context;
  kjit_hook_table hooks;
  bool hasHooks = false;
  kjit_backend_table backend;
  bool hasBackend = false;
  kjit_cache_store_table store;
  bool hasStore = false;

  /// Serializes every entry of a plugin that is not thread-safe. Recursive
  /// because a hook may re-enter the runtime (launch from a launch hook).
  std::recursive_mutex serial;
  std::atomic<bool> alive{true};
  std::atomic<int> inFlight{0};

  /// Runs `fn` under the plugin's contract: serialized unless thread-safe,
  /// never after fini, no exception escaping. Returns false when the plugin
  /// is gone.
  template <typename Fn> bool call(Fn &&fn) {
    inFlight.fetch_add(1, std::memory_order_acq_rel);
    struct Leave {
      std::atomic<int> &n;
      ~Leave() {
        --hookDepth;
        n.fetch_sub(1, std::memory_order_acq_rel);
      }
    } leave{inFlight};
    ++hookDepth;
    if (!alive.load(std::memory_order_acquire))
      return false;
    std::unique_lock<std::recursive_mutex> lock(serial, std::defer_lock);
    if (!threadSafe)
      lock.lock();
    fn();
    return true;
  }

  /// Describes this plugin in messages: its name and where it came from.
  std::string describe() const {
    return cat("plugin '", name, "' (", path, ")");
  }
};

//===----------------------------------------------------------------------===//
// PluginHost
//===----------------------------------------------------------------------===//

PluginHost::PluginHost(LogSink sink)
    : sink(std::move(sink)), current(std::make_shared<PluginSnapshot>()) {}

PluginHost::~PluginHost() { shutdown(); }

PluginHost &PluginHost::global() {
  static PluginHost host;
  return host;
}

void PluginHost::log(LogLevel level, std::string_view source,
                     std::string_view message) const {
  if (sink) {
    sink(level, source, message);
    return;
  }
  // Debug messages (which plugin loaded with which ABI) only on request.
  if (level == LogLevel::Debug) {
    const char *verbose = std::getenv("KJIT_PLUGIN_VERBOSE");
    if (!verbose || std::string_view(verbose) != "1")
      return;
  }
  static constexpr const char *kLevel[] = {"error: ", "warning: ", "",
                                           "debug: "};
  std::string line =
      source == "kjit" ? std::string("kjit: ") : cat("kjit[", source, "]: ");
  append(line, kLevel[static_cast<int>(level)], message, "\n");
  std::fwrite(line.data(), 1, line.size(), stderr);
}

absl::Status PluginHost::fail(std::string message) {
  log(LogLevel::Error, "kjit", message);
  return absl::FailedPreconditionError(message);
}

std::shared_ptr<const PluginSnapshot> PluginHost::snapshot() const {
  std::lock_guard<std::mutex> lock(mutex);
  return current;
}

void PluginHost::publish(std::shared_ptr<const PluginSnapshot> next) {
  bool launch = false, preRun = false;
  for (const auto &p : next->plugins) {
    launch |= p->hooks.launch_enter || p->hooks.launch_exit;
    preRun |= p->hooks.pre_run != nullptr;
  }
  current = std::move(next);
  launchHooks.store(launch, std::memory_order_release);
  preRunHooks.store(preRun, std::memory_order_release);
}

absl::Status PluginHost::loadPlugin(std::string_view pathView) {
  std::string path(pathView);
  std::string what = cat("cannot load plugin '", path, "': ");
  {
    std::lock_guard<std::mutex> lock(mutex);
    if (isShutdown)
      return fail(what + "the plugin host has shut down");
  }

  // Tell "missing" and "not a library" apart before dlopen, whose message
  // for both is less direct.
  {
    std::ifstream file(path, std::ios::binary);
    if (!file)
      return fail(what + "no such file or not readable");
    char magic[4] = {0, 0, 0, 0};
    file.read(magic, 4);
    if (file.gcount() != 4 || std::memcmp(magic,
                                          "\x7f"
                                          "ELF",
                                          4) != 0)
      return fail(what + "not a shared library (no ELF header)");
  }

  // RTLD_NOW: a missing symbol fails here, not in the middle of a launch.
  // RTLD_LOCAL: plugins cannot see (or interpose on) each other's symbols.
  // A bare name would make dlopen search the library path; a plugin is named
  // by its path, so make it one.
  std::string dlPath = path.find('/') == std::string::npos ? "./" + path : path;
  void *handle = dlopen(dlPath.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle) {
    const char *err = dlerror();
    return fail(what + "dlopen failed: " + (err ? err : "unknown"));
  }
  // Never dlclose, not even on failure below: a library may have run
  // constructors or registered TLS destructors, and unloading it under the
  // feet of glibc is the failure this policy avoids (docs/PluginABI.md).
  {
    std::lock_guard<std::mutex> lock(mutex);
    if (std::find(handles.begin(), handles.end(), handle) != handles.end()) {
      log(LogLevel::Debug, "kjit",
          cat("plugin '", path, "' is already loaded; ignored"));
      return absl::OkStatus();
    }
  }

  auto entry = reinterpret_cast<kjit_plugin_negotiate_fn>(
      dlsym(handle, KJIT_PLUGIN_ENTRY_NAME));
  if (!entry) {
    // Name a newer major if the library has one: "wrong version" is a far
    // more useful message than "not a plugin".
    for (int major = KJIT_ABI_MAJOR + 1; major <= 9; ++major) {
      std::string other = cat("kjit_plugin_negotiate_v", major);
      if (dlsym(handle, other.c_str()))
        return fail(cat(what, "it implements plugin ABI major ", major,
                        " (exports ", other, "), but this host speaks major ",
                        KJIT_ABI_MAJOR));
    }
    return fail(what + "it does not export " KJIT_PLUGIN_ENTRY_NAME
                       ", so it is not a kjit plugin");
  }

  kjit_negotiate io;
  std::memset(&io, 0, sizeof(io));
  io.struct_size = sizeof(io);
  io.host_abi_major = KJIT_ABI_MAJOR;
  io.host_min_minor = kHostMinMinor;
  io.host_max_minor = kHostMaxMinor;
  int32_t code = KJIT_STATUS_INTERNAL;
  try {
    code = entry(&io);
  } catch (...) {
    return fail(what + "its entry symbol threw a C++ exception");
  }
  std::string hostRange = cat(KJIT_ABI_MAJOR, ".", kHostMinMinor, "-",
                              KJIT_ABI_MAJOR, ".", kHostMaxMinor);
  if (code != KJIT_STATUS_OK) {
    std::string reason(view(io.reject_reason, io.reject_reason_len));
    return fail(cat(what, "the plugin refused host ABI ", hostRange,
                    " (status ", code, ")", reason.empty() ? "" : ": ",
                    reason));
  }
  if (io.plugin_abi_major != KJIT_ABI_MAJOR)
    return fail(cat(what, "the plugin answered ABI major ", io.plugin_abi_major,
                    ", but this host speaks major ", KJIT_ABI_MAJOR));
  if (io.plugin_abi_minor < kHostMinMinor)
    return fail(cat(what, "the plugin was built for ABI ", KJIT_ABI_MAJOR, ".",
                    io.plugin_abi_minor,
                    ", older than the oldest this host accepts (", hostRange,
                    ")"));
  if (!io.plugin)
    return fail(what + "the plugin returned a NULL plugin table");
  if (io.plugin->struct_size < kMinPluginApiSize)
    return fail(cat(what, "its plugin table is ", io.plugin->struct_size,
                    " bytes, smaller than ABI ", KJIT_ABI_MAJOR, ".0's ",
                    kMinPluginApiSize));

  auto plugin = std::make_shared<LoadedPlugin>();
  plugin->path = path;
  plugin->api = io.plugin;
  plugin->minor = io.plugin_abi_minor;
  kjit_plugin_api api = copyTable(io.plugin);
  plugin->name = std::string(view(api.name, api.name_len));
  if (plugin->name.empty())
    plugin->name = path.substr(path.rfind('/') + 1);
  plugin->threadSafe = (api.capabilities & KJIT_CAP_THREAD_SAFE) != 0;

  // Tables must at least hold their header; anything shorter is corrupt.
  std::string tooSmall;
  auto checkTable = [&](const auto *table, const char *kind, bool &has) {
    if (!table)
      return;
    if (table->struct_size < 2 * sizeof(void *))
      tooSmall = cat("its ", kind, " table has struct_size ",
                     table->struct_size, ", too small to hold a table header");
    else
      has = true;
  };
  checkTable(api.hooks, "hook", plugin->hasHooks);
  checkTable(api.backend, "backend", plugin->hasBackend);
  checkTable(api.cache_store, "cache store", plugin->hasStore);
  if (!tooSmall.empty())
    return fail(what + tooSmall);
  std::memset(&plugin->hooks, 0, sizeof(plugin->hooks));
  std::memset(&plugin->backend, 0, sizeof(plugin->backend));
  std::memset(&plugin->store, 0, sizeof(plugin->store));
  if (plugin->hasHooks)
    plugin->hooks = copyTable(api.hooks);
  if (plugin->hasBackend)
    plugin->backend = copyTable(api.backend);
  if (plugin->hasStore)
    plugin->store = copyTable(api.cache_store);

  plugin->context.host = this;
  plugin->context.name = plugin->name;
  if (api.init) {
    kjit_status *status = nullptr;
    void *self = nullptr;
    try {
      status = api.init(&kHostApi, &plugin->context, &self);
    } catch (...) {
      status = statusCreate(KJIT_STATUS_INTERNAL, "threw a C++ exception", 21);
    }
    if (status) {
      std::string message = status->message;
      statusDestroy(status);
      return fail(cat(what, "plugin '", plugin->name,
                      "' failed to initialize: ", message));
    }
    plugin->self = self;
  }

  {
    std::lock_guard<std::mutex> lock(mutex);
    if (isShutdown) {
      // Shut down while init ran: undo the init so the plugin is inert.
      if (api.fini)
        api.fini(plugin->self);
      return fail(what + "the plugin host has shut down");
    }
    if (std::find(handles.begin(), handles.end(), handle) != handles.end()) {
      // Another thread loaded the same library meanwhile: keep its instance.
      if (api.fini)
        api.fini(plugin->self);
      return absl::OkStatus();
    }
    handles.push_back(handle);
    auto next = std::make_shared<PluginSnapshot>(*current);
    next->plugins.push_back(plugin);
    publish(std::move(next));
  }
  log(LogLevel::Debug, "kjit",
      cat("loaded plugin '", plugin->name, "' version '",
          view(api.version, api.version_len), "' from ", path, " (plugin ABI ",
          KJIT_ABI_MAJOR, ".", plugin->minor, ", host ABI ", KJIT_ABI_MAJOR,
          ".", kHostMaxMinor, ")"));
  return absl::OkStatus();
}

unsigned PluginHost::loadFromEnvironment() {
  const char *list = std::getenv("KJIT_PLUGINS");
  if (!list)
    return 0;
  unsigned loaded = 0;
  std::string_view rest(list);
  while (!rest.empty()) {
    size_t colon = rest.find(':');
    std::string_view path = rest.substr(0, colon);
    rest = colon == std::string_view::npos ? std::string_view()
                                           : rest.substr(colon + 1);
    if (!path.empty())
      loaded += loadPlugin(path).ok();
  }
  return loaded;
}

void PluginHost::shutdown() {
  std::shared_ptr<const PluginSnapshot> old;
  {
    std::lock_guard<std::mutex> lock(mutex);
    if (isShutdown)
      return;
    isShutdown = true;
    old = current;
    publish(std::make_shared<PluginSnapshot>());
  }
  for (auto it = old->plugins.rbegin(); it != old->plugins.rend(); ++it) {
    LoadedPlugin &plugin = **it;
    plugin.alive.store(false, std::memory_order_release);
    // fini promises that no other entry of the plugin is still running.
    // Entries on this thread (shutdown from inside a hook) cannot drain.
    while (plugin.inFlight.load(std::memory_order_acquire) > hookDepth)
      std::this_thread::yield();
    if (!plugin.api)
      continue;
    kjit_plugin_api api = copyTable(plugin.api);
    if (!api.fini)
      continue;
    std::lock_guard<std::recursive_mutex> lock(plugin.serial);
    try {
      api.fini(plugin.self);
    } catch (...) {
      log(LogLevel::Error, "kjit",
          plugin.describe() + ": fini threw a C++ exception");
    }
  }
}

std::vector<std::string> PluginHost::pluginNames() const {
  std::vector<std::string> names;
  for (const auto &p : snapshot()->plugins)
    names.push_back(p->name);
  return names;
}

//===----------------------------------------------------------------------===//
// Hook dispatch
//===----------------------------------------------------------------------===//

namespace {

/// The C view of a list of arguments; kjit_arg pointers stay valid as long as
/// this object does.
class ArgArray {
public:
  explicit ArgArray(absl::Span<const ArgInfo> args) {
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
      c.string_value = a.stringValue.data();
      c.string_len = a.stringValue.size();
      pointers[i] = &c;
    }
  }
  size_t size() const { return pointers.size(); }
  const kjit_arg *const *data() const {
    return pointers.empty() ? nullptr : pointers.data();
  }

private:
  absl::InlinedVector<kjit_arg, 8> storage;
  absl::InlinedVector<const kjit_arg *, 8> pointers;
};

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
  std::string message =
      cat(plugin.describe(), ": ", entry,
          kernel.empty() ? "" : cat(" for kernel '", kernel, "'"),
          " failed: ", status->message, " (status ", status->code, ")");
  statusDestroy(status);
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
          cat(p->describe(), ": cache hook answered unknown decision ",
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

void PluginHost::runPreRunHooks(std::string_view kernelName,
                                absl::Span<const ArgInfo> args) {
  if (!hasPreRunHooks())
    return;
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
    reportStatus(*this, *p, "pre-run hook", kernelName, status);
  }
}

LaunchRecord PluginHost::runLaunchEnter(const LaunchInfo &info) {
  LaunchRecord record;
  if (!hasLaunchHooks())
    return record;
  record.snapshot = snapshot();
  record.id = nextCorrelationId.fetch_add(1, std::memory_order_relaxed);
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

//===----------------------------------------------------------------------===//
// Backends and cache stores
//===----------------------------------------------------------------------===//

std::vector<BackendRef> PluginHost::backends() const {
  std::vector<BackendRef> result;
  for (const auto &p : snapshot()->plugins) {
    if (!p->hasBackend)
      continue;
    BackendRef ref;
    ref.plugin = p;
    result.push_back(std::move(ref));
  }
  return result;
}

std::vector<CacheStoreRef> PluginHost::cacheStores() const {
  std::vector<CacheStoreRef> result;
  for (const auto &p : snapshot()->plugins) {
    if (!p->hasStore)
      continue;
    CacheStoreRef ref;
    ref.plugin = p;
    result.push_back(std::move(ref));
  }
  return result;
}

absl::Status PluginHost::findBackend(std::string_view name,
                                     BackendRef &out) const {
  std::string known;
  for (BackendRef &ref : backends()) {
    if (ref.name() == name) {
      out = std::move(ref);
      return absl::OkStatus();
    }
    append(known, known.empty() ? "" : ", ", ref.name());
  }
  return absl::NotFoundError(
      cat("no backend named '", name,
          "' is loaded (loaded: ", known.empty() ? "none" : known, ")"));
}

namespace {

/// Turns a plugin's status into an absl::Status naming the plugin.
absl::Status toAbsl(const LoadedPlugin &plugin, const char *entry,
                    kjit_status *status) {
  if (!status)
    return absl::OkStatus();
  int32_t code = status->code;
  if (code <= KJIT_STATUS_OK || code > KJIT_STATUS_DATA_LOSS)
    code = KJIT_STATUS_UNKNOWN;
  // kjit's codes are the canonical ones, so they map one to one.
  absl::Status result(
      static_cast<absl::StatusCode>(code),
      cat(plugin.describe(), ": ", entry, " failed: ", status->message));
  statusDestroy(status);
  return result;
}

absl::Status unsupported(const LoadedPlugin &plugin, const char *entry) {
  return absl::UnimplementedError(
      cat(plugin.describe(), ": backend does not implement ", entry));
}

absl::Status gone(const LoadedPlugin &plugin) {
  return absl::FailedPreconditionError(
      cat(plugin.describe(), " has been shut down"));
}

/// Copies a plugin-produced buffer and releases it.
std::string takeBuffer(kjit_buffer &buffer) {
  std::string bytes(reinterpret_cast<const char *>(buffer.data),
                    buffer.data ? buffer.size : 0);
  if (buffer.release)
    buffer.release(buffer.owner, buffer.data, buffer.size);
  buffer.data = nullptr;
  buffer.release = nullptr;
  return bytes;
}

kjit_buffer emptyBuffer() {
  kjit_buffer b;
  std::memset(&b, 0, sizeof(b));
  b.struct_size = sizeof(b);
  return b;
}

template <typename Args> Args zeroed() {
  Args args;
  std::memset(&args, 0, sizeof(args));
  args.struct_size = sizeof(args);
  return args;
}

} // namespace

std::string_view BackendRef::name() const {
  return view(plugin->backend.name, plugin->backend.name_len);
}

absl::Status BackendRef::describe(int32_t device, Description &out) const {
  LoadedPlugin &p = *plugin;
  if (!p.backend.describe)
    return unsupported(p, "describe");
  auto args = zeroed<kjit_backend_describe_args>();
  args.device = device;
  kjit_status *status = nullptr;
  if (!p.call([&] { status = p.backend.describe(p.self, &args); }))
    return gone(p);
  if (status)
    return toAbsl(p, "describe", status);
  out.target = std::string(view(args.target, args.target_len));
  out.arch = std::string(view(args.arch, args.arch_len));
  out.warpSize = args.warp_size;
  out.formats.clear();
  for (size_t i = 0; args.formats && i < args.num_formats; ++i)
    if (const kjit_artifact_format *f = args.formats[i])
      out.formats.emplace_back(view(f->name, f->name_len));
  return absl::OkStatus();
}

absl::Status BackendRef::fingerprint(int32_t device, void *options,
                                     std::string &out) const {
  LoadedPlugin &p = *plugin;
  if (!p.backend.fingerprint)
    return unsupported(p, "fingerprint");
  auto args = zeroed<kjit_backend_fingerprint_args>();
  args.device = device;
  args.options_handle = options;
  args.fingerprint = emptyBuffer();
  kjit_status *status = nullptr;
  if (!p.call([&] { status = p.backend.fingerprint(p.self, &args); }))
    return gone(p);
  std::string bytes = takeBuffer(args.fingerprint);
  if (status)
    return toAbsl(p, "fingerprint", status);
  out = std::move(bytes);
  return absl::OkStatus();
}

absl::Status BackendRef::parseOptions(
    absl::Span<const std::pair<std::string_view, std::string_view>> options,
    void *&handle) const {
  LoadedPlugin &p = *plugin;
  handle = nullptr;
  if (!p.backend.parse_options)
    return options.empty() ? absl::OkStatus() : unsupported(p, "parse_options");
  std::vector<kjit_option> storage(options.size());
  std::vector<const kjit_option *> pointers(options.size());
  for (size_t i = 0; i < options.size(); ++i) {
    std::memset(&storage[i], 0, sizeof(kjit_option));
    storage[i].struct_size = sizeof(kjit_option);
    storage[i].name = options[i].first.data();
    storage[i].name_len = options[i].first.size();
    storage[i].value = options[i].second.data();
    storage[i].value_len = options[i].second.size();
    pointers[i] = &storage[i];
  }
  auto args = zeroed<kjit_backend_parse_options_args>();
  args.num_options = pointers.size();
  args.options = pointers.empty() ? nullptr : pointers.data();
  kjit_status *status = nullptr;
  if (!p.call([&] { status = p.backend.parse_options(p.self, &args); }))
    return gone(p);
  if (status)
    return toAbsl(p, "parse_options", status);
  handle = args.options_handle;
  return absl::OkStatus();
}

void BackendRef::destroyOptions(void *handle) const {
  LoadedPlugin &p = *plugin;
  if (handle && p.backend.destroy_options)
    p.call([&] { p.backend.destroy_options(p.self, handle); });
}

absl::Status BackendRef::finalize(std::string_view format,
                                  std::string_view artifact,
                                  std::string_view kernelName, void *options,
                                  std::string &loadable) const {
  LoadedPlugin &p = *plugin;
  if (!p.backend.finalize)
    return unsupported(p, "finalize");
  auto args = zeroed<kjit_backend_finalize_args>();
  args.format = format.data();
  args.format_len = format.size();
  args.artifact = reinterpret_cast<const uint8_t *>(artifact.data());
  args.artifact_size = artifact.size();
  args.kernel_name = kernelName.data();
  args.kernel_name_len = kernelName.size();
  args.options_handle = options;
  args.loadable = emptyBuffer();
  kjit_status *status = nullptr;
  if (!p.call([&] { status = p.backend.finalize(p.self, &args); }))
    return gone(p);
  std::string bytes = takeBuffer(args.loadable);
  if (status)
    return toAbsl(p, "finalize", status);
  loadable = std::move(bytes);
  return absl::OkStatus();
}

absl::Status BackendRef::load(std::string_view loadable,
                              std::string_view kernelName, int32_t device,
                              void *&kernel) const {
  LoadedPlugin &p = *plugin;
  kernel = nullptr;
  if (!p.backend.load)
    return unsupported(p, "load");
  auto args = zeroed<kjit_backend_load_args>();
  args.loadable = reinterpret_cast<const uint8_t *>(loadable.data());
  args.loadable_size = loadable.size();
  args.kernel_name = kernelName.data();
  args.kernel_name_len = kernelName.size();
  args.device = device;
  kjit_status *status = nullptr;
  if (!p.call([&] { status = p.backend.load(p.self, &args); }))
    return gone(p);
  if (status)
    return toAbsl(p, "load", status);
  kernel = args.kernel;
  return absl::OkStatus();
}

absl::Status BackendRef::launch(void *kernel, const LaunchInfo &launch,
                                uint32_t sharedMemoryBytes) const {
  LoadedPlugin &p = *plugin;
  if (!p.backend.launch)
    return unsupported(p, "launch");
  ArgArray cArgs(launch.args);
  auto args = zeroed<kjit_backend_launch_args>();
  args.kernel = kernel;
  for (int i = 0; i < 3; ++i)
    args.grid[i] = launch.grid[i];
  args.num_warps = launch.numWarps;
  args.shared_memory_bytes = sharedMemoryBytes;
  args.stream = launch.stream;
  args.num_args = cArgs.size();
  args.args = cArgs.data();
  kjit_status *status = nullptr;
  if (!p.call([&] { status = p.backend.launch(p.self, &args); }))
    return gone(p);
  return toAbsl(p, "launch", status);
}

absl::Status BackendRef::launchPrepared(kjit_backend_launch_args &args) const {
  LoadedPlugin &p = *plugin;
  if (!p.backend.launch)
    return unsupported(p, "launch");
  kjit_status *status = nullptr;
  if (!p.call([&] { status = p.backend.launch(p.self, &args); }))
    return gone(p);
  return toAbsl(p, "launch", status);
}

absl::Status BackendRef::unload(void *kernel) const {
  LoadedPlugin &p = *plugin;
  if (!p.backend.unload)
    return unsupported(p, "unload");
  auto args = zeroed<kjit_backend_unload_args>();
  args.kernel = kernel;
  kjit_status *status = nullptr;
  if (!p.call([&] { status = p.backend.unload(p.self, &args); }))
    return gone(p);
  return toAbsl(p, "unload", status);
}

std::string_view CacheStoreRef::name() const {
  return view(plugin->store.name, plugin->store.name_len);
}

bool CacheStoreRef::get(std::string_view key, std::string &value,
                        uint32_t timeoutMs) const {
  LoadedPlugin &p = *plugin;
  if (!p.store.get)
    return false;
  auto args = zeroed<kjit_cache_get_args>();
  args.key = reinterpret_cast<const uint8_t *>(key.data());
  args.key_size = key.size();
  args.timeout_ms = timeoutMs;
  args.value = emptyBuffer();
  kjit_status *status = nullptr;
  if (!p.call([&] { status = p.store.get(p.self, &args); }))
    return false;
  std::string bytes = takeBuffer(args.value);
  if (status) {
    // Advisory store: an error is a miss, reported so outages are visible.
    absl::Status s = toAbsl(p, "cache store get", status);
    p.context.host->log(
        LogLevel::Warning, "kjit",
        cat(std::string_view(s.message().data(), s.message().size()),
            "; treated as a miss"));
    return false;
  }
  if (!args.found)
    return false;
  value = std::move(bytes);
  return true;
}

bool CacheStoreRef::put(std::string_view key, std::string_view value,
                        uint32_t timeoutMs) const {
  LoadedPlugin &p = *plugin;
  if (!p.store.put)
    return false;
  auto args = zeroed<kjit_cache_put_args>();
  args.key = reinterpret_cast<const uint8_t *>(key.data());
  args.key_size = key.size();
  args.value = reinterpret_cast<const uint8_t *>(value.data());
  args.value_size = value.size();
  args.timeout_ms = timeoutMs;
  kjit_status *status = nullptr;
  if (!p.call([&] { status = p.store.put(p.self, &args); }))
    return false;
  if (status) {
    absl::Status s = toAbsl(p, "cache store put", status);
    p.context.host->log(
        LogLevel::Warning, "kjit",
        cat(std::string_view(s.message().data(), s.message().size()),
            "; entry not stored"));
    return false;
  }
  return true;
}
