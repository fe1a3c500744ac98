//===- MultiDeviceTest.cpp - one runtime, two devices ---------------------===//
//
// The runtime's per-device bookkeeping (docs/MultiDevice.md) on the test
// backend of test/Runtime/Inputs/TwoDevicesBackend.c: the host backend
// presented as two devices whose arch and fingerprint the environment
// sets, whose handles carry the device they were loaded on, and which
// logs every load and launch. What two real GPUs add (contexts, streams,
// concurrency) is for a two-GPU machine; what is checked here is that the
// runtime compiles, caches, loads and launches per device.
//
//===----------------------------------------------------------------------===//

#include "kjit/Cache/DiskCache.h"
#include "kjit/Model/Specialization.h"
#include "kjit/Runtime/Runtime.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

using namespace kjit::rt;

namespace {

/// The stream of device `d` as the test backend numbers them (a launch on
/// a stream of another device than its handle's is refused there).
uint64_t streamOf(int32_t device) { return 0x7d00u + uint64_t(device); }

/// Whether `status`'s message has `part` in it.
bool says(const absl::Status &status, const std::string &part) {
  return std::string(status.message()).find(part) != std::string::npos;
}

/// One line of the test backend's log.
struct Event {
  std::string what; // load, launch, crossed, unload
  int device = -1;
  int streamDevice = -1;
  std::string kernel;
  uint64_t handle = 0;
};

const char *const kVariables[] = {
    "KJIT_TEST_TWO_DEVICES_ARCH0",        "KJIT_TEST_TWO_DEVICES_ARCH1",
    "KJIT_TEST_TWO_DEVICES_FINGERPRINT0", "KJIT_TEST_TWO_DEVICES_FINGERPRINT1",
    "KJIT_TEST_TWO_DEVICES_TARGET1",      "KJIT_TEST_TWO_DEVICES_LOG"};

class MultiDevice : public ::testing::Test {
protected:
  void SetUp() override {
    char pattern[] = "/tmp/kjit-multi-device-XXXXXX";
    ASSERT_NE(mkdtemp(pattern), nullptr);
    dir_ = pattern;
    for (const char *name : kVariables)
      unsetenv(name);
    logPath_ = dir_ + "/events";
    setenv("KJIT_TEST_TWO_DEVICES_LOG", logPath_.c_str(), 1);
  }

  void TearDown() override {
    stop();
    for (const char *name : kVariables)
      unsetenv(name);
    std::string command = "rm -rf '" + dir_ + "'";
    EXPECT_EQ(std::system(command.c_str()), 0);
  }

  /// A runtime on the two-device backend (its plugin reads the
  /// environment now), with a disk cache in `cacheName` under the test's
  /// folder, or none.
  void start(const std::string &cacheName = "") {
    RuntimeOptions options;
    options.readEnvironment = false;
    options.cacheDirectory = cacheName.empty() ? "" : dir_ + "/" + cacheName;
    options.target = "host";
    options.plugins = {KJIT_TWO_DEVICES_PLUGIN};
    options.logRecompiles = true;
    options.logSink = [this](kjit::plugin::LogLevel, std::string_view source,
                             std::string_view message) {
      if (message.rfind("recompiling ", 0) == 0) {
        recompiles_.emplace_back(message);
        return;
      }
      std::fprintf(stderr, "%.*s: %.*s\n", int(source.size()), source.data(),
                   int(message.size()), message.data());
    };
    auto runtime = Runtime::create(std::move(options));
    ASSERT_TRUE(runtime.ok()) << runtime.status();
    runtime_ = *std::move(runtime);
    auto backend = runtime_->backend();
    ASSERT_TRUE(backend.ok()) << backend.status();
    ASSERT_EQ((*backend)->ref.name(), "two-devices")
        << "the runtime did not pick the test backend";
    auto module = Module::load(*runtime_, std::string(KJIT_EXAMPLES_DIR) +
                                              "/vector_add.mlir");
    ASSERT_TRUE(module.ok()) << module.status();
    module_ = *module;
    auto kernel = module_->kernel("add");
    ASSERT_TRUE(kernel.ok()) << kernel.status();
    kernel_ = *kernel;
  }

  /// Destroys the module and the runtime: its kernels are unloaded.
  void stop() {
    kernel_ = nullptr;
    module_.reset();
    runtime_.reset();
  }

  /// Launches add(x, y, out, n) on `device` (on that device's stream
  /// unless `stream` says otherwise), with inputs that depend on `seed`,
  /// and checks every output.
  absl::StatusOr<LaunchResult> add(int32_t device, int seed,
                                   std::optional<uint64_t> stream = {}) {
    const int n = 3000;
    std::vector<float> x(n), y(n), out(n, -1.0f);
    for (int i = 0; i < n; ++i) {
      x[i] = float(i % 97) * 0.25f + float(seed);
      y[i] = float(seed % 13) - float(i % 31);
    }
    Argument args[] = {
        Argument::tensor(reinterpret_cast<uintptr_t>(x.data()), DType::FP32),
        Argument::tensor(reinterpret_cast<uintptr_t>(y.data()), DType::FP32),
        Argument::tensor(reinterpret_cast<uintptr_t>(out.data()), DType::FP32),
        Argument::integer(n)};
    LaunchConfig config;
    config.grid = {(n + 1023) / 1024, 1, 1};
    config.device = device;
    config.stream = stream ? *stream : streamOf(device);
    auto result = kernel_->launch(config, args);
    if (!result.ok())
      return result;
    for (int i = 0; i < n; ++i)
      if (out[i] != x[i] + y[i])
        return absl::InternalError("device " + std::to_string(device) +
                                   ": out[" + std::to_string(i) + "] is " +
                                   std::to_string(out[i]) + ", not " +
                                   std::to_string(x[i] + y[i]));
    return result;
  }

  std::vector<Event> events() {
    std::vector<Event> result;
    std::ifstream in(logPath_);
    std::string line;
    while (std::getline(in, line)) {
      std::istringstream words(line);
      Event event;
      words >> event.what;
      std::string field;
      while (words >> field) {
        size_t eq = field.find('=');
        std::string name = field.substr(0, eq), value = field.substr(eq + 1);
        if (name == "device")
          event.device = std::stoi(value);
        else if (name == "stream-device")
          event.streamDevice = std::stoi(value);
        else if (name == "kernel")
          event.kernel = value;
        else if (name == "handle")
          event.handle = std::stoull(value);
      }
      result.push_back(event);
    }
    return result;
  }

  /// The devices handles were loaded on, by handle; fails the test on a
  /// launch of a handle on another device than its load's, on a launch of
  /// a handle never loaded, and on any crossing the backend refused.
  std::map<uint64_t, int> checkNoHandleCrossed() {
    std::map<uint64_t, int> loadedOn;
    for (const Event &event : events()) {
      if (event.what == "load") {
        EXPECT_TRUE(loadedOn.emplace(event.handle, event.device).second)
            << "handle " << event.handle << " loaded twice";
      } else if (event.what == "launch") {
        auto it = loadedOn.find(event.handle);
        EXPECT_NE(it, loadedOn.end())
            << "handle " << event.handle << " launched before its load";
        if (it != loadedOn.end()) {
          EXPECT_EQ(it->second, event.device);
        }
        EXPECT_EQ(event.device, event.streamDevice)
            << "handle " << event.handle << " of device " << event.device
            << " launched on a stream of device " << event.streamDevice;
      } else {
        EXPECT_NE(event.what, "crossed")
            << "handle " << event.handle << " of device " << event.device
            << " was launched on device " << event.streamDevice;
      }
    }
    return loadedOn;
  }

  /// How many loads the log has on `device`.
  int loadsOn(int device) {
    int count = 0;
    for (const Event &event : events())
      count += event.what == "load" && event.device == device;
    return count;
  }

  std::string dir_, logPath_;
  /// The runtime's KJIT_LOG=recompiles lines.
  std::vector<std::string> recompiles_;
  std::unique_ptr<Runtime> runtime_;
  std::shared_ptr<Module> module_;
  Kernel *kernel_ = nullptr;
};

// The backend reports two devices, and device 1's description is asked of
// the backend (not copied from device 0's).
TEST_F(MultiDevice, TheBackendHasTwoDevicesDescribedEachOnItsOwn) {
  setenv("KJIT_TEST_TWO_DEVICES_ARCH0", "arch-a", 1);
  setenv("KJIT_TEST_TWO_DEVICES_ARCH1", "arch-b", 1);
  ASSERT_NO_FATAL_FAILURE(start());
  const Backend &backend = **runtime_->backend();
  EXPECT_EQ(*backend.ref.deviceCount(), 2);
  EXPECT_EQ(backend.arch, "arch-a");
  auto zero = runtime_->device(backend, 0);
  auto one = runtime_->device(backend, 1);
  ASSERT_TRUE(zero.ok()) << zero.status();
  ASSERT_TRUE(one.ok()) << one.status();
  EXPECT_EQ((*zero)->arch, "arch-a");
  EXPECT_EQ((*one)->arch, "arch-b");
  EXPECT_EQ((*one)->formats, backend.formats);
  // Cached: the same description again.
  EXPECT_EQ(*runtime_->device(backend, 1), *one);
  auto two = runtime_->device(backend, 2);
  ASSERT_FALSE(two.ok());
  // The runtime asks device_count before it describes a device.
  EXPECT_PRED2(says, two.status(),
               ("device 2 is not one of the 2 devices the backend for "
                "target 'host' drives"));
}

// As the reference's self.cache[device]: the same kernel launched on
// device 0 and device 1 has an entry on each, compiled and loaded for that
// device (no disk cache here, so each compiles), and each device launches
// only the handle loaded on it; both compute the right result.
TEST_F(MultiDevice, SameKernelCompilesAndLoadsPerDevice) {
  ASSERT_NO_FATAL_FAILURE(start());
  auto first0 = add(0, 1);
  ASSERT_TRUE(first0.ok()) << first0.status();
  EXPECT_TRUE(first0->compiled);
  auto first1 = add(1, 2);
  ASSERT_TRUE(first1.ok()) << first1.status();
  EXPECT_TRUE(first1->compiled) << "device 1 used device 0's entry";
  for (int round = 0; round < 3; ++round) {
    for (int32_t device : {0, 1}) {
      auto again = add(device, 10 * round + device);
      ASSERT_TRUE(again.ok()) << again.status();
      EXPECT_FALSE(again->compiled);
      EXPECT_TRUE(again->launched);
    }
  }
  EXPECT_EQ(kernel_->stats().compiles, 2u);
  std::map<uint64_t, int> loadedOn = checkNoHandleCrossed();
  ASSERT_EQ(loadedOn.size(), 2u);
  EXPECT_EQ(loadsOn(0), 1);
  EXPECT_EQ(loadsOn(1), 1);
  int launches = 0;
  for (const Event &event : events())
    launches += event.what == "launch";
  EXPECT_EQ(launches, 8);

  // Unloaded with the kernel: each handle once, on its device.
  stop();
  std::set<uint64_t> unloaded;
  for (const Event &event : events())
    if (event.what == "unload") {
      EXPECT_TRUE(unloaded.insert(event.handle).second);
      EXPECT_EQ(loadedOn[event.handle], event.device);
    }
  EXPECT_EQ(unloaded.size(), 2u);
}

// The check above can fail: the backend refuses a handle of device 0 on a
// stream of device 1, and logs it as crossed.
TEST_F(MultiDevice, TheBackendRefusesAHandleOnAnotherDevicesStream) {
  ASSERT_NO_FATAL_FAILURE(start());
  ASSERT_TRUE(add(0, 1).ok());
  auto crossed = add(0, 1, streamOf(1));
  ASSERT_FALSE(crossed.ok());
  EXPECT_PRED2(says, crossed.status(),
               ("two-devices: kernel 'add' was loaded on device 0 "
                "but is launched on a stream of device 1"));
  int refusals = 0;
  for (const Event &event : events())
    refusals += event.what == "crossed";
  EXPECT_EQ(refusals, 1);
}

// Devices outside the backend's are refused, wherever they are: the
// kernel's tables are sized from its device_count, with no fixed cap.
TEST_F(MultiDevice, DevicesTheBackendDoesNotHaveAreRefused) {
  ASSERT_NO_FATAL_FAILURE(start());
  auto two = add(2, 0, /*stream=*/0);
  ASSERT_FALSE(two.ok());
  // The runtime asks device_count before it describes a device.
  EXPECT_PRED2(says, two.status(),
               ("device 2 is not one of the 2 devices the backend for "
                "target 'host' drives"));
  auto sixteen = add(16, 0, /*stream=*/0);
  ASSERT_FALSE(sixteen.ok());
  EXPECT_PRED2(says, sixteen.status(),
               ("device 16 is not one of the 2 devices the backend for "
                "target 'host' drives"));
  auto negative = add(-1, 0, /*stream=*/0);
  ASSERT_FALSE(negative.ok());
  EXPECT_EQ(negative.status().message(),
            "device -1 does not exist: devices are numbered from 0");
  EXPECT_EQ(loadsOn(2), 0);
}

// Two threads, one per device, launching the same kernel from its first
// launch on (both miss at once); then both threads alternate devices, so
// that one thread's reused launch arguments serve entries of both devices.
// Every result is right and no handle ever reaches another device.
TEST_F(MultiDevice, ThreadsOnePerDeviceNeverCrossHandles) {
  ASSERT_NO_FATAL_FAILURE(start());
  constexpr int kLaunches = 200;
  std::vector<std::string> errors(2);
  auto run = [&](int thread, bool alternate) {
    for (int i = 0; i < kLaunches; ++i) {
      int32_t device = alternate ? (thread + i) % 2 : thread;
      auto result = add(device, thread * 1000 + i);
      if (!result.ok()) {
        errors[thread] = std::string(result.status().message());
        return;
      }
    }
  };
  for (bool alternate : {false, true}) {
    std::thread zero(run, 0, alternate), one(run, 1, alternate);
    zero.join();
    one.join();
    EXPECT_EQ(errors[0], "") << "alternate: " << alternate;
    EXPECT_EQ(errors[1], "") << "alternate: " << alternate;
  }
  EXPECT_EQ(kernel_->stats().compiles, 2u);
  std::map<uint64_t, int> loadedOn = checkNoHandleCrossed();
  EXPECT_EQ(loadedOn.size(), 2u);
  EXPECT_EQ(loadsOn(0), 1);
  EXPECT_EQ(loadsOn(1), 1);
  int launchesOn[2] = {0, 0};
  for (const Event &event : events())
    if (event.what == "launch" && event.device >= 0 && event.device < 2)
      ++launchesOn[event.device];
  EXPECT_EQ(launchesOn[0], 2 * kLaunches);
  EXPECT_EQ(launchesOn[1], 2 * kLaunches);
}

// Two devices of one arch and fingerprint share the disk entry: device 1
// loads what device 0 compiled (one compile, two loads), as two GPUs of
// one model do with the cuda backend, whose fingerprint has no device
// identity.
TEST_F(MultiDevice, EqualDevicesShareOneDiskEntry) {
  ASSERT_NO_FATAL_FAILURE(start("cache"));
  auto zero = add(0, 1);
  ASSERT_TRUE(zero.ok()) << zero.status();
  EXPECT_TRUE(zero->compiled);
  auto one = add(1, 2);
  ASSERT_TRUE(one.ok()) << one.status();
  EXPECT_FALSE(one->compiled);
  EXPECT_TRUE(one->diskHit);
  EXPECT_EQ(kernel_->stats().compiles, 1u);
  EXPECT_EQ(kernel_->stats().diskHits, 1u);
  checkNoHandleCrossed();
  EXPECT_EQ(loadsOn(0), 1);
  EXPECT_EQ(loadsOn(1), 1);
  int artifacts = 0;
  kjit::cache::DiskCache *disk = runtime_->diskCache();
  ASSERT_NE(disk, nullptr);
  for (const kjit::cache::Listing &listing : disk->list()) {
    auto entry = disk->read(listing.key);
    ASSERT_TRUE(entry.ok()) << entry.status();
    artifacts += entry->kind == kjit::cache::EntryKind::Artifact;
  }
  EXPECT_EQ(artifacts, 1);
}

/// The artifact entries of the disk cache, by the arch their metadata
/// names.
std::multiset<std::string> artifactArchs(kjit::cache::DiskCache &disk) {
  std::multiset<std::string> archs;
  for (const kjit::cache::Listing &listing : disk.list()) {
    auto entry = disk.read(listing.key);
    EXPECT_TRUE(entry.ok()) << entry.status();
    if (!entry.ok() || entry->kind != kjit::cache::EntryKind::Artifact)
      continue;
    size_t at = entry->metadata.find("\"arch\":\"");
    EXPECT_NE(at, std::string::npos) << entry->metadata;
    if (at == std::string::npos)
      continue;
    at += 8;
    archs.insert(
        entry->metadata.substr(at, entry->metadata.find('"', at) - at));
  }
  return archs;
}

// Different fingerprints keep the devices apart: each compiles its own
// entry, and a later runtime (another process) finds device 1's.
TEST_F(MultiDevice, DifferentFingerprintsGetTheirOwnDiskEntries) {
  setenv("KJIT_TEST_TWO_DEVICES_FINGERPRINT1", ";stepping=2", 1);
  ASSERT_NO_FATAL_FAILURE(start("cache"));
  auto zero = add(0, 1);
  ASSERT_TRUE(zero.ok()) << zero.status();
  EXPECT_TRUE(zero->compiled);
  auto one = add(1, 2);
  ASSERT_TRUE(one.ok()) << one.status();
  EXPECT_TRUE(one->compiled) << "device 1 took device 0's entry";
  EXPECT_FALSE(one->diskHit);
  EXPECT_EQ(kernel_->stats().compiles, 2u);
  ASSERT_NE(runtime_->diskCache(), nullptr);
  EXPECT_EQ(artifactArchs(*runtime_->diskCache()).size(), 2u);
  checkNoHandleCrossed();

  stop();
  ASSERT_NO_FATAL_FAILURE(start("cache"));
  auto later = add(1, 3);
  ASSERT_TRUE(later.ok()) << later.status();
  EXPECT_TRUE(later->diskHit);
  EXPECT_FALSE(later->compiled);
}

// Different archs keep the devices apart too, and each stored entry says
// the arch of the device it was compiled for, not device 0's.
TEST_F(MultiDevice, DifferentArchsGetTheirOwnDiskEntries) {
  setenv("KJIT_TEST_TWO_DEVICES_ARCH0", "arch-a", 1);
  setenv("KJIT_TEST_TWO_DEVICES_ARCH1", "arch-b", 1);
  ASSERT_NO_FATAL_FAILURE(start("cache"));
  auto one = add(1, 2);
  ASSERT_TRUE(one.ok()) << one.status();
  EXPECT_TRUE(one->compiled);
  ASSERT_NE(runtime_->diskCache(), nullptr);
  EXPECT_EQ(artifactArchs(*runtime_->diskCache()),
            std::multiset<std::string>({"arch-b"}));
  auto zero = add(0, 1);
  ASSERT_TRUE(zero.ok()) << zero.status();
  EXPECT_TRUE(zero->compiled) << "device 0 took device 1's entry";
  EXPECT_EQ(kernel_->stats().compiles, 2u);
  EXPECT_EQ(artifactArchs(*runtime_->diskCache()),
            std::multiset<std::string>({"arch-a", "arch-b"}));
  checkNoHandleCrossed();
}

// A record made on device 1 carries device 1's arch; preload checks it
// against the device it preloads on: refused on device 0 (another arch),
// taken on device 1, where it loads (and the launch after it is a hit).
TEST_F(MultiDevice, TheRecordCarriesTheDevicesArch) {
  setenv("KJIT_TEST_TWO_DEVICES_ARCH0", "arch-a", 1);
  setenv("KJIT_TEST_TWO_DEVICES_ARCH1", "arch-b", 1);
  ASSERT_NO_FATAL_FAILURE(start());
  std::vector<float> x(64), y(64), out(64);
  Argument args[] = {
      Argument::tensor(reinterpret_cast<uintptr_t>(x.data()), DType::FP32),
      Argument::tensor(reinterpret_cast<uintptr_t>(y.data()), DType::FP32),
      Argument::tensor(reinterpret_cast<uintptr_t>(out.data()), DType::FP32),
      Argument::integer(3000)};
  auto record1 = kernel_->warmup(args, {}, /*device=*/1);
  ASSERT_TRUE(record1.ok()) << record1.status();
  EXPECT_EQ(record1->target, "host");
  EXPECT_EQ(record1->arch, "arch-b");
  auto record0 = kernel_->warmup(args, {}, /*device=*/0);
  ASSERT_TRUE(record0.ok()) << record0.status();
  EXPECT_EQ(record0->arch, "arch-a");
  std::string json = toJson(*record1);

  // Another process, without the warmup's entries.
  stop();
  ASSERT_EQ(std::remove(logPath_.c_str()), 0);
  ASSERT_NO_FATAL_FAILURE(start());
  absl::Status wrong = kernel_->preload(json, /*device=*/0);
  ASSERT_FALSE(wrong.ok());
  EXPECT_EQ(wrong.message(),
            "the record of kernel 'add' was made for target 'host' (arch-b), "
            "but this runtime launches on 'host' (arch-a) on device 0");
  EXPECT_EQ(loadsOn(0), 0);
  absl::Status right = kernel_->preload(json, /*device=*/1);
  ASSERT_TRUE(right.ok()) << right;
  EXPECT_EQ(loadsOn(1), 1);
  auto launched = add(1, 5);
  ASSERT_TRUE(launched.ok()) << launched.status();
  EXPECT_FALSE(launched->compiled) << "the preload did not fill device 1";
  EXPECT_EQ(loadsOn(1), 1);
  checkNoHandleCrossed();
}

// A device that describes another target than the backend's cannot be
// served by it (its code would need another compiler target); device 0
// still launches.
TEST_F(MultiDevice, ADeviceOfAnotherTargetIsRefused) {
  setenv("KJIT_TEST_TWO_DEVICES_TARGET1", "cuda", 1);
  ASSERT_NO_FATAL_FAILURE(start());
  auto one = add(1, 1);
  ASSERT_FALSE(one.ok());
  EXPECT_PRED2(says, one.status(),
               ("device 1 of the backend for target 'host' describes "
                "target 'cuda'; a backend serves one target on every "
                "device (plugin 'two-devices' ("));
  auto zero = add(0, 1);
  ASSERT_TRUE(zero.ok()) << zero.status();
  EXPECT_EQ(loadsOn(1), 0);
}

// KJIT_LOG=recompiles names the device, and the backend's fingerprint
// where the devices' differ: the second device's compile is explained by
// what sets it apart from the first's.
TEST_F(MultiDevice, RecompileLogNamesTheDeviceAndTheFingerprint) {
  ASSERT_NO_FATAL_FAILURE(start());
  ASSERT_TRUE(add(0, 1).ok());
  ASSERT_TRUE(add(1, 2).ok());
  ASSERT_EQ(recompiles_.size(), 1u);
  EXPECT_EQ(recompiles_[0], "recompiling add: device 0 -> 1 (nearest of 1 "
                            "compiled specialization)");
  stop();
  recompiles_.clear();

  setenv("KJIT_TEST_TWO_DEVICES_FINGERPRINT1", ";stepping=2", 1);
  ASSERT_NO_FATAL_FAILURE(start());
  ASSERT_TRUE(add(0, 1).ok());
  ASSERT_TRUE(add(1, 2).ok());
  ASSERT_EQ(recompiles_.size(), 1u);
  const std::string prefix =
      "recompiling add: device 0 -> 1, backend fingerprint ";
  EXPECT_EQ(recompiles_[0].rfind(prefix, 0), 0u) << recompiles_[0];
  // Two short digests, different.
  std::string digests = recompiles_[0].substr(prefix.size(), 28);
  EXPECT_EQ(digests.substr(12, 4), " -> ") << recompiles_[0];
  EXPECT_NE(digests.substr(0, 12), digests.substr(16, 12));
}

} // namespace
