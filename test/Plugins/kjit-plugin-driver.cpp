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
//   backend:NAME   describe/fingerprint/options/finalize/load/launch/unload
//   badoptions:NAME  parse_options with an unknown option
//   badformat:NAME   finalize a format the backend does not accept
//   store          put then get on every cache store
//   load:PATH      load a plugin now
//   shutdown       shut the host down
//
//===----------------------------------------------------------------------===//

#include "kjit/Plugin/PluginHost.h"

#include <cstdio>
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
  info.args = sampleArgs();
  return info;
}

void launch(PluginHost &host, const std::string &name, bool nested) {
  std::string key = name + "-key";
  host.runPreRunHooks(name, sampleArgs());
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
  BackendRef::Description d;
  if (absl::Status s = ref.describe(0, d); !s.ok()) {
    say("describe error: " + str(s));
    return;
  }
  std::string formats;
  for (const std::string &f : d.formats)
    formats += (formats.empty() ? "" : ",") + f;
  say("describe target=" + d.target + " arch=" + d.arch +
      " warp=" + std::to_string(d.warpSize) + " formats=" + formats);

  std::vector<std::pair<std::string_view, std::string_view>> options = {
      {"case", variant == "badoptions" ? "sideways" : "lower"}};
  void *handle = nullptr;
  if (absl::Status s = ref.parseOptions(options, handle); !s.ok()) {
    say("parse_options error: " + str(s));
    return;
  }
  std::string fp;
  if (absl::Status s = ref.fingerprint(0, handle, fp); !s.ok())
    say("fingerprint error: " + str(s));
  else
    say("fingerprint " + fp);
  std::string loadable;
  std::string_view format = variant == "badformat" ? "ptx" : "text";
  if (absl::Status s =
          ref.finalize(format, "Hello Kernel", "k", handle, loadable);
      !s.ok()) {
    say("finalize error: " + str(s));
    ref.destroyOptions(handle);
    return;
  }
  say("finalize -> " + loadable);
  ref.destroyOptions(handle);
  void *kernel = nullptr;
  if (absl::Status s = ref.load(loadable, "k", 0, kernel); !s.ok()) {
    say("load error: " + str(s));
    return;
  }
  if (absl::Status s = ref.launch(kernel, launchInfo("k", "k-key")); !s.ok())
    say("launch error: " + str(s));
  if (absl::Status s = ref.unload(kernel); !s.ok())
    say("unload error: " + str(s));
  else
    say("unloaded");
}

void store(PluginHost &host) {
  for (const CacheStoreRef &ref : host.cacheStores()) {
    std::string name(ref.name());
    std::string value;
    say("store " + name +
        " get before put: " + (ref.get("key-1", value) ? "hit" : "miss"));
    say("store " + name +
        " put: " + (ref.put("key-1", "value-1") ? "stored" : "not stored"));
    bool hit = ref.get("key-1", value);
    say("store " + name +
        " get after put: " + (hit ? "hit " + value : std::string("miss")));
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
    } else if (arg == "store") {
      store(host);
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
