//===- PluginHostTest.cpp - PluginHost through its C++ API ----------------===//
//
// What lit cannot easily show: many threads dispatching at once, the host's
// return values, and the log sink. The plugins come from test/Plugins.
//
//===----------------------------------------------------------------------===//

#include "kjit/Plugin/PluginHost.h"

#include "gtest/gtest.h"

#include <algorithm>
#include <cstdlib>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

using namespace kjit::plugin;

namespace {

std::string plugin(const std::string &name) {
  return std::string(KJIT_TEST_PLUGIN_DIR) + "/libkjit-test-" + name + ".so";
}

std::string str(const absl::Status &status) {
  return std::string(status.message().data(), status.message().size());
}

/// Collects everything the host and its plugins log, from any thread.
struct Log {
  std::mutex mutex;
  std::vector<std::string> lines;
  LogSink sink() {
    return [this](LogLevel level, std::string_view source,
                  std::string_view message) {
      std::lock_guard<std::mutex> lock(mutex);
      lines.push_back(std::to_string(static_cast<int>(level)) + " " +
                      std::string(source) + ": " + std::string(message));
    };
  }
  size_t count(std::string_view needle) {
    std::lock_guard<std::mutex> lock(mutex);
    return std::count_if(lines.begin(), lines.end(), [&](const std::string &l) {
      return l.find(needle) != std::string::npos;
    });
  }
};

LaunchInfo launchOf(std::string_view name) {
  LaunchInfo info;
  info.kernelName = name;
  info.key = "key";
  return info;
}

TEST(PluginHostTest, FailedLoadReturnsTheLoggedMessage) {
  Log log;
  PluginHost host(log.sink());
  absl::Status status = host.loadPlugin("/nonexistent/libp.so");
  ASSERT_FALSE(status.ok());
  EXPECT_EQ(str(status), "cannot load plugin '/nonexistent/libp.so': no such "
                         "file or not readable");
  ASSERT_EQ(log.lines.size(), 1u);
  EXPECT_EQ(log.lines[0], "0 kjit: " + str(status));
  EXPECT_TRUE(host.pluginNames().empty());
}

TEST(PluginHostTest, PluginLogsCarryItsNameAndLevel) {
  Log log;
  PluginHost host(log.sink());
  ASSERT_TRUE(host.loadPlugin(plugin("alpha")).ok());
  EXPECT_EQ(log.count("2 alpha: alpha: init (host ABI 1.0)"), 1u);
  EXPECT_EQ(host.pluginNames(), std::vector<std::string>{"alpha"});
}

TEST(PluginHostTest, NoHooksMeansNoCorrelationId) {
  PluginHost host([](LogLevel, std::string_view, std::string_view) {});
  EXPECT_FALSE(host.hasLaunchHooks());
  EXPECT_FALSE(host.hasPreRunHooks());
  LaunchInfo info = launchOf("k");
  LaunchRecord record = host.runLaunchEnter(info);
  EXPECT_EQ(record.correlationId(), 0u);
  host.runLaunchExit(record, info);
  EXPECT_EQ(host.runCacheHook(CompileInfo{}), CacheDecision::Continue);
}

TEST(PluginHostTest, LoadsFromEnvironmentInOrder) {
  Log log;
  PluginHost host(log.sink());
  std::string list = plugin("beta") + "::" + plugin("alpha");
  ASSERT_EQ(setenv("KJIT_PLUGINS", list.c_str(), 1), 0);
  EXPECT_EQ(host.loadFromEnvironment(), 2u);
  unsetenv("KJIT_PLUGINS");
  EXPECT_EQ(host.pluginNames(), (std::vector<std::string>{"beta", "alpha"}));
  EXPECT_TRUE(host.hasLaunchHooks());
  EXPECT_TRUE(host.hasPreRunHooks());
}

TEST(PluginHostTest, SkipWinsAndEveryCacheHookRuns) {
  Log log;
  PluginHost host(log.sink());
  ASSERT_TRUE(host.loadPlugin(plugin("skip")).ok());
  ASSERT_TRUE(host.loadPlugin(plugin("alpha")).ok());
  CompileInfo info;
  info.kernelName = "k";
  EXPECT_EQ(host.runCacheHook(info), CacheDecision::Skip);
  EXPECT_EQ(log.count("alpha: cache kernel=k"), 1u);
}

TEST(PluginHostTest, NothingReachesPluginsAfterShutdown) {
  Log log;
  PluginHost host(log.sink());
  ASSERT_TRUE(host.loadPlugin(plugin("alpha")).ok());
  LaunchInfo info = launchOf("k");
  LaunchRecord open = host.runLaunchEnter(info);
  host.shutdown();
  EXPECT_EQ(log.count("alpha: fini"), 1u);
  // The exit of a launch entered before shutdown does not reach a plugin
  // whose fini ran, nor does anything else.
  host.runLaunchExit(open, info);
  host.runPreRunHooks("k", {});
  EXPECT_EQ(log.count("launch_exit"), 0u);
  EXPECT_EQ(log.count("pre_run"), 0u);
  EXPECT_FALSE(host.hasLaunchHooks());
  host.shutdown(); // idempotent: fini ran once
  EXPECT_EQ(log.count("alpha: fini"), 1u);
}

/// Launches from many threads at once: every launch gets its own id, and a
/// plugin without KJIT_CAP_THREAD_SAFE never runs two entries at once (it
/// logs "overlapping calls" if it does).
void launchFromThreads(PluginHost &host, std::set<uint64_t> &ids) {
  constexpr int kThreads = 8, kLaunches = 200;
  std::mutex mutex;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&] {
      for (int i = 0; i < kLaunches; ++i) {
        LaunchInfo info = launchOf("k");
        LaunchRecord record = host.runLaunchEnter(info);
        {
          std::lock_guard<std::mutex> lock(mutex);
          ids.insert(record.correlationId());
        }
        host.runLaunchExit(record, info);
      }
    });
  for (std::thread &t : threads)
    t.join();
  EXPECT_EQ(ids.size(), size_t(kThreads * kLaunches));
  EXPECT_EQ(ids.count(0), 0u);
}

TEST(PluginHostTest, SerializesPluginsThatAreNotThreadSafe) {
  Log log;
  PluginHost host(log.sink());
  ASSERT_TRUE(host.loadPlugin(plugin("serial")).ok());
  std::set<uint64_t> ids;
  launchFromThreads(host, ids);
  EXPECT_EQ(log.count("overlapping calls"), 0u);
  EXPECT_EQ(log.count("slot=LOST"), 0u);
  EXPECT_EQ(log.count("launch_exit"), ids.size());
}

TEST(PluginHostTest, ThreadSafePluginsRunConcurrently) {
  Log log;
  PluginHost host(log.sink());
  ASSERT_TRUE(host.loadPlugin(plugin("alpha")).ok());
  ASSERT_TRUE(host.loadPlugin(plugin("beta")).ok());
  std::set<uint64_t> ids;
  launchFromThreads(host, ids);
  EXPECT_EQ(log.count("slot=ok"), 2 * ids.size());
  EXPECT_EQ(log.count("slot=LOST"), 0u);
}

TEST(PluginHostTest, CacheStoreErrorsAreMisses) {
  Log log;
  PluginHost host(log.sink());
  ASSERT_TRUE(host.loadPlugin(plugin("hook-errors")).ok());
  std::vector<CacheStoreRef> stores = host.cacheStores();
  ASSERT_EQ(stores.size(), 1u);
  std::string value = "untouched";
  EXPECT_FALSE(stores[0].put("k", "v"));
  EXPECT_FALSE(stores[0].get("k", value));
  EXPECT_EQ(value, "untouched");
  EXPECT_EQ(log.count("cache store get failed: cache store get deliberately "
                      "failed; treated as a miss"),
            1u);
}

TEST(PluginHostTest, BackendErrorsKeepTheirCode) {
  Log log;
  PluginHost host(log.sink());
  ASSERT_TRUE(host.loadPlugin(plugin("alpha")).ok());
  BackendRef backend;
  ASSERT_TRUE(host.findBackend("echo-alpha", backend).ok());
  std::string loadable;
  absl::Status status = backend.finalize("ptx", "x", "k", nullptr, loadable);
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(str(status).find("format 'ptx' is not accepted"),
            std::string::npos);
  absl::Status missing = host.findBackend("cuda", backend);
  EXPECT_EQ(missing.code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(str(missing),
            "no backend named 'cuda' is loaded (loaded: echo-alpha)");
}

} // namespace
