//===- TestEnvironment.cpp - the environment lit gives, without lit -------===//
//
// lit runs the unit tests with KJIT_CACHE_DIR= (unittests/lit.cfg.py): no
// disk cache, so that the compiles a test counts are its own. A test binary
// run by hand would read the user's cache (~/.cache/kjit) instead, and a
// test counting compiles would see disk hits. Every test binary links this
// file, which sets the same before the first test. Tests that want a disk
// cache pass RuntimeOptions::cacheDirectory.
//
//===----------------------------------------------------------------------===//

#include <gtest/gtest.h>

#include <cstdlib>

namespace {

class NoDiskCache final : public testing::Environment {
public:
  void SetUp() override { setenv("KJIT_CACHE_DIR", "", /*overwrite=*/1); }
};

[[maybe_unused]] testing::Environment *const kNoDiskCache =
    testing::AddGlobalTestEnvironment(new NoDiskCache);

} // namespace
