//===- LaunchHooksTest.cpp - launch hooks and launch metadata -------------===//
//
// A kernel's launch-metadata callback reaches the launch hooks of a loaded
// plugin (the test plugin prints every event to stderr), loaded into a
// runtime of the test's own; without a launch hook it never runs, and a
// cache hit allocates nothing (AllocCounter.h counts operator new here).
//
//===----------------------------------------------------------------------===//

#include "AllocCounter.h"

#include "kjit/Runtime/Runtime.h"

#include <gtest/gtest.h>

#include <atomic>
#include <string>
#include <thread>
#include <vector>

using namespace kjit::rt;

namespace {

TEST(LaunchHooks, MetadataCallbackReachesTheHooks) {
  RuntimeOptions options;
  options.plugins = {KJIT_TEST_PLUGIN};
  auto runtime = Runtime::create(options);
  ASSERT_TRUE(runtime.ok()) << runtime.status();
  ASSERT_EQ((*runtime)->plugins().pluginNames().size(), 1u);
  auto module = Module::load(**runtime, std::string(KJIT_EXAMPLES_DIR) +
                                            "/vector_add.mlir");
  ASSERT_TRUE(module.ok()) << module.status();
  Kernel *kernel = *(*module)->kernel("add");
  kernel->setLaunchMetadata([](absl::Span<const Argument> bound) {
    // 1 flop per element: n is the fourth parameter.
    return "\"flops\": " + std::to_string(int64_t(bound[3].asInt()));
  });
  alignas(64) float x[16] = {}, out[16] = {};
  Argument args[] = {Argument::tensor(uintptr_t(x), DType::FP32),
                     Argument::tensor(uintptr_t(x), DType::FP32),
                     Argument::tensor(uintptr_t(out), DType::FP32),
                     Argument::integer(16)};
  ::testing::internal::CaptureStderr();
  auto result = kernel->launch(LaunchConfig(), args);
  std::string log = ::testing::internal::GetCapturedStderr();
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_NE(log.find("launch_enter kernel=add"), std::string::npos) << log;
  EXPECT_NE(log.find("metadata={\"flops\": 16}"), std::string::npos) << log;
  EXPECT_NE(log.find("launch_exit kernel=add"), std::string::npos) << log;
  // The hooks see the arguments as the backend gets them: as storage.
  EXPECT_NE(log.find("launch arg n: i32 = 16 [dtype=4 flags=0x0 bits=0x10 "
                     "size=4]"),
            std::string::npos)
      << log;
  EXPECT_NE(log.find("launch arg x: *kfp32 = 0x"), std::string::npos) << log;
  EXPECT_NE(log.find("[dtype=12 flags=0x3 bits=0x"), std::string::npos) << log;
}

// The callback may be replaced while other threads launch the kernel with a
// launch_enter hook loaded: each launch calls the callback it found (kept
// alive for it), so every launch's metadata is one of those set.
// LaunchMetadataTest runs the slot itself under ThreadSanitizer.
TEST(LaunchHooks, MetadataCallbackCanBeReplacedDuringLaunches) {
  RuntimeOptions options;
  options.readEnvironment = false;
  options.plugins = {KJIT_TEST_PLUGIN};
  auto runtime = Runtime::create(options);
  ASSERT_TRUE(runtime.ok()) << runtime.status();
  auto module = Module::load(**runtime, std::string(KJIT_EXAMPLES_DIR) +
                                            "/vector_add.mlir");
  ASSERT_TRUE(module.ok()) << module.status();
  Kernel *kernel = *(*module)->kernel("add");
  auto setVersion = [kernel](int version) {
    std::string text = "\"version\": " + std::to_string(version);
    kernel->setLaunchMetadata(
        [text](absl::Span<const Argument>) { return text; });
  };
  setVersion(0);
  alignas(64) float x[16] = {};
  ::testing::internal::CaptureStderr();
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&] {
      alignas(64) float out[16] = {};
      Argument args[] = {Argument::tensor(uintptr_t(x), DType::FP32),
                         Argument::tensor(uintptr_t(x), DType::FP32),
                         Argument::tensor(uintptr_t(out), DType::FP32),
                         Argument::integer(16)};
      for (int i = 0; i < 50; ++i)
        failures += !kernel->launch(LaunchConfig(), args).ok();
    });
  for (int version = 1; version <= 200; ++version)
    setVersion(version);
  for (std::thread &thread : threads)
    thread.join();
  std::string log = ::testing::internal::GetCapturedStderr();
  EXPECT_EQ(failures.load(), 0);
  size_t enters = 0;
  for (size_t at = log.find("launch_enter kernel=add"); at != std::string::npos;
       at = log.find("launch_enter kernel=add", at + 1))
    ++enters;
  EXPECT_EQ(enters, 200u);
  size_t versions = 0;
  for (size_t at = log.find("metadata={\"version\": "); at != std::string::npos;
       at = log.find("metadata={\"version\": ", at + 1))
    ++versions;
  EXPECT_EQ(versions, 200u) << log.substr(0, 2000);
}

// Lazy metadata: with no launch hook loaded, nobody reads the launch's
// description, so the callback is not called, and a cache hit allocates
// nothing, callback or not.
TEST(LaunchHooks, MetadataCallbackIsLazyWithoutHooks) {
  RuntimeOptions options;
  options.readEnvironment = false;
  auto runtime = Runtime::create(options);
  ASSERT_TRUE(runtime.ok()) << runtime.status();
  auto module = Module::load(**runtime, std::string(KJIT_EXAMPLES_DIR) +
                                            "/vector_add.mlir");
  ASSERT_TRUE(module.ok()) << module.status();
  Kernel *kernel = *(*module)->kernel("add");
  int calls = 0;
  kernel->setLaunchMetadata([&calls](absl::Span<const Argument>) {
    ++calls;
    return std::string("\"flops\": 1");
  });
  alignas(64) float x[16] = {}, out[16] = {};
  Argument args[] = {Argument::tensor(uintptr_t(x), DType::FP32),
                     Argument::tensor(uintptr_t(x), DType::FP32),
                     Argument::tensor(uintptr_t(out), DType::FP32),
                     Argument::integer(16)};
  ASSERT_TRUE(kernel->launch(LaunchConfig(), args).ok()); // compiles
  long before = kjit::rt::testing::allocationCount.load();
  for (int i = 0; i < 100; ++i)
    ASSERT_TRUE(kernel->launch(LaunchConfig(), args).ok());
  EXPECT_EQ(kjit::rt::testing::allocationCount.load() - before, 0);
  EXPECT_EQ(calls, 0);
}

// The metadata is for launch_enter hooks: a plugin with only an exit hook
// sees the launch, and the callback still does not run.
TEST(LaunchHooks, MetadataCallbackRunsOnlyForLaunchEnterHooks) {
  RuntimeOptions options;
  options.readEnvironment = false;
  options.plugins = {KJIT_TEST_PLUGIN_DIR "/libkjit-test-exit-only.so"};
  auto runtime = Runtime::create(options);
  ASSERT_TRUE(runtime.ok()) << runtime.status();
  auto module = Module::load(**runtime, std::string(KJIT_EXAMPLES_DIR) +
                                            "/vector_add.mlir");
  ASSERT_TRUE(module.ok()) << module.status();
  Kernel *kernel = *(*module)->kernel("add");
  int calls = 0;
  kernel->setLaunchMetadata([&calls](absl::Span<const Argument>) {
    ++calls;
    return std::string("\"flops\": 1");
  });
  alignas(64) float x[16] = {}, out[16] = {};
  Argument args[] = {Argument::tensor(uintptr_t(x), DType::FP32),
                     Argument::tensor(uintptr_t(x), DType::FP32),
                     Argument::tensor(uintptr_t(out), DType::FP32),
                     Argument::integer(16)};
  ::testing::internal::CaptureStderr();
  auto result = kernel->launch(LaunchConfig(), args);
  std::string log = ::testing::internal::GetCapturedStderr();
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_NE(log.find("exit-only: launch_exit kernel=add"), std::string::npos)
      << log;
  EXPECT_EQ(log.find("launch_enter"), std::string::npos) << log;
  EXPECT_EQ(calls, 0);
}

// A pre-run hook that fails aborts the launch and the warmup with its
// message before anything is bound, compiled or launched.
TEST(LaunchHooks, FailingPreRunHookAbortsBeforeTheCompile) {
  RuntimeOptions options;
  options.readEnvironment = false;
  options.plugins = {KJIT_TEST_PLUGIN_DIR "/libkjit-test-hook-errors.so"};
  auto runtime = Runtime::create(options);
  ASSERT_TRUE(runtime.ok()) << runtime.status();
  auto module = Module::load(**runtime, std::string(KJIT_EXAMPLES_DIR) +
                                            "/vector_add.mlir");
  ASSERT_TRUE(module.ok()) << module.status();
  Kernel *kernel = *(*module)->kernel("add");
  alignas(64) float x[16] = {}, out[16] = {};
  out[0] = 7;
  Argument args[] = {Argument::tensor(uintptr_t(x), DType::FP32),
                     Argument::tensor(uintptr_t(x), DType::FP32),
                     Argument::tensor(uintptr_t(out), DType::FP32),
                     Argument::integer(16)};
  ::testing::internal::CaptureStderr();
  auto launched = kernel->launch(LaunchConfig(), args);
  auto warmed = kernel->warmup(args);
  std::string log = ::testing::internal::GetCapturedStderr();
  ASSERT_FALSE(launched.ok());
  std::string message(launched.status().message());
  EXPECT_EQ(message.rfind("plugin 'hook-errors' (", 0), 0u) << message;
  EXPECT_NE(message.find("pre-run hook deliberately failed"), std::string::npos)
      << message;
  ASSERT_FALSE(warmed.ok());
  EXPECT_EQ(warmed.status().message(), launched.status().message());
  EXPECT_EQ(kernel->stats().compiles, 0u);
  EXPECT_EQ(out[0], 7.0f); // nothing ran
  EXPECT_EQ(log.find("cache_lookup"), std::string::npos) << log;
}

} // namespace
