//===- ReliabilityTest.cpp - kernels outlive neither host nor fd limit ----===//
//
// Reliability findings of issue 12 that only an embedder sees: a plugin
// host shut down before the kernels are destroyed still unloads them,
// and loaded kernels hold no file descriptor each. Both run the host
// backend for real.
//
//===----------------------------------------------------------------------===//

#include "kjit/Cache/DiskCache.h"
#include "kjit/Runtime/Runtime.h"

#include <gtest/gtest.h>

#include <climits>
#include <dirent.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <mutex>
#include <string>
#include <vector>

using namespace kjit::rt;
using kjit::plugin::LogLevel;

namespace {

std::string example(const char *name) {
  return std::string(KJIT_EXAMPLES_DIR) + "/" + name;
}

/// Launches vector_add with BLOCK = `block` (a constexpr: one compile and
/// one loaded kernel per value) and checks out = x + y.
void launchAdd(Kernel &kernel, int64_t block, std::string &error) {
  std::vector<float> x(64, 1), y(64, 2), out(64, 0);
  Argument args[] = {
      Argument::tensor(uintptr_t(x.data()), DType::FP32, /*readOnly=*/true),
      Argument::tensor(uintptr_t(y.data()), DType::FP32, /*readOnly=*/true),
      Argument::tensor(uintptr_t(out.data()), DType::FP32),
      Argument::integer(64)};
  KeywordArgument keywords[] = {{"BLOCK", Argument::integer(block)}};
  auto result = kernel.launch(LaunchConfig(), args, keywords);
  if (!result.ok()) {
    error = std::string(result.status().message());
    return;
  }
  for (float v : out)
    if (v != 3.0f) {
      error = "BLOCK=" + std::to_string(block) + ": wrong result";
      return;
    }
}

unsigned openDescriptors() {
  unsigned n = 0;
  DIR *dir = opendir("/proc/self/fd");
  if (!dir)
    return 0;
  while (readdir(dir))
    ++n;
  closedir(dir);
  return n;
}

// The application shuts the plugin host down first, then drops its
// module: the kernels are unloaded at shutdown, while the backend still
// answers, not left behind with an unload that reaches a dead plugin.
TEST(Reliability, KernelsUnloadBeforeThePluginHostShutsDown) {
  std::mutex mutex;
  std::vector<std::string> messages;
  RuntimeOptions options;
  options.readEnvironment = false;
  options.logSink = [&](LogLevel, std::string_view source,
                        std::string_view message) {
    std::lock_guard<std::mutex> lock(mutex);
    messages.push_back(std::string(source) + ": " + std::string(message));
  };
  auto runtime = Runtime::create(options);
  ASSERT_TRUE(runtime.ok()) << runtime.status();
  auto module = Module::load(**runtime, example("vector_add.mlir"));
  ASSERT_TRUE(module.ok()) << module.status();
  Kernel *kernel = *(*module)->kernel("add");
  std::string error;
  launchAdd(*kernel, 64, error);
  launchAdd(*kernel, 128, error);
  ASSERT_EQ(error, "");

  (*runtime)->plugins().shutdown();
  // A launch after shutdown is refused; it never reaches the unloaded code.
  launchAdd(*kernel, 64, error);
  EXPECT_NE(error.find("has been shut down"), std::string::npos) << error;
  module->reset();
  std::lock_guard<std::mutex> lock(mutex);
  for (const std::string &message : messages)
    EXPECT_EQ(message.find("not unloaded"), std::string::npos) << message;
}

// Program ids are i32; the runtime refuses a larger extent on any
// axis (also one a grid callback computes) instead of launching programs
// with negative ids, and launches the largest allowed one's neighbour fine.
TEST(Reliability, GridExtentsFitTheProgramIdType) {
  auto module = Module::load(example("vector_add.mlir"));
  ASSERT_TRUE(module.ok()) << module.status();
  Kernel *kernel = *(*module)->kernel("add");
  std::vector<float> x(16, 1), out(16, 0);
  Argument args[] = {Argument::tensor(uintptr_t(x.data()), DType::FP32),
                     Argument::tensor(uintptr_t(x.data()), DType::FP32),
                     Argument::tensor(uintptr_t(out.data()), DType::FP32),
                     Argument::integer(16)};
  for (int axis = 0; axis < 3; ++axis) {
    LaunchConfig config;
    config.grid[axis] = uint32_t(INT32_MAX) + 1;
    auto result = kernel->launch(config, args);
    ASSERT_FALSE(result.ok());
    EXPECT_NE(std::string(result.status().message())
                  .find("program ids are i32, so each extent is at most "
                        "2147483647"),
              std::string::npos)
        << result.status();
  }
  LaunchConfig computed;
  computed.gridFn = [](absl::Span<const Argument>) {
    return Grid{UINT32_MAX, 1, 1};
  };
  auto result = kernel->launch(computed, args);
  ASSERT_FALSE(result.ok());
  EXPECT_NE(
      std::string(result.status().message()).find("on grid (4294967295, 1, 1)"),
      std::string::npos)
      << result.status();
  auto fine = kernel->launch(LaunchConfig(), args);
  ASSERT_TRUE(fine.ok()) << fine.status();
  EXPECT_EQ(out[15], 2.0f);
}

// Over a hundred loaded kernels under an RLIMIT_NOFILE of a few dozen
// above what the process has open: a kernel holds no descriptor.
TEST(Reliability, ManyLoadedKernelsNeedNoFileDescriptorEach) {
  auto module = Module::load(example("vector_add.mlir"));
  ASSERT_TRUE(module.ok()) << module.status();
  Kernel *kernel = *(*module)->kernel("add");
  std::string error;
  launchAdd(*kernel, 64, error); // opens the compiler and the backend
  ASSERT_EQ(error, "");

  rlimit saved;
  ASSERT_EQ(getrlimit(RLIMIT_NOFILE, &saved), 0);
  unsigned before = openDescriptors();
  rlimit low = saved;
  low.rlim_cur = before + 24;
  ASSERT_EQ(setrlimit(RLIMIT_NOFILE, &low), 0);
  constexpr int kKernels = 120;
  for (int b = 2; b <= kKernels && error.empty(); ++b)
    launchAdd(*kernel, 64 * b, error);
  unsigned after = openDescriptors();
  ASSERT_EQ(setrlimit(RLIMIT_NOFILE, &saved), 0);
  EXPECT_EQ(error, "");
  EXPECT_EQ(kernel->stats().compiles, uint64_t(kKernels));
  EXPECT_LT(after, before + 8) << "descriptors: " << before << " -> " << after;
}

} // namespace

// fork after a launch (issue 12): the child has none of the host pool's
// helper threads, and a launch of several programs must not wait for them.
// The child re-creates the pool on its first launch; an alarm turns a hang
// into a failure instead of a stuck test.
TEST(Reliability, ForkAfterALaunchLeavesTheChildAbleToLaunch) {
  auto module = Module::load(example("vector_add.mlir"));
  ASSERT_TRUE(module.ok()) << module.status();
  Kernel *kernel = *(*module)->kernel("add");
  auto launch = [&](std::string &error) {
    std::vector<float> x(64, 1), y(64, 2), out(64, 0);
    Argument args[] = {Argument::tensor(uintptr_t(x.data()), DType::FP32),
                       Argument::tensor(uintptr_t(y.data()), DType::FP32),
                       Argument::tensor(uintptr_t(out.data()), DType::FP32),
                       Argument::integer(64)};
    KeywordArgument keywords[] = {{"BLOCK", Argument::integer(16)}};
    LaunchConfig config;
    config.grid = {4, 1, 1}; // four programs: the pool's helpers take part
    auto result = kernel->launch(config, args, keywords);
    if (!result.ok())
      error = std::string(result.status().message());
    else if (out[0] != 3.0f || out[63] != 3.0f)
      error = "wrong result";
  };
  std::string error;
  launch(error);
  ASSERT_EQ(error, "");
  pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    alarm(60);
    std::string childError;
    launch(childError);
    launch(childError);
    _exit(childError.empty() ? 0 : 1);
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status)) << "the child died of signal "
                                 << (WIFSIGNALED(status) ? WTERMSIG(status) : 0)
                                 << " (SIGALRM: its launch hung)";
  EXPECT_EQ(WEXITSTATUS(status), 0) << "the child's launch failed";
  launch(error); // the parent's pool is untouched
  EXPECT_EQ(error, "");
}

// A cached artifact whose target metadata gives its launches a dynamic
// shared memory that is not a byte count (a damaged or foreign entry whose
// checksum holds) is rejected and compiled again, never launched with it.
TEST(Reliability, ACachedKernelWithABadSharedMemoryCountIsCompiledAgain) {
  char dir[] = "/tmp/kjit-bad-shared-XXXXXX";
  ASSERT_NE(mkdtemp(dir), nullptr);
  auto launchOnce = [&](bool &compiled, bool &diskHit) {
    RuntimeOptions options;
    options.readEnvironment = false;
    options.cacheDirectory = std::string(dir);
    options.logSink = [](LogLevel, std::string_view, std::string_view) {};
    auto runtime = Runtime::create(options);
    ASSERT_TRUE(runtime.ok()) << runtime.status();
    auto module = Module::load(**runtime, example("vector_add.mlir"));
    ASSERT_TRUE(module.ok()) << module.status();
    Kernel *kernel = *(*module)->kernel("add");
    std::vector<float> x(64, 1.0f), y(64, 2.0f), out(64, 0.0f);
    Argument args[] = {Argument::tensor(uintptr_t(x.data()), DType::FP32),
                       Argument::tensor(uintptr_t(y.data()), DType::FP32),
                       Argument::tensor(uintptr_t(out.data()), DType::FP32),
                       Argument::integer(64)};
    auto result = kernel->launch(LaunchConfig(), args);
    ASSERT_TRUE(result.ok()) << result.status();
    EXPECT_EQ(out[63], 3.0f);
    compiled = result->compiled;
    diskHit = result->diskHit;
    if (compiled) {
      // Damage the entry the compile stored, through the cache's own
      // writer (so the checksum holds): its launches would need -5 bytes.
      kjit::cache::DiskCache *disk = (*runtime)->diskCache();
      ASSERT_NE(disk, nullptr);
      for (const kjit::cache::Listing &listing : disk->list()) {
        auto entry = disk->read(listing.key);
        ASSERT_TRUE(entry.ok()) << entry.status();
        if (entry->kind != kjit::cache::EntryKind::Artifact)
          continue;
        size_t at = entry->metadata.find("\"compiler\":{");
        ASSERT_NE(at, std::string::npos) << entry->metadata;
        entry->metadata.insert(at + 12, "\"shared_dynamic_bytes\":-5,");
        ASSERT_TRUE(disk->put(*entry));
      }
    }
    module->reset();
  };
  bool compiled = false, diskHit = false;
  launchOnce(compiled, diskHit);
  EXPECT_TRUE(compiled);
  launchOnce(compiled, diskHit);
  EXPECT_TRUE(compiled) << "the damaged entry was used";
  EXPECT_FALSE(diskHit);
  std::string command = std::string("rm -rf ") + dir;
  EXPECT_EQ(std::system(command.c_str()), 0);
}
