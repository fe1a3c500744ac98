//===- CacheKeyTest.cpp - every input of the disk key moves it ------------===//
//
// The mutation test of the key's completeness (docs/DiskCache.md "The
// key"): changing any one input of an artifact's key or a manifest's key
// gives another key; the same inputs, the same key; an environment variable
// that does not change code leaves it alone, and unset equals empty.
//
//===----------------------------------------------------------------------===//

#include "CacheKey.h"

#include "kjit/Cache/DiskCache.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <vector>

using namespace kjit::rt;

namespace {

/// The inputs of one key, owned here; `view` points an ArtifactKeyInputs
/// into them.
struct Inputs {
  std::string build = "kjit 0.1.0; runtime=gnu:aa; compiler=gnu:bb";
  std::string environment = "KJIT_DEBUG=\n";
  std::string extensions;
  std::string target = "host", arch = "x86_64";
  std::vector<std::string> formats = {"elf-shared-object"};
  std::vector<std::pair<std::string, std::string>> options = {
      {"libdevice", "/usr/local/cuda/nvvm/libdevice/libdevice.10.bc"}};
  std::string fingerprint = "kjit-host-backend;cpu=znver3;avx2";
  std::string dependencies = "d1d1";
  std::string specialization = "add[num_warps=4](x: *fp32)";
  std::vector<std::pair<std::string, uint64_t>> globals = {{"SCALE", 0x3f00}};
  std::string embeddedSourceName;

  std::string key() const {
    ArtifactKeyInputs in;
    in.buildIdentity = build;
    in.environment = environment;
    in.compilerExtensions = extensions;
    in.target = target;
    in.arch = arch;
    in.formats = formats;
    in.compileOptions = options;
    in.fingerprint = fingerprint;
    in.dependencyKey = dependencies;
    in.specializationKey = specialization;
    in.globals = globals;
    in.embeddedSourceName = embeddedSourceName;
    return artifactKey(in);
  }
};

TEST(CacheKey, EveryArtifactInputChangesTheKey) {
  const std::string base = Inputs().key();
  EXPECT_TRUE(kjit::cache::isValidKey(base)) << base;
  EXPECT_EQ(base, Inputs().key()) << "the same inputs, the same key";

  std::map<std::string, std::function<void(Inputs &)>> mutations = {
      {"the runtime build", [](Inputs &in) { in.build += "x"; }},
      {"the compiler build",
       [](Inputs &in) {
         in.build = "kjit 0.1.0; runtime=gnu:aa; compiler=gnu:bc";
       }},
      {"a codegen variable",
       [](Inputs &in) { in.environment = "KJIT_DEBUG=1\n"; }},
      {"an MLIR pass plugin",
       [](Inputs &in) { in.extensions = "pass-plugin=gnu:cc\n"; }},
      {"extra passes",
       [](Inputs &in) { in.extensions = "extra-passes=cse\n"; }},
      {"the target", [](Inputs &in) { in.target = "cuda"; }},
      {"the arch", [](Inputs &in) { in.arch = "aarch64"; }},
      {"a format", [](Inputs &in) { in.formats = {"ptx"}; }},
      {"another format", [](Inputs &in) { in.formats.push_back("ptx"); }},
      {"a compile option's value",
       [](Inputs &in) { in.options[0].second = "/opt/libdevice.bc"; }},
      {"a compile option's name",
       [](Inputs &in) { in.options[0].first = "libdevicf"; }},
      {"another compile option",
       [](Inputs &in) { in.options.push_back({"fast-math", "1"}); }},
      {"the fingerprint (CPU features)",
       [](Inputs &in) { in.fingerprint += ";avx512f"; }},
      {"the dependency key (kernel, callees, line)",
       [](Inputs &in) { in.dependencies = "d1d2"; }},
      {"the specialization",
       [](Inputs &in) { in.specialization = "add[num_warps=8](x: *fp32)"; }},
      {"a global's value", [](Inputs &in) { in.globals[0].second = 0x3f01; }},
      {"a global's name", [](Inputs &in) { in.globals[0].first = "SHIFT"; }},
      {"another global",
       [](Inputs &in) { in.globals.push_back({"SHIFT", 0}); }},
      {"the file's name, in code that embeds it (a debug compile)",
       [](Inputs &in) { in.embeddedSourceName = "a/k.mlir"; }},
      // Fields are framed: moving bytes from one to the next is no
      // collision.
      {"bytes moved between fields",
       [](Inputs &in) {
         in.target = "hostx";
         in.arch = "86_64";
       }},
  };
  std::set<std::string> seen = {base};
  for (auto &[what, mutate] : mutations) {
    Inputs inputs;
    mutate(inputs);
    std::string key = inputs.key();
    EXPECT_NE(key, base) << what << " did not change the key";
    EXPECT_TRUE(seen.insert(key).second) << what << " collides";
  }
}

TEST(CacheKey, EveryManifestInputChangesTheKey) {
  std::string base = manifestKey("build-a", "kjit.kernel @k() {}");
  EXPECT_EQ(base, manifestKey("build-a", "kjit.kernel @k() {}"));
  EXPECT_NE(base, manifestKey("build-b", "kjit.kernel @k() {}"));
  EXPECT_NE(base, manifestKey("build-a", "kjit.kernel @k()  {}"));
  // A manifest key is never an artifact key (different domains).
  EXPECT_NE(base, Inputs().key());
}

TEST(CacheKey, OnlyCodegenVariablesJoinTheKey) {
  std::map<std::string, std::string> env;
  auto lookup = [&](const char *name) -> const char * {
    auto it = env.find(name);
    return it == env.end() ? nullptr : it->second.c_str();
  };
  const std::string base = codegenEnvironmentKey(lookup);
  // Unrelated variables, and kjit's neutral ones, leave it alone.
  env["PATH"] = "/usr/bin";
  env["SOME_OTHER_VARIABLE"] = "1";
  for (const std::string &name : kjit::cache::neutralEnvironment())
    env[name] = "changed";
  EXPECT_EQ(codegenEnvironmentKey(lookup), base);
  // Unset and empty are one.
  env["KJIT_DEBUG"] = "";
  EXPECT_EQ(codegenEnvironmentKey(lookup), base);
  // Each registered variable changes it.
  std::set<std::string> seen = {base};
  for (const std::string &name : kjit::cache::codegenEnvironment()) {
    std::map<std::string, std::string> saved = env;
    env[name] = "1";
    std::string key = codegenEnvironmentKey(lookup);
    EXPECT_NE(key, base) << name;
    EXPECT_TRUE(seen.insert(key).second) << name;
    env = saved;
  }
  // Only kjit's own variables: a backend folds the ones that change its
  // code into its fingerprint (the cuda toolkit's: test/CudaBackend/
  // describe.test), and the cache knows none of them.
  for (const std::string &name : kjit::cache::codegenEnvironment()) {
    EXPECT_EQ(name.rfind("KJIT_", 0), 0u) << name;
    EXPECT_NE(name.rfind("KJIT_CUDA_", 0), 0u) << name;
    EXPECT_NE(name.rfind("KJIT_HOST_", 0), 0u) << name;
  }
  // The lists are disjoint.
  for (const std::string &name : kjit::cache::codegenEnvironment())
    for (const std::string &neutral : kjit::cache::neutralEnvironment())
      EXPECT_NE(name, neutral);
}

} // namespace
