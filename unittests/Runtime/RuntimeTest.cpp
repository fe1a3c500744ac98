//===- RuntimeTest.cpp - the JIT runtime end to end on the host -----------===//
//
// Modules, kernels, the cache, globals and threads, through the runtime's
// C++ API with the host backend. Results are checked against values
// computed here independently.
//
//===----------------------------------------------------------------------===//

#include "kjit/Runtime/Runtime.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

using namespace kjit::rt;

namespace {

std::string example(const char *name) {
  return std::string(KJIT_EXAMPLES_DIR) + "/" + name;
}

std::string readFile(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

Argument tensor(const std::vector<float> &data) {
  return Argument::tensor(reinterpret_cast<uintptr_t>(data.data()),
                          DType::FP32);
}

std::shared_ptr<Module> parse(const char *text) {
  auto module = Module::fromText(text, "test.mlir");
  EXPECT_TRUE(module.ok()) << module.status();
  return module.ok() ? *module : nullptr;
}

TEST(Runtime, VectorAddComputesAndCachesItsSpecialization) {
  auto module = Module::load(example("vector_add.mlir"));
  ASSERT_TRUE(module.ok()) << module.status();
  auto kernel = (*module)->kernel("add");
  ASSERT_TRUE(kernel.ok()) << kernel.status();

  const int n = 5000; // not a multiple of 4: the scalar tail runs too
  std::vector<float> x(n), y(n), out(n, -1.0f);
  for (int i = 0; i < n; ++i) {
    x[i] = 0.5f * i;
    y[i] = 1000.0f - i;
  }
  LaunchConfig config;
  config.grid = {(n + 1023) / 1024, 1, 1};
  Argument args[] = {tensor(x), tensor(y), tensor(out), Argument::integer(n)};
  auto first = (*kernel)->launch(config, args);
  ASSERT_TRUE(first.ok()) << first.status();
  EXPECT_TRUE(first->launched);
  EXPECT_TRUE(first->compiled);
  for (int i = 0; i < n; ++i)
    ASSERT_EQ(out[i], x[i] + y[i]) << "at " << i;

  // The same specialization again: a hit, no compile.
  auto second = (*kernel)->launch(config, args);
  ASSERT_TRUE(second.ok()) << second.status();
  EXPECT_FALSE(second->compiled);
  EXPECT_EQ((*kernel)->stats().compiles, 1u);

  // A changed constexpr is a new entry.
  KeywordArgument block[] = {{"BLOCK", Argument::integer(512)}};
  config.grid = {(n + 511) / 512, 1, 1};
  auto third = (*kernel)->launch(config, args, block);
  ASSERT_TRUE(third.ok()) << third.status();
  EXPECT_TRUE(third->compiled);
  // A pointer that is no longer 16-byte aligned is a new entry.
  std::vector<float> wide(n + 1);
  Argument shifted[] = {
      Argument::tensor(reinterpret_cast<uintptr_t>(wide.data() + 1),
                       DType::FP32),
      tensor(y), tensor(out), Argument::integer(n)};
  auto fourth = (*kernel)->launch(config, shifted, block);
  ASSERT_TRUE(fourth.ok()) << fourth.status();
  EXPECT_TRUE(fourth->compiled);
  EXPECT_EQ((*kernel)->stats().compiles, 3u);
}

TEST(Runtime, DtypeChangesAndDoNotSpecialize) {
  auto module = parse(R"mlir(
kjit.kernel @touch(%p: !kjit.any, %n: i32 {kjit.do_not_specialize}) {
  kjit.return
}
)mlir");
  ASSERT_TRUE(module);
  Kernel *kernel = *module->kernel("touch");
  std::vector<float> f(4);
  std::vector<int32_t> i(4);
  LaunchConfig config;
  auto launch = [&](Argument p, int64_t n) {
    Argument args[] = {p, Argument::integer(n)};
    auto result = kernel->launch(config, args);
    EXPECT_TRUE(result.ok()) << result.status();
    return result.ok() && result->compiled;
  };
  EXPECT_TRUE(launch(tensor(f), 16));
  EXPECT_FALSE(launch(tensor(f), 17)); // do_not_specialize: 16 and 17 share
  EXPECT_TRUE(launch(Argument::tensor(uintptr_t(i.data()), DType::I32), 16));
  EXPECT_EQ(kernel->stats().compiles, 2u);
}

TEST(Runtime, ChangedGlobalIsAnErrorOrRecompiles) {
  auto module = Module::load(example("scaled_residual.mlir"));
  ASSERT_TRUE(module.ok()) << module.status();
  Kernel *kernel = *(*module)->kernel("scaled_residual");
  const int n = 300;
  std::vector<float> x(n), y(n);
  for (int i = 0; i < n; ++i)
    x[i] = float(i);
  LaunchConfig config;
  config.grid = {2, 1, 1};
  Argument args[] = {tensor(x), tensor(y), Argument::integer(n)};
  ASSERT_TRUE(kernel->launch(config, args).ok());
  for (int i = 0; i < n; ++i)
    ASSERT_EQ(y[i], x[i] * 0.5f + 1.0f);

  ASSERT_TRUE((*module)->setGlobal("SCALE", Argument::fp(2.0)).ok());
  auto changed = kernel->launch(config, args);
  ASSERT_FALSE(changed.ok());
  EXPECT_EQ(changed.status().message(),
            "Global variable SCALE has changed since we compiled this kernel, "
            "from 0.5 to 2.0");

  kernel->setGlobalChangePolicy(GlobalChangePolicy::Recompile);
  std::fill(y.begin(), y.end(), 0.0f);
  auto recompiled = kernel->launch(config, args);
  ASSERT_TRUE(recompiled.ok()) << recompiled.status();
  EXPECT_TRUE(recompiled->compiled);
  for (int i = 0; i < n; ++i)
    ASSERT_EQ(y[i], x[i] * 2.0f + 1.0f);

  // Setting the value it already has is not a change.
  ASSERT_TRUE((*module)->setGlobal("SCALE", Argument::fp(2.0)).ok());
  EXPECT_FALSE(kernel->launch(config, args)->compiled);
  auto unknown = (*module)->setGlobal("NOPE", Argument::fp(1.0));
  EXPECT_EQ(unknown.message(), "no global named 'NOPE' in " +
                                   example("scaled_residual.mlir") +
                                   " (globals: SCALE, SHIFT)");
  auto wrongKind = (*module)->setGlobal("SCALE", Argument::none());
  EXPECT_EQ(wrongKind.message(),
            "global 'SCALE' has type f32 and needs a number, not None");
  auto bits = Module::fromText(
      "kjit.global @B : i8 = 1\nkjit.kernel @k() { kjit.return }", "b.mlir");
  ASSERT_TRUE(bits.ok());
  EXPECT_EQ((*bits)->setGlobal("B", Argument::integer(300)).message(),
            "global 'B' of type i8 cannot hold an int (300)");
  EXPECT_TRUE((*bits)->setGlobal("B", Argument::integer(255)).ok());
}

TEST(Runtime, WarmupCompilesOnceWithoutLaunching) {
  auto module = Module::load(example("vector_add.mlir"));
  ASSERT_TRUE(module.ok());
  Kernel *kernel = *(*module)->kernel("add");
  Argument mocks[] = {Argument::mockTensor(DType::FP32),
                      Argument::mockTensor(DType::FP32),
                      Argument::mockTensor(DType::FP32), Argument::integer(8)};
  auto record = kernel->warmup(mocks);
  ASSERT_TRUE(record.ok()) << record.status();
  EXPECT_EQ(kernel->stats().compiles, 1u);

  // Aligned buffers select the warmed-up entry.
  alignas(64) float x[8] = {1, 2, 3, 4, 5, 6, 7, 8}, y[8] = {}, out[8] = {};
  Argument args[] = {Argument::tensor(uintptr_t(x), DType::FP32),
                     Argument::tensor(uintptr_t(y), DType::FP32),
                     Argument::tensor(uintptr_t(out), DType::FP32),
                     Argument::integer(8)};
  auto result = kernel->launch(LaunchConfig(), args);
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_FALSE(result->compiled);
  EXPECT_EQ(out[7], 8.0f);
  EXPECT_EQ(kernel->stats().compiles, 1u);

  // A record from warmup preloads into a fresh module without a compile
  // of its own at launch.
  auto other = Module::load(example("vector_add.mlir"));
  Kernel *fresh = *(*other)->kernel("add");
  ASSERT_TRUE(fresh->preload(toJson(*record)).ok());
  EXPECT_FALSE(fresh->launch(LaunchConfig(), args)->compiled);
  EXPECT_EQ(fresh->preload("{").message().substr(0, 21),
            "specialization record");
}

TEST(Runtime, KeywordsAreCheckedByName) {
  auto module = Module::load(example("vector_add.mlir"));
  Kernel *kernel = *(*module)->kernel("add");
  std::vector<float> x(4);
  Argument args[] = {tensor(x), tensor(x), tensor(x), Argument::integer(4)};
  KeywordArgument unknown[] = {{"colour", Argument::integer(1)}};
  auto result = kernel->launch(LaunchConfig(), args, unknown);
  ASSERT_FALSE(result.ok());
  EXPECT_NE(std::string(result.status().message()).find("colour"),
            std::string::npos)
      << result.status();
  KeywordArgument stream[] = {{"stream", Argument::integer(1)}};
  result = kernel->launch(LaunchConfig(), args, stream);
  ASSERT_FALSE(result.ok());
  EXPECT_NE(std::string(result.status().message()).find("stream"),
            std::string::npos)
      << result.status();
}

// A zero extent in any dimension (cdiv(0, BLOCK) for an empty input) is
// no error and runs no program, as in Triton's launcher; the kernel is
// still specialized and compiled.
TEST(Runtime, EmptyGridCompilesAndRunsNothing) {
  auto module = Module::load(example("vector_add.mlir"));
  Kernel *kernel = *(*module)->kernel("add");
  alignas(64) float x[4] = {1, 2, 3, 4}, y[4] = {1, 1, 1, 1},
                    out[4] = {-1, -1, -1, -1};
  Argument args[] = {Argument::tensor(uintptr_t(x), DType::FP32),
                     Argument::tensor(uintptr_t(y), DType::FP32),
                     Argument::tensor(uintptr_t(out), DType::FP32),
                     Argument::integer(4)};
  for (Grid grid : {Grid{0, 1, 1}, Grid{1, 0, 1}, Grid{1, 1, 0}}) {
    LaunchConfig config;
    config.grid = grid;
    auto result = kernel->launch(config, args);
    ASSERT_TRUE(result.ok()) << result.status();
    EXPECT_TRUE(result->launched);
  }
  EXPECT_EQ(kernel->stats().compiles, 1u);
  EXPECT_EQ(out[0], -1.0f) << "an empty grid ran a program";
  // The same entry then runs a real grid without compiling again.
  auto ran = kernel->launch(LaunchConfig(), args);
  ASSERT_TRUE(ran.ok()) << ran.status();
  EXPECT_FALSE(ran->compiled);
  EXPECT_EQ(out[3], 5.0f);
}

TEST(Runtime, GridCallbackSeesTheBoundArguments) {
  auto module = Module::load(example("vector_add.mlir"));
  Kernel *kernel = *(*module)->kernel("add");
  const int n = 3000;
  std::vector<float> x(n, 1.0f), y(n, 2.0f), out(n);
  LaunchConfig config;
  config.gridFn = [](absl::Span<const Argument> bound) -> Grid {
    int64_t count = int64_t(bound[3].asInt());
    int64_t block = int64_t(bound[4].asInt()); // the default, 1024
    return {uint32_t((count + block - 1) / block), 1, 1};
  };
  Argument args[] = {tensor(x), tensor(y), tensor(out), Argument::integer(n)};
  ASSERT_TRUE(kernel->launch(config, args).ok());
  for (int i = 0; i < n; ++i)
    ASSERT_EQ(out[i], 3.0f) << i;
}

TEST(Runtime, EightThreadsCompileOnce) {
  auto module = Module::load(example("vector_add.mlir"));
  Kernel *kernel = *(*module)->kernel("add");
  std::vector<std::vector<float>> outs(8, std::vector<float>(64));
  std::vector<float> x(64, 3.0f), y(64, 4.0f);
  std::vector<std::thread> threads;
  std::atomic<int> failures{0};
  for (int t = 0; t < 8; ++t)
    threads.emplace_back([&, t] {
      Argument args[] = {tensor(x), tensor(y), tensor(outs[t]),
                         Argument::integer(64)};
      if (!kernel->launch(LaunchConfig(), args).ok())
        ++failures;
    });
  for (auto &thread : threads)
    thread.join();
  EXPECT_EQ(failures.load(), 0);
  EXPECT_EQ(kernel->stats().compiles, 1u);
  for (const auto &out : outs)
    EXPECT_EQ(out[63], 7.0f);
}

TEST(Runtime, LaunchesFromCallbacksDoNotDisturbTheOuterLaunch) {
  auto module = Module::load(example("vector_add.mlir"));
  Kernel *kernel = *(*module)->kernel("add");
  auto other = Module::load(example("saxpy.mlir"));
  Kernel *saxpy = *(*other)->kernel("saxpy");
  const int n = 64;
  std::vector<float> x(n, 1.0f), y(n, 2.0f), out(n), inner(n, 1.0f);
  std::vector<float> innerOut(n);
  int nested = 0;
  // Both callbacks launch: the metadata callback another kernel, the grid
  // callback this same kernel with other arguments.
  kernel->setLaunchMetadata([&](absl::Span<const Argument>) {
    Argument args[] = {Argument::fp(3.0), tensor(inner), tensor(inner),
                       Argument::integer(n)};
    nested += saxpy->launch(LaunchConfig(), args).ok();
    return std::string();
  });
  LaunchConfig config;
  config.gridFn = [&](absl::Span<const Argument>) -> Grid {
    Argument args[] = {tensor(inner), tensor(inner), tensor(innerOut),
                       Argument::integer(n)};
    nested += kernel->launch(LaunchConfig(), args).ok();
    return {1, 1, 1};
  };
  Argument args[] = {tensor(x), tensor(y), tensor(out), Argument::integer(n)};
  auto result = kernel->launch(config, args);
  ASSERT_TRUE(result.ok()) << result.status();
  // The metadata callback is lazy: no plugin here has launch hooks, so only
  // the grid callback runs (LaunchHooksTest launches from the metadata
  // callback with hooks loaded).
  EXPECT_EQ(nested, 1);
  for (int i = 0; i < n; ++i)
    ASSERT_EQ(out[i], 3.0f) << i;
}

TEST(Runtime, AlternatingEntriesEachLaunchWithTheirOwnArguments) {
  // A thread keeps the argument template of the entry it launched last;
  // switching entries (n == 1 is specialized, so the two entries pass
  // different arguments) and switching kernels must replace it.
  auto module = Module::load(example("vector_add.mlir"));
  Kernel *add = *(*module)->kernel("add");
  auto other = Module::load(example("saxpy.mlir"));
  Kernel *saxpy = *(*other)->kernel("saxpy");
  const int n = 64;
  std::vector<float> x(n), y(n), out(n);
  for (int round = 0; round < 3; ++round) {
    for (int i = 0; i < n; ++i) {
      x[i] = float(i + round);
      y[i] = float(2 * i);
    }
    std::fill(out.begin(), out.end(), -1.0f);
    Argument one[] = {tensor(x), tensor(y), tensor(out), Argument::integer(1)};
    ASSERT_TRUE(add->launch(LaunchConfig(), one).ok());
    EXPECT_EQ(out[0], x[0] + y[0]);
    EXPECT_EQ(out[1], -1.0f) << "n == 1 wrote past the first element";
    Argument all[] = {tensor(x), tensor(y), tensor(out), Argument::integer(n)};
    ASSERT_TRUE(add->launch(LaunchConfig(), all).ok());
    for (int i = 0; i < n; ++i)
      ASSERT_EQ(out[i], x[i] + y[i]) << "round " << round << " at " << i;
    // saxpy(a, x, y, n): y = a * x + y, in place.
    std::vector<float> sy(y);
    Argument scaled[] = {Argument::fp(0.5), tensor(x), tensor(sy),
                         Argument::integer(n)};
    ASSERT_TRUE(saxpy->launch(LaunchConfig(), scaled).ok());
    for (int i = 0; i < n; ++i)
      ASSERT_EQ(sy[i], 0.5f * x[i] + y[i]) << "round " << round << " at " << i;
  }
  EXPECT_EQ(add->stats().compiles, 2u);
}

// A thread reuses the entry its last launch of a kernel used while the key
// is unchanged and the device's cache map is the same one (KernelLaunch.cpp):
// a recompile after a changed global, a failed bind in between and a key
// that comes back must each find the right entry.
TEST(Runtime, ARememberedEntryIsReusedOnlyWhileKeyAndMapHold) {
  auto module = Module::load(example("scaled_residual.mlir"));
  ASSERT_TRUE(module.ok()) << module.status();
  Kernel *kernel = *(*module)->kernel("scaled_residual");
  kernel->setGlobalChangePolicy(GlobalChangePolicy::Recompile);
  const int n = 40;
  std::vector<float> x(n), y(n);
  for (int i = 0; i < n; ++i)
    x[i] = float(i);
  Argument args[] = {tensor(x), tensor(y), Argument::integer(n)};
  // Compiled, or found on disk (a cache directory may be set): not found
  // in memory.
  auto missed = [](const LaunchResult &r) { return r.compiled || r.diskHit; };
  auto check = [&](float scale, const char *when) {
    for (int i = 0; i < n; ++i)
      ASSERT_EQ(y[i], x[i] * scale + 1.0f) << when << " at " << i;
    std::fill(y.begin(), y.end(), 0.0f);
  };
  for (int i = 0; i < 3; ++i) {
    auto launched = kernel->launch(LaunchConfig(), args);
    ASSERT_TRUE(launched.ok()) << launched.status();
    EXPECT_EQ(missed(*launched), i == 0);
    check(0.5f, "before the change");
  }
  ASSERT_TRUE((*module)->setGlobal("SCALE", Argument::fp(2.0)).ok());
  auto recompiled = kernel->launch(LaunchConfig(), args);
  ASSERT_TRUE(recompiled.ok()) << recompiled.status();
  EXPECT_TRUE(missed(*recompiled));
  check(2.0f, "after the change");
  ASSERT_TRUE(kernel->launch(LaunchConfig(), args).ok());
  check(2.0f, "after the change, again");

  // Another thread recompiles after a change: this thread's remembered
  // entry (of the old value) is in a replaced map, so it looks up again.
  ASSERT_TRUE((*module)->setGlobal("SCALE", Argument::fp(3.0)).ok());
  std::thread other([&] {
    auto there = kernel->launch(LaunchConfig(), args);
    EXPECT_TRUE(there.ok() && missed(*there));
  });
  other.join();
  check(3.0f, "on the other thread");
  auto here = kernel->launch(LaunchConfig(), args);
  ASSERT_TRUE(here.ok()) << here.status();
  EXPECT_FALSE(missed(*here));
  check(3.0f, "after another thread recompiled");

  // A bind that fails, then the same key again.
  Argument wrong[] = {tensor(x), tensor(y), Argument::fp(0.5)};
  EXPECT_FALSE(kernel->launch(LaunchConfig(), wrong).ok());
  auto again = kernel->launch(LaunchConfig(), args);
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_FALSE(missed(*again));
  check(3.0f, "after a failed bind");

  // Another key (n == 1) and back: two entries, each launched as itself.
  Argument single[] = {tensor(x), tensor(y), Argument::integer(1)};
  for (int round = 0; round < 2; ++round) {
    ASSERT_TRUE(kernel->launch(LaunchConfig(), single).ok());
    EXPECT_EQ(y[0], x[0] * 3.0f + 1.0f);
    EXPECT_EQ(y[1], 0.0f) << "n == 1 wrote past the first element";
    y[0] = 0.0f;
    ASSERT_TRUE(kernel->launch(LaunchConfig(), args).ok());
    check(3.0f, "after n == 1");
  }
  EXPECT_EQ(kernel->stats().compiles + kernel->stats().diskHits, 4u);
}

TEST(Runtime, HalfPrecisionGlobalsRoundOnceFromTheValue) {
  auto module = parse(R"mlir(
kjit.global @H : f16 = 1.0004882822
kjit.kernel @k(%o: !kjit.ptr<f16>) {
  %h = kjit.get_global @H : f16
  %c0 = arith.constant 0 : i32
  kjit.store %h, %o[%c0] : f16, !kjit.ptr<f16>, i32
  kjit.return
}
)mlir");
  ASSERT_TRUE(module);
  // 1.0004882822 is just above the midpoint of 1.0 and 1.0009765625:
  // rounded once it is 1.0009765625 (0x3C01); through float, 1.0.
  EXPECT_EQ(*module->global("H"), "1.0009765625");
  ASSERT_TRUE(module->setGlobal("H", Argument::fp(1.0004882822)).ok());
  uint16_t out = 0;
  Argument args[] = {Argument::tensor(uintptr_t(&out), DType::FP16)};
  auto result = (*module->kernel("k"))->launch(LaunchConfig(), args);
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(out, 0x3C01);
  auto tooBig = module->setGlobal("H", Argument::none());
  EXPECT_EQ(tooBig.message(),
            "global 'H' has type f16 and needs a number, not None");
}

// A global of a nested module is set under its module path, apart from the
// top module's global of the same symbol; names that are no global say
// which part is wrong.
TEST(Runtime, NestedModuleGlobalsAreSetByTheirPath) {
  auto module = parse(R"mlir(
kjit.global @S : i32 = 1
module @inner {
  kjit.global @S : i32 = 2
}
kjit.kernel @k(%o: !kjit.ptr<i32>) {
  %top = kjit.get_global @S : i32
  %nested = kjit.get_global @inner::@S : i32
  %ten = arith.constant 10 : i32
  %scaled = arith.muli %nested, %ten : i32
  %r = arith.addi %top, %scaled : i32
  %c0 = arith.constant 0 : i32
  kjit.store %r, %o[%c0] : i32, !kjit.ptr<i32>, i32
  kjit.return
}
)mlir");
  ASSERT_TRUE(module);
  ASSERT_TRUE(module->setGlobal("inner::S", Argument::integer(4)).ok());
  EXPECT_EQ(*module->global("inner::S"), "4");
  EXPECT_EQ(*module->global("S"), "1");
  int32_t out = 0;
  Argument args[] = {Argument::tensor(uintptr_t(&out), DType::I32)};
  auto result = (*module->kernel("k"))->launch(LaunchConfig(), args);
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(out, 41);

  ASSERT_TRUE(module->setGlobal("inner::S", Argument::integer(5)).ok());
  auto changed = (*module->kernel("k"))->launch(LaunchConfig(), args);
  EXPECT_EQ(changed.status().message(),
            "Global variable S of module @inner has changed since we "
            "compiled this kernel, from 4 to 5");

  const char *kGlobals = " (globals: S, inner::S)";
  EXPECT_EQ(module->setGlobal("outer::S", Argument::integer(1)).message(),
            std::string("no global named 'outer::S' in test.mlir: there is "
                        "no module 'outer' with globals") +
                kGlobals);
  EXPECT_EQ(module->global("inner::T").status().message(),
            std::string("no global named 'inner::T' in test.mlir: module "
                        "'inner' has no global 'T'") +
                kGlobals);
  for (const char *bad : {"inner:S", "inner::", "::S", "inner:::S", ""})
    EXPECT_EQ(module->setGlobal(bad, Argument::integer(1)).message(),
              "'" + std::string(bad) +
                  "' is not a global name: a global of the top module is "
                  "named by its symbol (SCALE), one of a nested module by "
                  "the module path and the symbol joined by '::' "
                  "(inner::SCALE)")
        << bad;
}

// Many kernels with workgroup memory in one thread: each compiled kernel is
// a dlopen'ed module with its own thread-local block, and past a few dozen
// the thread's TLS table grows during a first access. Values staged before
// the access must survive it. (The register clobber that once broke this,
// docs/HostTarget.md, depends on register allocation; the lowering test
// checks the accessor that prevents it.)
TEST(Runtime, ManyKernelsWithWorkgroupMemoryKeepTheirValues) {
  std::vector<std::shared_ptr<Module>> modules;
  for (int k = 0; k < 40; ++k) {
    std::string text = R"mlir(
memref.global "private" @scratch : memref<64xf32, #gpu.address_space<workgroup>>
kjit.kernel @stage(%in: !kjit.ptr<f32>, %out: !kjit.ptr<f32>) {
  %tid = gpu.thread_id x
  %t = arith.index_cast %tid : index to i32
  %v = kjit.load %in[%t] : !kjit.ptr<f32>, i32 -> f32
  %w = arith.addf %v, %v : f32
  %s = memref.get_global @scratch : memref<64xf32, #gpu.address_space<workgroup>>
  memref.store %w, %s[%tid] : memref<64xf32, #gpu.address_space<workgroup>>
  gpu.barrier
  %r = memref.load %s[%tid] : memref<64xf32, #gpu.address_space<workgroup>>
  kjit.store %r, %out[%t] : f32, !kjit.ptr<f32>, i32
  kjit.return
}
)mlir";
    // A distinct constant per module, so that each is its own compile.
    text += "kjit.global @ID : i32 = " + std::to_string(k) + "\n";
    auto module = Module::fromText(text, "stage.mlir");
    ASSERT_TRUE(module.ok()) << module.status();
    modules.push_back(*module);
  }
  std::vector<float> in(64), out(64);
  for (int i = 0; i < 64; ++i)
    in[i] = 1.5f + i;
  for (auto &module : modules) {
    std::fill(out.begin(), out.end(), 0.0f);
    Argument args[] = {tensor(in), tensor(out)};
    KeywordArgument warps[] = {{"num_warps", Argument::integer(2)}};
    auto result =
        (*module->kernel("stage"))->launch(LaunchConfig(), args, warps);
    ASSERT_TRUE(result.ok()) << result.status();
    for (int i = 0; i < 64; ++i)
      ASSERT_EQ(out[i], 2 * in[i]) << "thread " << i;
  }
}

TEST(Runtime, ReinterpretKeepsTheAddress) {
  Argument t = Argument::tensor(0x1000, DType::FP32, /*readOnly=*/true);
  Argument r = reinterpret(t, DType::I32);
  EXPECT_EQ(r.address(), 0x1000u);
  EXPECT_EQ(r.dtype(), DType::I32);
  EXPECT_TRUE(r.isReadOnly());
  EXPECT_EQ(reinterpret(Argument::integer(3), DType::I32).asInt(), 3);
}

TEST(Runtime, ModuleErrorsSayWhatIsWrong) {
  auto missing = Module::load("/nonexistent/k.mlir");
  EXPECT_EQ(missing.status().message(),
            "cannot read kernel IR file '/nonexistent/k.mlir': No such file or "
            "directory");
  auto malformed = Module::fromText("kjit.kernel @k(", "bad.mlir");
  ASSERT_FALSE(malformed.ok());
  EXPECT_NE(std::string(malformed.status().message())
                .find("bad.mlir:1:15: error: expected non-function type"),
            std::string::npos)
      << malformed.status();
  // A fault in the user's IR is InvalidArgument, not an internal error.
  EXPECT_EQ(malformed.status().code(), absl::StatusCode::kInvalidArgument);
  auto module = Module::load(example("vector_add.mlir"));
  EXPECT_EQ((*module)->kernel("sub").status().message(),
            "no kernel named 'sub' in " + example("vector_add.mlir") +
                " (kernels: add)");
}

TEST(Runtime, CompileErrorsKeepTheCompilersCode) {
  // An !kjit.any parameter cast to f32 but launched with a pointer: the
  // specialization does not fit the kernel, the user's fault.
  auto module = Module::fromText(R"mlir(
kjit.kernel @k(%a: !kjit.any) {
  %f = kjit.cast %a : !kjit.any to f32
  kjit.return
}
)mlir",
                                 "misfit.mlir");
  ASSERT_TRUE(module.ok()) << module.status();
  Kernel *kernel = *(*module)->kernel("k");
  alignas(16) float x[4];
  Argument args[] = {Argument::tensor(uintptr_t(x), DType::FP32)};
  auto result = kernel->launch(LaunchConfig(), args);
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.status().code(), absl::StatusCode::kInvalidArgument)
      << result.status();
  EXPECT_NE(std::string(result.status().message())
                .find("misfit.mlir:3:8: error: parameter 'a' is bound to "
                      "'!kjit.ptr<f32>', but this cast reads it as 'f32'"),
            std::string::npos)
      << result.status();
}

TEST(Runtime, AMissingCompilerLibraryIsReportedWithItsPath) {
  RuntimeOptions options;
  options.compilerLibrary = "/nonexistent/libkjit-compiler.so";
  auto runtime = Runtime::create(options);
  ASSERT_TRUE(runtime.ok()) << runtime.status();
  auto module = Module::fromText(**runtime, "", "empty.mlir");
  ASSERT_FALSE(module.ok());
  EXPECT_EQ(module.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(std::string(module.status().message())
                .find("cannot load the kjit compiler library "
                      "'/nonexistent/libkjit-compiler.so'"),
            std::string::npos)
      << module.status();
}

} // namespace

namespace {

// RuntimeOptions::cacheDirectory: a second runtime (as a second process
// would) finds the manifest and the kernel on the disk, loads neither the
// compiler nor anything else it does not need, and computes the same; an
// empty directory turns the cache off.
TEST(Runtime, DiskCacheServesALaterRuntime) {
  char pattern[] = "/tmp/kjit-runtime-test-XXXXXX";
  ASSERT_NE(mkdtemp(pattern), nullptr);
  std::string dir = std::string(pattern) + "/cache";
  const int n = 256;
  std::vector<float> x(n, 1.5f), y(n, 2.0f);
  auto run = [&](std::optional<std::string> cacheDirectory, bool &compiled,
                 bool &diskHit, bool &compilerLoaded) {
    RuntimeOptions options;
    options.readEnvironment = false;
    options.cacheDirectory = cacheDirectory;
    auto runtime = Runtime::create(options);
    ASSERT_TRUE(runtime.ok()) << runtime.status();
    auto module = Module::load(**runtime, example("vector_add.mlir"));
    ASSERT_TRUE(module.ok()) << module.status();
    auto kernel = (*module)->kernel("add");
    ASSERT_TRUE(kernel.ok()) << kernel.status();
    std::vector<float> out(n, 0.0f);
    Argument args[] = {tensor(x), tensor(y), tensor(out), Argument::integer(n)};
    LaunchConfig config;
    auto result = (*kernel)->launch(config, args);
    ASSERT_TRUE(result.ok()) << result.status();
    for (int i = 0; i < n; ++i)
      ASSERT_EQ(out[i], 3.5f) << "at " << i;
    compiled = result->compiled;
    diskHit = result->diskHit;
    EXPECT_EQ((*kernel)->stats().diskHits, diskHit ? 1u : 0u);
    compilerLoaded = (*runtime)->compilerLoaded();
    EXPECT_EQ((*runtime)->diskCache() != nullptr,
              cacheDirectory && !cacheDirectory->empty());
  };
  bool compiled, diskHit, compilerLoaded;
  run(dir, compiled, diskHit, compilerLoaded);
  EXPECT_TRUE(compiled);
  EXPECT_FALSE(diskHit);
  EXPECT_TRUE(compilerLoaded);
  run(dir, compiled, diskHit, compilerLoaded);
  EXPECT_FALSE(compiled);
  EXPECT_TRUE(diskHit);
  EXPECT_FALSE(compilerLoaded);
  run(std::string(), compiled, diskHit, compilerLoaded);
  EXPECT_TRUE(compiled);
  EXPECT_FALSE(diskHit);
  // readEnvironment = false and no directory: off as well.
  run(std::nullopt, compiled, diskHit, compilerLoaded);
  EXPECT_TRUE(compiled);
  std::string command = "rm -rf " + std::string(pattern);
  EXPECT_EQ(std::system(command.c_str()), 0);
}

} // namespace

// The file reloaded with one function edited (on its own line, so that no
// other function moves): the recompile names the function whose source
// changed, and only it, against the first load's compile.
TEST(RecompileLog, NamesTheFunctionWhoseSourceChanged) {
  std::vector<std::string> lines;
  RuntimeOptions options;
  options.readEnvironment = false;
  options.logRecompiles = true;
  options.logSink = [&](kjit::plugin::LogLevel, std::string_view,
                        std::string_view message) {
    if (message.find("recompiling") != std::string_view::npos)
      lines.emplace_back(message);
  };
  auto runtime = Runtime::create(options);
  ASSERT_TRUE(runtime.ok()) << runtime.status();
  std::string text = readFile(example("scaled_residual.mlir"));
  std::string edited = text;
  const std::string fma = "math.fma %v, %s, %t";
  size_t at = edited.find(fma);
  ASSERT_NE(at, std::string::npos);
  edited.replace(at, fma.size(), "math.fma %s, %v, %t");
  std::vector<float> x(256, 1.0f), y(256, 0.0f);
  auto launch = [&](const std::string &source) {
    auto module = Module::fromText(**runtime, source, "scaled_residual.mlir");
    ASSERT_TRUE(module.ok()) << module.status();
    Kernel *kernel = *(*module)->kernel("scaled_residual");
    Argument args[] = {tensor(x), tensor(y), Argument::integer(256)};
    LaunchConfig config;
    config.grid = {1, 1, 1};
    auto result = kernel->launch(config, args);
    ASSERT_TRUE(result.ok()) << result.status();
  };
  launch(text);
  EXPECT_TRUE(lines.empty());
  launch(edited);
  ASSERT_EQ(lines.size(), 1u);
  const std::string prefix = "recompiling scaled_residual: source of @scale ";
  EXPECT_EQ(lines[0].rfind(prefix, 0), 0u) << lines[0];
  EXPECT_EQ(lines[0].find(", "), std::string::npos) << lines[0];
  EXPECT_NE(lines[0].find(" (nearest of 1 compiled specialization)"),
            std::string::npos)
      << lines[0];
  // The same text once more: its specialization is the second load's, so
  // nothing differs (the module's own cache was new).
  launch(edited);
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(lines[1].rfind("recompiling scaled_residual: nothing differs", 0),
            0u)
      << lines[1];
}

// KJIT_LOG=recompiles (RuntimeOptions::logRecompiles): each compile of a
// kernel that already has compiled specializations says what differs from
// the nearest one; the first compile says nothing.
TEST(RecompileLog, SaysWhichPartOfTheKeyDiffers) {
  std::vector<std::string> lines;
  RuntimeOptions options;
  options.readEnvironment = false;
  options.logRecompiles = true;
  options.logSink = [&](kjit::plugin::LogLevel, std::string_view,
                        std::string_view message) {
    if (message.find("recompiling") != std::string_view::npos)
      lines.emplace_back(message);
  };
  auto runtime = Runtime::create(options);
  ASSERT_TRUE(runtime.ok()) << runtime.status();
  auto module = Module::load(**runtime, example("scaled_residual.mlir"));
  ASSERT_TRUE(module.ok()) << module.status();
  Kernel *kernel = *(*module)->kernel("scaled_residual");
  kernel->setGlobalChangePolicy(GlobalChangePolicy::Recompile);
  std::vector<float> x(4096, 1.0f), y(4096, 0.0f);
  auto launch = [&](int64_t n, const std::vector<KeywordArgument> &keywords) {
    Argument args[] = {tensor(x), tensor(y), Argument::integer(n)};
    LaunchConfig config;
    config.grid = {1, 1, 1};
    auto result = kernel->launch(config, args, keywords);
    ASSERT_TRUE(result.ok()) << result.status();
  };
  launch(100, {});
  EXPECT_TRUE(lines.empty());
  launch(4096, {}); // n becomes divisible by 16
  launch(4096, {{"BLOCK", Argument::integer(512)}});
  launch(4096, {{"num_warps", Argument::integer(8)}});
  ASSERT_TRUE((*module)->setGlobal("SCALE", Argument::fp(2.0)).ok());
  launch(4096, {});
  ASSERT_EQ(lines.size(), 4u);
  EXPECT_EQ(lines[0], "recompiling scaled_residual: n: i32 (N) -> i32 (D) "
                      "(nearest of 1 compiled specialization)");
  EXPECT_EQ(lines[1], "recompiling scaled_residual: BLOCK: constexpr = 256 "
                      "-> constexpr = 512 (nearest of 2 compiled "
                      "specializations)");
  EXPECT_EQ(lines[2], "recompiling scaled_residual: num_warps 4 -> 8 "
                      "(nearest of 3 compiled specializations)");
  EXPECT_NE(lines[3].find("global SCALE bits 0x3f000000 -> bits 0x40000000"),
            std::string::npos)
      << lines[3];
  // The global back to its first value: the specialization compiled with
  // it was dropped with the change, and now nothing differs from it.
  ASSERT_TRUE((*module)->setGlobal("SCALE", Argument::fp(0.5)).ok());
  launch(4096, {});
  ASSERT_EQ(lines.size(), 5u);
  EXPECT_EQ(lines[4], "recompiling scaled_residual: nothing differs from a "
                      "compiled specialization (its entry was dropped, e.g. "
                      "by a changed global) (nearest of 5 compiled "
                      "specializations)");
}
