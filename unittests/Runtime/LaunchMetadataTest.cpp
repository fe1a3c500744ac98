//===- LaunchMetadataTest.cpp - the launch-metadata slot under threads ----===//
//
// Kernel::setLaunchMetadata may replace a kernel's callback while other
// threads launch it (include/kjit/Runtime/Module.h). The slot that holds
// the callback (lib/Runtime/LaunchMetadata.h) is checked here with threads
// that set it while others read and call it, as hooked launches do; under
// ThreadSanitizer (check-kjit-tsan) a missing synchronization is a report.
// LaunchHooksTest replaces the callback of a kernel that launches.
//
//===----------------------------------------------------------------------===//

#include "LaunchMetadata.h"

#include <gtest/gtest.h>

#include <atomic>
#include <string>
#include <thread>
#include <vector>

using kjit::rt::Argument;
using kjit::rt::LaunchMetadataSlot;

namespace {

TEST(LaunchMetadataSlot, EmptyUntilSetAndAfterAnEmptyCallback) {
  LaunchMetadataSlot slot;
  EXPECT_EQ(slot.get(), nullptr);
  slot.set([](absl::Span<const Argument>) { return std::string("\"a\": 1"); });
  ASSERT_NE(slot.get(), nullptr);
  EXPECT_EQ((*slot.get())({}), "\"a\": 1");
  slot.set(LaunchMetadataSlot::Callback());
  EXPECT_EQ(slot.get(), nullptr);
}

// A reader keeps the callback it took alive after it is replaced: what the
// callback captured is still there when it runs.
TEST(LaunchMetadataSlot, ACallbackTakenOutlivesItsReplacement) {
  LaunchMetadataSlot slot;
  auto captured = std::make_shared<std::string>("\"old\": 1");
  slot.set([captured](absl::Span<const Argument>) { return *captured; });
  std::shared_ptr<const LaunchMetadataSlot::Callback> taken = slot.get();
  std::weak_ptr<std::string> watch = captured;
  captured.reset();
  slot.set(
      [](absl::Span<const Argument>) { return std::string("\"new\": 2"); });
  ASSERT_FALSE(watch.expired());
  EXPECT_EQ((*taken)({}), "\"old\": 1");
  EXPECT_EQ((*slot.get())({}), "\"new\": 2");
  taken.reset();
  EXPECT_TRUE(watch.expired());
}

// Writers replace the callback while readers call whatever they find; each
// callback owns a string it returns, which a data race would tear or free
// under the reader.
TEST(LaunchMetadataSlot, SetWhileOtherThreadsCall) {
  LaunchMetadataSlot slot;
  slot.set([](absl::Span<const Argument>) { return std::string("\"v\": 0"); });
  std::atomic<bool> stop{false};
  std::atomic<int> bad{0};
  std::vector<std::thread> readers;
  for (int t = 0; t < 4; ++t)
    readers.emplace_back([&] {
      while (!stop.load(std::memory_order_relaxed)) {
        std::shared_ptr<const LaunchMetadataSlot::Callback> callback =
            slot.get();
        if (!callback)
          continue;
        std::string text = (*callback)({});
        if (text.rfind("\"v\": ", 0) != 0)
          ++bad;
      }
    });
  std::vector<std::thread> writers;
  for (int t = 0; t < 2; ++t)
    writers.emplace_back([&, t] {
      for (int i = 0; i < 2000; ++i) {
        std::string text = "\"v\": " + std::to_string(t * 10000 + i);
        if (i % 100 == 99)
          slot.set(LaunchMetadataSlot::Callback());
        else
          slot.set([text](absl::Span<const Argument>) { return text; });
      }
    });
  for (std::thread &writer : writers)
    writer.join();
  stop = true;
  for (std::thread &reader : readers)
    reader.join();
  EXPECT_EQ(bad.load(), 0);
}

} // namespace
