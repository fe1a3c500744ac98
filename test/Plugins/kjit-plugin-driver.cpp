//===- kjit-plugin-driver.cpp - fires synthetic plugin events -------------===//
//
// A test tool: loads plugins through kjit::plugin::PluginHost and fires
// synthetic cache, compiled, pre-run and launch events, and exercises
// backends and cache stores, so that lit can check what plugins see before
// a runtime launches real kernels. Everything, its own lines included, goes
// to stderr, so the order of host, plugin and driver output is the order of
// events.
//
// Usage: kjit-plugin-driver [--env] [--load=PATH]... COMMAND...
//   compile:NAME   cache hook, then (unless skipped) the compiled hook
//   warmup:NAME    the same, marked as warmup
//   launch:NAME    pre-run hooks, launch enter, launch exit
//   nested:NAME    a launch of NAME-inner inside a launch of NAME
//   backend:NAME   device_count/describe/fingerprint/options/finalize/load/
//                  launch (plain, then with flags and a cluster)/
//                  synchronize/unload, on the backend's last device
//   badoptions:NAME  parse_options with an unknown option
//   badformat:NAME   finalize a format the backend does not accept
//   badinfo:NAME     finalize an artifact the test backend answers with an
//                    info that is not JSON
//   async:NAME     synchronize on stream 0xbad (the test backend then reports
//                  an asynchronous error) and print the host's count
//   store          get, put, put-if-absent, put with a TTL, remove and
//                  describe on every cache store
//   get:KEY        one get of KEY on every cache store: hit, miss, or the
//                  status code and message
//   sleep:MS       wait MS milliseconds (a store's breaker window)
//   load:PATH      load a plugin now
//   shutdown       shut the host down
//
//===----------------------------------------------------------------------===//

#include "kjit/Plugin/PluginHost.h"

#include <chrono>
#include <thread>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

using namespace kjit::plugin;

namespace {

void say(const std::string &line) {
  std::fprintf(stderr, "driver: %s\n", line.c_str());
}

std::string str(const absl::Status &status) {
  return std::string(status.message().data(), status.message().size());
}

const std::vector<ArgInfo> &sampleArgs() {
  static const std::vector<ArgInfo> args = [] {
    std::vector<ArgInfo> a(4);
    a[0].name = "x";
    a[0].type = "*fp32";
    a[0].kind = KJIT_ARG_POINTER;
    a[0].uintValue = 0x7f0000001000;
    a[1].name = "n";
    a[1].type = "i32";
    a[1].kind = KJIT_ARG_INT;
    a[1].intValue = 1024;
    a[2].name = "scale";
    a[2].type = "fp32";
    a[2].kind = KJIT_ARG_FLOAT;
    a[2].floatValue = 2.5;
    a[3].name = "BLOCK";
    a[3].type = "constexpr";
    a[3].kind = KJIT_ARG_INT;
    a[3].isConstexpr = true;
    a[3].intValue = 128;
    return a;
  }();
  return args;
}

/// The sample arguments as the runtime passes them to a launch: with the
/// 1.1 storage fields, and without the constexpr.
const std::vector<ArgInfo> &launchArgs() {
  static const std::vector<ArgInfo> args = [] {
    std::vector<ArgInfo> a(sampleArgs().begin(), sampleArgs().end() - 1);
    a[0].dtype = KJIT_DTYPE_FP32;
    a[0].flags = KJIT_ARG_FLAG_POINTER;
    a[0].bits = 0x7f0000001000;
    a[0].bitsSize = 8;
    a[1].dtype = KJIT_DTYPE_I32;
    a[1].bits = 1024;
    a[1].bitsSize = 4;
    a[2].dtype = KJIT_DTYPE_FP32;
    a[2].bits = 0x40200000; // 2.5f
    a[2].bitsSize = 4;
    return a;
  }();
  return args;
}

std::string hex(absl::Span<const uint8_t> bytes) {
  static const char digits[] = "0123456789abcdef";
  std::string out;
  for (uint8_t b : bytes) {
    out += digits[b >> 4];
    out += digits[b & 15];
  }
  return out;
}

void compile(PluginHost &host, const std::string &name, bool warmup) {
  std::string key = name + "-key";
  std::string repr = name + "[num_warps=4, num_ctas=1, num_stages=3, "
                            "enable_fp_fusion=True](x: *fp32, n: i32)";
  std::string json = "{\"key\":\"" + key + "\"}";
  CompileInfo info;
  info.kernelName = name;
  info.key = key;
  info.repr = repr;
  info.compileJson = json;
  info.target = "host";
  info.isWarmup = warmup;
  if (host.runCacheHook(info) == CacheDecision::Skip) {
    say("cache " + name + " -> skip");
    return;
  }
  say("cache " + name + " -> continue");
  std::string artifact = "artifact of " + name;
  CompiledInfo compiled;
  compiled.artifactFormat = "elf-shared-object";
  compiled.artifact = artifact;
  compiled.metadataJson = "{\"shared\":0}";
  compiled.compileNanos = 2500000; // 2.5 ms, so summaries are deterministic
  host.runCompiledHook(info, compiled);
  say("compiled " + name);
}

LaunchInfo launchInfo(const std::string &name, const std::string &key) {
  LaunchInfo info;
  info.kernelName = name;
  info.key = key;
  info.grid = {4, 2, 1};
  info.numWarps = 8;
  info.stream = 7;
  info.metadataJson = "{\"bytes\":4096}";
  info.args = launchArgs();
  return info;
}

void launch(PluginHost &host, const std::string &name, bool nested) {
  std::string key = name + "-key";
  if (absl::Status refused = host.runPreRunHooks(name, sampleArgs());
      !refused.ok()) {
    // As the runtime does: a failing pre-run hook aborts the launch.
    // KJIT_DRIVER_LAUNCH_ANYWAY=1 goes on, so that the hooks after it can
    // be tested with a plugin whose every hook fails.
    say("pre-run refused: " + std::string(refused.message()));
    const char *anyway = std::getenv("KJIT_DRIVER_LAUNCH_ANYWAY");
    if (!anyway || std::string(anyway) != "1")
      return;
  }
  LaunchInfo info = launchInfo(name, key);
  LaunchRecord record = host.runLaunchEnter(info);
  say("launch " + name + " id=" + std::to_string(record.correlationId()));
  if (nested) {
    // A launch from inside a launch (a hook that launches, a kernel that
    // calls another): ids differ and exits pair with their own enters.
    std::string inner = name + "-inner";
    LaunchInfo innerInfo = launchInfo(inner, key);
    LaunchRecord innerRecord = host.runLaunchEnter(innerInfo);
    say("launch " + inner +
        " id=" + std::to_string(innerRecord.correlationId()));
    host.runLaunchExit(innerRecord, innerInfo);
  }
  host.runLaunchExit(record, info);
}

void backend(PluginHost &host, const std::string &name,
             const std::string &variant) {
  BackendRef ref;
  if (absl::Status s = host.findBackend(name, ref); !s.ok()) {
    say("backend error: " + str(s));
    return;
  }
  absl::StatusOr<int32_t> count = ref.deviceCount();
  if (!count.ok()) {
    say("device_count error: " + str(count.status()));
    return;
  }
  say("device_count " + std::to_string(*count));
  // The last device, so that a device index visibly reaches every entry.
  int32_t device = *count - 1;
  absl::StatusOr<BackendRef::Description> d = ref.describe(device);
  if (!d.ok()) {
    say("describe error: " + str(d.status()));
    return;
  }
  std::string formats;
  for (const std::string &f : d->formats)
    formats += (formats.empty() ? "" : ",") + f;
  say("describe device=" + std::to_string(device) + " target=" + d->target +
      " arch=" + d->arch + " warp=" + std::to_string(d->warpSize) +
      " formats=" + formats + " sms=" + std::to_string(d->multiprocessorCount) +
      " threads=" + std::to_string(d->maxThreadsPerBlock) + " smem=" +
      std::to_string(d->maxSharedMemoryPerBlock) + " uuid=" + hex(d->uuid));

  std::vector<std::pair<std::string_view, std::string_view>> options = {
      {"case", variant == "badoptions" ? "sideways" : "lower"}};
  absl::StatusOr<void *> handle = ref.parseOptions(options);
  if (!handle.ok()) {
    say("parse_options error: " + str(handle.status()));
    return;
  }
  absl::StatusOr<std::string> fp = ref.fingerprint(device, *handle);
  if (!fp.ok())
    say("fingerprint error: " + str(fp.status()));
  else
    say("fingerprint " + *fp);
  std::string_view format = variant == "badformat" ? "ptx" : "text";
  std::string info;
  absl::StatusOr<std::string> loadable = ref.finalize(
      device, format, variant == "badinfo" ? "bad-info" : "Hello Kernel", "k",
      *handle, &info);
  if (!loadable.ok()) {
    say("finalize error: " + str(loadable.status()));
    ref.destroyOptions(*handle);
    return;
  }
  say("finalize -> " + *loadable + (info.empty() ? "" : ", info " + info));
  ref.destroyOptions(*handle);
  absl::StatusOr<void *> kernel = ref.load(device, *loadable, "k");
  if (!kernel.ok()) {
    say("load error: " + str(kernel.status()));
    return;
  }
  if (absl::Status s = ref.launch(*kernel, launchInfo("k", "k-key")); !s.ok())
    say("launch error: " + str(s));
  BackendRef::LaunchAttributes attributes;
  attributes.flags = KJIT_LAUNCH_COOPERATIVE | KJIT_LAUNCH_PDL;
  attributes.cluster = {2, 1, 1};
  if (absl::Status s =
          ref.launch(*kernel, launchInfo("k", "k-key"), attributes);
      !s.ok())
    say("launch with flags error: " + str(s));
  else
    say("launch with flags ok");
  if (absl::Status s = ref.synchronize(device, 0x2); !s.ok())
    say("synchronize error: " + str(s));
  else
    say("synchronize ok");
  if (absl::Status s = ref.unload(*kernel); !s.ok())
    say("unload error: " + str(s));
  else
    say("unloaded");
}

void async(PluginHost &host, const std::string &name) {
  BackendRef ref;
  if (absl::Status s = host.findBackend(name, ref); !s.ok()) {
    say("backend error: " + str(s));
    return;
  }
  if (absl::Status s = ref.synchronize(0, 0xbad); !s.ok())
    say("synchronize error: " + str(s));
  say("async errors: " + std::to_string(host.asyncErrorCount()));
}

std::string putResult(const absl::StatusOr<CacheStoreRef::PutResult> &result) {
  if (!result.ok())
    return "error: " + str(result.status());
  return *result == CacheStoreRef::PutResult::Stored ? "stored"
                                                     : "exists, kept";
}

void store(PluginHost &host) {
  for (const CacheStoreRef &ref : host.cacheStores()) {
    std::string name(ref.name());
    auto get = [&](const char *when) {
      absl::StatusOr<std::optional<std::string>> value = ref.get("key-1");
      say("store " + name + " get " + when + ": " +
          (!value.ok() ? "error: " + str(value.status())
           : *value    ? "hit " + **value
                       : std::string("miss")));
    };
    get("before put");
    say("store " + name + " put: " + putResult(ref.put("key-1", "value-1")));
    get("after put");
    CacheStoreRef::PutOptions ifAbsent;
    ifAbsent.flags = KJIT_CACHE_PUT_IF_ABSENT;
    say("store " + name +
        " put if absent: " + putResult(ref.put("key-1", "value-2", ifAbsent)));
    get("after put if absent");
    CacheStoreRef::PutOptions ttl;
    ttl.ttlSeconds = 60;
    say("store " + name +
        " put with ttl: " + putResult(ref.put("key-1", "value-3", ttl)));
    get("after put with ttl");
    for (int i = 0; i < 2; ++i) {
      absl::StatusOr<bool> removed = ref.remove("key-1");
      say("store " + name + " remove: " +
          (!removed.ok() ? "error: " + str(removed.status())
           : *removed    ? std::string("removed")
                         : std::string("none")));
    }
    get("after remove");
    absl::StatusOr<CacheStoreRef::Description> d = ref.describe();
    if (!d.ok())
      say("store " + name + " describe error: " + str(d.status()));
    else
      say("store " + name +
          " describe max_value_size=" + std::to_string(d->maxValueSize) +
          " remote=" + (d->isRemote ? "yes" : "no"));
  }
}

void getOnce(PluginHost &host, const std::string &key) {
  for (const CacheStoreRef &ref : host.cacheStores()) {
    absl::StatusOr<std::optional<std::string>> value = ref.get(key, 0);
    say("store " + std::string(ref.name()) + " get " + key + ": " +
        (!value.ok() ? absl::StatusCodeToString(value.status().code()) + ": " +
                           str(value.status())
         : *value    ? "hit " + std::to_string((*value)->size()) + " bytes"
                     : std::string("miss")));
  }
}

} // namespace

int main(int argc, char **argv) {
  PluginHost host;
  for (int i = 1; i < argc; ++i) {
    std::string_view arg = argv[i];
    std::string rest;
    auto starts = [&](std::string_view prefix) {
      if (arg.substr(0, prefix.size()) != prefix)
        return false;
      rest = std::string(arg.substr(prefix.size()));
      return true;
    };
    if (arg == "--env") {
      say("loaded " + std::to_string(host.loadFromEnvironment()) +
          " plugin(s) from KJIT_PLUGINS");
    } else if (starts("--load=") || starts("load:")) {
      absl::Status s = host.loadPlugin(rest);
      say(s.ok() ? "load ok" : "load failed");
    } else if (starts("compile:")) {
      compile(host, rest, false);
    } else if (starts("warmup:")) {
      compile(host, rest, true);
    } else if (starts("launch:")) {
      launch(host, rest, false);
    } else if (starts("nested:")) {
      launch(host, rest, true);
    } else if (starts("backend:")) {
      backend(host, rest, "");
    } else if (starts("badoptions:")) {
      backend(host, rest, "badoptions");
    } else if (starts("badformat:")) {
      backend(host, rest, "badformat");
    } else if (starts("badinfo:")) {
      backend(host, rest, "badinfo");
    } else if (starts("async:")) {
      async(host, rest);
    } else if (arg == "store") {
      store(host);
    } else if (starts("get:")) {
      getOnce(host, rest);
    } else if (starts("sleep:")) {
      std::this_thread::sleep_for(std::chrono::milliseconds(std::stoi(rest)));
    } else if (arg == "shutdown") {
      host.shutdown();
      say("shutdown");
    } else {
      std::fprintf(stderr, "kjit-plugin-driver: unknown command '%s'\n",
                   argv[i]);
      return 2;
    }
  }
  std::string names;
  for (const std::string &n : host.pluginNames())
    names += " " + n;
  say("plugins:" + names);
  host.shutdown();
  say("done");
  return 0;
}
