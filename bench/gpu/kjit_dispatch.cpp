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
//                     [--num-warps W] [--vary] [--raw-module PTX]
//                     [--args 1|8]
//
// W (default 1: 32 threads, as the raw anchors launch) is passed as the
// num_warps keyword of every launch. --args times one of the two kernels
// only (scripts/dispatch-cache-proxy.sh --cuda counts one kind of launch).
//
// The launches repeat the same arguments, as a loop over the same buffers
// does (the binder then finds its last inputs again: docs/Dispatch.md).
// With --vary every launch's arguments differ from the one before (three
// sets in turn: other addresses and other scalars of the same
// specialization), so every launch binds them in full; the JSON lines
// then say "vary": true. (With two sets in turn, a thread's last launch of
// the kernel is made again at every third launch: docs/Dispatch.md.)
//
// With --raw-module empty.ptx (cuda only), each round also times the bare
// driver (RawDriver.h: cuLaunchKernel of e1 and e8 on the same primary
// context, blocks of 32 x W threads) right before kjit's launches of the
// same shape, in this process: raw 1, kjit 1, raw 8, kjit 8, round after
// round. The two then share the context, the CPU and the GPU, which
// separate processes do not (instances and even processes differ by tens
// of percent), and a "kjit_over_raw" line gives, per argument count, the
// median over rounds of kjit / raw and of kjit - raw in ns. The same
// module is also loaded through the backend (finalize + load of its PTX,
// with the arguments as the template, as the runtime loads) and launched
// with the plugin ABI's launch alone (the values alone where the backend
// took the template, as the runtime launches): "plugin_over_raw" is what
// the backend plugin adds, and kjit - plugin what the runtime adds on top.
//===----------------------------------------------------------------------===//

#include "BenchUtil.h"
#include "RawDriver.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
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

/// e1 and e8 of the raw module, loaded through the backend plugin, with
/// their arguments in the ABI's form (e8: four pointers, four u32). Loaded
/// with the arguments as their template, as the runtime loads its kernels:
/// a backend that takes it (ABI 1.4) is then launched with the values
/// alone, as the runtime launches it.
struct PluginKernels {
  void *kernel[2] = {nullptr, nullptr};
  bool takesValues[2] = {false, false};
  kjit_arg args[8];
  const kjit_arg *pointers[8];
  uint64_t values[8];

  void load(const rt::Backend &backend, const std::string &ptxPath,
            uint64_t address) {
    std::ifstream in(ptxPath, std::ios::binary);
    std::stringstream text;
    text << in.rdbuf();
    const char *names[2] = {"e1", "e8"};
    for (int i = 0; i < 8; ++i) {
      kjit_arg &a = args[i];
      std::memset(&a, 0, sizeof a);
      a.struct_size = sizeof a;
      bool pointer = i < 4;
      a.name = "p";
      a.name_len = 1;
      a.type = pointer ? "*fp32" : "u32";
      a.type_len = std::strlen(a.type);
      a.kind = pointer ? KJIT_ARG_POINTER : KJIT_ARG_INT;
      a.dtype = pointer ? KJIT_DTYPE_FP32 : KJIT_DTYPE_U32;
      a.flags = pointer ? KJIT_ARG_FLAG_POINTER : 0;
      a.bits = pointer ? address : 4096;
      a.bits_size = pointer ? 8 : 4;
      pointers[i] = &args[i];
      values[i] = a.bits;
    }
    for (int which = 0; which < 2; ++which) {
      std::string cubin = bench::check(
          backend.ref.finalize(0, "ptx", text.str(), names[which]), "finalize");
      auto loaded = bench::check(
          backend.ref.load(0, cubin, names[which],
                           absl::MakeConstSpan(pointers, which ? 8 : 1)),
          "load");
      kernel[which] = loaded.kernel;
      takesValues[which] = loaded.takesValues;
    }
  }

  /// Microseconds per launch of `iters` launches, then synchronize.
  double time(const bench::Setup &setup, int which, long iters,
              uint32_t warps) {
    kjit_backend_launch_args launch;
    std::memset(&launch, 0, sizeof launch);
    launch.struct_size = sizeof launch;
    launch.kernel = kernel[which];
    launch.grid[0] = launch.grid[1] = launch.grid[2] = 1;
    launch.num_warps = warps;
    launch.num_args = which ? 8 : 1;
    if (takesValues[which])
      launch.values = values;
    else
      launch.args = pointers;
    double t0 = bench::nowSeconds();
    for (long i = 0; i < iters; ++i)
      bench::check(setup.backend->ref.launchPrepared(launch), "plugin launch");
    bench::synchronize(setup);
    return (bench::nowSeconds() - t0) * 1e6 / double(iters);
  }
};

} // namespace

int main(int argc, char **argv) {
  std::string backendName = "host";
  std::string rawModule;
  long iters = 20000, rounds = 11;
  // One warp by default: the raw-launch anchors launch blocks of 32
  // threads, and a block's size is part of what the GPU's launch costs.
  long warps = 1;
  bool vary = false;
  long onlyArgs = 0; // 0: both kernels
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
    else if (a == "--raw-module")
      rawModule = value();
    else if (a == "--vary")
      vary = true;
    else if (a == "--args")
      onlyArgs = std::atol(value().c_str());
    else {
      std::fprintf(
          stderr,
          "usage: %s [--backend T] [--iters N] [--rounds R] [--num-warps W] "
          "[--vary] [--raw-module PTX] [--args 1|8]\n",
          argv[0]);
      return 2;
    }
  }
  if (iters < 1 || rounds < 1 || warps < 1 ||
      (onlyArgs != 0 && onlyArgs != 1 && onlyArgs != 8)) {
    std::fprintf(stderr,
                 "%s: --iters, --rounds and --num-warps must be "
                 "positive, and --args 1 or 8\n",
                 argv[0]);
    return 2;
  }

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
  // --vary's other sets: other 16-byte-aligned addresses, other integers
  // divisible by 16 or not as before, other floats, the same 1.
  Argument q = Argument::tensor(buffer.address() + 256, DType::FP32);
  std::vector<Argument> other1 = {q};
  std::vector<Argument> other8 = {q,
                                  q,
                                  q,
                                  q,
                                  Argument::integer(4112),
                                  Argument::integer(33),
                                  Argument::fp(0.25),
                                  Argument::integer(1)};
  Argument r = Argument::tensor(buffer.address() + 512, DType::FP32);
  std::vector<Argument> third1 = {r};
  std::vector<Argument> third8 = {r,
                                  r,
                                  r,
                                  r,
                                  Argument::integer(4128),
                                  Argument::integer(49),
                                  Argument::fp(0.125),
                                  Argument::integer(1)};
  LaunchConfig config;
  config.grid = {1, 1, 1};

  // Compile both (and warm them) outside the timed rounds.
  std::vector<KeywordArgument> keywords = {
      {"num_warps", Argument::integer(Int128(warps))}};
  bench::check(one->launch(config, args1, keywords), "launch one");
  bench::check(eight->launch(config, args8, keywords), "launch eight");
  bench::synchronize(setup);

  // The bare driver in this process, on the context kjit made current.
  if (!rawModule.empty()) {
    char error[512];
    if (int status = raw_driver_open(rawModule.c_str(), error, sizeof error)) {
      std::fprintf(stderr, "error: --raw-module: %s\n", error);
      return status;
    }
  }
  PluginKernels plugin;
  if (!rawModule.empty())
    plugin.load(*setup.backend, rawModule, buffer.address());

  // us[which][0] kjit, us[which][1] raw, us[which][2] the plugin alone;
  // which 0 is one argument, 1 eight.
  std::vector<double> us[2][3], ratio[2], extraNs[2], pluginRatio[2],
      pluginExtraNs[2];
  for (long r = 0; r < rounds; ++r) {
    for (int which = 0; which < 2; ++which) {
      if (onlyArgs && onlyArgs != (which ? 8 : 1))
        continue;
      if (!rawModule.empty()) {
        double raw =
            raw_driver_time(which ? 8 : 1, iters, unsigned(32 * warps));
        if (raw < 0)
          return 1;
        us[which][1].push_back(raw);
        double alone = plugin.time(setup, which, iters, uint32_t(warps));
        us[which][2].push_back(alone);
        pluginRatio[which].push_back(alone / raw);
        pluginExtraNs[which].push_back((alone - raw) * 1e3);
      }
      Kernel *k = which ? eight : one;
      const std::vector<Argument> *sets[3] = {which ? &args8 : &args1,
                                              which ? &other8 : &other1,
                                              which ? &third8 : &third1};
      double t0 = bench::nowSeconds();
      for (long i = 0; i < iters; ++i) {
        auto result = k->launch(config, *sets[vary ? i % 3 : 0], keywords);
        if (!result.ok())
          bench::die("launch", result.status());
      }
      bench::synchronize(setup);
      double kjit = (bench::nowSeconds() - t0) * 1e6 / double(iters);
      us[which][0].push_back(kjit);
      if (!rawModule.empty()) {
        ratio[which].push_back(kjit / us[which][1].back());
        extraNs[which].push_back((kjit - us[which][1].back()) * 1e3);
      }
    }
  }
  for (int which = 0; which < 2; ++which) {
    if (onlyArgs && onlyArgs != (which ? 8 : 1))
      continue;
    const char *series[3] = {"kjit_dispatch", "raw_in_process",
                             "plugin_in_process"};
    for (int raw = 0; raw < (rawModule.empty() ? 1 : 3); ++raw) {
      bench::Spread s = bench::spread(us[which][raw]);
      std::printf("{\"bench\": \"%s\", \"backend\": \"%s\", "
                  "\"args\": %d, \"num_warps\": %ld, \"vary\": %s, "
                  "\"us_per_launch_median\": %.3f, "
                  "\"us_per_launch_min\": %.3f, \"us_per_launch_max\": %.3f, "
                  "\"iters\": %ld, \"rounds\": %ld}\n",
                  series[raw], backendName.c_str(), which ? 8 : 1, warps,
                  vary ? "true" : "false", s.median, s.min, s.max, iters,
                  rounds);
    }
    if (!rawModule.empty()) {
      bench::Spread q = bench::spread(ratio[which]);
      bench::Spread d = bench::spread(extraNs[which]);
      std::printf("{\"bench\": \"kjit_over_raw\", \"args\": %d, "
                  "\"num_warps\": %ld, \"vary\": %s, \"ratio_median\": %.3f, "
                  "\"ratio_min\": %.3f, \"ratio_max\": %.3f, "
                  "\"extra_ns_median\": %.0f, \"extra_ns_min\": %.0f, "
                  "\"extra_ns_max\": %.0f, \"rounds\": %ld}\n",
                  which ? 8 : 1, warps, vary ? "true" : "false", q.median,
                  q.min, q.max, d.median, d.min, d.max, rounds);
      q = bench::spread(pluginRatio[which]);
      d = bench::spread(pluginExtraNs[which]);
      std::printf("{\"bench\": \"plugin_over_raw\", \"args\": %d, "
                  "\"num_warps\": %ld, \"ratio_median\": %.3f, "
                  "\"extra_ns_median\": %.0f, \"extra_ns_min\": %.0f, "
                  "\"extra_ns_max\": %.0f, \"rounds\": %ld}\n",
                  which ? 8 : 1, warps, q.median, d.median, d.min, d.max,
                  rounds);
    }
  }
  return 0;
}
