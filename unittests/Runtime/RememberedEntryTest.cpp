//===- RememberedEntryTest.cpp - the remembered entry of the hit path -----===//
//
// A thread reuses the entry its last launch of a kernel used while the key,
// the device and the device's map hold (docs/Runtime.md, "A thread
// remembers the entry it launched last"). These tests launch a kernel whose
// output is its constexpr (plus a global), so that a launch of the wrong
// entry writes the wrong number: a failed launch between two binds of one
// key, nested launches from the grid callback, warmup and preload between
// launches, and two devices. And the binder's memory of keywords, in a
// Binding that a bind sizes for another plan.
//
//===----------------------------------------------------------------------===//

#include "kjit/Model/Binder.h"
#include "kjit/Model/Specialization.h"
#include "kjit/Runtime/Runtime.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

using namespace kjit::rt;

namespace {

/// o[0] = G + C: the entry launched is the one of C (and of G's baked
/// value).
constexpr const char *kStoresItsConstexpr = R"mlir(
kjit.global @G : i32 = 0
kjit.kernel @k(%o: !kjit.ptr<i32>, %C: i32 {kjit.constexpr}) {
  %g = kjit.get_global @G : i32
  %v = arith.addi %g, %C : i32
  %c0 = arith.constant 0 : i32
  kjit.store %v, %o[%c0] : i32, !kjit.ptr<i32>, i32
  kjit.return
}
)mlir";

Argument out(int32_t &cell) {
  return Argument::tensor(reinterpret_cast<uintptr_t>(&cell), DType::I32);
}

/// Launches k(o, C=c) with `config`; the value it wrote, or -1 (and the
/// error in `error`) when the launch failed.
int32_t launchC(Kernel &kernel, int64_t c, const LaunchConfig &config = {},
                LaunchResult *result = nullptr, std::string *error = nullptr) {
  int32_t cell = -1;
  Argument args[] = {out(cell), Argument::integer(c)};
  auto launched = kernel.launch(config, args);
  if (!launched.ok()) {
    if (error)
      *error = std::string(launched.status().message());
    return -1;
  }
  if (result)
    *result = *launched;
  return cell;
}

struct Loaded {
  std::shared_ptr<Module> module;
  Kernel *kernel = nullptr;
};

Loaded load(Runtime *runtime = nullptr) {
  auto module =
      runtime ? Module::fromText(*runtime, kStoresItsConstexpr, "hit-path.mlir")
              : Module::fromText(kStoresItsConstexpr, "hit-path.mlir");
  EXPECT_TRUE(module.ok()) << module.status();
  if (!module.ok())
    return {};
  auto kernel = (*module)->kernel("k");
  EXPECT_TRUE(kernel.ok()) << kernel.status();
  return {*module, kernel.ok() ? *kernel : nullptr};
}

// A launch whose bind succeeds with a new key and which then fails before
// the cache (a device the backend does not drive) must not leave the entry of
// the old key remembered: the next launch binds the same new key, so the binder
// reports it unchanged, on the same device and map as the old entry.
TEST(RememberedEntry, AKeyThatChangedBeforeAFailedLaunchIsLookedUp) {
  Loaded k = load();
  ASSERT_NE(k.kernel, nullptr);
  EXPECT_EQ(launchC(*k.kernel, 1), 1);
  EXPECT_EQ(launchC(*k.kernel, 1), 1);
  LaunchConfig outOfRange;
  outOfRange.device = 16;
  std::string error;
  EXPECT_EQ(launchC(*k.kernel, 2, outOfRange, nullptr, &error), -1);
  EXPECT_NE(error.find("device 16 is not one of the"), std::string::npos)
      << error;
  LaunchResult result;
  EXPECT_EQ(launchC(*k.kernel, 2, {}, &result), 2)
      << "the entry of C=1 was launched for C=2";
  EXPECT_TRUE(result.compiled || result.diskHit);
  EXPECT_EQ(launchC(*k.kernel, 2), 2);
  EXPECT_EQ(launchC(*k.kernel, 1), 1);
}

// The same with the globals check: a changed global fails the launch of a
// new key (GlobalChangePolicy::Error); the global is set back, and the new
// key is launched.
TEST(RememberedEntry, AKeyThatChangedBeforeAGlobalsErrorIsLookedUp) {
  Loaded k = load();
  ASSERT_NE(k.kernel, nullptr);
  EXPECT_EQ(launchC(*k.kernel, 1), 1);
  EXPECT_EQ(launchC(*k.kernel, 1), 1);
  ASSERT_TRUE(k.module->setGlobal("G", Argument::integer(100)).ok());
  std::string error;
  EXPECT_EQ(launchC(*k.kernel, 2, {}, nullptr, &error), -1);
  EXPECT_NE(error.find("has changed since we compiled"), std::string::npos)
      << error;
  ASSERT_TRUE(k.module->setGlobal("G", Argument::integer(0)).ok());
  EXPECT_EQ(launchC(*k.kernel, 2), 2) << "the entry of C=1 was launched";
  EXPECT_EQ(launchC(*k.kernel, 1), 1);
}

// A grid callback that launches the same kernel with another key, while the
// outer loop changes its own key every other launch: the nested launches
// change the map under the outer one and must not touch its binding, and
// each outer launch runs its own key's entry.
TEST(RememberedEntry, NestedLaunchesOfTheSameKernelLeaveTheOuterLoopIntact) {
  Loaded k = load();
  ASSERT_NE(k.kernel, nullptr);
  int32_t nestedCell = -1;
  int nestedLaunches = 0;
  int64_t outerC = 0;
  int64_t nestedC = 0;
  LaunchConfig config;
  config.gridFn = [&](absl::Span<const Argument> bound) -> Grid {
    EXPECT_EQ(bound[1].asInt(), outerC) << "before the nested launch";
    Argument nestedArgs[] = {out(nestedCell), Argument::integer(nestedC)};
    auto nested = k.kernel->launch(LaunchConfig(), nestedArgs);
    EXPECT_TRUE(nested.ok()) << nested.status();
    ++nestedLaunches;
    // The outer launch's bound arguments are still its own.
    EXPECT_EQ(bound[1].asInt(), outerC) << "after the nested launch";
    return {1, 1, 1};
  };
  const int64_t outer[] = {1, 1, 3, 3, 1, 1, 3, 5, 5, 1};
  for (size_t i = 0; i < std::size(outer); ++i) {
    outerC = outer[i];
    nestedC = 10 + int64_t(i % 3);
    nestedCell = -1;
    int32_t cell = -1;
    Argument args[] = {out(cell), Argument::integer(outerC)};
    auto launched = k.kernel->launch(config, args);
    ASSERT_TRUE(launched.ok()) << launched.status();
    EXPECT_EQ(cell, outerC) << "outer launch " << i;
    EXPECT_EQ(nestedCell, nestedC) << "nested launch " << i;
  }
  EXPECT_EQ(nestedLaunches, int(std::size(outer)));
  // Plain launches after the loop: the thread's state is the outer one's.
  EXPECT_EQ(launchC(*k.kernel, 1), 1);
  EXPECT_EQ(launchC(*k.kernel, 11), 11);
  EXPECT_EQ(launchC(*k.kernel, 11), 11);
  EXPECT_EQ(k.kernel->stats().compiles + k.kernel->stats().diskHits, 6u);
}

// Warmup and preload between launches of one thread insert entries (the map
// changes) without touching the thread's binding; the launches that follow
// find what they inserted, and each runs its own key's entry.
TEST(RememberedEntry, WarmupAndPreloadBetweenLaunches) {
  Loaded k = load();
  Loaded donor = load();
  ASSERT_NE(k.kernel, nullptr);
  ASSERT_NE(donor.kernel, nullptr);
  auto hit = [](const LaunchResult &r) { return !r.compiled && !r.diskHit; };
  LaunchResult result;
  EXPECT_EQ(launchC(*k.kernel, 1), 1);
  EXPECT_EQ(launchC(*k.kernel, 1), 1);

  int32_t cell = -1;
  Argument two[] = {out(cell), Argument::integer(2)};
  auto warmed = k.kernel->warmup(two);
  ASSERT_TRUE(warmed.ok()) << warmed.status();
  EXPECT_EQ(launchC(*k.kernel, 1, {}, &result), 1);
  EXPECT_TRUE(hit(result));
  EXPECT_EQ(launchC(*k.kernel, 2, {}, &result), 2)
      << "the remembered entry of C=1 was launched for C=2";
  EXPECT_TRUE(hit(result)) << "not the warmed-up entry";
  EXPECT_EQ(launchC(*k.kernel, 2), 2);

  // A record warmed up by another module of the same text, preloaded here.
  Argument six[] = {out(cell), Argument::integer(6)};
  auto record = donor.kernel->warmup(six);
  ASSERT_TRUE(record.ok()) << record.status();
  ASSERT_TRUE(k.kernel->preload(toJson(*record)).ok());
  EXPECT_EQ(launchC(*k.kernel, 2, {}, &result), 2);
  EXPECT_TRUE(hit(result));
  EXPECT_EQ(launchC(*k.kernel, 6, {}, &result), 6)
      << "the remembered entry of C=2 was launched for C=6";
  EXPECT_TRUE(hit(result)) << "not the preloaded entry";
  EXPECT_EQ(launchC(*k.kernel, 6), 6);
  EXPECT_EQ(launchC(*k.kernel, 1), 1);
}

// One runtime, two devices (the test backend of test/Runtime, which
// refuses a handle loaded on one device launched on the other's stream):
// one key launched on both in turn runs each device's own entry.
TEST(RememberedEntry, OneKeyOnTwoDevicesInTurn) {
  const char *const variables[] = {"KJIT_TEST_TWO_DEVICES_ARCH0",
                                   "KJIT_TEST_TWO_DEVICES_ARCH1",
                                   "KJIT_TEST_TWO_DEVICES_FINGERPRINT0",
                                   "KJIT_TEST_TWO_DEVICES_FINGERPRINT1",
                                   "KJIT_TEST_TWO_DEVICES_TARGET1",
                                   "KJIT_TEST_TWO_DEVICES_LOG"};
  for (const char *name : variables)
    unsetenv(name);
  RuntimeOptions options;
  options.readEnvironment = false;
  options.target = "host";
  options.plugins = {KJIT_TWO_DEVICES_PLUGIN};
  auto runtime = Runtime::create(std::move(options));
  ASSERT_TRUE(runtime.ok()) << runtime.status();
  {
    Loaded k = load(runtime->get());
    ASSERT_NE(k.kernel, nullptr);
    const int32_t devices[] = {0, 0, 1, 1, 0, 1, 0, 0, 1};
    for (size_t i = 0; i < std::size(devices); ++i) {
      LaunchConfig config;
      config.device = devices[i];
      config.stream = 0x7d00u + uint64_t(devices[i]);
      std::string error;
      EXPECT_EQ(launchC(*k.kernel, 4, config, nullptr, &error), 4)
          << "launch " << i << " on device " << devices[i] << ": " << error;
    }
  }
}

// A Binding bound by one plan and then by another (the binder sizes it
// again, as its comment allows) must forget the keyword codes it remembered
// for the first plan: they index the first plan's parameters. Here the
// second plan's parameter vector still holds, past its end, the destroyed
// parameters it was built with (a resize keeps the storage), so the stale
// code 5 would find "f" there and bind a parameter that does not exist,
// instead of refusing the keyword (out of range even without that setup).
TEST(RememberedEntry, ABindingSizedForAnotherPlanForgetsItsKeywords) {
  auto named = [](const char *name) {
    KernelParam p;
    p.name = name;
    p.type = ParamType::any();
    return p;
  };
  KernelManifest wide;
  wide.name = "wide";
  for (const char *name : {"a", "b", "c", "d", "e", "f"})
    wide.params.push_back(named(name));
  auto widePlan = BindPlan::create(std::move(wide), LaunchOptions());
  ASSERT_TRUE(widePlan.ok()) << widePlan.status();

  KernelManifest narrow;
  narrow.name = "narrow";
  for (const char *name : {"x", "b", "c", "d", "e", "f"})
    narrow.params.push_back(named(name));
  narrow.params[0].defaultValue = Argument::integer(0);
  narrow.params.resize(1);
  auto narrowPlan = BindPlan::create(std::move(narrow), LaunchOptions());
  ASSERT_TRUE(narrowPlan.ok()) << narrowPlan.status();

  Binding binding = widePlan->makeBinding();
  std::vector<Argument> five(5, Argument::integer(1));
  std::vector<KeywordArgument> f = {{"f", Argument::integer(2)}};
  ASSERT_TRUE(widePlan->bind(five, f, binding).ok());
  absl::Status status = narrowPlan->bind({}, f, binding);
  EXPECT_EQ(
      std::string(status.message()),
      "kernel 'narrow': keyword argument 'f' was specified but unrecognised "
      "(neither a parameter nor a launch option)");
  std::vector<KeywordArgument> x = {{"x", Argument::integer(3)}};
  ASSERT_TRUE(narrowPlan->bind({}, x, binding).ok());
  EXPECT_EQ(binding.arguments()[0].asInt(), 3);
}

} // namespace

// A launch loop that gives the same inputs again launches the values the
// last launch encoded; one that changes an argument in place (the same
// vector, another address) must launch the new one, and going back must
// launch the old one again.
TEST(RememberedEntry, ArgumentsChangedInPlaceAreLaunched) {
  Loaded k = load();
  ASSERT_NE(k.kernel, nullptr);
  int32_t a = -1, b = -1;
  std::vector<Argument> args = {out(a), Argument::integer(3)};
  for (int round = 0; round < 2; ++round) {
    a = b = -1;
    ASSERT_TRUE(k.kernel->launch({}, args).ok());
    EXPECT_EQ(a, 3);
    a = -1;
    ASSERT_TRUE(k.kernel->launch({}, args).ok()); // the same inputs again
    EXPECT_EQ(a, 3);
    a = -1;
    args[0] = out(b);
    ASSERT_TRUE(k.kernel->launch({}, args).ok());
    EXPECT_EQ(b, 3);
    EXPECT_EQ(a, -1) << "the last launch's address was launched";
    args[0] = out(a);
  }
}
