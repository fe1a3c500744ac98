//===- kjit_dispatch.cpp - launch cost of an empty kernel through kjit ----===//
//
// The peer of raw_launch.c and of Triton's dispatch anchor: N back-to-back
// Kernel::launch calls of an empty kernel with 1 and with 8 arguments (four
// pointers, two i32, an f32, an i64) on a cache hit, then one synchronize;
// host wall time per launch. Rounds of the two kernels alternate (ABAB) and
// the median, min and max over the rounds are printed as one JSON line per
// kernel. No LLVM here: the compiler module is opened once, for the two
// compiles before the timed rounds.
//
//   kjit-gpu-dispatch [--backend cuda|host] [--iters N] [--rounds R]
//                     [--num-warps W]
//
// W (default 1: 32 threads, as the raw anchors launch) is passed as the
// num_warps keyword of every launch.
//===----------------------------------------------------------------------===//

#include "BenchUtil.h"

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

using namespace kjit;
using namespace kjit::rt;

namespace {

constexpr const char *kKernels = R"mlir(
kjit.kernel @one(%x: !kjit.ptr<f32>) {
  kjit.return
}
kjit.kernel @eight(%a: !kjit.ptr<f32>, %b: !kjit.ptr<f32>, %c: !kjit.ptr<f32>,
                   %d: !kjit.ptr<f32>, %n: i32, %m: i32, %s: f32, %k: i64) {
  kjit.return
}
)mlir";

} // namespace

int main(int argc, char **argv) {
  std::string backendName = "host";
  long iters = 20000, rounds = 11;
  // One warp by default: the raw-launch anchors launch blocks of 32
  // threads, and a block's size is part of what the GPU's launch costs.
  long warps = 1;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "%s needs a value\n", a.c_str());
        std::exit(2);
      }
      return argv[++i];
    };
    if (a == "--backend")
      backendName = value();
    else if (a == "--iters")
      iters = std::atol(value().c_str());
    else if (a == "--num-warps")
      warps = std::atol(value().c_str());
    else if (a == "--rounds")
      rounds = std::atol(value().c_str());
    else {
      std::fprintf(
          stderr,
          "usage: %s [--backend T] [--iters N] [--rounds R] [--num-warps W]\n",
          argv[0]);
      return 2;
    }
  }
  if (iters < 1 || rounds < 1 || warps < 1)
    return 2;

  bench::Setup setup = bench::makeRuntime(backendName);
  auto module = bench::check(
      Module::fromText(*setup.runtime, kKernels, "dispatch.mlir"), "module");
  Kernel *one = bench::check(module->kernel("one"), "kernel one");
  Kernel *eight = bench::check(module->kernel("eight"), "kernel eight");

  bench::DeviceBuffer buffer(*setup.backend, 1 << 20);
  Argument p = Argument::tensor(buffer.address(), DType::FP32);
  std::vector<Argument> args1 = {p};
  std::vector<Argument> args8 = {p,
                                 p,
                                 p,
                                 p,
                                 Argument::integer(4096),
                                 Argument::integer(17),
                                 Argument::fp(0.5),
                                 Argument::integer(1)};
  LaunchConfig config;
  config.grid = {1, 1, 1};

  // Compile both (and warm them) outside the timed rounds.
  std::vector<KeywordArgument> keywords = {
      {"num_warps", Argument::integer(Int128(warps))}};
  bench::check(one->launch(config, args1, keywords), "launch one");
  bench::check(eight->launch(config, args8, keywords), "launch eight");
  bench::synchronize(setup);

  std::vector<double> us1, us8;
  for (long r = 0; r < rounds; ++r) {
    for (int which = 0; which < 2; ++which) {
      Kernel *k = which ? eight : one;
      const std::vector<Argument> &args = which ? args8 : args1;
      double t0 = bench::nowSeconds();
      for (long i = 0; i < iters; ++i) {
        auto result = k->launch(config, args, keywords);
        if (!result.ok())
          bench::die("launch", result.status());
      }
      bench::synchronize(setup);
      double us = (bench::nowSeconds() - t0) * 1e6 / double(iters);
      (which ? us8 : us1).push_back(us);
    }
  }
  for (int which = 0; which < 2; ++which) {
    bench::Spread s = bench::spread(which ? us8 : us1);
    std::printf("{\"bench\": \"kjit_dispatch\", \"backend\": \"%s\", "
                "\"args\": %d, \"num_warps\": %ld, "
                "\"us_per_launch_median\": %.3f, "
                "\"us_per_launch_min\": %.3f, \"us_per_launch_max\": %.3f, "
                "\"iters\": %ld, \"rounds\": %ld}\n",
                backendName.c_str(), which ? 8 : 1, warps, s.median, s.min,
                s.max, iters, rounds);
  }
  return 0;
}
