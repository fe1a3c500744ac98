//===- race.cpp - threads of one process asking for one new kernel --------===//
//
//   kjit-cache-race FILE THREADS
//
// Each thread creates its own runtime (so the in-memory single flight of a
// shared kernel does not hide the disk cache's), loads FILE and warms up
// @add of examples/vector_add.mlir, all starting together. Prints one line
// per thread: "compiled" or "disk hit". test/Cache/race.test runs 16 of
// these processes at once against one cache directory (KJIT_CACHE_DIR).
//
//===----------------------------------------------------------------------===//

#include "kjit/Runtime/Runtime.h"

#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

using namespace kjit::rt;

int main(int argc, char **argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: kjit-cache-race FILE THREADS\n");
    return 2;
  }
  std::string file = argv[1];
  int threads = std::atoi(argv[2]);
  std::mutex mutex;
  std::condition_variable go;
  int waiting = 0;
  std::vector<std::string> results(threads);
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t)
    pool.emplace_back([&, t] {
      {
        std::unique_lock<std::mutex> lock(mutex);
        if (++waiting == threads)
          go.notify_all();
        else
          go.wait(lock, [&] { return waiting == threads; });
      }
      auto runtime = Runtime::create();
      if (!runtime.ok()) {
        results[t] = "error: " + std::string(runtime.status().message());
        return;
      }
      auto module = Module::load(**runtime, file);
      if (!module.ok()) {
        results[t] = "error: " + std::string(module.status().message());
        return;
      }
      auto kernel = (*module)->kernel("add");
      if (!kernel.ok()) {
        results[t] = "error: " + std::string(kernel.status().message());
        return;
      }
      std::vector<KeywordArgument> args = {
          {"x", Argument::mockTensor(DType::FP32, true)},
          {"y", Argument::mockTensor(DType::FP32, true)},
          {"out", Argument::mockTensor(DType::FP32)},
          {"n", Argument::integer(4096)}};
      auto record = (*kernel)->warmup({}, args);
      if (!record.ok()) {
        results[t] = "error: " + std::string(record.status().message());
        return;
      }
      KernelStats stats = (*kernel)->stats();
      results[t] = stats.compiles == 1   ? "compiled"
                   : stats.diskHits == 1 ? "disk hit"
                                         : "neither";
    });
  for (std::thread &thread : pool)
    thread.join();
  int failed = 0;
  for (const std::string &result : results) {
    std::printf("%s\n", result.c_str());
    failed += result.rfind("error", 0) == 0 || result == "neither";
  }
  return failed ? 1 : 0;
}
