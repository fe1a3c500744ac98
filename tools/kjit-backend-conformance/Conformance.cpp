//===- Conformance.cpp - the backend conformance suite --------------------===//
//
// kjit-backend-conformance: the runtime's behaviour checked on one backend
// plugin, in-tree or out-of-tree (docs/Conformance.md). Specialization,
// the global check, launch hooks (the trace plugin), warmup/preload,
// single flight, arguments changed in place, empty grids and a device
// assert failing under debug (in a process of its own). Every buffer is
// allocated and copied through the backend's device-memory ABI (1.2),
// results are copied back to the host and checked against values computed
// here. Each test makes a runtime of its own that reads no KJIT_* variable
// (so no disk cache, no plugins of KJIT_PLUGINS). The kernels are compiled
// into the program (Kernels.inc, made from examples/ at build time), so an
// installed copy needs only the install tree's libraries.
//
// Usage: kjit-backend-conformance [--backend=NAME|PATH] [--target=TARGET]
//                                 [GoogleTest flags]
//   --backend  an in-tree backend by its target ("host", "cuda": the
//              libkjit-<target>.so beside libkjit-runtime.so), or the path
//              of a plugin (one with a '/'), loaded as --load-plugin does;
//              default $KJIT_TEST_BACKEND, else "host"
//   --target   the target the plugin's backend serves; default what its
//              describe says for device 0
// KJIT_EXAMPLES_DIR, when set, loads the kernels from that folder instead.
//
//===----------------------------------------------------------------------===//

#include "kjit/Plugin/PluginHost.h"
#include "kjit/Runtime/Runtime.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <link.h>
#include <memory>
#include <mutex>
#include <sstream>
#include <string>
#include <string_view>
#include <thread>
#include <unistd.h>
#include <vector>

using namespace kjit::rt;

namespace {

constexpr int32_t kDevice = 0;

#define ASSERT_OK(expr)                                                        \
  do {                                                                         \
    absl::Status assertOkStatus = (expr);                                      \
    ASSERT_TRUE(assertOkStatus.ok()) << assertOkStatus;                        \
  } while (false)

/// The kernels, as examples/ had them when this program was built.
struct EmbeddedKernel {
  const char *name;
  const char *text;
};
constexpr EmbeddedKernel kKernels[] = {
#include "Kernels.inc"
};

/// What --backend named: a target or a plugin's path. main() puts it (and
/// the target of a plugin) into the environment, where the child process
/// of a death test finds them too.
std::string backendArgument() {
  const char *name = std::getenv("KJIT_TEST_BACKEND");
  return name && *name ? name : "host";
}

bool backendIsPlugin() {
  return backendArgument().find('/') != std::string::npos;
}

/// The target the backend under test serves.
std::string targetName() {
  if (!backendIsPlugin())
    return backendArgument();
  const char *target = std::getenv("KJIT_TEST_TARGET");
  return target ? target : "";
}

/// A kernel file's module: from KJIT_EXAMPLES_DIR when it is set, else the
/// copy compiled in.
absl::StatusOr<std::shared_ptr<Module>> loadKernel(Runtime &runtime,
                                                   const char *name) {
  const char *dir = std::getenv("KJIT_EXAMPLES_DIR");
  if (dir && *dir)
    return Module::load(runtime, std::string(dir) + "/" + name);
  for (const EmbeddedKernel &kernel : kKernels)
    if (std::strcmp(kernel.name, name) == 0)
      return Module::fromText(runtime, kernel.text, name);
  return absl::NotFoundError(std::string("no kernel file ") + name);
}

/// The folder of the libkjit-runtime.so this process loaded, where the
/// in-tree plugins live (build/lib here, lib/ in the bundle).
std::string runtimeLibraryDir() {
  std::string found;
  dl_iterate_phdr(
      [](dl_phdr_info *info, size_t, void *data) {
        std::string name = info->dlpi_name ? info->dlpi_name : "";
        size_t slash = name.rfind('/');
        if (slash != std::string::npos &&
            name.compare(slash + 1, 18, "libkjit-runtime.so") == 0) {
          *static_cast<std::string *>(data) = name.substr(0, slash);
          return 1;
        }
        return 0;
      },
      &found);
  return found;
}

/// A buffer in the backend's device memory, freed when it goes.
class DeviceBuffer {
public:
  DeviceBuffer(const Backend &backend, uint64_t bytes)
      : backend_(backend), bytes_(bytes) {
    auto address = backend.ref.allocate(kDevice, bytes);
    status_ = address.status();
    if (address.ok())
      address_ = *address;
  }
  ~DeviceBuffer() {
    if (address_) {
      absl::Status status = backend_.ref.deallocate(kDevice, address_);
      EXPECT_TRUE(status.ok()) << status;
    }
  }
  DeviceBuffer(const DeviceBuffer &) = delete;
  DeviceBuffer &operator=(const DeviceBuffer &) = delete;

  const absl::Status &status() const { return status_; }
  uint64_t address() const { return address_; }
  uint64_t bytes() const { return bytes_; }

  /// A tensor argument at `offset` bytes into the buffer.
  Argument tensor(DType dtype = DType::FP32, uint64_t offset = 0) const {
    return Argument::tensor(address_ + offset, dtype);
  }
  /// Copies `values` in at `offset` bytes.
  template <typename T>
  absl::Status upload(const std::vector<T> &values, uint64_t offset = 0) {
    uint64_t size = values.size() * sizeof(T);
    if (offset + size > bytes_)
      return absl::InvalidArgumentError("upload past the buffer's end");
    return backend_.ref.copyToDevice(kDevice, address_ + offset, values.data(),
                                     size);
  }
  /// Waits for the device, then copies the whole buffer out.
  template <typename T> absl::Status download(std::vector<T> &values) const {
    absl::Status status = backend_.ref.synchronize(kDevice, 0);
    if (!status.ok())
      return status;
    values.assign(bytes_ / sizeof(T), T());
    return backend_.ref.copyToHost(kDevice, values.data(), address_,
                                   values.size() * sizeof(T));
  }

private:
  const Backend &backend_;
  uint64_t bytes_;
  uint64_t address_ = 0;
  absl::Status status_;
};

template <typename T>
::testing::AssertionResult sameValues(const std::vector<T> &got,
                                      const std::vector<T> &want) {
  if (got.size() != want.size())
    return ::testing::AssertionFailure()
           << got.size() << " values, not " << want.size();
  for (size_t i = 0; i < got.size(); ++i)
    if (!(got[i] == want[i]))
      return ::testing::AssertionFailure()
             << "at " << i << ": " << got[i] << ", not " << want[i];
  return ::testing::AssertionSuccess();
}

std::vector<float> sum(const std::vector<float> &a,
                       const std::vector<float> &b) {
  std::vector<float> out(a.size());
  for (size_t i = 0; i < a.size(); ++i)
    out[i] = a[i] + b[i];
  return out;
}

class BackendConformance : public ::testing::Test {
protected:
  /// A runtime on the backend under test, with `plugins` loaded.
  void start(std::vector<std::string> plugins = {}) {
    RuntimeOptions options;
    options.readEnvironment = false; // no KJIT_* variable leaks in
    options.cacheDirectory = "";     // no disk cache
    options.target = targetName();
    if (backendIsPlugin())
      plugins.insert(plugins.begin(), backendArgument());
    options.plugins = std::move(plugins);
    options.logSink = [this](kjit::plugin::LogLevel, std::string_view source,
                             std::string_view message) {
      std::lock_guard<std::mutex> lock(logMutex_);
      log_.push_back(std::string(source) + ": " + std::string(message));
      std::fprintf(stderr, "%s\n", log_.back().c_str());
    };
    auto runtime = Runtime::create(std::move(options));
    ASSERT_TRUE(runtime.ok()) << runtime.status();
    runtime_ = *std::move(runtime);
    auto backend = runtime_->backend();
    ASSERT_TRUE(backend.ok()) << backend.status();
    backend_ = *backend;
    ASSERT_TRUE(backend_->ref.hasDeviceMemory())
        << "backend '" << backend_->ref.name()
        << "' has no device memory (ABI 1.2)";
  }

  /// Frees the buffers and shuts the runtime down (its plugins' fini runs).
  void shutDown() {
    buffers_.clear();
    backend_ = nullptr;
    runtime_.reset();
  }

  /// A new device buffer of `bytes`.
  absl::Status allocate(uint64_t bytes, DeviceBuffer *&buffer) {
    buffers_.push_back(std::make_unique<DeviceBuffer>(*backend_, bytes));
    buffer = buffers_.back().get();
    return buffer->status();
  }
  /// A new device buffer holding `values`.
  template <typename T>
  absl::Status upload(const std::vector<T> &values, DeviceBuffer *&buffer) {
    absl::Status status = allocate(values.size() * sizeof(T), buffer);
    return status.ok() ? buffer->upload(values) : status;
  }

  std::shared_ptr<Module> load(const char *name) {
    auto module = loadKernel(*runtime_, name);
    EXPECT_TRUE(module.ok()) << module.status();
    return module.ok() ? *module : nullptr;
  }

  std::vector<std::string> logLines() {
    std::lock_guard<std::mutex> lock(logMutex_);
    return log_;
  }

  // Declaration order is destruction order backwards: buffers go before
  // the runtime whose backend owns them, the log after it.
  std::mutex logMutex_;
  std::vector<std::string> log_;
  std::unique_ptr<Runtime> runtime_;
  const Backend *backend_ = nullptr;
  std::vector<std::unique_ptr<DeviceBuffer>> buffers_;
};

// The runtime launches on the backend the environment named, not on a
// default or the interpreter.
TEST_F(BackendConformance, RunsOnTheNamedBackend) {
  ASSERT_NO_FATAL_FAILURE(start());
  EXPECT_EQ(runtime_->target(), targetName());
  EXPECT_FALSE(runtime_->interpreting());
  EXPECT_EQ(backend_->target, targetName());
  // A plugin given by its path serves the target itself, in place of the
  // in-tree backend of that target.
  if (backendIsPlugin()) {
    EXPECT_NE(backend_->ref.pluginDescription().find(backendArgument()),
              std::string::npos)
        << backend_->ref.pluginDescription();
  }
  auto devices = backend_->ref.deviceCount();
  ASSERT_TRUE(devices.ok()) << devices.status();
  EXPECT_GE(*devices, 1);
  std::printf("backend %s (%s), target %s, arch %s, %d device(s)\n",
              std::string(backend_->ref.name()).c_str(),
              backend_->ref.pluginDescription().c_str(),
              backend_->target.c_str(), backend_->arch.c_str(), *devices);
}

// vector_add's specializations: a first launch compiles, the same again
// is a hit, a changed constexpr, a pointer that is not 16-byte aligned and
// n == 1 are each an entry of their own; every result is right.
TEST_F(BackendConformance, VectorAddSpecializations) {
  ASSERT_NO_FATAL_FAILURE(start());
  auto module = load("vector_add.mlir");
  ASSERT_TRUE(module);
  auto kernel = module->kernel("add");
  ASSERT_TRUE(kernel.ok()) << kernel.status();
  Kernel *add = *kernel;

  const int n = 5000; // not a multiple of 4 (the scalar tail runs) or 16
  std::vector<float> x(n), y(n), want(n), got;
  for (int i = 0; i < n; ++i) {
    x[i] = 0.5f * i;
    y[i] = 1000.0f - i;
  }
  want = sum(x, y);
  const std::vector<float> poison(n, -1.0f);
  DeviceBuffer *dx, *dy, *dout, *wide;
  ASSERT_OK(upload(x, dx));
  ASSERT_OK(upload(y, dy));
  ASSERT_OK(upload(poison, dout));
  // x again, 4 bytes into a buffer: 4-byte but not 16-byte aligned.
  ASSERT_OK(allocate((n + 1) * sizeof(float), wide));
  ASSERT_OK(wide->upload(x, sizeof(float)));

  LaunchConfig config;
  auto launch = [&](const Argument &xArg, int64_t count,
                    const std::vector<KeywordArgument> &keywords)
      -> absl::StatusOr<LaunchResult> {
    absl::Status reset = dout->upload(poison);
    if (!reset.ok())
      return reset;
    Argument args[] = {xArg, dy->tensor(), dout->tensor(),
                       Argument::integer(count)};
    return add->launch(config, args, keywords);
  };

  config.grid = {(n + 1023) / 1024, 1, 1};
  auto first = launch(dx->tensor(), n, {});
  ASSERT_TRUE(first.ok()) << first.status();
  EXPECT_TRUE(first->launched);
  EXPECT_TRUE(first->compiled);
  ASSERT_OK(dout->download(got));
  EXPECT_TRUE(sameValues(got, want)) << "first launch";
  EXPECT_EQ(add->stats().compiles, 1u);

  // The same specialization again: a hit.
  auto second = launch(dx->tensor(), n, {});
  ASSERT_TRUE(second.ok()) << second.status();
  EXPECT_TRUE(second->launched);
  EXPECT_FALSE(second->compiled);
  ASSERT_OK(dout->download(got));
  EXPECT_TRUE(sameValues(got, want)) << "the hit";
  EXPECT_EQ(add->stats().compiles, 1u);

  // A changed constexpr is a new entry.
  config.grid = {(n + 511) / 512, 1, 1};
  auto third = launch(dx->tensor(), n, {{"BLOCK", Argument::integer(512)}});
  ASSERT_TRUE(third.ok()) << third.status();
  EXPECT_TRUE(third->compiled);
  ASSERT_OK(dout->download(got));
  EXPECT_TRUE(sameValues(got, want)) << "BLOCK = 512";
  EXPECT_EQ(add->stats().compiles, 2u);

  // A pointer that is not 16-byte aligned is a new entry, which must not
  // assume the alignment; a second launch of it is a hit.
  for (int round = 0; round < 2; ++round) {
    auto shifted = launch(wide->tensor(DType::FP32, sizeof(float)), n,
                          {{"BLOCK", Argument::integer(512)}});
    ASSERT_TRUE(shifted.ok()) << shifted.status();
    EXPECT_EQ(shifted->compiled, round == 0) << "round " << round;
    ASSERT_OK(dout->download(got));
    EXPECT_TRUE(sameValues(got, want)) << "unaligned x, round " << round;
  }
  EXPECT_EQ(add->stats().compiles, 3u);

  // n == 1 is a specialization of its own (the value 1), and writes one
  // element only.
  config.grid = {1, 1, 1};
  for (int round = 0; round < 2; ++round) {
    auto one = launch(dx->tensor(), 1, {});
    ASSERT_TRUE(one.ok()) << one.status();
    EXPECT_EQ(one->compiled, round == 0) << "round " << round;
    ASSERT_OK(dout->download(got));
    std::vector<float> wantOne = poison;
    wantOne[0] = x[0] + y[0];
    EXPECT_TRUE(sameValues(got, wantOne)) << "n == 1, round " << round;
  }
  EXPECT_EQ(add->stats().compiles, 4u);
}

// A launch loop that keeps one argument array and changes it in place:
// the same inputs again launch what the last launch did (the binder finds
// its last inputs, and a backend that takes values gets the last encoded
// ones: docs/Dispatch.md), and each change is launched, output pointer and
// scalar alike, then the first inputs again.
TEST_F(BackendConformance, ArgumentsChangedInPlaceAreLaunched) {
  ASSERT_NO_FATAL_FAILURE(start());
  auto module = load("vector_add.mlir");
  ASSERT_TRUE(module);
  auto kernel = module->kernel("add");
  ASSERT_TRUE(kernel.ok()) << kernel.status();
  const int n = 2048;
  std::vector<float> x(n), y(n), got;
  for (int i = 0; i < n; ++i) {
    x[i] = float(i);
    y[i] = 0.25f * i;
  }
  const std::vector<float> poison(n, -1.0f), want = sum(x, y);
  DeviceBuffer *dx, *dy, *outA, *outB;
  ASSERT_OK(upload(x, dx));
  ASSERT_OK(upload(y, dy));
  ASSERT_OK(upload(poison, outA));
  ASSERT_OK(upload(poison, outB));
  LaunchConfig config;
  config.grid = {(n + 1023) / 1024, 1, 1};
  std::vector<Argument> args = {dx->tensor(), dy->tensor(), outA->tensor(),
                                Argument::integer(n)};
  // Launches the array as it is; then what each output holds, reset.
  auto launchAndRead = [&](std::vector<float> &a, std::vector<float> &b) {
    auto launched = (*kernel)->launch(config, args);
    ASSERT_TRUE(launched.ok()) << launched.status();
    EXPECT_TRUE(launched->launched);
    ASSERT_OK(outA->download(a));
    ASSERT_OK(outB->download(b));
    ASSERT_OK(outA->upload(poison));
    ASSERT_OK(outB->upload(poison));
  };
  std::vector<float> a, b, half = poison;
  for (int i = 0; i < n / 2; ++i)
    half[i] = want[i];
  for (int round = 0; round < 2; ++round) {
    SCOPED_TRACE("round " + std::to_string(round));
    ASSERT_NO_FATAL_FAILURE(launchAndRead(a, b));
    EXPECT_TRUE(sameValues(a, want));
    EXPECT_TRUE(sameValues(b, poison));
    ASSERT_NO_FATAL_FAILURE(launchAndRead(a, b)); // the same inputs again
    EXPECT_TRUE(sameValues(a, want)) << "the same inputs again";
    args[2] = outB->tensor();
    ASSERT_NO_FATAL_FAILURE(launchAndRead(a, b));
    EXPECT_TRUE(sameValues(a, poison)) << "the old output was launched";
    EXPECT_TRUE(sameValues(b, want));
    args[3] = Argument::integer(n / 2); // another n of the same key
    ASSERT_NO_FATAL_FAILURE(launchAndRead(a, b));
    EXPECT_TRUE(sameValues(b, half)) << "the old n was launched";
    args[2] = outA->tensor();
    args[3] = Argument::integer(n);
  }
  EXPECT_EQ((*kernel)->stats().compiles, 1u);
}

// The dtype of an !kjit.any parameter is part of the key; a
// do_not_specialize integer is not (16, 17 and 1 share an entry).
TEST_F(BackendConformance, DtypeChangesAndDoNotSpecialize) {
  ASSERT_NO_FATAL_FAILURE(start());
  auto module = Module::fromText(*runtime_, R"mlir(
kjit.kernel @touch(%p: !kjit.any, %n: i32 {kjit.do_not_specialize}) {
  kjit.return
}
)mlir",
                                 "touch.mlir");
  ASSERT_TRUE(module.ok()) << module.status();
  auto kernel = (*module)->kernel("touch");
  ASSERT_TRUE(kernel.ok()) << kernel.status();
  DeviceBuffer *f, *i;
  ASSERT_OK(allocate(64, f));
  ASSERT_OK(allocate(64, i));
  auto compiles = [&](Argument p, int64_t n) {
    Argument args[] = {p, Argument::integer(n)};
    auto result = (*kernel)->launch(LaunchConfig(), args);
    EXPECT_TRUE(result.ok()) << result.status();
    return result.ok() && result->compiled;
  };
  EXPECT_TRUE(compiles(f->tensor(DType::FP32), 16));
  EXPECT_FALSE(compiles(f->tensor(DType::FP32), 17));
  EXPECT_FALSE(compiles(f->tensor(DType::FP32), 1));
  EXPECT_TRUE(compiles(i->tensor(DType::I32), 16));
  EXPECT_FALSE(compiles(i->tensor(DType::I32), 17));
  EXPECT_EQ((*kernel)->stats().compiles, 2u);
  ASSERT_OK(backend_->ref.synchronize(kDevice, 0));
}

// A kernel bakes in the globals it reads: a changed one is an error with
// the reference's message (and runs nothing), or, with the Recompile
// policy, a new compile whose result follows the new value.
TEST_F(BackendConformance, ChangedGlobalIsAnErrorOrRecompiles) {
  ASSERT_NO_FATAL_FAILURE(start());
  auto module = load("scaled_residual.mlir");
  ASSERT_TRUE(module);
  auto kernel = module->kernel("scaled_residual");
  ASSERT_TRUE(kernel.ok()) << kernel.status();
  const int n = 300;
  std::vector<float> x(n), zeros(n, 0.0f), got, half(n), twice(n);
  for (int i = 0; i < n; ++i) {
    x[i] = float(i);
    half[i] = x[i] * 0.5f + 1.0f; // y += x * SCALE + SHIFT, from y = 0
    twice[i] = x[i] * 2.0f + 1.0f;
  }
  DeviceBuffer *dx, *dy;
  ASSERT_OK(upload(x, dx));
  ASSERT_OK(upload(zeros, dy));
  LaunchConfig config;
  config.grid = {2, 1, 1}; // BLOCK = 256
  Argument args[] = {dx->tensor(), dy->tensor(), Argument::integer(n)};
  auto first = (*kernel)->launch(config, args);
  ASSERT_TRUE(first.ok()) << first.status();
  EXPECT_TRUE(first->compiled);
  ASSERT_OK(dy->download(got));
  EXPECT_TRUE(sameValues(got, half)) << "SCALE = 0.5";

  ASSERT_OK(module->setGlobal("SCALE", Argument::fp(2.0)));
  auto changed = (*kernel)->launch(config, args);
  ASSERT_FALSE(changed.ok());
  EXPECT_EQ(changed.status().message(),
            "Global variable SCALE has changed since we compiled this kernel, "
            "from 0.5 to 2.0");
  ASSERT_OK(dy->download(got));
  EXPECT_TRUE(sameValues(got, half)) << "the refused launch ran";

  (*kernel)->setGlobalChangePolicy(GlobalChangePolicy::Recompile);
  ASSERT_OK(dy->upload(zeros));
  auto recompiled = (*kernel)->launch(config, args);
  ASSERT_TRUE(recompiled.ok()) << recompiled.status();
  EXPECT_TRUE(recompiled->compiled);
  ASSERT_OK(dy->download(got));
  EXPECT_TRUE(sameValues(got, twice)) << "SCALE = 2.0";
  EXPECT_EQ((*kernel)->stats().compiles, 2u);

  // Setting the value it already has is not a change.
  ASSERT_OK(module->setGlobal("SCALE", Argument::fp(2.0)));
  ASSERT_OK(dy->upload(zeros));
  auto same = (*kernel)->launch(config, args);
  ASSERT_TRUE(same.ok()) << same.status();
  EXPECT_FALSE(same->compiled);
  ASSERT_OK(dy->download(got));
  EXPECT_TRUE(sameValues(got, twice)) << "SCALE set to 2.0 again";
  EXPECT_EQ((*kernel)->stats().compiles, 2u);
}

// The in-tree trace plugin's hooks: N launches are N launch slices of the
// kernel in its trace file (one compile), and its summary at shutdown
// counts them.
TEST_F(BackendConformance, TracePluginSeesEveryLaunch) {
  std::string plugin = runtimeLibraryDir();
  ASSERT_FALSE(plugin.empty()) << "libkjit-runtime.so is not loaded";
  plugin += "/libkjit-trace.so";
  ASSERT_EQ(access(plugin.c_str(), R_OK), 0) << plugin << " is missing";
  std::string trace = ::testing::TempDir() + "kjit-on-every-backend-" +
                      std::to_string(getpid()) + ".json";
  std::remove(trace.c_str());
  // The plugin reads its file's name from the environment in its init,
  // when the runtime loads it.
  const char *previous = std::getenv("KJIT_TRACE_FILE");
  std::string saved = previous ? previous : "";
  setenv("KJIT_TRACE_FILE", trace.c_str(), 1);
  start({plugin});
  if (previous)
    setenv("KJIT_TRACE_FILE", saved.c_str(), 1);
  else
    unsetenv("KJIT_TRACE_FILE");
  ASSERT_FALSE(HasFatalFailure());
  // The backend is a plugin too.
  std::vector<std::string> names = runtime_->plugins().pluginNames();
  ASSERT_NE(std::find(names.begin(), names.end(), "trace"), names.end());

  const int launches = 5, n = 1000;
  {
    auto module = load("vector_add.mlir");
    ASSERT_TRUE(module);
    Kernel *add = *module->kernel("add");
    std::vector<float> x(n), y(n, 2.0f), got;
    for (int i = 0; i < n; ++i)
      x[i] = float(i);
    DeviceBuffer *dx, *dy, *dout;
    ASSERT_OK(upload(x, dx));
    ASSERT_OK(upload(y, dy));
    ASSERT_OK(allocate(n * sizeof(float), dout));
    Argument args[] = {dx->tensor(), dy->tensor(), dout->tensor(),
                       Argument::integer(n)};
    for (int i = 0; i < launches; ++i) {
      auto result = add->launch(LaunchConfig(), args);
      ASSERT_TRUE(result.ok()) << result.status();
    }
    ASSERT_OK(dout->download(got));
    EXPECT_TRUE(sameValues(got, sum(x, y)));
    EXPECT_EQ(add->stats().compiles, 1u);
  }
  shutDown();

  std::ifstream in(trace);
  ASSERT_TRUE(in) << "no trace file " << trace;
  std::stringstream text;
  text << in.rdbuf();
  std::string json = text.str();
  // One event a line (Trace.c); the file is closed with "]" at fini.
  int launchSlices = 0, compileSlices = 0, failedLaunches = 0, deviceSlices = 0;
  std::istringstream lines(json);
  for (std::string line; std::getline(lines, line);) {
    if (line.find("{\"name\":\"add\",\"cat\":\"launch\"") == 0) {
      ++launchSlices;
      if (line.find("\"status\":0}") == std::string::npos)
        ++failedLaunches;
    }
    if (line.find("{\"name\":\"add\",\"cat\":\"compile\"") == 0)
      ++compileSlices;
    if (line.find("{\"name\":\"add\",\"cat\":\"device\"") == 0)
      ++deviceSlices;
  }
  EXPECT_EQ(launchSlices, launches) << json;
  EXPECT_EQ(failedLaunches, 0) << json;
  EXPECT_EQ(compileSlices, 1) << json;
  // The plugin's launch_complete hook asks every launch's device time
  // (ABI 1.2); the host and cuda backends report one for each launch.
  EXPECT_EQ(deviceSlices, launches) << json;
  EXPECT_EQ(json.substr(json.size() < 3 ? 0 : json.size() - 3), "\n]\n")
      << "the trace was not closed at shutdown";
  // The summary line of the kernel: compiles, compile ms, launches.
  int summaries = 0;
  for (const std::string &line : logLines()) {
    char name[64];
    unsigned long compiles = 0, count = 0;
    double ms = 0;
    if (std::sscanf(line.c_str(), "trace: %63s %lu %lf %lu", name, &compiles,
                    &ms, &count) == 4 &&
        std::strcmp(name, "add") == 0) {
      ++summaries;
      EXPECT_EQ(compiles, 1u) << line;
      EXPECT_EQ(count, unsigned(launches)) << line;
    }
  }
  EXPECT_EQ(summaries, 1);
  std::remove(trace.c_str());
}

// warmup compiles from mock tensors without launching; aligned device
// buffers then select that entry, and its record preloads into a fresh
// module of the same runtime with no compile at launch.
TEST_F(BackendConformance, WarmupCompilesOnceWithoutLaunching) {
  ASSERT_NO_FATAL_FAILURE(start());
  auto module = load("vector_add.mlir");
  ASSERT_TRUE(module);
  Kernel *kernel = *module->kernel("add");
  Argument mocks[] = {Argument::mockTensor(DType::FP32),
                      Argument::mockTensor(DType::FP32),
                      Argument::mockTensor(DType::FP32), Argument::integer(8)};
  auto record = kernel->warmup(mocks, {}, kDevice);
  ASSERT_TRUE(record.ok()) << record.status();
  EXPECT_EQ(kernel->stats().compiles, 1u);

  std::vector<float> x = {1, 2, 3, 4, 5, 6, 7, 8}, zeros(8, 0.0f),
                     poison(8, -1.0f), got;
  DeviceBuffer *dx, *dy, *dout;
  ASSERT_OK(upload(x, dx));
  ASSERT_OK(upload(zeros, dy));
  ASSERT_OK(upload(poison, dout));
  // The backend's allocations are aligned: the warmed-up entry.
  Argument args[] = {dx->tensor(), dy->tensor(), dout->tensor(),
                     Argument::integer(8)};
  auto result = kernel->launch(LaunchConfig(), args);
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_TRUE(result->launched);
  EXPECT_FALSE(result->compiled);
  ASSERT_OK(dout->download(got));
  EXPECT_TRUE(sameValues(got, x)) << "the warmed-up entry";
  EXPECT_EQ(kernel->stats().compiles, 1u);

  auto other = load("vector_add.mlir");
  ASSERT_TRUE(other);
  Kernel *fresh = *other->kernel("add");
  // preload builds the entry from the record (without a disk cache, it
  // compiles there and then), so that the launch compiles nothing.
  ASSERT_OK(fresh->preload(toJson(*record), kDevice));
  EXPECT_EQ(fresh->stats().compiles, 1u);
  ASSERT_OK(dout->upload(poison));
  auto preloaded = fresh->launch(LaunchConfig(), args);
  ASSERT_TRUE(preloaded.ok()) << preloaded.status();
  EXPECT_TRUE(preloaded->launched);
  EXPECT_FALSE(preloaded->compiled);
  ASSERT_OK(dout->download(got));
  EXPECT_TRUE(sameValues(got, x)) << "the preloaded entry";
  EXPECT_EQ(fresh->stats().compiles, 1u);
  EXPECT_EQ(fresh->preload("{").message().substr(0, 21),
            "specialization record");
}

// Eight threads launch one new specialization at once: one compiles, the
// others wait for it, and all eight compute.
TEST_F(BackendConformance, EightThreadsCompileOnce) {
  ASSERT_NO_FATAL_FAILURE(start());
  auto module = load("vector_add.mlir");
  ASSERT_TRUE(module);
  Kernel *kernel = *module->kernel("add");
  const int threads = 8, n = 64;
  std::vector<float> x(n), y(n), poison(n, -1.0f), want;
  for (int i = 0; i < n; ++i) {
    x[i] = 3.0f * i;
    y[i] = 4.0f;
  }
  want = sum(x, y);
  DeviceBuffer *dx, *dy;
  ASSERT_OK(upload(x, dx));
  ASSERT_OK(upload(y, dy));
  std::vector<DeviceBuffer *> outs(threads);
  for (DeviceBuffer *&out : outs)
    ASSERT_OK(upload(poison, out));

  std::atomic<int> waiting{threads}, failures{0}, compiled{0};
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t)
    pool.emplace_back([&, t] {
      Argument args[] = {dx->tensor(), dy->tensor(), outs[t]->tensor(),
                         Argument::integer(n)};
      // All start together.
      waiting.fetch_sub(1);
      while (waiting.load() > 0)
        std::this_thread::yield();
      auto result = kernel->launch(LaunchConfig(), args);
      if (!result.ok()) {
        std::fprintf(stderr, "thread %d: %s\n", t,
                     std::string(result.status().message()).c_str());
        ++failures;
      } else if (result->compiled) {
        ++compiled;
      }
    });
  for (auto &thread : pool)
    thread.join();
  EXPECT_EQ(failures.load(), 0);
  EXPECT_EQ(compiled.load(), 1);
  EXPECT_EQ(kernel->stats().compiles, 1u);
  for (int t = 0; t < threads; ++t) {
    std::vector<float> got;
    ASSERT_OK(outs[t]->download(got));
    EXPECT_TRUE(sameValues(got, want)) << "thread " << t;
  }
}

// A zero extent in any dimension compiles the kernel and runs no program;
// the entry then runs a real grid without compiling again.
TEST_F(BackendConformance, EmptyGridCompilesAndRunsNothing) {
  ASSERT_NO_FATAL_FAILURE(start());
  auto module = load("vector_add.mlir");
  ASSERT_TRUE(module);
  Kernel *kernel = *module->kernel("add");
  std::vector<float> x = {1, 2, 3, 4}, y = {1, 1, 1, 1}, poison(4, -1.0f), got;
  DeviceBuffer *dx, *dy, *dout;
  ASSERT_OK(upload(x, dx));
  ASSERT_OK(upload(y, dy));
  ASSERT_OK(upload(poison, dout));
  Argument args[] = {dx->tensor(), dy->tensor(), dout->tensor(),
                     Argument::integer(4)};
  for (Grid grid : {Grid{0, 1, 1}, Grid{1, 0, 1}, Grid{1, 1, 0}}) {
    LaunchConfig config;
    config.grid = grid;
    auto result = kernel->launch(config, args);
    ASSERT_TRUE(result.ok()) << result.status();
    EXPECT_TRUE(result->launched);
  }
  EXPECT_EQ(kernel->stats().compiles, 1u);
  ASSERT_OK(dout->download(got));
  EXPECT_TRUE(sameValues(got, poison)) << "an empty grid ran a program";
  auto ran = kernel->launch(LaunchConfig(), args);
  ASSERT_TRUE(ran.ok()) << ran.status();
  EXPECT_FALSE(ran->compiled);
  ASSERT_OK(dout->download(got));
  EXPECT_TRUE(sameValues(got, sum(x, y)));
}

} // namespace

// A device assert that fails under `debug` (matmul asserts 256 threads per
// program; launched with 4 warps) is reported with the kernel's name, and
// the next launch of another kernel in the same process behaves as
// docs/HostBackend.md and docs/CudaBackend.md say: on the host the assert
// fails its own launch and the next one runs; on cuda the context is
// unusable from then on, every later call says so, and the process goes
// on. On another target the assert is reported (by the launch or the next
// synchronize) with the kernel's name, and the next launch either runs or
// fails with a message; the process goes on either way. In a process of
// its own (a death test re-executes this binary), so that the context it
// spoils is no other test's.
void failAssertThenLaunchAnother(Runtime &runtime, const Backend &backend) {
  auto matmulModule = loadKernel(runtime, "matmul.mlir");
  auto addModule = loadKernel(runtime, "vector_add.mlir");
  if (!matmulModule.ok() || !addModule.ok())
    std::_Exit(10);
  Kernel *matmul = *(*matmulModule)->kernel("matmul");
  Kernel *add = *(*addModule)->kernel("add");
  DeviceBuffer a(backend, 256 * 4), b(backend, 256 * 4), c(backend, 256 * 4);
  if (!a.status().ok() || !b.status().ok() || !c.status().ok())
    std::_Exit(11);
  Argument matmulArgs[] = {a.tensor(),
                           b.tensor(),
                           c.tensor(),
                           Argument::integer(16),
                           Argument::integer(16),
                           Argument::integer(16),
                           Argument::integer(16),
                           Argument::integer(16),
                           Argument::integer(16)};
  KeywordArgument debug[] = {{"debug", Argument::boolean(true)},
                             {"num_warps", Argument::integer(4)}};
  LaunchConfig config;
  absl::StatusOr<LaunchResult> failed =
      matmul->launch(config, matmulArgs, debug);
  // The host reports the assert from the launch itself; cuda enqueues it,
  // and the next call finds it.
  absl::Status found = failed.status();
  if (found.ok())
    found = backend.ref.synchronize(kDevice, 0);
  std::string message(found.message());
  std::fprintf(stderr, "the assert: %s\n", message.c_str());
  const bool host = backend.target == "host";
  const bool cuda = backend.target == "cuda";
  const bool reported =
      host   ? message.find("device assert failed in kernel matmul") !=
                       std::string::npos &&
                   message.find("matmul runs 256 threads per program") !=
                       std::string::npos
      : cuda ? message.find("CUDA_ERROR_ASSERT") != std::string::npos &&
                   message.find("'matmul'") != std::string::npos
             : !found.ok() && message.find("matmul") != std::string::npos;
  if (!reported)
    std::_Exit(12);

  Argument addArgs[] = {a.tensor(), b.tensor(), c.tensor(),
                        Argument::integer(8)};
  absl::StatusOr<LaunchResult> next = add->launch(config, addArgs);
  absl::Status after = next.status();
  if (after.ok())
    after = backend.ref.synchronize(kDevice, 0);
  std::fprintf(stderr, "the next launch: %s\n",
               after.ok() ? "ok" : std::string(after.message()).c_str());
  if (host ? !after.ok()
      : cuda
          ? after.ok() || std::string(after.message())
                                  .find("unusable after CUDA_ERROR_ASSERT") ==
                              std::string::npos
          : !after.ok() && after.message().empty())
    std::_Exit(13);
  std::fflush(stderr);
  std::_Exit(0);
}

TEST_F(BackendConformance, FailedDeviceAssertUnderDebug) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        start();
        failAssertThenLaunchAnother(*runtime_, *backend_);
      },
      ::testing::ExitedWithCode(0), "the next launch: ");
}

namespace {

/// The target of the backend the plugin at `path` registers, from its
/// describe of device 0: the one backend, or the one named `--target`.
absl::StatusOr<std::string> pluginTarget(const std::string &path) {
  kjit::plugin::PluginHost host([](kjit::plugin::LogLevel,
                                   std::string_view source,
                                   std::string_view message) {
    std::fprintf(stderr, "%.*s: %.*s\n", int(source.size()), source.data(),
                 int(message.size()), message.data());
  });
  absl::Status loaded = host.loadPlugin(path);
  if (!loaded.ok())
    return loaded;
  std::vector<kjit::plugin::BackendRef> backends = host.backends();
  if (backends.size() != 1) {
    host.shutdown();
    return absl::InvalidArgumentError(
        path + " registers " + std::to_string(backends.size()) +
        " backends; name the target to test with --target");
  }
  auto description = backends[0].describe(0);
  host.shutdown();
  if (!description.ok())
    return description.status();
  return description->target;
}

} // namespace

int main(int argc, char **argv) {
  // Our flags go into the environment (a death test's child process runs
  // with it); the rest are GoogleTest's.
  std::vector<char *> rest;
  std::string target;
  for (int i = 0; i < argc; ++i) {
    std::string_view arg = argv[i];
    if (i > 0 && arg.rfind("--backend=", 0) == 0)
      setenv("KJIT_TEST_BACKEND", argv[i] + 10, 1);
    else if (i > 0 && arg.rfind("--target=", 0) == 0)
      target = argv[i] + 9;
    else if (i > 0 && (arg == "--help" || arg == "-h")) {
      std::printf(
          "usage: %s [--backend=NAME|PATH] [--target=TARGET] [GoogleTest "
          "flags]\n"
          "  --backend  an in-tree backend by its target (host, cuda), or "
          "the path\n"
          "             of a backend plugin (default $KJIT_TEST_BACKEND, "
          "else host)\n"
          "  --target   the target the plugin's backend serves (default: "
          "its describe)\n"
          "docs/Conformance.md says what it checks.\n\n",
          argv[0]);
      rest.push_back(argv[i]);
    } else
      rest.push_back(argv[i]);
  }
  if (!target.empty())
    setenv("KJIT_TEST_TARGET", target.c_str(), 1);
  if (backendIsPlugin() && !std::getenv("KJIT_TEST_TARGET")) {
    absl::StatusOr<std::string> found = pluginTarget(backendArgument());
    if (!found.ok()) {
      std::fprintf(stderr, "kjit-backend-conformance: %s: %s\n",
                   backendArgument().c_str(),
                   std::string(found.status().message()).c_str());
      return 2;
    }
    setenv("KJIT_TEST_TARGET", found->c_str(), 1);
  }
  // No disk cache: the compiles a test counts are its own (each runtime
  // also passes an empty cache directory).
  setenv("KJIT_CACHE_DIR", "", 1);
  // A death test runs this program again by argv[0], without a PATH
  // search: the program as found in PATH must be named by its file.
  std::string self(4096, '\0');
  ssize_t length = readlink("/proc/self/exe", self.data(), self.size() - 1);
  if (length > 0) {
    self.resize(size_t(length));
    rest[0] = self.data();
  }
  int count = int(rest.size());
  rest.push_back(nullptr);
  ::testing::InitGoogleTest(&count, rest.data());
  std::printf("kjit-backend-conformance: backend %s, target %s\n",
              backendArgument().c_str(), targetName().c_str());
  return RUN_ALL_TESTS();
}
