//===- BinderAllocTest.cpp - the binder's hit path never allocates --------===//
//
// Counts operator new calls (AllocCounter.h replaces it in this binary)
// around binding, key hashing and a cache lookup, for the kernels the
// benchmark times and for launches with keyword arguments and options.
//
//===----------------------------------------------------------------------===//

#include "AllocCounter.h"
#include "BinderKernels.h"

#include "kjit/Model/Binder.h"

#include "absl/container/flat_hash_map.h"

#include <gtest/gtest.h>

using namespace kjit::rt;
using kjit::rt::testing::allocationCount;

namespace {

class HitPath : public ::testing::TestWithParam<int> {};

TEST_P(HitPath, BindHashAndLookupDoNotAllocate) {
  kjit::rt::testing::BenchKernel k =
      kjit::rt::testing::makeBenchKernel(GetParam());
  absl::StatusOr<BindPlan> plan = BindPlan::create(k.manifest);
  ASSERT_TRUE(plan.ok()) << plan.status();
  Binding b = plan->makeBinding();
  ASSERT_TRUE(plan->bind(k.args, b).ok());
  absl::flat_hash_map<SpecializationKey, int, KeyHash, KeyEq> cache;
  cache.emplace(SpecializationKey(b.key()), 7);

  long before = allocationCount.load();
  int hits = 0;
  for (int i = 0; i < 1000; ++i) {
    if (!plan->bind(k.args, b).ok())
      break;
    auto it = cache.find(b.key());
    hits += it != cache.end() && it->second == 7;
  }
  EXPECT_EQ(allocationCount.load() - before, 0);
  EXPECT_EQ(hits, 1000);
}

INSTANTIATE_TEST_SUITE_P(Sizes, HitPath, ::testing::Values(1, 8, 32));

TEST(HitPathKeywords, KeywordsAndOptionsDoNotAllocate) {
  kjit::rt::testing::BenchKernel k = kjit::rt::testing::makeBenchKernel(8);
  absl::StatusOr<BindPlan> plan = BindPlan::create(k.manifest);
  ASSERT_TRUE(plan.ok());
  std::vector<Argument> positional(k.args.begin(), k.args.begin() + 5);
  std::vector<KeywordArgument> keywords = {{"num_warps", Argument::integer(8)},
                                           {"p7", k.args[7]},
                                           {"p6", k.args[6]},
                                           {"p5", k.args[5]},
                                           {"debug", Argument::boolean(true)}};
  Binding b = plan->makeBinding();
  ASSERT_TRUE(plan->bind(positional, keywords, b).ok());
  long before = allocationCount.load();
  for (int i = 0; i < 1000; ++i)
    ASSERT_TRUE(plan->bind(positional, keywords, b).ok());
  EXPECT_EQ(allocationCount.load() - before, 0);
}

TEST(AllocCounter, SeesAllocations) {
  // Guards the test above against a counter that never counts.
  long before = allocationCount.load();
  kjit::rt::testing::BenchKernel k = kjit::rt::testing::makeBenchKernel(8);
  absl::StatusOr<BindPlan> plan = BindPlan::create(k.manifest);
  ASSERT_TRUE(plan.ok());
  Binding b = plan->makeBinding();
  EXPECT_GT(allocationCount.load() - before, 0);
  // An error builds a message, which allocates.
  before = allocationCount.load();
  EXPECT_FALSE(plan->bind({}, b).ok());
  EXPECT_GT(allocationCount.load() - before, 0);
}

} // namespace
