//===- AutotuneThreadTest.cpp - the autotuner's threads, under TSan -------===//
//
// The runtime half of the proof that parallel compiles are safe
// (docs/Autotuning.md, "Compiling configurations in parallel"): a compiler
// library without LLVM (Inputs/TestCompiler.cpp) and a backend whose device
// times are scripted and reported from a thread of its own
// (test/Plugins/Inputs/TestClockBackend.c), so that the ThreadSanitizer
// tree runs it: tunings of two kernels, each compiling 16 configurations on
// 16 threads, race with threads launching the same specializations. The
// compiler half (LLVM's own state) is TargetTest's
// ParallelCompilesGiveTheSerialCompilesBytes, in the trees that load LLVM.
//
//===----------------------------------------------------------------------===//

#include "kjit/Runtime/Autotuner.h"
#include "kjit/Runtime/Runtime.h"

#include "absl/strings/match.h"

#include <gtest/gtest.h>

#include <atomic>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

using namespace kjit::rt;

namespace {

constexpr int kConfigs = 16;

/// A runtime on the test compiler and the test clock backend, its
/// warnings kept in `warnings`.
absl::StatusOr<std::unique_ptr<Runtime>>
makeRuntime(std::mutex &logMutex, std::vector<std::string> &warnings) {
  RuntimeOptions options;
  options.readEnvironment = false;
  options.cacheDirectory = "";
  options.compilerLibrary = KJIT_TEST_COMPILER;
  options.plugins = {KJIT_TEST_CLOCK_PLUGIN};
  options.target = "test-clock";
  options.logSink = [&](kjit::plugin::LogLevel level, std::string_view source,
                        std::string_view message) {
    if (level <= kjit::plugin::LogLevel::Warning) {
      std::lock_guard<std::mutex> lock(logMutex);
      warnings.push_back(std::string(source) + ": " + std::string(message));
    }
  };
  return Runtime::create(std::move(options));
}

/// Configuration `index`: C = index + 1, one or two warps.
TuningConfig configAt(int index) {
  return TuningConfig{{{"C", Argument::integer(index + 1)},
                       {"num_warps", Argument::integer(1 + index % 2)}}};
}

TEST(AutotuneThreadTest, TuningsCompileAndTimeOnThreadsWhileOthersLaunch) {
  std::mutex logMutex;
  std::vector<std::string> warnings;
  auto runtime = makeRuntime(logMutex, warnings);
  ASSERT_TRUE(runtime.ok()) << runtime.status();
  auto module = Module::fromText(**runtime, "two kernels", "test.mlir");
  ASSERT_TRUE(module.ok()) << module.status();
  Kernel *kernels[2];
  for (int k = 0; k < 2; ++k) {
    auto found = (*module)->kernel(k == 0 ? "count" : "scale");
    ASSERT_TRUE(found.ok()) << found.status();
    kernels[k] = *found;
  }
  std::unique_ptr<Autotuner> tuners[2];
  for (int k = 0; k < 2; ++k) {
    AutotuneSpec spec;
    for (int index = 0; index < kConfigs; ++index)
      spec.configs.push_back(configAt(index));
    spec.key = {"n"};
    spec.compileThreads = kConfigs;
    spec.measure.warmupNanos = 0;
    spec.measure.maxBatchLaunches = 4;
    spec.measure.minSamples = 4;
    spec.measure.maxSamples = 40;
    auto tuner = Autotuner::create(**runtime, *kernels[k], std::move(spec));
    ASSERT_TRUE(tuner.ok()) << tuner.status();
    tuners[k] = std::move(*tuner);
  }

  alignas(16) int32_t out[2] = {0, 0};
  auto argsWith = [&](int n) {
    return std::vector<Argument>{
        Argument::tensor(uint64_t(uintptr_t(out)), DType::I32),
        Argument::integer(n)};
  };
  std::atomic<int> started{0};
  constexpr int kTuners = 8, kLaunchers = 4;
  std::vector<std::string> failures(kTuners + kLaunchers);
  std::vector<size_t> winners(kTuners);
  std::vector<std::thread> threads;
  for (int t = 0; t < kTuners; ++t)
    threads.emplace_back([&, t] {
      started.fetch_add(1);
      while (started.load() < kTuners + kLaunchers)
        std::this_thread::yield();
      // A key of its own (n = 3, 5, ...: neither 1 nor a multiple of 16, so
      // every key shares the specializations).
      std::vector<Argument> call = argsWith(3 + 2 * t);
      auto outcome = tuners[t % 2]->tune(LaunchConfig(), call);
      if (!outcome.ok()) {
        failures[size_t(t)] = std::string(outcome.status().message());
        return;
      }
      winners[size_t(t)] = outcome->winner;
      if (outcome->clock != "device clock")
        failures[size_t(t)] = "timed on the " + outcome->clock;
      for (const TuningOutcome::Result &result : outcome->results)
        if (!result.skipped.empty())
          failures[size_t(t)] = result.skipped;
    });
  for (int t = 0; t < kLaunchers; ++t)
    threads.emplace_back([&, t] {
      started.fetch_add(1);
      while (started.load() < kTuners + kLaunchers)
        std::this_thread::yield();
      std::vector<Argument> call = argsWith(7);
      for (int i = 0; i < 3 * kConfigs; ++i) {
        const TuningConfig config = configAt((i * 7 + t) % kConfigs);
        std::vector<KeywordArgument> keywords;
        for (const auto &[name, value] : config.values)
          keywords.push_back({name, value});
        auto launched =
            kernels[(i + t) % 2]->launch(LaunchConfig(), call, keywords);
        if (!launched.ok()) {
          failures[size_t(kTuners + t)] =
              std::string(launched.status().message());
          return;
        }
      }
    });
  for (std::thread &thread : threads)
    thread.join();
  for (const std::string &failure : failures)
    EXPECT_EQ(failure, "");
  // The scripted winners: count takes C us (C = 1 is config 0), scale
  // 20 - C us (C = 16 is config 15).
  for (int t = 0; t < kTuners; ++t)
    EXPECT_EQ(winners[size_t(t)], t % 2 ? 15u : 0u) << "thread " << t;
  // Each specialization compiled once, by whichever thread came first.
  for (Kernel *kernel : kernels)
    EXPECT_EQ(kernel->stats().compiles, uint64_t(kConfigs));
  EXPECT_EQ(warnings, std::vector<std::string>());
}

/// What the device's reports say: a launch reported failed skips its
/// configuration, ABORTED stops the tuning, and trials with no report are
/// left out with a warning (a configuration none of whose reports came is
/// skipped).
TEST(AutotuneThreadTest, TheDevicesReportsSkipOrStop) {
  std::mutex logMutex;
  std::vector<std::string> warnings;
  auto runtime = makeRuntime(logMutex, warnings);
  ASSERT_TRUE(runtime.ok()) << runtime.status();
  auto module = Module::fromText(**runtime, "two kernels", "test.mlir");
  ASSERT_TRUE(module.ok()) << module.status();
  auto kernel = (*module)->kernel("count");
  ASSERT_TRUE(kernel.ok());
  auto tunerOf = [&](const std::vector<int> &cs) {
    AutotuneSpec spec;
    for (int c : cs)
      spec.configs.push_back(TuningConfig{{{"C", Argument::integer(c)}}});
    spec.key = {"n"};
    spec.measure.warmupNanos = 0;
    spec.measure.maxBatchLaunches = 2;
    spec.measure.minSamples = 2;
    spec.measure.reportTimeoutNanos = 1'000'000;
    auto tuner = Autotuner::create(**runtime, **kernel, std::move(spec));
    EXPECT_TRUE(tuner.ok()) << tuner.status();
    return tuner.ok() ? std::move(*tuner) : nullptr;
  };
  alignas(16) int32_t out[2] = {0, 0};
  std::vector<Argument> call = {
      Argument::tensor(uint64_t(uintptr_t(out)), DType::I32),
      Argument::integer(3)};

  auto skipping = tunerOf({99, 98, 5});
  ASSERT_TRUE(skipping);
  auto outcome = skipping->tune(LaunchConfig(), call);
  ASSERT_TRUE(outcome.ok()) << outcome.status();
  EXPECT_EQ(outcome->winner, 2u);
  EXPECT_EQ(outcome->results[0].skipped,
            "its launch failed on the device (RESOURCE_EXHAUSTED)");
  EXPECT_EQ(outcome->results[1].skipped,
            "the backend reported no device time for its trials");
  // Said for C = 98's first warm-up batch, after which it was skipped.
  EXPECT_EQ(warnings,
            std::vector<std::string>{
                "kjit: autotune: backend 'test-clock' reported no device time "
                "for 1 of 1 trials of count config 1 (C=98) within 0.001 s; "
                "they are left out"});

  auto stopping = tunerOf({5, 97});
  ASSERT_TRUE(stopping);
  outcome = stopping->tune(LaunchConfig(), call);
  ASSERT_FALSE(outcome.ok());
  EXPECT_EQ(outcome.status().code(), absl::StatusCode::kAborted);
  EXPECT_EQ(outcome.status().message(),
            "kernel 'count': autotuning stopped: config 1 (C=97) left the "
            "device unusable (its launch failed on the device (ABORTED))");

  // A launch that fails with ABORTED stops it too.
  auto aborting = tunerOf({96, 5});
  ASSERT_TRUE(aborting);
  outcome = aborting->tune(LaunchConfig(), call);
  ASSERT_FALSE(outcome.ok());
  EXPECT_EQ(outcome.status().code(), absl::StatusCode::kAborted);
  // The plugin host names the plugin by its path, between these.
  std::string message(outcome.status().message());
  EXPECT_EQ(message.rfind("kernel 'count': autotuning stopped: config 0 "
                          "(C=96) left the device unusable (plugin "
                          "'test-clock' (",
                          0),
            0u)
      << message;
  EXPECT_TRUE(absl::EndsWith(
      message, "libkjit-test-clock.so): launch failed: the device is lost "
               "(scripted))"))
      << message;
}

} // namespace
