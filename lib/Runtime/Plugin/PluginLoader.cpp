//===- PluginLoader.cpp - loading, negotiating and shutting down plugins --===//
//
// dlopen, version negotiation, table validation and init; shutdown and fini;
// the lists of loaded plugins, backends and cache stores. Runtime core: no
// LLVM or MLIR header may be included here.
//
//===----------------------------------------------------------------------===//

#include "PluginInternal.h"

#include "kjit/Model/InputFile.h"

#include <cstdio>
#include <cstdlib>
#include <dlfcn.h>
#include <fcntl.h>
#include <link.h>
#include <map>
#include <unistd.h>

using namespace kjit::plugin;
using namespace kjit::plugin::detail;
using kjit::strCat;

namespace {

/// The smallest plugin table this host accepts: everything ABI 1.0 defined.
constexpr size_t kMinPluginApiSize =
    KJIT_STRUCT_SIZE(kjit_plugin_api, cache_store);

/// What the symbol at `address` (one dlsym found) is when it is not code
/// ("a data object", ...), from its ELF type in the dynamic symbol table;
/// empty for a function.
std::string notAFunction(void *address) {
  Dl_info info;
  void *entry = nullptr;
  if (!dladdr1(address, &info, &entry, RTLD_DL_SYMENT) || !entry ||
      info.dli_saddr != address)
    return "a symbol the dynamic symbol table does not describe";
  // ELF32_ST_TYPE and ELF64_ST_TYPE are the same low four bits.
  const unsigned type =
      ELF64_ST_TYPE(static_cast<const ElfW(Sym) *>(entry)->st_info);
  switch (type) {
  case STT_FUNC:
  case STT_GNU_IFUNC:
    return std::string();
  case STT_OBJECT:
  case STT_COMMON:
    return "a data object";
  case STT_TLS:
    return "a thread-local data object";
  default:
    return strCat("a symbol of ELF type ", type);
  }
}

} // namespace

std::shared_ptr<std::recursive_mutex> detail::serialLockFor(void *handle) {
  // Never freed: plugins are never unloaded, and a host destroyed during
  // static destruction may still take a lock.
  static auto *mutex = new std::mutex;
  static auto *locks =
      new std::map<void *, std::shared_ptr<std::recursive_mutex>>;
  std::lock_guard<std::mutex> guard(*mutex);
  std::shared_ptr<std::recursive_mutex> &lock = (*locks)[handle];
  if (!lock)
    lock = std::make_shared<std::recursive_mutex>();
  return lock;
}

//===----------------------------------------------------------------------===//
// PluginHost
//===----------------------------------------------------------------------===//

PluginHost::PluginHost(LogSink sink)
    : sink(std::move(sink)), current(std::make_shared<PluginSnapshot>()) {}

PluginHost::~PluginHost() { shutdown(); }

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
      source == "kjit" ? std::string("kjit: ") : strCat("kjit[", source, "]: ");
  // Plugins' messages may carry any byte: no escape sequence reaches the
  // terminal, no NUL cuts the line.
  strAppend(&line, kLevel[static_cast<int>(level)],
            kjit::escapeControl(message, /*keepNewlines=*/true), "\n");
  std::fwrite(line.data(), 1, line.size(), stderr);
}

absl::Status PluginHost::fail(const std::string &message) {
  log(LogLevel::Error, "kjit", message);
  return absl::FailedPreconditionError(message);
}

std::shared_ptr<const PluginSnapshot> PluginHost::snapshot() const {
  std::lock_guard<std::mutex> lock(mutex);
  return current;
}

void PluginHost::publish(std::shared_ptr<const PluginSnapshot> next) {
  bool launch = false, enter = false, preRun = false, complete = false;
  for (const auto &p : next->plugins) {
    enter |= p->hooks.launch_enter != nullptr;
    complete |= p->hooks.launch_complete != nullptr;
    launch |= p->hooks.launch_enter || p->hooks.launch_exit ||
              p->hooks.launch_complete;
    preRun |= p->hooks.pre_run != nullptr;
  }
  current = std::move(next);
  launchHooks.store(launch, std::memory_order_release);
  launchEnterHooks.store(enter, std::memory_order_release);
  preRunHooks.store(preRun, std::memory_order_release);
  launchCompleteHooks.store(complete, std::memory_order_release);
}

absl::Status PluginHost::loadPlugin(std::string_view pathView) {
  std::string path(pathView);
  std::string what = strCat("cannot load plugin '", path, "': ");
  {
    std::lock_guard<std::mutex> lock(mutex);
    if (isShutdown)
      return fail(what + "the plugin host has shut down");
  }

  // Only a regular file is opened: dlopen would block on a FIFO without a
  // writer, and a device or a directory is no library. Then "missing" and
  // "not a library" are told apart before dlopen, whose message for both
  // is less direct.
  if (absl::Status regular = kjit::rt::checkRegularFile(path); !regular.ok())
    return fail(what + (regular.code() == absl::StatusCode::kNotFound
                            ? std::string("no such file or not readable")
                            : std::string(regular.message())));
  {
    // O_NONBLOCK: a file replaced by a FIFO since the check still does not
    // block; its read then finds no ELF header.
    int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0)
      return fail(what + "no such file or not readable");
    char magic[4] = {0, 0, 0, 0};
    ssize_t got = ::read(fd, magic, sizeof magic);
    ::close(fd);
    if (got != 4 || std::memcmp(magic,
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
          strCat("plugin '", path, "' is already loaded; ignored"));
      return absl::OkStatus();
    }
  }

  auto entry = reinterpret_cast<kjit_plugin_negotiate_fn>(
      dlsym(handle, KJIT_PLUGIN_ENTRY_NAME));
  if (!entry) {
    // Name a newer major if the library has one: "wrong version" is a far
    // more useful message than "not a plugin".
    for (int major = KJIT_ABI_MAJOR + 1; major <= 9; ++major) {
      std::string other = strCat("kjit_plugin_negotiate_v", major);
      if (dlsym(handle, other.c_str()))
        return fail(strCat(what, "it implements plugin ABI major ", major,
                           " (exports ", other,
                           "), but this host speaks major ", KJIT_ABI_MAJOR));
    }
    return fail(what + "it does not export " KJIT_PLUGIN_ENTRY_NAME
                       ", so it is not a kjit plugin");
  }
  // The entry is called as code: a data object of that name would be
  // jumped into. The dynamic symbol table says which kind it is.
  if (std::string notCode = notAFunction(reinterpret_cast<void *>(entry));
      !notCode.empty())
    return fail(strCat(what, "its ", KJIT_PLUGIN_ENTRY_NAME, " is ", notCode,
                       ", not a function, so it is not a kjit plugin"));

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
  std::string hostRange = strCat(KJIT_ABI_MAJOR, ".", kHostMinMinor, "-",
                                 KJIT_ABI_MAJOR, ".", kHostMaxMinor);
  if (code != KJIT_STATUS_OK) {
    std::string reason(boundedMessage(io.reject_reason, io.reject_reason_len));
    return fail(strCat(what, "the plugin refused host ABI ", hostRange,
                       " (status ", code, ")", reason.empty() ? "" : ": ",
                       reason));
  }
  if (io.plugin_abi_major != KJIT_ABI_MAJOR)
    return fail(strCat(what, "the plugin answered ABI major ",
                       io.plugin_abi_major, ", but this host speaks major ",
                       KJIT_ABI_MAJOR));
  if (io.plugin_abi_minor < kHostMinMinor)
    return fail(strCat(what, "the plugin was built for ABI ", KJIT_ABI_MAJOR,
                       ".", io.plugin_abi_minor,
                       ", older than the oldest this host accepts (", hostRange,
                       ")"));
  if (!io.plugin)
    return fail(what + "the plugin returned a NULL plugin table");
  if (io.plugin->struct_size < kMinPluginApiSize)
    return fail(strCat(what, "its plugin table is ", io.plugin->struct_size,
                       " bytes, smaller than ABI ", KJIT_ABI_MAJOR, ".0's ",
                       kMinPluginApiSize));

  // The plugin's strings are checked before anything is copied out of them:
  // a length that lies would read far past the literal (or ask for a
  // terabyte), and names end up in every message about the plugin.
  kjit_plugin_api api = copyTable(io.plugin);
  std::string badName = checkName(api.name, api.name_len, "its name");
  if (badName.empty())
    badName = checkName(api.version, api.version_len, "its version");
  if (badName.empty() && api.backend &&
      api.backend->struct_size >=
          KJIT_STRUCT_SIZE(kjit_backend_table, name_len))
    badName = checkName(api.backend->name, api.backend->name_len,
                        "its backend's name");
  if (badName.empty() && api.cache_store &&
      api.cache_store->struct_size >=
          KJIT_STRUCT_SIZE(kjit_cache_store_table, name_len))
    badName = checkName(api.cache_store->name, api.cache_store->name_len,
                        "its cache store's name");
  if (!badName.empty())
    return fail(what + badName);

  auto plugin = std::make_shared<LoadedPlugin>();
  plugin->path = path;
  plugin->handle = handle;
  plugin->serial = serialLockFor(handle);
  plugin->api = io.plugin;
  plugin->minor = io.plugin_abi_minor;
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
      tooSmall =
          strCat("its ", kind, " table has struct_size ", table->struct_size,
                 ", too small to hold a table header");
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
  plugin->context.plugin = plugin.get();
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
      return fail(strCat(what, "plugin '", plugin->name,
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
      strCat("loaded plugin '", plugin->name, "' version '",
             view(api.version, api.version_len), "' from ", path,
             " (plugin ABI ", KJIT_ABI_MAJOR, ".", plugin->minor, ", host ABI ",
             KJIT_ABI_MAJOR, ".", kHostMaxMinor, ")"));
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

uint64_t PluginHost::addShutdownCallback(std::function<void()> callback) {
  std::lock_guard<std::mutex> lock(callbackMutex);
  if (callbacksRan)
    return 0;
  uint64_t token = nextCallback++;
  shutdownCallbacks.emplace(token, std::move(callback));
  return token;
}

void PluginHost::removeShutdownCallback(uint64_t token) {
  std::lock_guard<std::mutex> lock(callbackMutex);
  shutdownCallbacks.erase(token);
}

void PluginHost::shutdown() {
  {
    // Before anything is marked gone: the callbacks still call plugins
    // (backends unload kernels). Held throughout, so that an object that
    // removes its callback on another thread waits for it to finish.
    std::lock_guard<std::mutex> lock(callbackMutex);
    if (!callbacksRan) {
      callbacksRan = true;
      for (auto &[token, callback] : shutdownCallbacks)
        callback();
      shutdownCallbacks.clear();
    }
  }
  std::shared_ptr<const PluginSnapshot> old;
  auto hooksOnly = std::make_shared<PluginSnapshot>();
  {
    std::lock_guard<std::mutex> lock(mutex);
    if (isShutdown)
      return;
    isShutdown = true;
    old = current;
    for (const auto &p : old->plugins)
      if (!p->hasBackend)
        hooksOnly->plugins.push_back(p);
    // Backends go first, while the hooks are still published: until its
    // fini returns a backend may report device times and asynchronous
    // errors (the cuda backend's timer thread drains in fini), and those
    // reach the hooks of the published plugins.
    publish(hooksOnly);
  }
  auto finish = [&](const PluginSnapshot &plugins, bool backends) {
    for (auto it = plugins.plugins.rbegin(); it != plugins.plugins.rend();
         ++it) {
      LoadedPlugin &plugin = **it;
      if (plugin.hasBackend != backends)
        continue;
      // fini promises that no other entry of the plugin is still running.
      // Entries on this thread (shutdown from inside a hook) cannot drain.
      plugin.drain();
      if (!plugin.api)
        continue;
      kjit_plugin_api api = copyTable(plugin.api);
      if (!api.fini)
        continue;
      std::lock_guard<std::recursive_mutex> lock(*plugin.serial);
      try {
        api.fini(plugin.self);
      } catch (...) {
        log(LogLevel::Error, "kjit",
            plugin.describe() + ": fini threw a C++ exception");
      }
    }
  };
  finish(*old, /*backends=*/true);
  {
    std::lock_guard<std::mutex> lock(mutex);
    publish(std::make_shared<PluginSnapshot>());
  }
  finish(*old, /*backends=*/false);
}

std::vector<std::string> PluginHost::pluginNames() const {
  std::vector<std::string> names;
  for (const auto &p : snapshot()->plugins)
    names.push_back(p->name);
  return names;
}

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
    strAppend(&known, known.empty() ? "" : ", ", ref.name());
  }
  return absl::NotFoundError(
      strCat("no backend named '", name,
             "' is loaded (loaded: ", known.empty() ? "none" : known, ")"));
}
