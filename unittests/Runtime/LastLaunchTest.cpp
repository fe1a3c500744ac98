//===- LastLaunchTest.cpp - a thread's last launch, made again ------------===//
//
// A launch with the same inputs and config as the thread's last launch of
// the kernel is made again as it was, without binding (docs/Dispatch.md,
// "The last launch again"). These tests launch, on the host backend, a
// kernel whose output depends on every input it is given (a pointer, a
// scalar, a constexpr, a global, num_warps, the grid), so that a launch
// made again when something changed writes the wrong number or the wrong
// cell: each input, the config, the globals, hooks loaded in between, a
// keyword of the same value under another name, and threads of their own.
//
//===----------------------------------------------------------------------===//

#include "kjit/Plugin/PluginHost.h"
#include "kjit/Runtime/Runtime.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <thread>
#include <vector>

using namespace kjit::rt;

namespace {

/// o[pid] = G + n + C + 1000 * block_dim: which entry ran (C, and G's
/// baked value), with which scalar, on which cells, with how many threads.
constexpr const char *kWritesItsInputs = R"mlir(
kjit.global @G : i32 = 0
kjit.kernel @k(%o: !kjit.ptr<i32>, %n: i32, %C: i32 {kjit.constexpr}) {
  %g = kjit.get_global @G : i32
  %pid = kjit.program_id x
  %threads_index = gpu.block_dim x
  %threads = arith.index_cast %threads_index : index to i32
  %thousand = arith.constant 1000 : i32
  %t = arith.muli %threads, %thousand : i32
  %a = arith.addi %g, %n : i32
  %b = arith.addi %a, %C : i32
  %v = arith.addi %b, %t : i32
  kjit.store %v, %o[%pid] : i32, !kjit.ptr<i32>, i32
  kjit.return
}
)mlir";

Argument cells(std::vector<int32_t> &o) {
  return Argument::tensor(reinterpret_cast<uintptr_t>(o.data()), DType::I32);
}

class LastLaunch : public ::testing::Test {
protected:
  void SetUp() override {
    auto created = Runtime::create(RuntimeOptions());
    ASSERT_TRUE(created.ok()) << created.status();
    runtime = std::move(*created);
    auto loaded = Module::fromText(*runtime, kWritesItsInputs, "last.mlir");
    ASSERT_TRUE(loaded.ok()) << loaded.status();
    module = *loaded;
    auto found = module->kernel("k");
    ASSERT_TRUE(found.ok()) << found.status();
    kernel = *found;
  }

  /// Clears `o` to -1, launches, and returns the launch's status.
  absl::Status launch(std::vector<int32_t> &o, absl::Span<const Argument> args,
                      absl::Span<const KeywordArgument> keywords = {},
                      const LaunchConfig &config = {}) {
    std::fill(o.begin(), o.end(), -1);
    auto result = kernel->launch(config, args, keywords);
    if (!result.ok())
      return result.status();
    EXPECT_TRUE(result->launched);
    return absl::OkStatus();
  }

  std::unique_ptr<Runtime> runtime;
  std::shared_ptr<Module> module;
  Kernel *kernel = nullptr;
};

// 1000 x the threads of a program: one warp is 32 threads on the host
// backend too, and a launch without num_warps runs 4.
constexpr int32_t kOneWarp = 32000;
constexpr int32_t kDefaultWarps = 4 * kOneWarp;

// A loop over the same inputs runs the kernel at every launch, with them.
TEST_F(LastLaunch, EveryLaunchOfALoopRuns) {
  std::vector<int32_t> o(4);
  Argument args[] = {cells(o), Argument::integer(5), Argument::integer(7)};
  for (int i = 0; i < 6; ++i) {
    ASSERT_TRUE(launch(o, args).ok());
    EXPECT_EQ(o[0], kDefaultWarps + 12) << "launch " << i;
    EXPECT_EQ(o[1], -1) << "launch " << i;
  }
}

// Each input changed after a loop is launched as given, then the loop's
// again.
TEST_F(LastLaunch, AChangedInputIsBound) {
  std::vector<int32_t> o(1), other(1);
  Argument args[] = {cells(o), Argument::integer(5), Argument::integer(7)};
  for (int i = 0; i < 3; ++i)
    ASSERT_TRUE(launch(o, args).ok());

  Argument scalar[] = {cells(o), Argument::integer(6), Argument::integer(7)};
  ASSERT_TRUE(launch(o, scalar).ok());
  EXPECT_EQ(o[0], kDefaultWarps + 13);

  Argument constexprC[] = {cells(o), Argument::integer(5),
                           Argument::integer(8)};
  ASSERT_TRUE(launch(o, constexprC).ok());
  EXPECT_EQ(o[0], kDefaultWarps + 13) << "the entry of C=7 ran for C=8";

  Argument pointer[] = {cells(other), Argument::integer(5),
                        Argument::integer(7)};
  std::fill(other.begin(), other.end(), -1);
  ASSERT_TRUE(launch(o, pointer).ok());
  EXPECT_EQ(o[0], -1) << "written through the loop's pointer";
  EXPECT_EQ(other[0], kDefaultWarps + 12);

  ASSERT_TRUE(launch(o, args).ok());
  EXPECT_EQ(o[0], kDefaultWarps + 12);
  ASSERT_TRUE(launch(o, args).ok());
  EXPECT_EQ(o[0], kDefaultWarps + 12);
}

// Keywords: a changed value and a changed option are bound; the same value
// under another name is a bind of its own (here one that fails).
TEST_F(LastLaunch, KeywordsAreComparedByNameAndValue) {
  std::vector<int32_t> o(1);
  Argument positional[] = {cells(o), Argument::integer(5)};
  KeywordArgument c7[] = {{"C", Argument::integer(7)},
                          {"num_warps", Argument::integer(1)}};
  for (int i = 0; i < 3; ++i) {
    ASSERT_TRUE(launch(o, positional, c7).ok());
    EXPECT_EQ(o[0], kOneWarp + 12);
  }
  KeywordArgument c9[] = {{"C", Argument::integer(9)},
                          {"num_warps", Argument::integer(1)}};
  ASSERT_TRUE(launch(o, positional, c9).ok());
  EXPECT_EQ(o[0], kOneWarp + 14);

  KeywordArgument fourWarps[] = {{"C", Argument::integer(7)},
                                 {"num_warps", Argument::integer(4)}};
  for (int i = 0; i < 3; ++i) {
    ASSERT_TRUE(launch(o, positional, fourWarps).ok());
    EXPECT_EQ(o[0], kDefaultWarps + 12);
  }

  // The loop's keywords, with C renamed: the same values, another input.
  KeywordArgument renamed[] = {{"D", Argument::integer(7)},
                               {"num_warps", Argument::integer(4)}};
  absl::Status status = launch(o, positional, renamed);
  EXPECT_FALSE(status.ok());
  EXPECT_NE(std::string(status.message()).find("'D'"), std::string::npos)
      << status;
  EXPECT_EQ(o[0], -1);

  // Names of more than eight bytes differ in their first eight or after.
  for (const char *name : {"num_warpz", "nun_warps"}) {
    for (int i = 0; i < 3; ++i)
      ASSERT_TRUE(launch(o, positional, fourWarps).ok());
    KeywordArgument misspelt[] = {{"C", Argument::integer(7)},
                                  {name, Argument::integer(4)}};
    status = launch(o, positional, misspelt);
    EXPECT_NE(std::string(status.message()).find(name), std::string::npos)
        << status;
    EXPECT_EQ(o[0], -1);
  }
}

// The grid, the device and the grid callback are the config's: a change is
// a launch of its own.
TEST_F(LastLaunch, AChangedConfigIsLaunchedAsGiven) {
  std::vector<int32_t> o(4);
  Argument args[] = {cells(o), Argument::integer(5), Argument::integer(7)};
  for (int i = 0; i < 3; ++i)
    ASSERT_TRUE(launch(o, args).ok());

  LaunchConfig three;
  three.grid = {3, 1, 1};
  for (int i = 0; i < 3; ++i) {
    ASSERT_TRUE(launch(o, args, {}, three).ok());
    EXPECT_EQ(o[2], kDefaultWarps + 12);
    EXPECT_EQ(o[3], -1);
  }

  LaunchConfig computed;
  int calls = 0;
  computed.gridFn = [&](absl::Span<const Argument>) -> Grid {
    ++calls;
    return {4, 1, 1};
  };
  for (int i = 0; i < 3; ++i) {
    ASSERT_TRUE(launch(o, args, {}, computed).ok());
    EXPECT_EQ(o[3], kDefaultWarps + 12);
  }
  EXPECT_EQ(calls, 3) << "the grid callback runs at every launch";

  LaunchConfig outOfRange;
  outOfRange.device = 16;
  absl::Status status = launch(o, args, {}, outOfRange);
  EXPECT_NE(std::string(status.message())
                .find("device 16 is not one of the 1 device the backend for "
                      "target 'host' drives"),
            std::string::npos)
      << status;
  EXPECT_EQ(o[0], -1);
}

// A global assigned after a loop fails the next launch of the same inputs
// (the default policy), and the loop runs again once it is set back.
TEST_F(LastLaunch, AnAssignedGlobalIsChecked) {
  std::vector<int32_t> o(1);
  Argument args[] = {cells(o), Argument::integer(5), Argument::integer(7)};
  for (int i = 0; i < 3; ++i)
    ASSERT_TRUE(launch(o, args).ok());
  ASSERT_TRUE(module->setGlobal("G", Argument::integer(100)).ok());
  absl::Status status = launch(o, args);
  EXPECT_NE(std::string(status.message()).find("has changed since we compiled"),
            std::string::npos)
      << status;
  EXPECT_EQ(o[0], -1);
  ASSERT_TRUE(module->setGlobal("G", Argument::integer(0)).ok());
  for (int i = 0; i < 3; ++i) {
    ASSERT_TRUE(launch(o, args).ok());
    EXPECT_EQ(o[0], kDefaultWarps + 12);
  }
}

// Hooks loaded between two launches of a loop see the next one: pre-run
// and launch hooks alike.
TEST_F(LastLaunch, HooksLoadedDuringALoopSeeTheNextLaunch) {
  std::vector<int32_t> o(1);
  Argument args[] = {cells(o), Argument::integer(5), Argument::integer(7)};
  for (int i = 0; i < 3; ++i)
    ASSERT_TRUE(launch(o, args).ok());
  ASSERT_TRUE(runtime->plugins().loadPlugin(KJIT_TEST_PLUGIN).ok());
  for (int i = 0; i < 3; ++i) {
    ::testing::internal::CaptureStderr();
    absl::Status status = launch(o, args);
    std::string log = ::testing::internal::GetCapturedStderr();
    ASSERT_TRUE(status.ok()) << status;
    EXPECT_EQ(o[0], kDefaultWarps + 12);
    EXPECT_NE(log.find("pre_run kernel=k"), std::string::npos) << log;
    EXPECT_NE(log.find("launch_enter kernel=k"), std::string::npos) << log;
    EXPECT_NE(log.find("launch_exit kernel=k"), std::string::npos) << log;
  }
}

// Threads keep their own last launches: each loop writes its own cells
// with its own scalar while the others run.
TEST_F(LastLaunch, EachThreadMakesItsOwnAgain) {
  constexpr int kThreads = 4, kLaunches = 200;
  std::vector<std::vector<int32_t>> outputs(kThreads, std::vector<int32_t>(1));
  std::vector<int> wrong(kThreads, 0);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      std::vector<int32_t> &o = outputs[t];
      Argument args[] = {cells(o), Argument::integer(t), Argument::integer(7)};
      for (int i = 0; i < kLaunches; ++i) {
        o[0] = -1;
        auto result = kernel->launch(LaunchConfig(), args);
        if (!result.ok() || o[0] != kDefaultWarps + 7 + t)
          ++wrong[t];
      }
    });
  for (std::thread &thread : threads)
    thread.join();
  for (int t = 0; t < kThreads; ++t)
    EXPECT_EQ(wrong[t], 0) << "thread " << t;
}

} // namespace
