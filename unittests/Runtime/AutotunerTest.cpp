//===- AutotunerTest.cpp - the autotuner on the host backend --------------===//
//
// Configurations checked against the kernel, the key, the choice (with a
// clock faked from what the launches wrote, so that a chosen configuration
// is the fastest), skipped failures, the trial hooks, the capture refusal
// and every message (docs/Autotuning.md).
//
//===----------------------------------------------------------------------===//

#include "kjit/Runtime/Autotuner.h"
#include "kjit/Cache/DiskCache.h"
#include "kjit/Runtime/Runtime.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <set>
#include <string>
#include <vector>

#include <sys/stat.h>

using namespace kjit::rt;

namespace {

/// o[0] += 1 and o[1] += C (by thread 0): the launches since a moment, and
/// which configuration made them. W is a second constexpr, n a scalar for
/// keys.
constexpr const char *kCounts = R"mlir(
kjit.kernel @count(%o: !kjit.ptr<i32>, %n: i32, %C: i32 {kjit.constexpr},
                   %W: i32 {kjit.constexpr, kjit.default = 1 : i32}) {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %i0 = arith.constant 0 : index
  %tid = gpu.thread_id x
  %first = arith.cmpi eq, %tid, %i0 : index
  %launches = kjit.load %o[%c0] mask %first : !kjit.ptr<i32>, i32 -> i32
  %more = arith.addi %launches, %c1 : i32
  kjit.store %more, %o[%c0] mask %first : i32, !kjit.ptr<i32>, i32
  %sum = kjit.load %o[%c1] mask %first : !kjit.ptr<i32>, i32 -> i32
  %added = arith.addi %sum, %C : i32
  kjit.store %added, %o[%c1] mask %first : i32, !kjit.ptr<i32>, i32
  kjit.return
}
)mlir";

TuningConfig config(int c, int warps = 1) {
  return TuningConfig{
      {{"C", Argument::integer(c)}, {"num_warps", Argument::integer(warps)}}};
}

class AutotunerTest : public ::testing::Test {
protected:
  void SetUp() override {
    auto loaded = Module::fromText(kCounts, "count.mlir");
    ASSERT_TRUE(loaded.ok()) << loaded.status();
    module_ = *loaded;
    auto found = module_->kernel("count");
    ASSERT_TRUE(found.ok()) << found.status();
    kernel_ = *found;
  }

  /// A spec over `configs` whose clock charges each launch of the
  /// configuration with constexpr C `cost[C]` nanoseconds: it reads from
  /// `out_` how many launches ran since its last reading, and of which C.
  AutotuneSpec specWithCosts(std::vector<TuningConfig> configs,
                             const std::map<int, uint64_t> &cost) {
    AutotuneSpec spec;
    spec.configs = std::move(configs);
    spec.key = {"n"};
    // Warm-up: a batch of 1, then of 2; trials: batches of at most 4
    // launches, each a sample of the host clock, until 3 samples agree.
    spec.measure.minWarmupLaunches = 2;
    spec.measure.warmupNanos = 0;
    spec.measure.batchNanos = 1000;
    spec.measure.maxBatchLaunches = 4;
    spec.measure.minSamples = 3;
    spec.clock = [this, cost] {
      int32_t launches = out_[0] - seen_[0], sum = out_[1] - seen_[1];
      seen_[0] = out_[0];
      seen_[1] = out_[1];
      if (launches > 0) {
        uint64_t each = cost.at(sum / launches);
        // A noisy configuration's cost alternates between it and 1.5x.
        if (noisy_.count(sum / launches) && (++readings_[sum / launches] % 2))
          each += each / 2;
        now_ += each * uint64_t(launches);
      }
      return now_;
    };
    spec.beforeTrials = [this] {
      ++beforeCalls_;
      return absl::OkStatus();
    };
    spec.afterTrials = [this] {
      ++afterCalls_;
      return absl::OkStatus();
    };
    return spec;
  }

  void raceTwoTunings(bool fleet);

  /// A new temporary directory, removed with what it holds when the test
  /// ends (after the runtime that used it); empty, with a failure, when
  /// none can be made.
  std::string temporaryDirectory() {
    const char *tmp = std::getenv("TMPDIR");
    std::string directory =
        std::string(tmp && *tmp ? tmp : "/tmp") + "/kjit-autotune-XXXXXX";
    if (!mkdtemp(directory.data())) {
      ADD_FAILURE() << "mkdtemp " << directory << " failed";
      return "";
    }
    directories_.push_back(directory);
    return directory;
  }

  /// `cachedRuntime_`, whose disk cache lies in a temporary directory, and
  /// `cachedKernel_`, the count kernel loaded in it.
  void openCachedRuntime() {
    std::string directory = temporaryDirectory();
    ASSERT_FALSE(directory.empty());
    RuntimeOptions options;
    options.cacheDirectory = directory + "/cache";
    auto runtime = Runtime::create(std::move(options));
    ASSERT_TRUE(runtime.ok()) << runtime.status();
    cachedRuntime_ = std::move(*runtime);
    auto module = Module::fromText(*cachedRuntime_, kCounts, "count.mlir");
    ASSERT_TRUE(module.ok()) << module.status();
    cachedModule_ = *module;
    auto kernel = cachedModule_->kernel("count");
    ASSERT_TRUE(kernel.ok());
    cachedKernel_ = *kernel;
  }

  void TearDown() override {
    cachedModule_.reset();
    cachedRuntime_.reset();
    for (const std::string &directory : directories_) {
      std::string command = "rm -rf '" + directory + "'";
      EXPECT_EQ(std::system(command.c_str()), 0) << command;
    }
  }

  std::vector<Argument> args(int n) {
    return {Argument::tensor(uint64_t(uintptr_t(out_)), DType::I32),
            Argument::integer(n)};
  }

  std::shared_ptr<Module> module_;
  Kernel *kernel_ = nullptr;
  int32_t out_[2] = {0, 0};
  int32_t seen_[2] = {0, 0};
  uint64_t now_ = 0;
  std::set<int> noisy_;
  /// Readings of the clock after launches of each noisy configuration.
  std::map<int, uint64_t> readings_;
  int beforeCalls_ = 0, afterCalls_ = 0;
  std::vector<std::string> directories_;
  std::unique_ptr<Runtime> cachedRuntime_;
  std::shared_ptr<Module> cachedModule_;
  Kernel *cachedKernel_ = nullptr;
};

TEST_F(AutotunerTest, TheFastestConfigurationWinsAndIsRemembered) {
  auto tuner =
      Autotuner::create(Runtime::global(), *kernel_,
                        specWithCosts({config(1), config(2), config(3)},
                                      {{1, 300}, {2, 100}, {3, 200}}));
  ASSERT_TRUE(tuner.ok()) << tuner.status();
  EXPECT_EQ((*tuner)->lastChosen(), nullptr);
  std::vector<Argument> call = args(4096);
  auto launched = (*tuner)->launch(LaunchConfig(), call);
  ASSERT_TRUE(launched.ok()) << launched.status();
  ASSERT_NE((*tuner)->lastChosen(), nullptr);
  EXPECT_EQ((*tuner)->lastChosen()->text(), "C=2, num_warps=1");
  // Trials ran (several launches of each), then the winner once more.
  int32_t afterTuning = out_[0];
  EXPECT_GT(afterTuning, 3 * 2);
  // Each configuration's untimed launch, its two warm-up batches and its
  // three rounds (its time is the same in each: the median is stable at
  // the third sample), and the launch that ended the tuning, had the trial
  // hook first; the trials ended once.
  EXPECT_EQ(beforeCalls_, 3 * (1 + 2 + 3) + 1);
  EXPECT_EQ(afterCalls_, 1);

  // The same key again: one launch of the winner, nothing timed.
  int32_t sumBefore = out_[1];
  launched = (*tuner)->launch(LaunchConfig(), call);
  ASSERT_TRUE(launched.ok()) << launched.status();
  EXPECT_EQ(out_[0], afterTuning + 1);
  EXPECT_EQ(out_[1], sumBefore + 2);
  EXPECT_EQ(beforeCalls_, 3 * (1 + 2 + 3) + 1);
}

TEST_F(AutotunerTest, KeysAreTunedApart) {
  std::map<int, uint64_t> cost = {{1, 100}, {2, 300}};
  auto tuner = Autotuner::create(Runtime::global(), *kernel_,
                                 specWithCosts({config(1), config(2)}, cost));
  ASSERT_TRUE(tuner.ok()) << tuner.status();
  std::vector<Argument> small = args(1), large = args(2);
  auto outcome = (*tuner)->tune(LaunchConfig(), small);
  ASSERT_TRUE(outcome.ok()) << outcome.status();
  EXPECT_EQ(outcome->key, "n=1; o=i32");
  EXPECT_EQ(outcome->winner, 0u);
  EXPECT_EQ(outcome->trialLaunches, uint64_t(out_[0])) << "every launch so "
                                                          "far was a trial";
  EXPECT_EQ(outcome->results[0].samples, 3);
  EXPECT_EQ(outcome->results[0].warmupLaunches, 3);
  EXPECT_EQ(outcome->clock, "host clock");
  EXPECT_GT(outcome->results[1].medianNanos, outcome->results[0].medianNanos);
  // Another n is another key: tuned again (here with other costs).
  std::map<int, uint64_t> swapped = {{1, 300}, {2, 100}};
  auto other =
      Autotuner::create(Runtime::global(), *kernel_,
                        specWithCosts({config(1), config(2)}, swapped));
  ASSERT_TRUE(other.ok());
  auto second = (*other)->tune(LaunchConfig(), large);
  ASSERT_TRUE(second.ok()) << second.status();
  EXPECT_EQ(second->key, "n=2; o=i32");
  EXPECT_EQ(second->winner, 1u);
}

TEST_F(AutotunerTest, AConfigurationThatCannotRunIsSkippedWithItsReason) {
  // num_warps = 64 is not a launch option value the runtime takes.
  auto tuner = Autotuner::create(
      Runtime::global(), *kernel_,
      specWithCosts({config(1, 64), config(2)}, {{1, 100}, {2, 300}}));
  ASSERT_TRUE(tuner.ok()) << tuner.status();
  std::vector<Argument> call = args(8);
  auto outcome = (*tuner)->tune(LaunchConfig(), call);
  ASSERT_TRUE(outcome.ok()) << outcome.status();
  EXPECT_EQ(outcome->winner, 1u);
  EXPECT_NE(outcome->results[0].skipped.find("num_warps"), std::string::npos)
      << outcome->results[0].skipped;
  EXPECT_TRUE(outcome->results[1].skipped.empty());
}

TEST_F(AutotunerTest, NoConfigurationThatCanRunIsAnError) {
  auto tuner = Autotuner::create(Runtime::global(), *kernel_,
                                 specWithCosts({config(1, 64)}, {{1, 1}}));
  ASSERT_TRUE(tuner.ok()) << tuner.status();
  std::vector<Argument> call = args(8);
  auto outcome = (*tuner)->tune(LaunchConfig(), call);
  ASSERT_FALSE(outcome.ok());
  EXPECT_NE(std::string(outcome.status().message())
                .find("kernel 'count': no configuration could run for key "
                      "[n=8; o=i32]: 1 of 1 skipped (config 0 (C=1, "
                      "num_warps=64): "),
            std::string::npos)
      << outcome.status();
}

TEST_F(AutotunerTest, ACaptureThatWouldTuneIsRefused) {
  auto tuner = Autotuner::create(Runtime::global(), *kernel_,
                                 specWithCosts({config(1)}, {{1, 1}}));
  ASSERT_TRUE(tuner.ok());
  LaunchConfig capturing;
  capturing.mayLoad = false;
  std::vector<Argument> call = args(8);
  auto launched = (*tuner)->launch(capturing, call);
  ASSERT_FALSE(launched.ok());
  EXPECT_EQ(launched.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_EQ(launched.status().message(),
            "kernel 'count': key [n=8; o=i32] has no chosen configuration in "
            "this process, and this launch may not load (a CUDA graph "
            "capture), which timing would break: tune before the capture");
  EXPECT_EQ(out_[0], 0) << "nothing may run";
  // Tuned before, the capture's launch takes the choice.
  ASSERT_TRUE((*tuner)->launch(LaunchConfig(), call).ok());
  int32_t launches = out_[0];
  ASSERT_TRUE((*tuner)->launch(capturing, call).ok());
  EXPECT_EQ(out_[0], launches + 1);
}

TEST_F(AutotunerTest, TheCallMayNotSetWhatTheConfigurationsSet) {
  auto tuner = Autotuner::create(Runtime::global(), *kernel_,
                                 specWithCosts({config(1)}, {{1, 1}}));
  ASSERT_TRUE(tuner.ok());
  std::vector<Argument> call = args(8);
  KeywordArgument warps[] = {{"num_warps", Argument::integer(2)}};
  auto launched = (*tuner)->launch(LaunchConfig(), call, warps);
  ASSERT_FALSE(launched.ok());
  EXPECT_EQ(launched.status().message(),
            "kernel 'count': 'num_warps' is set by the autotuner's "
            "configurations and by this call; set it in one place");
}

TEST_F(AutotunerTest, BadSpecificationsAreRefusedByName) {
  auto refuse = [&](AutotuneSpec spec, const std::string &message) {
    auto tuner =
        Autotuner::create(Runtime::global(), *kernel_, std::move(spec));
    ASSERT_FALSE(tuner.ok()) << message;
    EXPECT_EQ(tuner.status().message(), message);
  };
  AutotuneSpec spec;
  refuse(spec, "autotune of kernel 'count' has no configurations");
  spec.configs = {config(1), TuningConfig{{{"n", Argument::integer(1)}}}};
  refuse(spec, "autotune config 1 of kernel 'count': 'n' is not a constexpr "
               "parameter (constexprs: C, W)");
  spec.configs = {
      TuningConfig{{{"enable_fp_fusion", Argument::boolean(false)}}}};
  refuse(spec, "autotune config 0 of kernel 'count': launch option "
               "'enable_fp_fusion' changes results, not only speed; it "
               "cannot be tuned (tunable: num_warps, num_stages, num_ctas, "
               "maxnreg)");
  spec.configs = {config(1)};
  spec.key = {"ncount"};
  refuse(spec, "autotune key of kernel 'count': 'ncount' names no parameter "
               "(parameters: o, n, C, W)");
  spec.key = {"o"};
  refuse(spec, "autotune key of kernel 'count': 'o' is a pointer; tensors "
               "join the key by dtype already");
}

TEST_F(AutotunerTest, AFailingTrialHookStopsTheTuning) {
  AutotuneSpec spec = specWithCosts({config(1)}, {{1, 1}});
  spec.beforeTrials = [] { return absl::InternalError("cannot zero 'o'"); };
  auto tuner = Autotuner::create(Runtime::global(), *kernel_, std::move(spec));
  ASSERT_TRUE(tuner.ok());
  std::vector<Argument> call = args(8);
  auto launched = (*tuner)->launch(LaunchConfig(), call);
  ASSERT_FALSE(launched.ok());
  EXPECT_EQ(launched.status().message(), "cannot zero 'o'");
  EXPECT_EQ(out_[0], 0);
}

TEST_F(AutotunerTest, KjitLogAutotuneSaysWhatWasTimedSkippedAndChosen) {
  std::vector<std::string> lines;
  RuntimeOptions options;
  options.logAutotune = true;
  options.logSink = [&](kjit::plugin::LogLevel, std::string_view source,
                        std::string_view message) {
    lines.push_back(std::string(source) + ": " + std::string(message));
  };
  auto runtime = Runtime::create(std::move(options));
  ASSERT_TRUE(runtime.ok()) << runtime.status();
  auto module = Module::fromText(**runtime, kCounts, "count.mlir");
  ASSERT_TRUE(module.ok()) << module.status();
  auto kernel = (*module)->kernel("count");
  ASSERT_TRUE(kernel.ok());
  auto tuner =
      Autotuner::create(**runtime, **kernel,
                        specWithCosts({config(1, 64), config(2), config(3)},
                                      {{2, 4000}, {3, 2000}}));
  ASSERT_TRUE(tuner.ok()) << tuner.status();
  std::vector<Argument> call = args(8);
  ASSERT_TRUE((*tuner)->launch(LaunchConfig(), call).ok());
  lines.erase(std::remove_if(lines.begin(), lines.end(),
                             [](const std::string &line) {
                               return line.rfind("kjit: autotune ", 0) != 0;
                             }),
              lines.end());
  ASSERT_EQ(lines.size(), 4u);
  EXPECT_EQ(lines[0].rfind("kjit: autotune count [n=8; o=i32]: config 0 "
                           "(C=1, num_warps=64) skipped: kernel 'count': "
                           "num_warps=64 means 2048 threads per block",
                           0),
            0u)
      << lines[0];
  EXPECT_EQ(lines[1], "kjit: autotune count [n=8; o=i32]: config 1 (C=2, "
                      "num_warps=1): 3 trials after 3 warm-up launches: "
                      "median 4 us (p20 4, p80 4, 95% 4-4); host clock");
  EXPECT_EQ(lines[2], "kjit: autotune count [n=8; o=i32]: config 2 (C=3, "
                      "num_warps=1): 3 trials after 3 warm-up launches: "
                      "median 2 us (p20 2, p80 2, 95% 2-2); host clock");
  EXPECT_EQ(lines[3], "kjit: autotune count [n=8; o=i32]: chose config 2 "
                      "(C=3, num_warps=1) 2 us; next config 1 (C=2, "
                      "num_warps=1) 4 us");
  module->reset();
}

TEST_F(AutotunerTest, ANoisyConfigurationIsTimedUntilItsLimit) {
  AutotuneSpec spec =
      specWithCosts({config(1), config(2)}, {{1, 1000}, {2, 1000}});
  spec.measure.maxSamples = 12;
  noisy_ = {1, 2};
  auto tuner = Autotuner::create(Runtime::global(), *kernel_, std::move(spec));
  ASSERT_TRUE(tuner.ok());
  std::vector<Argument> call = args(8);
  auto outcome = (*tuner)->tune(LaunchConfig(), call);
  ASSERT_TRUE(outcome.ok()) << outcome.status();
  // Samples alternate between 1 and 1.5 us: the median's interval never
  // narrows to 1 %, so both run to the sample limit.
  for (const TuningOutcome::Result &result : outcome->results) {
    EXPECT_EQ(result.samples, 12);
    EXPECT_FALSE(result.stoppedEarly);
    EXPECT_LT(result.ciLowNanos, result.ciHighNanos);
    EXPECT_LE(result.p20Nanos, result.medianNanos);
    EXPECT_GE(result.p80Nanos, result.medianNanos);
  }
}

TEST_F(AutotunerTest, ABudgetStopsANoisyConfiguration) {
  AutotuneSpec spec = specWithCosts({config(1)}, {{1, 1000}});
  // Batches of one launch (the warm-up found 1 us a launch, a batch's
  // worth), of 1 and 1.5 us in turn: the interval stays wide, and the
  // budget ends it at its fourth sample (5 us).
  spec.measure.budgetNanos = 5'000;
  noisy_ = {1};
  auto tuner = Autotuner::create(Runtime::global(), *kernel_, std::move(spec));
  ASSERT_TRUE(tuner.ok());
  std::vector<Argument> call = args(8);
  auto outcome = (*tuner)->tune(LaunchConfig(), call);
  ASSERT_TRUE(outcome.ok()) << outcome.status();
  EXPECT_EQ(outcome->results[0].samples, 4);
  EXPECT_EQ(outcome->results[0].medianNanos, 1250);
}

TEST_F(AutotunerTest, AConfigurationFarBehindTheLeaderStopsEarly) {
  std::vector<std::string> lines;
  RuntimeOptions options;
  options.logAutotune = true;
  options.logSink = [&](kjit::plugin::LogLevel, std::string_view,
                        std::string_view message) {
    lines.push_back(std::string(message));
  };
  auto runtime = Runtime::create(std::move(options));
  ASSERT_TRUE(runtime.ok()) << runtime.status();
  auto module = Module::fromText(**runtime, kCounts, "count.mlir");
  ASSERT_TRUE(module.ok()) << module.status();
  auto kernel = (*module)->kernel("count");
  ASSERT_TRUE(kernel.ok());
  // Config 1 is stable at 0.1 us; config 0 is noisy at 1 to 1.5 us: its
  // interval starts far beyond the leader's, so it stops at 3 samples
  // rather than at the limit.
  AutotuneSpec spec =
      specWithCosts({config(1), config(2)}, {{1, 1000}, {2, 100}});
  spec.measure.maxSamples = 50;
  noisy_ = {1};
  auto tuner = Autotuner::create(**runtime, **kernel, std::move(spec));
  ASSERT_TRUE(tuner.ok());
  std::vector<Argument> call = args(8);
  auto outcome = (*tuner)->tune(LaunchConfig(), call);
  ASSERT_TRUE(outcome.ok()) << outcome.status();
  EXPECT_EQ(outcome->winner, 1u);
  EXPECT_TRUE(outcome->results[0].stoppedEarly);
  EXPECT_EQ(outcome->results[0].samples, 3);
  EXPECT_FALSE(outcome->results[1].stoppedEarly);
  EXPECT_NE(std::find(lines.begin(), lines.end(),
                      "autotune count [n=8; o=i32]: config 0 (C=1, "
                      "num_warps=1) stopped after 3 trials: at least 1 us, "
                      "10% beyond the leader's 0.1 us"),
            lines.end());
  module->reset();
}

TEST_F(AutotunerTest, ATieGoesToTheEarlierConfiguration) {
  auto tuner = Autotuner::create(
      Runtime::global(), *kernel_,
      specWithCosts({config(2), config(1)}, {{1, 500}, {2, 500}}));
  ASSERT_TRUE(tuner.ok());
  std::vector<Argument> call = args(8);
  auto outcome = (*tuner)->tune(LaunchConfig(), call);
  ASSERT_TRUE(outcome.ok()) << outcome.status();
  EXPECT_EQ(outcome->winner, 0u);
}

TEST_F(AutotunerTest, TrialsAreTimedOnTheDeviceClockWhereTheBackendHasOne) {
  // No clock given: the host backend times each launch (KJIT_LAUNCH_TIMED)
  // and reports its span, one sample per launch.
  AutotuneSpec spec;
  spec.configs = {config(1), config(2)};
  spec.key = {"n"};
  spec.measure.minSamples = 5;
  spec.measure.maxSamples = 40;
  spec.measure.maxBatchLaunches = 8;
  auto tuner = Autotuner::create(Runtime::global(), *kernel_, std::move(spec));
  ASSERT_TRUE(tuner.ok());
  std::vector<Argument> call = args(8);
  auto outcome = (*tuner)->tune(LaunchConfig(), call);
  ASSERT_TRUE(outcome.ok()) << outcome.status();
  EXPECT_EQ(outcome->clock, "device clock");
  uint64_t counted = 0;
  for (const TuningOutcome::Result &result : outcome->results) {
    EXPECT_GE(result.samples, 5);
    EXPECT_LE(result.samples, 40);
    EXPECT_GT(result.medianNanos, 0);
    // Every launch but the untimed first one and the warm-up's is a
    // sample: each launch reported its device time.
    counted += 1 + uint64_t(result.warmupLaunches) + uint64_t(result.samples);
  }
  EXPECT_EQ(outcome->trialLaunches, counted);
  EXPECT_EQ(uint64_t(out_[0]), counted);
}

TEST_F(AutotunerTest, ThePruneFunctionAndThePerformanceModelChooseWhatIsTimed) {
  AutotuneSpec spec =
      specWithCosts({config(1), config(2), config(3), config(4)},
                    {{1, 100}, {2, 200}, {3, 300}, {4, 400}});
  std::vector<std::string> seen;
  spec.prune =
      [&](const std::vector<TuningConfig> &configs,
          const NamedArguments &named) -> absl::StatusOr<std::vector<size_t>> {
    for (const auto &[name, value] : named)
      seen.push_back(name);
    EXPECT_EQ(configs.size(), 4u);
    return std::vector<size_t>{3, 1, 2, 1}; // config 0 pruned
  };
  // The model thinks config 3 the best, then 2.
  spec.perfModel = [](const TuningConfig &config,
                      const NamedArguments &) -> absl::StatusOr<double> {
    return -double(config.values[0].second.asInt());
  };
  spec.topK = 2;
  auto tuner = Autotuner::create(Runtime::global(), *kernel_, std::move(spec));
  ASSERT_TRUE(tuner.ok());
  std::vector<Argument> call = args(8);
  auto outcome = (*tuner)->tune(LaunchConfig(), call);
  ASSERT_TRUE(outcome.ok()) << outcome.status();
  EXPECT_EQ(seen, (std::vector<std::string>{"o", "n", "W"}));
  EXPECT_TRUE(outcome->results[0].pruned);
  EXPECT_TRUE(outcome->results[1].pruned);
  EXPECT_FALSE(outcome->results[2].pruned);
  EXPECT_FALSE(outcome->results[3].pruned);
  EXPECT_EQ(outcome->results[0].samples, 0);
  EXPECT_EQ(outcome->results[1].samples, 0);
  EXPECT_EQ(outcome->winner, 2u) << "config 0 is faster, but was pruned";
}

TEST_F(AutotunerTest, KjitLogAutotuneSaysWhatWasPruned) {
  std::vector<std::string> lines;
  RuntimeOptions options;
  options.logAutotune = true;
  options.logSink = [&](kjit::plugin::LogLevel, std::string_view,
                        std::string_view message) {
    if (message.rfind("autotune ", 0) == 0)
      lines.push_back(std::string(message));
  };
  auto runtime = Runtime::create(std::move(options));
  ASSERT_TRUE(runtime.ok()) << runtime.status();
  auto module = Module::fromText(**runtime, kCounts, "count.mlir");
  ASSERT_TRUE(module.ok()) << module.status();
  auto kernel = (*module)->kernel("count");
  ASSERT_TRUE(kernel.ok());
  AutotuneSpec spec = specWithCosts({config(1), config(2), config(3)},
                                    {{1, 100}, {2, 200}, {3, 300}});
  spec.prune = [](const std::vector<TuningConfig> &, const NamedArguments &) {
    return absl::StatusOr<std::vector<size_t>>(std::vector<size_t>{2, 1});
  };
  auto tuner = Autotuner::create(**runtime, **kernel, std::move(spec));
  ASSERT_TRUE(tuner.ok());
  std::vector<Argument> call = args(8);
  ASSERT_TRUE((*tuner)->tune(LaunchConfig(), call).ok());
  ASSERT_FALSE(lines.empty());
  EXPECT_EQ(lines[0], "autotune count [n=8; o=i32]: 3 configurations, 1 "
                      "pruned (kept 1, 2)");
  EXPECT_EQ(lines.back(), "autotune count [n=8; o=i32]: chose config 1 (C=2, "
                          "num_warps=1) 0.2 us; next config 2 (C=3, "
                          "num_warps=1) 0.3 us");
  module->reset();
}

TEST_F(AutotunerTest, PruningErrorsStopTheTuningWithTheirReason) {
  auto refuse = [&](const std::function<void(AutotuneSpec &)> &set,
                    const std::string &message) {
    AutotuneSpec spec =
        specWithCosts({config(1), config(2)}, {{1, 100}, {2, 200}});
    set(spec);
    auto tuner =
        Autotuner::create(Runtime::global(), *kernel_, std::move(spec));
    ASSERT_TRUE(tuner.ok());
    std::vector<Argument> call = args(8);
    int32_t launches = out_[0];
    auto outcome = (*tuner)->tune(LaunchConfig(), call);
    ASSERT_FALSE(outcome.ok()) << message;
    EXPECT_EQ(outcome.status().message(), message);
    EXPECT_EQ(out_[0], launches) << "nothing may run";
  };
  refuse(
      [](AutotuneSpec &spec) {
        spec.prune = [](const std::vector<TuningConfig> &,
                        const NamedArguments &) {
          return absl::StatusOr<std::vector<size_t>>(std::vector<size_t>{});
        };
      },
      "kernel 'count': the prune function kept no configuration for key "
      "[n=8; o=i32]; it must keep at least one");
  refuse(
      [](AutotuneSpec &spec) {
        spec.prune = [](const std::vector<TuningConfig> &,
                        const NamedArguments &) {
          return absl::StatusOr<std::vector<size_t>>(std::vector<size_t>{0, 2});
        };
      },
      "kernel 'count': the prune function kept configuration 2 for key "
      "[n=8; o=i32], but there are 2");
  refuse(
      [](AutotuneSpec &spec) {
        spec.prune = [](const std::vector<TuningConfig> &,
                        const NamedArguments &) {
          return absl::StatusOr<std::vector<size_t>>(
              absl::InvalidArgumentError("no n"));
        };
      },
      "kernel 'count': the prune function failed for key [n=8; o=i32]: no n");
  refuse(
      [](AutotuneSpec &spec) {
        spec.topK = 1;
        spec.perfModel = [](const TuningConfig &config,
                            const NamedArguments &) -> absl::StatusOr<double> {
          if (config.values[0].second.asInt() == 2)
            return absl::InternalError("no model for C=2");
          return 1.0;
        };
      },
      "kernel 'count': the performance model failed for config 1 (C=2, "
      "num_warps=1): no model for C=2");
  refuse(
      [](AutotuneSpec &spec) {
        spec.topK = 1;
        spec.perfModel = [](const TuningConfig &,
                            const NamedArguments &) -> absl::StatusOr<double> {
          return std::nan("");
        };
      },
      "kernel 'count': the performance model estimated nan for config 0 "
      "(C=1, num_warps=1); an estimate is a finite number");
}

TEST_F(AutotunerTest, ConfigurationsCompileOnThreadsOfTheirOwn) {
  // 16 configurations, one specialization each, compiled by 16 threads
  // before the trials; the scripted winner still wins.
  std::vector<TuningConfig> configs;
  std::map<int, uint64_t> cost;
  for (int c = 1; c <= 16; ++c) {
    configs.push_back(config(c, c % 2 ? 1 : 2));
    cost[c] = c == 11 ? 50 : 100 + uint64_t(c);
  }
  AutotuneSpec spec = specWithCosts(std::move(configs), cost);
  spec.compileThreads = 16;
  KernelStats before = kernel_->stats();
  auto tuner = Autotuner::create(Runtime::global(), *kernel_, std::move(spec));
  ASSERT_TRUE(tuner.ok());
  std::vector<Argument> call = args(17);
  auto outcome = (*tuner)->tune(LaunchConfig(), call);
  ASSERT_TRUE(outcome.ok()) << outcome.status();
  EXPECT_EQ(outcome->compileThreads, 16);
  EXPECT_EQ(kernel_->stats().compiles - before.compiles, 16u);
  EXPECT_EQ(outcome->winner, 10u);
  // Compiled once: tuning another key of the same specializations (n is
  // neither 1 nor a multiple of 16 in both) compiles nothing.
  std::vector<Argument> other = args(19);
  auto again = (*tuner)->tune(LaunchConfig(), other);
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ(kernel_->stats().compiles - before.compiles, 16u);
}

TEST_F(AutotunerTest, KjitTuneThreadsSaysHowManyThreadsCompile) {
  auto tuneWith = [&](const char *threads, int n) {
    setenv("KJIT_TUNE_THREADS", threads, 1);
    auto tuner =
        Autotuner::create(Runtime::global(), *kernel_,
                          specWithCosts({config(1), config(2), config(3)},
                                        {{1, 100}, {2, 200}, {3, 300}}));
    EXPECT_TRUE(tuner.ok());
    std::vector<Argument> call = args(n);
    auto outcome = (*tuner)->tune(LaunchConfig(), call);
    unsetenv("KJIT_TUNE_THREADS");
    return outcome;
  };
  auto two = tuneWith("2", 30);
  ASSERT_TRUE(two.ok()) << two.status();
  EXPECT_EQ(two->compileThreads, 2);
  // Never more than there are configurations.
  auto many = tuneWith("64", 31);
  ASSERT_TRUE(many.ok()) << many.status();
  EXPECT_EQ(many->compileThreads, 3);
  for (const char *bad : {"0", "-2", "four", "2x", "100000"}) {
    auto refused = tuneWith(bad, 32);
    ASSERT_FALSE(refused.ok()) << bad;
    EXPECT_EQ(refused.status().message(),
              std::string("KJIT_TUNE_THREADS is '") + bad +
                  "'; it takes a number of threads from 1 to 1024");
  }
}

/// Two tunings of one set, each measuring another configuration fastest:
/// the second starts inside the first's trials (nobody waits for the choice
/// lock: KJIT_CACHE_LOCK_TIMEOUT=0) and publishes first, so the first
/// adopts its choice. On a disk cache, or (`fleet`) in a store alone, the
/// test directory store (test/RemoteCache/Inputs/DirStore.c).
void AutotunerTest::raceTwoTunings(bool fleet) {
  std::string directory = temporaryDirectory();
  ASSERT_FALSE(directory.empty());
  ASSERT_EQ(setenv("KJIT_CACHE_LOCK_TIMEOUT", "0", 1), 0);
  std::vector<std::string> lines;
  RuntimeOptions options;
  if (fleet) {
#ifdef KJIT_TEST_DIRSTORE
    ASSERT_EQ(setenv("KJIT_TEST_STORE_DIR", directory.c_str(), 1), 0);
    std::string key = directory + "/key";
    std::FILE *file = std::fopen(key.c_str(), "w");
    ASSERT_NE(file, nullptr);
    std::fputs("a fleet secret of thirty-two byte\n", file);
    std::fclose(file);
    ASSERT_EQ(chmod(key.c_str(), 0600), 0);
    options.cacheDirectory = "";
    options.plugins = {KJIT_TEST_DIRSTORE};
    options.remoteCacheKeyFile = key;
#endif
  } else {
    options.cacheDirectory = directory + "/cache";
  }
  options.logAutotune = true;
  options.logSink = [&](kjit::plugin::LogLevel, std::string_view,
                        std::string_view message) {
    if (message.rfind("autotune ", 0) == 0)
      lines.emplace_back(message);
  };
  auto runtime = Runtime::create(std::move(options));
  ASSERT_EQ(unsetenv("KJIT_CACHE_LOCK_TIMEOUT"), 0);
  ASSERT_TRUE(runtime.ok()) << runtime.status();
  auto module = Module::fromText(**runtime, kCounts, "count.mlir");
  ASSERT_TRUE(module.ok()) << module.status();
  auto kernel = (*module)->kernel("count");
  ASSERT_TRUE(kernel.ok());
  std::vector<Argument> call = args(8);

  AutotuneSpec second;
  second.configs = {config(1), config(2)};
  second.key = {"n"};
  second.fakeLaunchNanos = {1000, 3000};
  auto other = Autotuner::create(**runtime, **kernel, std::move(second));
  ASSERT_TRUE(other.ok()) << other.status();
  AutotuneSpec first;
  first.configs = {config(1), config(2)};
  first.key = {"n"};
  first.fakeLaunchNanos = {3000, 1000};
  absl::StatusOr<TuningOutcome> inner = absl::UnknownError("not started");
  bool started = false;
  first.beforeTrials = [&] {
    if (!started) { // before the first trial
      started = true;
      inner = (*other)->tune(LaunchConfig(), call);
    }
    return absl::OkStatus();
  };
  auto tuner = Autotuner::create(**runtime, **kernel, std::move(first));
  ASSERT_TRUE(tuner.ok()) << tuner.status();
  auto outcome = (*tuner)->tune(LaunchConfig(), call);
  ASSERT_TRUE(outcome.ok()) << outcome.status();
  ASSERT_TRUE(inner.ok()) << inner.status();
  EXPECT_EQ(inner->winner, 0u);
  EXPECT_EQ(inner->choice, "published (won)");
  EXPECT_EQ(outcome->winner, 0u) << "the stored choice, not the measured one";
  std::string from = fleet ? "remote" : "disk";
  EXPECT_EQ(outcome->choice.rfind("adopted (" + from + ", by ", 0), 0u)
      << outcome->choice;
  EXPECT_EQ(outcome->results[1].from, "timed");
  std::string kept = fleet ? "the fleet's choice kept: config 0 (C=1, "
                             "num_warps=1) 1 us, by "
                           : "the stored choice kept: config 0 (C=1, "
                             "num_warps=1) 1 us, by ";
  bool said = false;
  for (const std::string &line : lines)
    if (line.find(kept) != std::string::npos &&
        line.find("; this process measured config 1 (C=2, num_warps=1) "
                  "fastest") != std::string::npos)
      said = true;
  EXPECT_TRUE(said) << ::testing::PrintToString(lines);
  // Launches from now on use the adopted choice: C=1 adds 1.
  int32_t sum = out_[1];
  ASSERT_TRUE((*tuner)->launch(LaunchConfig(), call).ok());
  EXPECT_EQ(out_[1], sum + 1);
  module->reset();
  runtime->reset();
  ASSERT_EQ(unsetenv("KJIT_TEST_STORE_DIR"), 0);
}

TEST_F(AutotunerTest, AChoiceStoredFirstByAnotherTuningIsAdopted) {
  raceTwoTunings(/*fleet=*/false);
}

#ifdef KJIT_TEST_DIRSTORE
TEST_F(AutotunerTest, TheFleetsChoiceStoredFirstIsAdopted) {
  raceTwoTunings(/*fleet=*/true);
}
#endif

TEST_F(AutotunerTest, AMedianNoRecordMayHoldIsUsedButNotStored) {
  // A clock that never moves: every median is 0, which no record may
  // claim. The choice is made and used, and nothing is stored.
  ASSERT_NO_FATAL_FAILURE(openCachedRuntime());
  AutotuneSpec spec;
  spec.configs = {config(1), config(2)};
  spec.key = {"n"};
  spec.clock = [] { return uint64_t(5); };
  auto tuner =
      Autotuner::create(*cachedRuntime_, *cachedKernel_, std::move(spec));
  ASSERT_TRUE(tuner.ok()) << tuner.status();
  std::vector<Argument> call = args(8);
  auto outcome = (*tuner)->tune(LaunchConfig(), call);
  ASSERT_TRUE(outcome.ok()) << outcome.status();
  EXPECT_EQ(outcome->results[0].medianNanos, 0);
  EXPECT_EQ(outcome->results[1].medianNanos, 0);
  EXPECT_EQ(outcome->clock, "host clock"); // a test's clock stands for it
  EXPECT_EQ(outcome->choice,
            "not stored (its median is outside the records' bounds)");
  for (const kjit::cache::Listing &entry :
       cachedRuntime_->diskCache()->list()) {
    auto read = cachedRuntime_->diskCache()->read(entry.key);
    ASSERT_TRUE(read.ok()) << read.status();
    EXPECT_NE(read->kind, kjit::cache::EntryKind::Tuning);
    EXPECT_NE(read->kind, kjit::cache::EntryKind::Choice);
  }
}

TEST_F(AutotunerTest, RecordsThatLeaveNothingToTimeCallNoTrialHook) {
  // A first tuning stores the timings and the choice; a second autotuner
  // finds the choice, a third (the choice removed) finds every timing:
  // neither runs a trial, so neither calls the front end's trial hooks.
  ASSERT_NO_FATAL_FAILURE(openCachedRuntime());
  std::vector<Argument> call = args(8);
  auto spec = [&] {
    AutotuneSpec made = specWithCosts({config(1), config(2)}, {});
    made.clock = nullptr;
    made.fakeLaunchNanos = {3000, 1000};
    return made;
  };
  auto first = Autotuner::create(*cachedRuntime_, *cachedKernel_, spec());
  ASSERT_TRUE(first.ok()) << first.status();
  ASSERT_TRUE((*first)->launch(LaunchConfig(), call).ok());
  EXPECT_EQ(afterCalls_, 1);
  int before = beforeCalls_;
  EXPECT_GT(before, 0);

  auto second = Autotuner::create(*cachedRuntime_, *cachedKernel_, spec());
  ASSERT_TRUE(second.ok()) << second.status();
  ASSERT_TRUE((*second)->launch(LaunchConfig(), call).ok());
  EXPECT_EQ((*second)->lastChosen()->text(), "C=2, num_warps=1");
  EXPECT_EQ(beforeCalls_, before);
  EXPECT_EQ(afterCalls_, 1);

  auto removed =
      cachedRuntime_->diskCache()->clear([](kjit::cache::EntryKind kind) {
        return kind == kjit::cache::EntryKind::Choice;
      });
  ASSERT_TRUE(removed.ok()) << removed.status();
  EXPECT_EQ(*removed, 1u);
  auto third = Autotuner::create(*cachedRuntime_, *cachedKernel_, spec());
  ASSERT_TRUE(third.ok()) << third.status();
  auto outcome = (*third)->tune(LaunchConfig(), call);
  ASSERT_TRUE(outcome.ok()) << outcome.status();
  EXPECT_EQ(outcome->trialLaunches, 0u);
  EXPECT_EQ(outcome->results[0].from, "disk");
  EXPECT_EQ(outcome->results[1].from, "disk");
  EXPECT_EQ(outcome->winner, 1u);
  EXPECT_EQ(outcome->choice, "published (won)");
  EXPECT_EQ(beforeCalls_, before);
  EXPECT_EQ(afterCalls_, 1);
}

TEST_F(AutotunerTest, ThePrunedSetIsTheRecordedSet) {
  // The set of a choice is what the prune function kept: keeping one
  // configuration more is another set, whose tuning finds the timings of
  // the others and times only the new one.
  ASSERT_NO_FATAL_FAILURE(openCachedRuntime());
  std::vector<Argument> call = args(8);
  auto spec = [&](const std::vector<size_t> &keep) {
    AutotuneSpec made = specWithCosts({config(1), config(2), config(3)}, {});
    made.clock = nullptr;
    made.fakeLaunchNanos = {3000, 2000, 1000};
    made.prune = [keep](const std::vector<TuningConfig> &,
                        const NamedArguments &) {
      return absl::StatusOr<std::vector<size_t>>(keep);
    };
    return made;
  };
  auto first = Autotuner::create(*cachedRuntime_, *cachedKernel_, spec({0, 1}));
  ASSERT_TRUE(first.ok()) << first.status();
  auto outcome = (*first)->tune(LaunchConfig(), call);
  ASSERT_TRUE(outcome.ok()) << outcome.status();
  EXPECT_EQ(outcome->winner, 1u);
  EXPECT_EQ(outcome->choice, "published (won)");
  EXPECT_TRUE(outcome->results[2].from.empty()) << "pruned: not looked at";

  auto second =
      Autotuner::create(*cachedRuntime_, *cachedKernel_, spec({0, 1, 2}));
  ASSERT_TRUE(second.ok()) << second.status();
  outcome = (*second)->tune(LaunchConfig(), call);
  ASSERT_TRUE(outcome.ok()) << outcome.status();
  EXPECT_EQ(outcome->results[0].from, "disk");
  EXPECT_EQ(outcome->results[1].from, "disk");
  EXPECT_EQ(outcome->results[2].from, "timed");
  EXPECT_EQ(outcome->winner, 2u);
  EXPECT_EQ(outcome->choice, "published (won)");

  // The first set again: its choice, nothing timed.
  auto third = Autotuner::create(*cachedRuntime_, *cachedKernel_, spec({1, 0}));
  ASSERT_TRUE(third.ok()) << third.status();
  outcome = (*third)->tune(LaunchConfig(), call);
  ASSERT_TRUE(outcome.ok()) << outcome.status();
  EXPECT_EQ(outcome->trialLaunches, 0u);
  EXPECT_EQ(outcome->winner, 1u);
  EXPECT_EQ(outcome->choice.rfind("found (disk, by ", 0), 0u)
      << outcome->choice;
}

} // namespace
