//===- ManifestJsonTest.cpp - warm-start manifests and recompile facts ----===//
//
// The analysis a warm-start manifest carries (Module.cpp's analysisToJson /
// analysisFromJson) reads back exactly, with messages that name the file
// the reader loaded, an older manifest without source
// digests still reads, and every malformed member is refused with its
// message (a checksum protects the entry, so these are what a buggy or
// foreign writer could leave). Then the recompile log's comparison of
// facts whose parts differ (a function added or gone).
//
//===----------------------------------------------------------------------===//

#include "RecompileLog.h"
#include "RuntimeImpl.h"

#include <gtest/gtest.h>

#include <cstring>
#include <string>

using namespace kjit::rt;

namespace {

ModuleAnalysis sampleAnalysis() {
  ModuleAnalysis analysis;
  KernelAnalysis kernel;
  kernel.manifest.name = "k";
  KernelParam n;
  n.name = "n";
  n.type = ParamType::scalar(DType::I32);
  kernel.manifest.params.push_back(n);
  kernel.dependencyKey = "abc";
  kernel.usedGlobals = {"SCALE"};
  kernel.sourceDigests = {{"helper", "11"}, {"k", "22"}};
  analysis.kernels.push_back(kernel);
  analysis.invalidKernels.push_back({"bad", "kernel 'bad' is invalid"});
  analysis.globals.push_back({"SCALE", DType::FP32, 0x3f000000});
  return analysis;
}

TEST(ManifestJson, RoundTrip) {
  std::string json = analysisToJson(sampleAnalysis(), "file.mlir");
  absl::StatusOr<ModuleAnalysis> read = analysisFromJson(json, "file.mlir");
  ASSERT_TRUE(read.ok()) << read.status();
  ASSERT_EQ(read->kernels.size(), 1u);
  EXPECT_EQ(read->kernels[0].manifest.name, "k");
  EXPECT_EQ(read->kernels[0].dependencyKey, "abc");
  EXPECT_EQ(read->kernels[0].usedGlobals, std::vector<std::string>{"SCALE"});
  EXPECT_EQ(read->kernels[0].sourceDigests,
            (std::vector<std::pair<std::string, std::string>>{{"helper", "11"},
                                                              {"k", "22"}}));
  ASSERT_EQ(read->invalidKernels.size(), 1u);
  EXPECT_EQ(read->invalidKernels[0].first, "bad");
  ASSERT_EQ(read->globals.size(), 1u);
  EXPECT_EQ(read->globals[0].bits, 0x3f000000u);
}

// The key leaves the file's path out, so the entry may come from another
// checkout's file: the invalid kernels' messages name the file this
// process loaded, not the writer's.
TEST(ManifestJson, MessagesNameTheFileThisProcessLoaded) {
  ModuleAnalysis analysis = sampleAnalysis();
  analysis.invalidKernels[0].second =
      "kernel 'bad' of a/k.mlir is invalid:\na/k.mlir:1:1: error: no";
  std::string json = analysisToJson(analysis, "a/k.mlir");
  absl::StatusOr<ModuleAnalysis> read = analysisFromJson(json, "b/k.mlir");
  ASSERT_TRUE(read.ok()) << read.status();
  ASSERT_EQ(read->invalidKernels.size(), 1u);
  EXPECT_EQ(read->invalidKernels[0].second,
            "kernel 'bad' of b/k.mlir is invalid:\nb/k.mlir:1:1: error: no");
}

// A manifest written before the recompile log named functions.
TEST(ManifestJson, WithoutSourceDigests) {
  std::string json = analysisToJson(sampleAnalysis(), "file.mlir");
  const std::string member =
      R"(,"source_digests":[["helper","11"],["k","22"]])";
  size_t at = json.find(member);
  ASSERT_NE(at, std::string::npos) << json;
  json.erase(at, member.size());
  absl::StatusOr<ModuleAnalysis> read = analysisFromJson(json, "file.mlir");
  ASSERT_TRUE(read.ok()) << read.status();
  EXPECT_TRUE(read->kernels[0].sourceDigests.empty());
}

TEST(ManifestJson, EveryMessage) {
  struct Edit {
    const char *from, *to, *message;
  };
  const Edit edits[] = {
      {R"("kernels":[)", R"("kernelz":[)", "no kernels or globals"},
      {R"("globals":[{)", R"("globalz":[{)", "no kernels or globals"},
      {R"("dependency_key")", R"("dependency_kex")",
       "a kernel lacks its manifest, key or globals"},
      // The manifest is an object of the document, not JSON text in a
      // string.
      {R"("manifest":{)", R"("manifest":"x","old":{)",
       "a kernel lacks its manifest, key or globals"},
      {R"("used_globals":["SCALE"])", R"("used_globals":[7])",
       "a used global is not a name"},
      {R"("source_digests":[["helper","11"],["k","22"]])",
       R"("source_digests":"x")", "source_digests is not a list"},
      {R"(["helper","11"])", R"(["helper"])",
       "a source digest is not a [function, digest] pair"},
      {R"(["helper","11"])", R"(["helper",11])",
       "a source digest is not a [function, digest] pair"},
      {R"("invalid_kernels":[{"name":"bad","message":"kernel 'bad' is invalid"}])",
       R"("invalid_kernels":7)", "invalid_kernels is not a list"},
      {R"("message":)", R"("messagf":)",
       "an invalid kernel lacks its name or message"},
      {R"("type":"fp32")", R"("type":"fp33")", "a global is malformed"},
      {R"("bits":1056964608)", R"("bits":-1)", "a global is malformed"},
      {R"("bits":1056964608)", R"("bits":18446744073709551616)",
       "a global is malformed"},
  };
  for (const Edit &e : edits) {
    std::string json = analysisToJson(sampleAnalysis(), "file.mlir");
    size_t at = json.find(e.from);
    ASSERT_NE(at, std::string::npos) << e.from << " in " << json;
    json.replace(at, std::strlen(e.from), e.to);
    absl::StatusOr<ModuleAnalysis> read = analysisFromJson(json, "file.mlir");
    ASSERT_FALSE(read.ok()) << json;
    EXPECT_EQ(read.status().code(), absl::StatusCode::kDataLoss) << json;
    EXPECT_EQ(read.status().message(),
              std::string("manifest entry: ") + e.message)
        << json;
  }
}

// A manifest nested in the analysis is read with the manifest's own rules
// and messages (manifestFromJsonValue), as a manifest on its own is.
TEST(ManifestJson, TheNestedManifestIsVerifiedAsOne) {
  std::string json = analysisToJson(sampleAnalysis(), "file.mlir");
  ASSERT_NE(json.find(R"("manifest":{"version":1,"name":"k",)"),
            std::string::npos)
      << json;
  size_t at = json.find(R"("type":"i32")");
  ASSERT_NE(at, std::string::npos) << json;
  json.replace(at, std::strlen(R"("type":"i32")"), R"("type":"i33")");
  absl::StatusOr<ModuleAnalysis> read = analysisFromJson(json, "file.mlir");
  ASSERT_FALSE(read.ok()) << json;
  EXPECT_EQ(read.status().message(),
            "kernel manifest: field 'params[0].type': unknown type 'i33'");
}

// Facts are compared by part: a function the new source uses that the old
// did not, and one it no longer uses, show as "none".
TEST(RecompileLogFacts, PartsOnlyOneSideHas) {
  SpecializationFacts before = {
      {"n:", "i32 (D)"}, {"source of @k", "aaaa"}, {"source of @old", "bbbb"}};
  SpecializationFacts now = {
      {"n:", "i32 (D)"}, {"source of @k", "cccc"}, {"source of @new", "dddd"}};
  EXPECT_EQ(explainRecompile("k", now, {before}),
            "recompiling k: source of @k aaaa -> cccc, source of @new none -> "
            "dddd, source of @old bbbb -> none (nearest of 1 compiled "
            "specialization)");
  EXPECT_EQ(explainRecompile("k", now, {}), "");
}

} // namespace
