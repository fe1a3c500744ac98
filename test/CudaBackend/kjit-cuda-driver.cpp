//===- kjit-cuda-driver.cpp - drives the cuda backend through the host ----===//
//
// A test tool: loads libkjit-cuda.so through kjit::plugin::PluginHost and
// drives every entry of its backend from the command line: device count,
// describe (with the compile options) and fingerprint, finalize (PTX through
// the finalizers, or a cubin as it is), load, launch with arguments whose
// buffers live in device memory from the backend's allocate (filled and read
// back with copy), synchronize, unload. With the fake driver and toolkit of
// test/CudaBackend/Inputs it runs without a GPU; on a GPU machine it runs
// the same commands on the real driver. Driver lines go to stdout, flushed
// after each; the host's log (and the fake driver's) goes to stderr.
//
// Usage: kjit-cuda-driver --plugin=PATH [--host-plugin=PATH] COMMAND...
//   load:FORMAT:FILE:K [ARG...]  finalize (FORMAT ptx or cubin), then load
//                             K; with ARGs, as the runtime loads (ABI 1.4):
//                             they are the template of the launches, and
//                             the line says whether the backend took it
//   launch:GX[,GY,GZ]:WARPS ARG...   launch the kernel loaded last, then
//                             synchronize, copy every buffer back and print
//                             it ("bufK = ..."); hostbuf ARGs stay in host
//                             memory
//   --stream=S                the next launch's stream
//   --time                    print the time per launch call (enqueue only)
//   --threads=K               the next launch runs from K new threads at
//                             once, each with its own buffers (results must
//                             agree)
//   sync[:STREAM]             synchronize device 0's stream
//   alloc:BYTES               allocate and free on device 0
//   host                      the host backend (--host-plugin) in the same
//                             process: describe and a copy round trip
//   async                     how many asynchronous errors the host counted
// and the commands, settings and ARGs of test/Drivers/BackendDriver.h.
//
//===----------------------------------------------------------------------===//

#include "BackendDriver.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <thread>
#include <vector>

using namespace kjit::driver;
using kjit::plugin::BackendRef;

namespace {

class CudaDriver : public BackendDriver {
public:
  BackendRef hostBackend;
  bool haveHost = false;
  unsigned threads = 1;
  uint64_t stream = 0;

  CudaDriver() { describeOptions = true; }

  void launch(const std::string &spec, const std::vector<std::string> &words) {
    kjit_backend_launch_args launch = launchArgs(spec);
    launch.stream = stream;
    if (threads > 1)
      return launchFromThreads(launch, words);
    LaunchArgs args;
    args.parse(words, /*hostBuffers=*/true);
    std::string line;
    Values passed;
    if (!args.error.empty()) {
      line = "argument error: " + args.error;
    } else if (std::string placed = args.place(backend); !placed.empty()) {
      line = placed;
    } else if (!passValues(launch, args, passed, line)) {
      // The template load's error is the line.
    } else {
      // Said before the launch, whose driver calls log in between.
      if (!line.empty()) {
        line.pop_back();
        say(line);
        line.clear();
      }
      double us;
      absl::Status status = launchRepeated(launch, us);
      line = status.ok() ? "launch ok" : "launch error: " + str(status);
      if (std::string timed = timeLine("launch call", us); !timed.empty())
        line += "\n" + timed;
      if (status.ok())
        if (absl::Status s = backend.synchronize(0, stream); !s.ok())
          line += "\nsynchronize error: " + str(s);
      if (std::string dropped = dropValues(passed); !dropped.empty())
        line += "\n" + dropped.substr(0, dropped.size() - 1);
    }
    say(line);
    std::string back = args.retrieve(backend);
    std::fputs(back.c_str(), stdout);
    std::fputs(args.dump().c_str(), stdout);
    std::fflush(stdout);
    resetSettings();
  }

  /// The launch from `threads` new threads at once, each with buffers of
  /// its own, `repeat` times each; every thread's results must agree.
  void launchFromThreads(kjit_backend_launch_args launch,
                         const std::vector<std::string> &words) {
    std::vector<std::unique_ptr<LaunchArgs>> all;
    std::vector<std::string> lines(threads);
    for (unsigned t = 0; t < threads; ++t) {
      all.push_back(std::make_unique<LaunchArgs>());
      all.back()->parse(words, /*hostBuffers=*/true);
      if (std::string placed = all.back()->place(backend); !placed.empty())
        lines[t] = placed;
    }
    std::vector<std::thread> pool;
    for (unsigned t = 0; t < threads; ++t)
      pool.emplace_back([&, t, launch]() mutable {
        if (!lines[t].empty())
          return;
        launch.num_args = all[t]->args.size();
        launch.args = all[t]->args.data();
        double us;
        absl::Status status = launchRepeated(launch, us);
        lines[t] = status.ok() ? "launch ok" : "launch error: " + str(status);
      });
    for (std::thread &t : pool)
      t.join();
    if (absl::Status s = backend.synchronize(0, launch.stream); !s.ok())
      say("synchronize error: " + str(s));
    std::string first;
    for (unsigned t = 0; t < threads; ++t) {
      std::string back = all[t]->retrieve(backend);
      std::string result = lines[t] + "\n" + back + all[t]->dump();
      if (t == 0)
        first = result;
      else if (result != first)
        say("thread " + std::to_string(t) + " disagrees: " + result);
    }
    say(std::to_string(threads) + " threads: " + first);
    resetSettings();
  }

  /// load with a template of the launches' arguments, as the runtime
  /// loads: "load ok: K (template taken)" or "(template not taken)".
  void loadWithTemplate(const std::string &format, const std::string &file,
                        const std::string &kernel,
                        const std::vector<std::string> &words) {
    LaunchArgs args;
    args.parse(words, /*hostBuffers=*/true);
    if (!args.error.empty())
      return say("argument error: " + args.error);
    std::string loadable;
    if (!finalize(format, file, kernel, loadable))
      return;
    absl::StatusOr<BackendRef::LoadedKernel> loaded =
        backend.load(/*device=*/0, loadable, kernel, args.args);
    if (!loaded.ok())
      return say("load error: " + str(loaded.status()));
    kernels.emplace_back(kernel, loaded->kernel);
    loadables.push_back(std::move(loadable));
    say("load ok: " + kernel +
        (loaded->takesValues ? " (template taken)" : " (template not taken)"));
  }

  void resetSettings() override {
    BackendDriver::resetSettings();
    threads = 1;
    stream = 0;
  }

  void sync(uint64_t s) {
    absl::Status status = backend.synchronize(0, s);
    say(status.ok() ? "synchronize ok" : "synchronize error: " + str(status));
  }

  void alloc(uint64_t bytes) {
    absl::StatusOr<uint64_t> address = backend.allocate(0, bytes);
    if (!address.ok())
      return say("allocate error: " + str(address.status()));
    absl::Status s = backend.deallocate(0, *address);
    say(std::string("allocate ok, aligned to 256: ") +
        (*address % 256 == 0 ? "yes" : "no") +
        (s.ok() ? ", freed" : ", deallocate error: " + str(s)));
  }

  void hostCheck() {
    if (!haveHost)
      usage("host without --host-plugin");
    absl::StatusOr<BackendRef::Description> d = hostBackend.describe(0);
    if (!d.ok())
      return say("host describe error: " + str(d.status()));
    std::string in = "round trip", out(in.size(), ' ');
    absl::StatusOr<uint64_t> a = hostBackend.allocate(0, in.size());
    if (!a.ok())
      return say("host allocate error: " + str(a.status()));
    absl::Status s1 = hostBackend.copyToDevice(0, *a, in.data(), in.size());
    absl::Status s2 = hostBackend.copyToHost(0, out.data(), *a, out.size());
    absl::Status s3 = hostBackend.deallocate(0, *a);
    say("host backend: target=" + d->target + " arch=" + d->arch +
        " copy=" + (s1.ok() && s2.ok() && s3.ok() ? out : "failed"));
  }

protected:
  /// The fake finalizers name themselves in the first line after the
  /// header; a real cubin is binary.
  std::string describeLoadable(const std::string &,
                               const std::string &loadable) override {
    if (loadable.size() > 8 && loadable.compare(8, 11, "fake-cubin ") == 0)
      return ": " + loadable.substr(8, loadable.find('\n', 8) - 8);
    return "";
  }
};

bool isCommand(std::string_view w) {
  if (BackendDriver::isCommon(w))
    return true;
  for (std::string_view c : {"load:", "launch:", "--threads=", "--stream=",
                             "sync", "alloc:", "host", "async"})
    if (w.substr(0, c.size()) == c)
      return true;
  return false;
}

} // namespace

int main(int argc, char **argv) {
  toolName = "kjit-cuda-driver";
  CudaDriver d;
  std::vector<std::string> words(argv + 1, argv + argc);
  if (words.empty() || words[0].rfind("--plugin=", 0) != 0)
    usage("the first argument must be --plugin=PATH");
  if (absl::Status s = d.host.loadPlugin(words[0].substr(9)); !s.ok())
    usage("cannot load the plugin: " + str(s));
  if (absl::Status s = d.host.findBackend("cuda", d.backend); !s.ok())
    usage(str(s));
  size_t i = 1;
  if (i < words.size() && words[i].rfind("--host-plugin=", 0) == 0) {
    if (absl::Status s = d.host.loadPlugin(words[i].substr(14)); !s.ok())
      usage("cannot load the host plugin: " + str(s));
    if (absl::Status s = d.host.findBackend("host", d.hostBackend); !s.ok())
      usage(str(s));
    d.haveHost = true;
    ++i;
  }
  while (i < words.size()) {
    const std::string &w = words[i++];
    auto rest = [&](size_t n) { return w.substr(n); };
    if (d.runCommon(w)) {
      continue;
    } else if (w.rfind("load:", 0) == 0) {
      std::vector<std::string> f = split(rest(5), ':');
      if (f.size() != 3)
        usage("load wants load:FORMAT:FILE:KERNEL");
      std::vector<std::string> args;
      while (i < words.size() && !isCommand(words[i]))
        args.push_back(words[i++]);
      if (args.empty())
        d.load(f[0], f[1], f[2]);
      else
        d.loadWithTemplate(f[0], f[1], f[2], args);
    } else if (w.rfind("--threads=", 0) == 0) {
      d.threads =
          unsigned(std::max(1ul, std::strtoul(rest(10).c_str(), nullptr, 10)));
    } else if (w.rfind("--stream=", 0) == 0) {
      d.stream = std::strtoull(rest(9).c_str(), nullptr, 0);
    } else if (w.rfind("launch:", 0) == 0) {
      std::vector<std::string> args;
      while (i < words.size() && !isCommand(words[i]))
        args.push_back(words[i++]);
      d.launch(rest(7), args);
    } else if (w == "sync") {
      d.sync(0);
    } else if (w.rfind("sync:", 0) == 0) {
      d.sync(std::strtoull(rest(5).c_str(), nullptr, 0));
    } else if (w.rfind("alloc:", 0) == 0) {
      d.alloc(std::strtoull(rest(6).c_str(), nullptr, 0));
    } else if (w == "host") {
      d.hostCheck();
    } else if (w == "async") {
      d.say("async errors: " + std::to_string(d.host.asyncErrorCount()));
    } else {
      usage("unknown command '" + w + "'");
    }
  }
  d.finish();
  return 0;
}
