//===- PluginHostTest.cpp - PluginHost through its C++ API ----------------===//
//
// What lit cannot easily show: many threads dispatching at once, the host's
// return values, and the log sink. The plugins come from test/Plugins.
//
//===----------------------------------------------------------------------===//

#include "kjit/Plugin/PluginHost.h"

#include "gtest/gtest.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <functional>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include <sys/wait.h>
#include <unistd.h>

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
  EXPECT_EQ(log.count("2 alpha: alpha: init (host ABI 1.5)"), 1u);
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
  EXPECT_TRUE(host.runPreRunHooks("k", {}).ok());
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

/// With KJIT_TEST_PROBE_WAIT_MS set, the test plugin's launch hooks record
/// how many of its calls were in flight at once (waiting a little for a
/// second one to arrive), and fini logs the maximum; this returns it, or -1.
int maxInFlight(Log &log, const std::string &plugin) {
  std::lock_guard<std::mutex> lock(log.mutex);
  std::string needle = plugin + ": fini, max ";
  for (const std::string &line : log.lines)
    if (size_t at = line.find(needle); at != std::string::npos)
      return std::atoi(line.c_str() + at + needle.size());
  return -1;
}

struct ProbeWait {
  ProbeWait() { setenv("KJIT_TEST_PROBE_WAIT_MS", "20", 1); }
  ~ProbeWait() { unsetenv("KJIT_TEST_PROBE_WAIT_MS"); }
};

TEST(PluginHostTest, SerializesPluginsThatAreNotThreadSafe) {
  ProbeWait wait;
  Log log;
  PluginHost host(log.sink());
  ASSERT_TRUE(host.loadPlugin(plugin("serial")).ok());
  std::set<uint64_t> ids;
  launchFromThreads(host, ids);
  host.shutdown();
  EXPECT_EQ(log.count("overlapping calls"), 0u);
  EXPECT_EQ(log.count("slot=LOST"), 0u);
  EXPECT_EQ(log.count("launch_exit"), ids.size());
  EXPECT_EQ(maxInFlight(log, "serial"), 1);
}

TEST(PluginHostTest, ThreadSafePluginsRunConcurrently) {
  ProbeWait wait;
  Log log;
  PluginHost host(log.sink());
  ASSERT_TRUE(host.loadPlugin(plugin("alpha")).ok());
  ASSERT_TRUE(host.loadPlugin(plugin("beta")).ok());
  std::set<uint64_t> ids;
  launchFromThreads(host, ids);
  host.shutdown();
  EXPECT_EQ(log.count("slot=ok"), 2 * ids.size());
  EXPECT_EQ(log.count("slot=LOST"), 0u);
  // Both plugins are thread-safe: the host must have let their hooks run
  // on several threads at once.
  EXPECT_GT(maxInFlight(log, "alpha"), 1);
  EXPECT_GT(maxInFlight(log, "beta"), 1);
}

TEST(PluginHostTest, SerializationHoldsAcrossHosts) {
  // Two hosts load the same library, which is not thread-safe: its entries
  // are serialized across both (it may keep process-wide state).
  ProbeWait wait;
  Log log;
  PluginHost first(log.sink()), second(log.sink());
  ASSERT_TRUE(first.loadPlugin(plugin("serial")).ok());
  ASSERT_TRUE(second.loadPlugin(plugin("serial")).ok());
  std::set<uint64_t> firstIds, secondIds;
  std::thread other([&] { launchFromThreads(second, secondIds); });
  launchFromThreads(first, firstIds);
  other.join();
  EXPECT_EQ(log.count("overlapping calls"), 0u);
  first.shutdown();
  second.shutdown();
}

TEST(PluginHostTest, HostsAreIndependent) {
  Log logA, logB;
  PluginHost a(logA.sink());
  {
    PluginHost b(logB.sink());
    ASSERT_TRUE(a.loadPlugin(plugin("alpha")).ok());
    ASSERT_TRUE(b.loadPlugin(plugin("beta")).ok());
    EXPECT_EQ(a.pluginNames(), std::vector<std::string>{"alpha"});
    EXPECT_EQ(b.pluginNames(), std::vector<std::string>{"beta"});
    LaunchInfo info = launchOf("k");
    LaunchRecord record = b.runLaunchEnter(info);
    b.runLaunchExit(record, info);
    EXPECT_EQ(logB.count("beta: launch_exit"), 1u);
    EXPECT_EQ(logA.count("launch_exit"), 0u);
  } // b shuts down; a is untouched
  EXPECT_EQ(logB.count("beta: fini"), 1u);
  EXPECT_EQ(logA.count("fini"), 0u);
  LaunchInfo info = launchOf("k");
  LaunchRecord record = a.runLaunchEnter(info);
  a.runLaunchExit(record, info);
  EXPECT_EQ(logA.count("alpha: launch_exit"), 1u);
}

TEST(PluginHostTest, ShutdownFromInsideAHookDoesNotWaitForItself) {
  // The sink runs inside the plugin's launch_enter (the hook logs), and
  // shuts the host down from there: shutdown must wait for the plugin's
  // entries on other threads only, not for the one it runs inside of.
  Log log;
  LogSink record = log.sink();
  PluginHost *self = nullptr;
  std::atomic<bool> once{false};
  PluginHost host(
      [&](LogLevel level, std::string_view source, std::string_view message) {
        record(level, source, message);
        if (message.find("launch_enter") != std::string_view::npos &&
            !once.exchange(true))
          self->shutdown();
      });
  self = &host;
  ASSERT_TRUE(host.loadPlugin(plugin("alpha")).ok());
  LaunchInfo info = launchOf("k");
  LaunchRecord open = host.runLaunchEnter(info);
  host.runLaunchExit(open, info);
  EXPECT_EQ(log.count("alpha: fini"), 1u);
  EXPECT_EQ(log.count("launch_exit"), 0u);
}

/// Calls launch_enter of the host's plugins from inside their own
/// launch_enter (through the log sink, which the plugin's hook calls while
/// it runs) until `depth` calls are nested on this thread; then runs
/// `innermost` inside the deepest one.
struct NestedCalls {
  PluginHost *host = nullptr;
  int depth = 0;
  std::function<void()> innermost;
  thread_local static int level;

  LogSink sink(Log &log) {
    LogSink record = log.sink();
    return [this, record](LogLevel l, std::string_view source,
                          std::string_view message) {
      record(l, source, message);
      if (message.find("launch_enter") == std::string_view::npos || !host)
        return;
      if (++level < depth) {
        LaunchInfo info = launchOf("k");
        LaunchRecord inner = host->runLaunchEnter(info);
        host->runLaunchExit(inner, info);
      } else if (level == depth) {
        innermost();
      }
      --level;
    };
  }
};
thread_local int NestedCalls::level = 0;

TEST(PluginHostTest, ShutdownWaitsForCallsOnOtherThreads) {
  // Thread B is inside the plugin's launch_enter (its log call reaches the
  // sink) when this thread shuts the host down: fini must run only after
  // B has left, at every nesting depth, the deepest ones included (a
  // thread's record holds 32 nested calls; deeper ones are counted apart).
  for (int depth : {1, 40}) {
    SCOPED_TRACE(depth);
    Log log;
    NestedCalls nested;
    std::atomic<bool> inside{false}, left{false}, finiTooEarly{false};
    nested.depth = depth;
    nested.innermost = [&] {
      inside = true;
      // Long enough for the shutdown to have started and to be waiting.
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
      left = true;
    };
    LogSink calls = nested.sink(log);
    PluginHost host(
        [&](LogLevel level, std::string_view source, std::string_view message) {
          if (message.find("fini") != std::string_view::npos && !left)
            finiTooEarly = true;
          calls(level, source, message);
        });
    nested.host = &host;
    ASSERT_TRUE(host.loadPlugin(plugin("alpha")).ok());
    std::thread b([&] {
      LaunchInfo info = launchOf("k");
      LaunchRecord record = host.runLaunchEnter(info);
      host.runLaunchExit(record, info);
    });
    while (!inside)
      std::this_thread::yield();
    host.shutdown();
    b.join();
    EXPECT_TRUE(left);
    EXPECT_FALSE(finiTooEarly);
    EXPECT_EQ(log.count("alpha: fini"), 1u);
  }
}

TEST(PluginHostTest, ShutdownFromADeeplyNestedCallDoesNotWaitForItself) {
  // 40 nested calls of one plugin on this thread, more than a thread's
  // record holds, then a shutdown from the innermost: it waits for no call
  // of its own thread, whether in the record or counted apart.
  Log log;
  NestedCalls nested;
  PluginHost *self = nullptr;
  nested.depth = 40;
  nested.innermost = [&] { self->shutdown(); };
  PluginHost host(nested.sink(log));
  self = &host;
  nested.host = &host;
  ASSERT_TRUE(host.loadPlugin(plugin("alpha")).ok());
  LaunchInfo info = launchOf("k");
  LaunchRecord record = host.runLaunchEnter(info);
  host.runLaunchExit(record, info);
  EXPECT_EQ(log.count("alpha: fini"), 1u);
  EXPECT_EQ(log.count("alpha: launch_enter"), 40u);
  // Nothing reached the plugin after its fini.
  EXPECT_EQ(log.count("launch_exit"), 0u);
}

/// Runs `child` in a forked process that must exit 0 within 10 seconds
/// (an alarm kills one that hangs); returns what waitpid said.
static int inChild(const std::function<void()> &child) {
  pid_t pid = fork();
  if (pid == 0) {
    alarm(10);
    child();
    _exit(0);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  return status;
}

TEST(PluginHostTest, ShutdownInsideASerializedPluginDoesNotWaitForItsWaiters) {
  // A plugin that is not thread-safe: thread S is inside its launch_enter
  // (holding its serialization lock) and shuts the host down from there,
  // while thread T waits for the lock to enter the same plugin. The
  // shutdown must not wait for T, which then finds the plugin gone. In a
  // child process, so that a deadlock fails the test instead of hanging it.
  int status = inChild([] {
    Log log;
    LogSink record = log.sink();
    PluginHost *self = nullptr;
    std::atomic<bool> inside{false}, waiterStarted{false};
    std::atomic<int> enters{0};
    PluginHost host(
        [&](LogLevel level, std::string_view source, std::string_view message) {
          record(level, source, message);
          if (message.find("launch_enter") != std::string_view::npos &&
              enters.fetch_add(1) == 0) {
            inside = true;
            while (!waiterStarted)
              std::this_thread::yield();
            // Long enough for T to be blocked on the lock.
            std::this_thread::sleep_for(std::chrono::milliseconds(50));
            self->shutdown();
          }
        });
    self = &host;
    if (!host.loadPlugin(plugin("serial")).ok())
      _exit(2);
    std::thread s([&] {
      LaunchInfo info = launchOf("k");
      LaunchRecord open = host.runLaunchEnter(info);
      host.runLaunchExit(open, info);
    });
    while (!inside)
      std::this_thread::yield();
    std::thread t([&] {
      waiterStarted = true;
      LaunchInfo info = launchOf("k");
      LaunchRecord open = host.runLaunchEnter(info);
      host.runLaunchExit(open, info);
    });
    s.join();
    t.join();
    // fini ran once, and T never reached the plugin.
    if (log.count("serial: fini") != 1 || enters.load() != 1)
      _exit(4);
  });
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0)
      << "the shutdown deadlocked or failed (status " << status << ")";
}

TEST(PluginHostTest, AChildAfterForkDoesNotWaitForTheParentsThreads) {
  // Another thread is inside a plugin call when this thread forks: in the
  // child that thread does not exist, so the child's shutdown must not
  // wait for it.
  Log log;
  std::atomic<bool> inside{false}, release{false};
  PluginHost host([&](LogLevel, std::string_view, std::string_view message) {
    if (message.find("launch_enter") != std::string_view::npos) {
      inside = true;
      while (!release)
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
  });
  ASSERT_TRUE(host.loadPlugin(plugin("alpha")).ok());
  std::thread worker([&] {
    LaunchInfo info = launchOf("k");
    LaunchRecord open = host.runLaunchEnter(info);
    host.runLaunchExit(open, info);
  });
  while (!inside)
    std::this_thread::yield();
  int status = inChild([&] { host.shutdown(); });
  release = true;
  worker.join();
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0)
      << "the child's shutdown hung or failed (status " << status << ")";
}

TEST(PluginHostTest, ExitFromInsideACallShutsDownAtExit) {
  // exit() from inside a plugin call: the thread's records go away before
  // the static destructors run, and one of those shuts the host down. The
  // shutdown must know the call it runs inside of as its own.
  int status = inChild([] {
    static PluginHost *host = new PluginHost(
        [](LogLevel, std::string_view, std::string_view message) {
          if (message.find("launch_enter") != std::string_view::npos)
            std::exit(0);
        });
    static struct Finisher {
      ~Finisher() { host->shutdown(); }
    } finisher;
    if (!host->loadPlugin(plugin("alpha")).ok())
      _exit(2);
    LaunchInfo info = launchOf("k");
    host->runLaunchEnter(info);
    _exit(3); // not reached: the hook exits
  });
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0)
      << "exit from inside a call hung or failed (status " << status << ")";
}

TEST(PluginHostTest, CacheStoreErrorsKeepTheirCodeAndAreNotLogged) {
  Log log;
  PluginHost host(log.sink());
  ASSERT_TRUE(host.loadPlugin(plugin("hook-errors")).ok());
  std::vector<CacheStoreRef> stores = host.cacheStores();
  ASSERT_EQ(stores.size(), 1u);
  absl::StatusOr<CacheStoreRef::PutResult> put = stores[0].put("k", "v");
  EXPECT_EQ(put.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(str(put.status())
                .find("cache store put failed: cache store put "
                      "deliberately failed"),
            std::string::npos)
      << put.status();
  absl::StatusOr<std::optional<std::string>> got = stores[0].get("k");
  EXPECT_EQ(got.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(str(got.status())
                .find("cache store get failed: cache store get "
                      "deliberately failed"),
            std::string::npos)
      << got.status();
  // The remote tier decides what to log; the ref logs nothing.
  EXPECT_EQ(log.count("deliberately failed"), 0u);
  absl::StatusOr<bool> removed = stores[0].remove("k");
  EXPECT_EQ(removed.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(str(removed.status()).find("remove deliberately failed"),
            std::string::npos);
}

/// A store's value on a hit (an error or a miss fails the expectation).
static std::optional<std::string> value(const CacheStoreRef &store,
                                        std::string_view key) {
  absl::StatusOr<std::optional<std::string>> got = store.get(key);
  EXPECT_TRUE(got.ok()) << got.status();
  return got.ok() ? *got : std::nullopt;
}

TEST(PluginHostTest, CacheStoreOperations) {
  Log log;
  PluginHost host(log.sink());
  ASSERT_TRUE(host.loadPlugin(plugin("alpha")).ok());
  std::vector<CacheStoreRef> stores = host.cacheStores();
  ASSERT_EQ(stores.size(), 1u);
  const CacheStoreRef &store = stores[0];
  EXPECT_EQ(store.name(), "memory-alpha");

  absl::StatusOr<CacheStoreRef::Description> d = store.describe();
  ASSERT_TRUE(d.ok()) << d.status();
  EXPECT_EQ(d->maxValueSize, 1024u);
  EXPECT_FALSE(d->isRemote);

  EXPECT_FALSE(value(store, "key").has_value());
  EXPECT_EQ(store.put("key", "one").value(), CacheStoreRef::PutResult::Stored);
  EXPECT_EQ(value(store, "key"), std::optional<std::string>("one"));
  CacheStoreRef::PutOptions ifAbsent;
  ifAbsent.flags = KJIT_CACHE_PUT_IF_ABSENT;
  EXPECT_EQ(store.put("key", "two", ifAbsent).value(),
            CacheStoreRef::PutResult::Exists);
  EXPECT_EQ(value(store, "key"), std::optional<std::string>("one"));
  CacheStoreRef::PutOptions ttl;
  ttl.ttlSeconds = 30;
  EXPECT_EQ(store.put("key", "three", ttl).value(),
            CacheStoreRef::PutResult::Stored);
  EXPECT_EQ(log.count("alpha: memory put ttl=30"), 1u);
  EXPECT_EQ(value(store, "key"), std::optional<std::string>("three"));

  absl::StatusOr<bool> removed = store.remove("key");
  ASSERT_TRUE(removed.ok()) << removed.status();
  EXPECT_TRUE(*removed);
  removed = store.remove("key");
  ASSERT_TRUE(removed.ok()) << removed.status();
  EXPECT_FALSE(*removed);
  EXPECT_FALSE(value(store, "key").has_value());
  EXPECT_EQ(store.put("key", "four", ifAbsent).value(),
            CacheStoreRef::PutResult::Stored);

  // Past the size describe announced, the store refuses with its message.
  absl::StatusOr<CacheStoreRef::PutResult> big =
      store.put("big", std::string(2000, 'x'));
  EXPECT_FALSE(big.ok());
  EXPECT_NE(str(big.status()).find("value too large"), std::string::npos)
      << big.status();
}

TEST(PluginHostTest, FrozenStoreGetsNoFlagsItCannotSee) {
  // A store built against ABI 1.0 cannot see put flags; the host refuses
  // IF_ABSENT rather than let it overwrite, and has no remove to call.
  Log log;
  PluginHost host(log.sink());
  ASSERT_TRUE(host.loadPlugin(plugin("frozen-1.0")).ok());
  std::vector<CacheStoreRef> stores = host.cacheStores();
  ASSERT_EQ(stores.size(), 1u);
  EXPECT_EQ(stores[0].put("key", "one").value(),
            CacheStoreRef::PutResult::Stored);
  CacheStoreRef::PutOptions ifAbsent;
  ifAbsent.flags = KJIT_CACHE_PUT_IF_ABSENT;
  absl::StatusOr<CacheStoreRef::PutResult> refused =
      stores[0].put("key", "two", ifAbsent);
  EXPECT_EQ(refused.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(str(refused.status())
                .find("need a store of ABI 1.1, but this one was built for "
                      "ABI 1.0"),
            std::string::npos)
      << refused.status();
  EXPECT_EQ(value(stores[0], "key"), std::optional<std::string>("one"));
  EXPECT_EQ(stores[0].remove("key").status().code(),
            absl::StatusCode::kUnimplemented);
  absl::StatusOr<CacheStoreRef::Description> d = stores[0].describe();
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(d->maxValueSize, 0u);
}

TEST(PluginHostTest, BackendErrorsKeepTheirCode) {
  Log log;
  PluginHost host(log.sink());
  ASSERT_TRUE(host.loadPlugin(plugin("alpha")).ok());
  BackendRef backend;
  ASSERT_TRUE(host.findBackend("echo-alpha", backend).ok());
  absl::StatusOr<std::string> loadable = backend.finalize(0, "ptx", "x", "k");
  EXPECT_EQ(loadable.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(str(loadable.status()).find("format 'ptx' is not accepted"),
            std::string::npos);
  absl::Status missing = host.findBackend("cuda", backend);
  EXPECT_EQ(missing.code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(str(missing),
            "no backend named 'cuda' is loaded (loaded: echo-alpha)");
}

TEST(PluginHostTest, BackendDeviceModel) {
  Log log;
  PluginHost host(log.sink());
  ASSERT_TRUE(host.loadPlugin(plugin("alpha")).ok());
  BackendRef backend;
  ASSERT_TRUE(host.findBackend("echo-alpha", backend).ok());
  EXPECT_EQ(backend.abiMinor(), uint32_t(KJIT_ABI_MINOR));
  absl::StatusOr<int32_t> count = backend.deviceCount();
  ASSERT_TRUE(count.ok()) << count.status();
  EXPECT_EQ(*count, 2);
  absl::StatusOr<BackendRef::Description> d = backend.describe(1);
  ASSERT_TRUE(d.ok()) << d.status();
  EXPECT_EQ(d->target, "test");
  EXPECT_EQ(d->multiprocessorCount, 8u);
  EXPECT_EQ(d->maxThreadsPerBlock, 64u);
  EXPECT_EQ(d->maxSharedMemoryPerBlock, 49152u);
  EXPECT_EQ(d->uuid[0], 16);
  EXPECT_EQ(d->uuid[15], 31);
  EXPECT_EQ(backend.describe(2).status().code(),
            absl::StatusCode::kInvalidArgument);
  absl::StatusOr<std::string> fp = backend.fingerprint(1);
  ASSERT_TRUE(fp.ok()) << fp.status();
  EXPECT_EQ(*fp, "echo-toolchain-1");
  absl::StatusOr<std::string> loadable =
      backend.finalize(1, "text", "abc", "k");
  ASSERT_TRUE(loadable.ok()) << loadable.status();
  EXPECT_EQ(*loadable, "ABC");
  EXPECT_EQ(log.count("alpha: echo finalize device=1"), 1u);
}

TEST(PluginHostTest, ABackendThatTakesTheTemplateIsLaunchedWithValues) {
  // ABI 1.4: a load given the arguments' template may answer takes_values;
  // the launches then pass one word per argument and no kjit_arg. A 1.3
  // backend never sees the template and never takes values.
  kjit_arg x = {}, n = {};
  x.struct_size = n.struct_size = sizeof(kjit_arg);
  x.name = "x";
  x.name_len = 1;
  x.flags = KJIT_ARG_FLAG_POINTER;
  x.bits_size = 8;
  n.name = "n";
  n.name_len = 1;
  n.bits_size = 4;
  const kjit_arg *argTemplate[] = {&x, &n};
  const uint64_t values[] = {0x1000, 42};
  for (const char *name : {"alpha", "frozen-1.3"}) {
    SCOPED_TRACE(name);
    bool current = std::string(name) == "alpha";
    Log log;
    PluginHost host(log.sink());
    ASSERT_TRUE(host.loadPlugin(plugin(name)).ok());
    BackendRef backend;
    ASSERT_TRUE(host.findBackend(std::string("echo-") + name, backend).ok());
    absl::StatusOr<BackendRef::LoadedKernel> loaded =
        backend.load(0, "code", "k", argTemplate);
    ASSERT_TRUE(loaded.ok()) << loaded.status();
    EXPECT_EQ(loaded->takesValues, current);
    EXPECT_EQ(log.count("echo load template of 2 arguments"),
              current ? 1u : 0u);
    // Without a template nothing is taken, whatever the backend.
    absl::StatusOr<BackendRef::LoadedKernel> bare =
        backend.load(0, "code", "k", {});
    ASSERT_TRUE(bare.ok()) << bare.status();
    EXPECT_FALSE(bare->takesValues);
    if (current) {
      auto launch = kjit_backend_launch_args();
      launch.struct_size = sizeof(launch);
      launch.kernel = loaded->kernel;
      launch.grid[0] = launch.grid[1] = launch.grid[2] = 1;
      launch.num_warps = 1;
      launch.num_args = 2;
      launch.values = values;
      EXPECT_TRUE(backend.launchPrepared(launch).ok());
      EXPECT_EQ(log.count("echo launch value 0 = 0x1000"), 1u);
      EXPECT_EQ(log.count("echo launch value 1 = 0x2a"), 1u);
    }
    EXPECT_TRUE(backend.unload(loaded->kernel).ok());
    EXPECT_TRUE(backend.unload(bare->kernel).ok());
  }
}

TEST(PluginHostTest, FrozenBackendGetsTheDefaults) {
  // A backend built against ABI 1.0: one device, synchronous launches, no
  // 1.1 attributes, and no launch flags (it could not see them).
  Log log;
  PluginHost host(log.sink());
  ASSERT_TRUE(host.loadPlugin(plugin("frozen-1.0")).ok());
  BackendRef backend;
  ASSERT_TRUE(host.findBackend("echo-frozen-1.0", backend).ok());
  EXPECT_EQ(backend.abiMinor(), 0u);
  EXPECT_EQ(backend.deviceCount().value_or(-1), 1);
  absl::StatusOr<BackendRef::Description> d = backend.describe(0);
  ASSERT_TRUE(d.ok()) << d.status();
  EXPECT_EQ(d->multiprocessorCount, 0u);
  EXPECT_EQ(d->uuid, (std::array<uint8_t, 16>{}));
  EXPECT_TRUE(backend.synchronize(0, 0).ok());
  absl::StatusOr<void *> kernel = backend.load(0, "code", "k");
  ASSERT_TRUE(kernel.ok()) << kernel.status();
  LaunchInfo info = launchOf("k");
  EXPECT_TRUE(backend.launch(*kernel, info).ok());
  BackendRef::LaunchAttributes pdl;
  pdl.flags = KJIT_LAUNCH_PDL;
  absl::Status refused = backend.launch(*kernel, info, pdl);
  EXPECT_EQ(refused.code(), absl::StatusCode::kUnimplemented);
  EXPECT_NE(str(refused).find("need a backend of ABI 1.1, but this one was "
                              "built for ABI 1.0"),
            std::string::npos)
      << str(refused);
  EXPECT_EQ(log.count("echo launch code=code"), 1u);
  EXPECT_TRUE(backend.unload(*kernel).ok());
}

TEST(PluginHostTest, AsyncErrorsReachTheLog) {
  Log log;
  PluginHost host(log.sink());
  ASSERT_TRUE(host.loadPlugin(plugin("alpha")).ok());
  BackendRef backend;
  ASSERT_TRUE(host.findBackend("echo-alpha", backend).ok());
  EXPECT_EQ(host.asyncErrorCount(), 0u);
  ASSERT_TRUE(backend.synchronize(0, 0x2).ok());
  EXPECT_EQ(host.asyncErrorCount(), 0u);
  // The test backend reports a sticky error for stream 0xbad.
  ASSERT_TRUE(backend.synchronize(0, 0xbad).ok());
  EXPECT_EQ(host.asyncErrorCount(), 1u);
  EXPECT_EQ(log.count("0 kjit: plugin 'alpha' (" + plugin("alpha") +
                      "): asynchronous error in kernel 'k': illegal address "
                      "(simulated) (status 10)"),
            1u);
}

} // namespace
