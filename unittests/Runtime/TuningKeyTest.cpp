//===- TuningKeyTest.cpp - every input of the tuning keys moves them ------===//
//
// The mutation test of the autotuner's record keys (docs/Autotuning.md "The
// records"): changing any one input of a device class, a timing key or a
// choice key gives another key, with no two alike; the same inputs give the
// same key; the three kinds of key never collide.
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
      [](TimingInputs &in) { in.protocol = "kjit-trials/1"; },
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
      keys.insert(choiceKey("kjit-trials/1", std::string(64, 'c'), "n=4", set))
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

} // namespace
