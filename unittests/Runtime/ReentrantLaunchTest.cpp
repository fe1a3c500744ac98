//===- ReentrantLaunchTest.cpp - launches from a compile's own hooks ------===//
//
// A cache or compiled hook (a plugin's, through the C ABI) may launch
// kernels (docs/Runtime.md, "Re-entry"): another specialization compiles and
// runs. A launch of the specialization whose compile the hook is part of
// could only wait for itself, on this thread or through threads whose hooks
// wait for each other's compiles: it is refused with a message, and the
// launch around it goes on. The plugin (test/Runtime/Inputs/ReentrantHooks.c)
// calls kjit_test_reentrant_hook, which this binary exports, from both hooks.
//
//===----------------------------------------------------------------------===//

#include "kjit/Runtime/Runtime.h"

#include <gtest/gtest.h>

#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <future>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>

using namespace kjit::rt;

namespace {

/// o[0] = C: the value a launch wrote says which specialization ran.
constexpr const char *kStoresItsConstexpr = R"mlir(
kjit.kernel @k(%o: !kjit.ptr<i32>, %C: i32 {kjit.constexpr}) {
  %c0 = arith.constant 0 : i32
  kjit.store %C, %o[%c0] : i32, !kjit.ptr<i32>, i32
  kjit.return
}
)mlir";

enum class Hook { Cache = 0, Compiled = 1 };

/// What the hooks do, set by each test.
std::function<void(Hook)> onHook;
std::mutex onHookMutex;

/// A thread acts in the hooks of its outermost compile only: the compiles
/// its own launches start run the hooks too.
thread_local bool inHook = false;

} // namespace

extern "C" __attribute__((visibility("default"))) void
kjit_test_reentrant_hook(int hook, const char *repr, size_t reprLength) {
  (void)repr;
  (void)reprLength;
  std::function<void(Hook)> act;
  {
    std::lock_guard<std::mutex> lock(onHookMutex);
    act = onHook;
  }
  if (inHook || !act)
    return;
  inHook = true;
  act(Hook(hook));
  inHook = false;
}

namespace {

/// Sets what the hooks do for the scope.
struct HooksDo {
  explicit HooksDo(std::function<void(Hook)> action) {
    std::lock_guard<std::mutex> lock(onHookMutex);
    onHook = std::move(action);
  }
  ~HooksDo() {
    std::lock_guard<std::mutex> lock(onHookMutex);
    onHook = nullptr;
  }
};

/// Runs `body`, and ends the test binary if it has not returned within a
/// minute: a launch that waits for itself never returns, and nothing can
/// unblock its thread.
void withinAMinute(const std::function<void()> &body) {
  std::packaged_task<void()> task(body);
  std::future<void> done = task.get_future();
  std::thread thread(std::move(task));
  if (done.wait_for(std::chrono::minutes(1)) != std::future_status::ready) {
    std::fprintf(stderr, "a launch from a hook did not return within a "
                         "minute: it waits for a compile that waits for it\n");
    std::_Exit(1);
  }
  thread.join();
  done.get();
}

struct Outcome {
  int32_t value = -1; // what the launch wrote; -1 when it failed
  std::string error;
};

Outcome launchC(Kernel &kernel, int64_t c) {
  int32_t cell = -1;
  Argument args[] = {
      Argument::tensor(reinterpret_cast<uintptr_t>(&cell), DType::I32),
      Argument::integer(c)};
  auto launched = kernel.launch(LaunchConfig(), args);
  if (!launched.ok())
    return {-1, std::string(launched.status().message())};
  return {cell, std::string()};
}

Outcome warmupC(Kernel &kernel, int64_t c) {
  int32_t cell = -1;
  Argument args[] = {
      Argument::tensor(reinterpret_cast<uintptr_t>(&cell), DType::I32),
      Argument::integer(c)};
  auto warmed = kernel.warmup(args);
  if (!warmed.ok())
    return {-1, std::string(warmed.status().message())};
  return {0, std::string()};
}

/// A runtime with the hook plugin and no disk cache, and kernel @k.
struct Loaded {
  std::unique_ptr<Runtime> runtime;
  std::shared_ptr<Module> module;
  Kernel *kernel = nullptr;
};

Loaded load() {
  Loaded loaded;
  RuntimeOptions options;
  options.readEnvironment = false;
  options.plugins = {KJIT_REENTRANT_PLUGIN};
  auto runtime = Runtime::create(options);
  EXPECT_TRUE(runtime.ok()) << runtime.status();
  if (!runtime.ok())
    return loaded;
  loaded.runtime = std::move(*runtime);
  EXPECT_EQ(loaded.runtime->plugins().pluginNames().size(), 1u);
  auto module =
      Module::fromText(*loaded.runtime, kStoresItsConstexpr, "reentrant.mlir");
  EXPECT_TRUE(module.ok()) << module.status();
  if (!module.ok())
    return loaded;
  loaded.module = *module;
  auto kernel = loaded.module->kernel("k");
  EXPECT_TRUE(kernel.ok()) << kernel.status();
  loaded.kernel = kernel.ok() ? *kernel : nullptr;
  return loaded;
}

constexpr const char *kOwnCompile =
    "kernel 'k' cannot be launched with this specialization here: this "
    "thread is compiling it, and the launch comes from a hook or callback "
    "of that compile; waiting for it would never end";

// From each hook of a compile, a launch and a warmup of the same
// specialization are refused; the compile and its launch go on.
TEST(ReentrantLaunch, TheSpecializationBeingCompiledIsRefusedFromItsHooks) {
  for (Hook which : {Hook::Cache, Hook::Compiled}) {
    SCOPED_TRACE(which == Hook::Cache ? "cache hook" : "compiled hook");
    Loaded loaded = load();
    ASSERT_NE(loaded.kernel, nullptr);
    Kernel &kernel = *loaded.kernel;
    Outcome nested, warmed, outer;
    {
      HooksDo hooks([&](Hook hook) {
        if (hook != which)
          return;
        nested = launchC(kernel, 7);
        warmed = warmupC(kernel, 7);
      });
      withinAMinute([&] { outer = launchC(kernel, 7); });
    }
    EXPECT_EQ(outer.value, 7) << outer.error;
    EXPECT_EQ(nested.value, -1);
    EXPECT_NE(nested.error.find(kOwnCompile), std::string::npos)
        << nested.error;
    EXPECT_NE(warmed.error.find(kOwnCompile), std::string::npos)
        << warmed.error;
    // Compiled once, and launchable from now on.
    EXPECT_EQ(kernel.stats().compiles, 1u);
    EXPECT_EQ(launchC(kernel, 7).value, 7);
  }
}

// Another specialization, launched from the hooks of a compile, compiles
// and runs inside it.
TEST(ReentrantLaunch, AnotherSpecializationRunsFromTheHooks) {
  for (Hook which : {Hook::Cache, Hook::Compiled}) {
    SCOPED_TRACE(which == Hook::Cache ? "cache hook" : "compiled hook");
    Loaded loaded = load();
    ASSERT_NE(loaded.kernel, nullptr);
    Kernel &kernel = *loaded.kernel;
    Outcome nested, outer;
    {
      HooksDo hooks([&](Hook hook) {
        if (hook == which)
          nested = launchC(kernel, 8);
      });
      withinAMinute([&] { outer = launchC(kernel, 7); });
    }
    EXPECT_EQ(outer.value, 7) << outer.error;
    EXPECT_EQ(nested.value, 8) << nested.error;
    EXPECT_EQ(kernel.stats().compiles, 2u);
  }
}

// Two threads compile C=1 and C=2; the cache hook of each launches the
// other's specialization once both are inside their hooks. Each would wait
// for the other's compile, which waits for it: the second of the two to
// ask is refused, and then everything finishes.
TEST(ReentrantLaunch, ThreadsWhoseHooksWaitForEachOtherAreRefused) {
  Loaded loaded = load();
  ASSERT_NE(loaded.kernel, nullptr);
  Kernel &kernel = *loaded.kernel;
  std::mutex mutex;
  std::condition_variable arrived;
  int inside = 0;
  thread_local int64_t launchFromHook = 0;
  thread_local Outcome *nestedOutcome = nullptr;
  Outcome nestedOf1, nestedOf2, outer1, outer2;
  {
    HooksDo hooks([&](Hook hook) {
      if (hook != Hook::Cache)
        return;
      {
        std::unique_lock<std::mutex> lock(mutex);
        ++inside;
        arrived.notify_all();
        ASSERT_TRUE(arrived.wait_for(lock, std::chrono::seconds(30),
                                     [&] { return inside == 2; }));
      }
      *nestedOutcome = launchC(kernel, launchFromHook);
    });
    withinAMinute([&] {
      std::thread first([&] {
        launchFromHook = 2;
        nestedOutcome = &nestedOf1;
        outer1 = launchC(kernel, 1);
      });
      std::thread second([&] {
        launchFromHook = 1;
        nestedOutcome = &nestedOf2;
        outer2 = launchC(kernel, 2);
      });
      first.join();
      second.join();
    });
  }
  EXPECT_EQ(outer1.value, 1) << outer1.error;
  EXPECT_EQ(outer2.value, 2) << outer2.error;
  const std::string cycle =
      "cannot be launched with this specialization here: the thread "
      "compiling it waits, through launches from hooks, for a compile this "
      "thread is running; waiting for it would never end";
  bool firstRefused = nestedOf1.error.find(cycle) != std::string::npos;
  bool secondRefused = nestedOf2.error.find(cycle) != std::string::npos;
  EXPECT_NE(firstRefused, secondRefused)
      << "from the first thread's hook: " << nestedOf1.error
      << "\nfrom the second's: " << nestedOf2.error;
  if (firstRefused) {
    EXPECT_EQ(nestedOf2.value, 1) << nestedOf2.error;
  }
  if (secondRefused) {
    EXPECT_EQ(nestedOf1.value, 2) << nestedOf1.error;
  }
}

} // namespace
