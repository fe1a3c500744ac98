//===- TuningKeyTest.cpp - every input of the tuning keys moves them ------===//
//
// The mutation test of the autotuner's record keys (docs/Autotuning.md "The
// records"): changing any one input of a device class, a timing key or a
// choice key gives another key, with no two alike; the same inputs give the
// same key; the three kinds of key never collide. And the metadata echo: a
// record that claims anything else than this process expects is refused,
// with what it claims.
//
//===----------------------------------------------------------------------===//

#include "TuningStore.h"

#include <gtest/gtest.h>

#include <functional>
#include <set>
#include <string>
#include <vector>

using namespace kjit::rt;

namespace {

struct DeviceInputs {
  std::string target = "cuda", arch = "sm_90";
  std::vector<std::string> formats = {"cubin", "ptx"};
  std::vector<std::pair<std::string, std::string>> options = {
      {"libdevice", "/usr/local/cuda/nvvm/libdevice/libdevice.10.bc"}};
  uint32_t maxThreads = 1024;
  std::string fingerprint = "cuda 12.8; sm_90";
  std::string key() const {
    DeviceClassInputs in;
    in.target = target;
    in.arch = arch;
    in.formats = formats;
    in.compileOptions = options;
    in.maxThreadsPerBlock = maxThreads;
    in.fingerprint = fingerprint;
    return deviceClass(in);
  }
};

struct TimingInputs {
  std::string protocol = std::string(kTrialProtocol), clock = "host";
  std::string build = "kjit 0.1.0; runtime=gnu:aa", environment = "X=\n";
  std::string extensions, deviceClass = std::string(64, 'c');
  std::string source = "d1d1", call = "W=1", tuningKey = "n=4; x=f32";
  std::string config = "C=1, num_warps=2";
  std::string key() const {
    TimingKeyInputs in;
    in.protocol = protocol;
    in.clock = clock;
    in.buildIdentity = build;
    in.environment = environment;
    in.compilerExtensions = extensions;
    in.deviceClass = deviceClass;
    in.source = source;
    in.callSpecialization = call;
    in.tuningKey = tuningKey;
    return timingKey(in, config);
  }
};

TEST(TuningKey, EveryInputOfADeviceClassMovesIt) {
  std::vector<std::function<void(DeviceInputs &)>> mutations = {
      [](DeviceInputs &in) { in.target = "host"; },
      [](DeviceInputs &in) { in.arch = "sm_100"; },
      [](DeviceInputs &in) { in.formats = {"ptx", "cubin"}; },
      [](DeviceInputs &in) { in.formats.pop_back(); },
      [](DeviceInputs &in) { in.options[0].second += "x"; },
      [](DeviceInputs &in) { in.options.clear(); },
      [](DeviceInputs &in) { in.maxThreads = 512; },
      [](DeviceInputs &in) { in.fingerprint = "cuda 12.9; sm_90"; },
  };
  std::set<std::string> keys = {DeviceInputs().key()};
  EXPECT_EQ(DeviceInputs().key(), DeviceInputs().key());
  for (const auto &mutate : mutations) {
    DeviceInputs in;
    mutate(in);
    EXPECT_TRUE(keys.insert(in.key()).second) << keys.size();
  }
}

TEST(TuningKey, EveryInputOfATimingKeyMovesIt) {
  std::vector<std::function<void(TimingInputs &)>> mutations = {
      [](TimingInputs &in) { in.protocol = "kjit-trials/2"; },
      [](TimingInputs &in) { in.clock = "fake"; },
      [](TimingInputs &in) { in.build += "'"; },
      [](TimingInputs &in) { in.environment = "X=1\n"; },
      [](TimingInputs &in) { in.extensions = "plugin"; },
      [](TimingInputs &in) { in.deviceClass = std::string(64, 'd'); },
      [](TimingInputs &in) { in.source = "d2d2"; },
      [](TimingInputs &in) { in.call = "W=2"; },
      [](TimingInputs &in) { in.tuningKey = "n=8; x=f32"; },
      [](TimingInputs &in) { in.config = "C=2, num_warps=2"; },
      // Framed fields: moving text across a boundary is another key.
      [](TimingInputs &in) {
        in.call = "W=1n=4";
        in.tuningKey = "; x=f32";
      },
  };
  std::set<std::string> keys = {TimingInputs().key()};
  EXPECT_EQ(TimingInputs().key(), TimingInputs().key());
  for (const auto &mutate : mutations) {
    TimingInputs in;
    mutate(in);
    EXPECT_TRUE(keys.insert(in.key()).second) << keys.size();
  }
}

TEST(TuningKey, EveryInputOfAChoiceKeyMovesIt) {
  std::vector<std::string> set = {std::string(64, '1'), std::string(64, '2')};
  std::string base =
      choiceKey(kTrialProtocol, std::string(64, 'c'), "n=4", set);
  std::set<std::string> keys = {base};
  EXPECT_EQ(choiceKey(kTrialProtocol, std::string(64, 'c'), "n=4", set), base);
  EXPECT_TRUE(
      keys.insert(choiceKey("kjit-trials/2", std::string(64, 'c'), "n=4", set))
          .second);
  EXPECT_TRUE(
      keys.insert(choiceKey(kTrialProtocol, std::string(64, 'd'), "n=4", set))
          .second);
  EXPECT_TRUE(
      keys.insert(choiceKey(kTrialProtocol, std::string(64, 'c'), "n=8", set))
          .second);
  std::vector<std::string> more = set;
  more.push_back(std::string(64, '3'));
  EXPECT_TRUE(
      keys.insert(choiceKey(kTrialProtocol, std::string(64, 'c'), "n=4", more))
          .second);
  std::vector<std::string> fewer = {set[0]};
  EXPECT_TRUE(
      keys.insert(choiceKey(kTrialProtocol, std::string(64, 'c'), "n=4", fewer))
          .second);
  // A timing key over the same text is not a choice key.
  EXPECT_EQ(keys.count(TimingInputs().key()), 0u);
}

TuningPlan plan() {
  TuningPlan made;
  made.kernel = "count";
  made.source = "d1d1";
  made.tuningKey = "n=8; o=i32";
  made.protocol = std::string(kTrialProtocol);
  made.clock = "host";
  made.device = {"host", "x86_64", std::string(64, 'c')};
  made.configs = {"C=1", "C=2"};
  made.timingKeys = {std::string(64, '2'), std::string(64, '1')};
  made.set = {std::string(64, '1'), std::string(64, '2')};
  made.choiceKey = std::string(64, '9');
  return made;
}

kjit::cache::TimingRecord timingOf(const TuningPlan &in, size_t index) {
  kjit::cache::TimingRecord record;
  in.echoInto(index, record);
  return record;
}

TEST(TuningKey, ATimingRecordThatClaimsAnythingElseIsRefused) {
  TuningPlan in = plan();
  EXPECT_EQ(TuningStore::misfit(in, 0, timingOf(in, 0)), "");
  auto refused = [&](auto change, const std::string &expected) {
    kjit::cache::TimingRecord record = timingOf(in, 0);
    change(record);
    EXPECT_EQ(TuningStore::misfit(in, 0, record), expected);
  };
  using Record = kjit::cache::TimingRecord;
  refused([](Record &r) { r.kernel = "add"; },
          "its metadata names kernel 'add', not 'count'");
  refused([](Record &r) { r.source = "d2d2"; },
          "its metadata names kernel source 'd2d2', not this kernel's 'd1d1'");
  refused([](Record &r) { r.device.deviceClass = std::string(64, 'e'); },
          "its metadata names device class '" + std::string(64, 'e') +
              "', not this device's '" + std::string(64, 'c') + "'");
  refused([](Record &r) { r.device.target = "cuda"; },
          "its metadata names target 'cuda', not 'host'");
  refused([](Record &r) { r.device.arch = "aarch64"; },
          "its metadata names arch 'aarch64', not 'x86_64'");
  refused([](Record &r) { r.tuningKey = "n=9; o=i32"; },
          "its metadata names tuning key 'n=9; o=i32', not 'n=8; o=i32'");
  refused([](Record &r) { r.config = "C=2"; },
          "its metadata names configuration 'C=2', not 'C=1'");
  refused([](Record &r) { r.protocol = "kjit-trials/2"; },
          "its metadata names protocol 'kjit-trials/2', not "
          "'kjit-trials/1'");
  refused([](Record &r) { r.clock = "fake"; },
          "its metadata names clock 'fake', not 'host'");
}

TEST(TuningKey, AChoiceThatClaimsAnythingElseIsRefused) {
  TuningPlan in = plan();
  kjit::cache::ChoiceRecord good;
  good.kernel = in.kernel;
  good.device = in.device;
  good.tuningKey = in.tuningKey;
  good.timingKeys = in.set;
  good.winner = in.timingKeys[1];
  good.winnerConfig = "C=2";
  EXPECT_EQ(TuningStore::misfit(in, good), "");
  auto refused = [&](auto change, const std::string &expected) {
    kjit::cache::ChoiceRecord choice = good;
    change(choice);
    EXPECT_EQ(TuningStore::misfit(in, choice), expected);
  };
  using Choice = kjit::cache::ChoiceRecord;
  refused([](Choice &c) { c.kernel = "add"; },
          "its metadata names kernel 'add', not 'count'");
  refused([](Choice &c) { c.device.arch = "aarch64"; },
          "its metadata names arch 'aarch64', not 'x86_64'");
  refused([](Choice &c) { c.tuningKey = "n=9; o=i32"; },
          "its metadata names tuning key 'n=9; o=i32', not 'n=8; o=i32'");
  refused([](Choice &c) { c.timingKeys.pop_back(); },
          "its metadata names another set of configurations (1 timing "
          "keys), not this one (2)");
  refused([](Choice &c) { c.winnerConfig = "C=1"; },
          "its metadata names winning configuration 'C=1', not 'C=2'");
}

} // namespace
