//===- kjit-host-driver.cpp - runs host kernels through the host backend --===//
//
// A test tool: loads the host backend plugin through
// kjit::plugin::PluginHost, finalizes and loads kernel objects, launches
// them with arguments given on the command line (allocating and filling the
// buffers), and prints every buffer afterwards ("bufK = ..." for the K-th
// buffer argument), so that lit can check the results against values
// computed independently. Driver lines go to stdout, flushed before each
// launch so that the kernels' own prints (one write(2) per line) appear in
// order; the host's log goes to stderr.
//
// Usage: kjit-host-driver --plugin=PATH [--backend=NAME] COMMAND...
//   --backend=NAME            drive the backend of this name (default host;
//                             a wrapper such as examples/plugins/checked-host)
//   load:FILE:K               finalize then load kernel K from FILE
//   memory:DEVICE:SIZE        allocate SIZE bytes on DEVICE, copy a pattern
//                             in and back, compare, deallocate (ABI 1.2)
//   launch:GX[,GY,GZ]:WARPS ARG...   launch the kernel loaded last
//   --time                    print the time per launch of the next launch
//   --concurrent=K            the next launch runs from K threads at once,
//                             each with its own buffers; results must agree
// and the commands, settings and ARGs of test/Drivers/BackendDriver.h (the
// buffers are the kernel's own: a host kernel reads host memory).
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

namespace {

class HostDriver : public BackendDriver {
public:
  unsigned concurrent = 1;

  void memory(int32_t device, uint64_t size) {
    if (!backend.hasDeviceMemory())
      return say("memory: the backend has no device memory");
    absl::StatusOr<uint64_t> address = backend.allocate(device, size);
    if (!address.ok())
      return say("allocate error: " + str(address.status()));
    std::string in(size, '\0'), out(size, '\0');
    for (uint64_t k = 0; k < size; ++k)
      in[k] = char(k * 7 + 1);
    absl::Status s = backend.copyToDevice(device, *address, in.data(), size);
    if (s.ok())
      s = backend.copyToHost(device, out.data(), *address, size);
    say("memory device=" + std::to_string(device) +
        " size=" + std::to_string(size) +
        " aligned256=" + (*address % 256 == 0 ? "yes" : "no") + " " +
        (!s.ok()     ? "copy error: " + str(s)
         : in == out ? "roundtrip ok"
                     : "roundtrip DIFFERS"));
    if (absl::Status freed = backend.deallocate(device, *address); !freed.ok())
      say("deallocate error: " + str(freed));
  }

  /// Runs one launch (repeat times); returns the status lines.
  std::string runOnce(kjit_backend_launch_args launch, LaunchArgs &args,
                      double &us) {
    if (!args.error.empty())
      return "argument error: " + args.error;
    Values passed;
    std::string said;
    if (!passValues(launch, args, passed, said))
      return said;
    absl::Status status = launchRepeated(launch, us);
    said += dropValues(passed);
    return said + (status.ok() ? "launch ok" : "launch error: " + str(status));
  }

  void launch(const std::string &spec, const std::vector<std::string> &words) {
    kjit_backend_launch_args launch = launchArgs(spec);
    std::vector<std::unique_ptr<LaunchArgs>> instances;
    for (unsigned i = 0; i < concurrent; ++i) {
      instances.push_back(std::make_unique<LaunchArgs>());
      instances.back()->parse(words, /*hostBuffers=*/false);
    }
    std::vector<std::string> lines(concurrent);
    double us = 0;
    if (concurrent == 1) {
      lines[0] = runOnce(launch, *instances[0], us);
    } else {
      std::vector<std::thread> threads;
      for (unsigned i = 0; i < concurrent; ++i)
        threads.emplace_back([&, i] {
          double ignored;
          lines[i] = runOnce(launch, *instances[i], ignored);
        });
      for (std::thread &t : threads)
        t.join();
    }
    std::string dump = instances[0]->dump();
    for (unsigned i = 1; i < concurrent; ++i)
      if (lines[i] != lines[0] || instances[i]->dump() != dump)
        say("concurrent launch " + std::to_string(i) +
            " disagrees: " + lines[i]);
    if (concurrent > 1)
      say(std::to_string(concurrent) + " concurrent launches done");
    say(lines[0]);
    if (std::string timed = timeLine("launch", us); !timed.empty())
      say(timed);
    std::fputs(dump.c_str(), stdout);
    std::fflush(stdout);
    resetSettings();
  }

  void resetSettings() override {
    BackendDriver::resetSettings();
    concurrent = 1;
  }

protected:
  std::string describeLoadable(const std::string &input,
                               const std::string &loadable) override {
    return loadable == input ? ", unchanged" : ", changed";
  }
};

bool isCommand(std::string_view w) {
  if (BackendDriver::isCommon(w))
    return true;
  for (std::string_view c : {"load:", "memory:", "launch:", "--concurrent="})
    if (w.substr(0, c.size()) == c)
      return true;
  return false;
}

} // namespace

int main(int argc, char **argv) {
  toolName = "kjit-host-driver";
  HostDriver d;
  std::vector<std::string> words(argv + 1, argv + argc);
  if (words.empty() || words[0].rfind("--plugin=", 0) != 0)
    usage("the first argument must be --plugin=PATH");
  if (absl::Status s = d.host.loadPlugin(words[0].substr(9)); !s.ok())
    usage("cannot load the plugin: " + str(s));
  std::string backendName = "host";
  size_t i = 1;
  if (words.size() > 1 && words[1].rfind("--backend=", 0) == 0)
    backendName = words[i++].substr(10);
  if (absl::Status s = d.host.findBackend(backendName, d.backend); !s.ok())
    usage(str(s));
  while (i < words.size()) {
    const std::string &w = words[i++];
    auto rest = [&](size_t n) { return w.substr(n); };
    if (d.runCommon(w)) {
      continue;
    } else if (w.rfind("load:", 0) == 0) {
      std::vector<std::string> f = split(rest(5), ':');
      if (f.size() != 2)
        usage("load wants load:FILE:KERNEL");
      d.load("elf-shared-object", f[0], f[1]);
    } else if (w.rfind("memory:", 0) == 0) {
      std::vector<std::string> f = split(rest(7), ':');
      if (f.size() != 2)
        usage("memory wants memory:DEVICE:SIZE");
      d.memory(int32_t(std::strtol(f[0].c_str(), nullptr, 10)),
               std::strtoull(f[1].c_str(), nullptr, 10));
    } else if (w.rfind("--concurrent=", 0) == 0) {
      d.concurrent =
          unsigned(std::max(1ul, std::strtoul(rest(13).c_str(), nullptr, 10)));
    } else if (w.rfind("launch:", 0) == 0) {
      std::vector<std::string> args;
      while (i < words.size() && !isCommand(words[i]))
        args.push_back(words[i++]);
      d.launch(rest(7), args);
    } else {
      usage("unknown command '" + w + "'");
    }
  }
  d.finish();
  return 0;
}
