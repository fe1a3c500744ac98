//===- CachedAnalysisTest.cpp - the analysis a warm process starts from ---===//
//
// A module loaded from a manifest entry of the disk cache is made from the
// cached analysis: its kernels' parameters, defaults and keys, and the
// globals they check. Its first compile analyses the file afresh and
// compares the whole analysis. An entry that disagrees (only someone who
// may write the cache, or a fleet member, can write one) fails that
// compile rather than run code bound by the wrong analysis, and is
// replaced by the fresh analysis, so that the next load is right
// (docs/DiskCache.md).
//
//===----------------------------------------------------------------------===//

#include "CacheKey.h"
#include "RuntimeImpl.h"
#include "kjit/Cache/DiskCache.h"
#include "kjit/Model/InputFile.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <string>
#include <vector>

using namespace kjit::rt;

namespace {

const std::string kVectorAdd =
    std::string(KJIT_EXAMPLES_DIR) + "/vector_add.mlir";

std::unique_ptr<Runtime> runtimeWithCache(const std::string &directory) {
  RuntimeOptions options;
  options.readEnvironment = false;
  options.cacheDirectory = directory;
  auto runtime = Runtime::create(options);
  EXPECT_TRUE(runtime.ok()) << runtime.status();
  return runtime.ok() ? std::move(*runtime) : nullptr;
}

/// The manifest entry of vector_add.mlir in `runtime`'s disk cache.
kjit::cache::DiskCache::Lookup manifestOf(Runtime &runtime) {
  absl::StatusOr<std::string> text =
      readInputFile(kVectorAdd, kMaxKernelFileBytes, "kernel IR file");
  EXPECT_TRUE(text.ok()) << text.status();
  return runtime.diskCache()->get(kjit::cache::EntryKind::Manifest,
                                  manifestKey(runtime.buildIdentity(), *text));
}

/// BLOCK's default in the analysis of a manifest entry's metadata.
int64_t blockDefault(const std::string &metadata) {
  absl::StatusOr<ModuleAnalysis> analysis =
      analysisFromJson(metadata, kVectorAdd);
  EXPECT_TRUE(analysis.ok()) << analysis.status();
  if (!analysis.ok())
    return -1;
  for (const KernelParam &param : analysis->kernels.at(0).manifest.params)
    if (param.name == "BLOCK" && param.defaultValue)
      return int64_t(param.defaultValue->asInt());
  return -1;
}

/// Launches add(x, y, out, n=1024) on one program, with BLOCK's default:
/// every output when BLOCK is 1024.
absl::StatusOr<LaunchResult> launchAdd(Runtime &runtime,
                                       std::vector<float> &out) {
  auto module = Module::load(runtime, kVectorAdd);
  if (!module.ok())
    return module.status();
  auto kernel = (*module)->kernel("add");
  if (!kernel.ok())
    return kernel.status();
  static std::vector<float> x(1024, 1.0f), y(1024, 2.0f);
  out.assign(1024, 0.0f);
  Argument args[] = {Argument::tensor(uintptr_t(x.data()), DType::FP32, true),
                     Argument::tensor(uintptr_t(y.data()), DType::FP32, true),
                     Argument::tensor(uintptr_t(out.data()), DType::FP32),
                     Argument::integer(1024)};
  return (*kernel)->launch(LaunchConfig(), args);
}

TEST(CachedAnalysis, ADisagreeingAnalysisIsRefusedAndReplaced) {
  std::string base = ::testing::TempDir() + "kjit-cached-analysis-XXXXXX";
  ASSERT_NE(mkdtemp(base.data()), nullptr);
  const std::string directory = base + "/cache";

  // A first process analyses the file, and stores the analysis.
  {
    std::unique_ptr<Runtime> runtime = runtimeWithCache(directory);
    ASSERT_NE(runtime, nullptr);
    ASSERT_TRUE(Module::load(*runtime, kVectorAdd).ok());
  }
  // Someone who may write the cache changes BLOCK's default in it: a
  // launch bound by it would cover 64 of the 1024 elements.
  {
    std::unique_ptr<Runtime> runtime = runtimeWithCache(directory);
    ASSERT_NE(runtime, nullptr);
    kjit::cache::DiskCache::Lookup lookup = manifestOf(*runtime);
    ASSERT_EQ(lookup.result, kjit::cache::DiskCache::Lookup::Result::Hit);
    ASSERT_EQ(blockDefault(lookup.entry.metadata), 1024);
    absl::StatusOr<ModuleAnalysis> analysis =
        analysisFromJson(lookup.entry.metadata, kVectorAdd);
    ASSERT_TRUE(analysis.ok()) << analysis.status();
    for (KernelParam &param : analysis->kernels.at(0).manifest.params)
      if (param.name == "BLOCK")
        param.defaultValue = Argument::integer(64);
    lookup.entry.metadata = analysisToJson(*analysis, kVectorAdd);
    ASSERT_TRUE(runtime->diskCache()->put(lookup.entry));
  }
  // A warm process binds by the cached analysis; its compile finds the
  // disagreement, runs nothing, and puts the fresh analysis in its place.
  {
    std::unique_ptr<Runtime> runtime = runtimeWithCache(directory);
    ASSERT_NE(runtime, nullptr);
    std::vector<float> out;
    absl::StatusOr<LaunchResult> launched = launchAdd(*runtime, out);
    ASSERT_FALSE(launched.ok()) << "a launch bound by the edited analysis ran";
    EXPECT_NE(std::string(launched.status().message())
                  .find("the cached analysis of " + kVectorAdd +
                        " disagrees with a fresh one (it was replaced); "
                        "load it again"),
              std::string::npos)
        << launched.status();
    EXPECT_EQ(out[0], 0.0f);
    kjit::cache::DiskCache::Lookup lookup = manifestOf(*runtime);
    ASSERT_EQ(lookup.result, kjit::cache::DiskCache::Lookup::Result::Hit);
    EXPECT_EQ(blockDefault(lookup.entry.metadata), 1024);
  }
  // The next process loads the replaced entry: every output.
  {
    std::unique_ptr<Runtime> runtime = runtimeWithCache(directory);
    ASSERT_NE(runtime, nullptr);
    std::vector<float> out;
    absl::StatusOr<LaunchResult> launched = launchAdd(*runtime, out);
    ASSERT_TRUE(launched.ok()) << launched.status();
    EXPECT_EQ(out[0], 3.0f);
    EXPECT_EQ(out[1023], 3.0f);
  }
  std::string remove = "rm -rf '" + base + "'";
  EXPECT_EQ(std::system(remove.c_str()), 0);
}

} // namespace
