//===- embed.cpp - an application that embeds libkjit-runtime -------------===//
//
// What an application writes to launch a kjit kernel: no tool, no flags;
// the runtime reads KJIT_PLUGINS, KJIT_INTERPRET and KJIT_DEBUG itself, so
// this program behaves as kjit-run does under the same environment
// (test/Runtime/embed.test compares the two).
//
//   kjit-embed FILE [TARGET]   launches @add of FILE (examples/vector_add.mlir)
//                              on 16 elements and prints the result
//
//===----------------------------------------------------------------------===//

#include "kjit/Runtime/Runtime.h"

#include <cstdio>
#include <string>

using namespace kjit::rt;

int main(int argc, char **argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: kjit-embed FILE [TARGET]\n");
    return 2;
  }
  // The default runtime unless a target is asked for, as kjit-run's
  // --backend does.
  std::unique_ptr<Runtime> own;
  Runtime *runtime = &Runtime::global();
  if (argc > 2) {
    RuntimeOptions options;
    options.target = argv[2];
    auto created = Runtime::create(options);
    if (!created.ok()) {
      std::fprintf(stderr, "error: %s\n",
                   std::string(created.status().message()).c_str());
      return 1;
    }
    own = std::move(*created);
    runtime = own.get();
  }
  std::printf("target: %s%s, debug by default: %s\n", runtime->target().c_str(),
              runtime->interpreting() ? " (interpreting)" : "",
              runtime->defaultLaunchOptions().debug() ? "yes" : "no");

  auto module = Module::load(*runtime, argv[1]);
  if (!module.ok()) {
    std::fprintf(stderr, "error: %s\n",
                 std::string(module.status().message()).c_str());
    return 1;
  }
  auto kernel = (*module)->kernel("add");
  if (!kernel.ok()) {
    std::fprintf(stderr, "error: %s\n",
                 std::string(kernel.status().message()).c_str());
    return 1;
  }
  alignas(64) float x[16], y[16], out[16] = {};
  for (int i = 0; i < 16; ++i) {
    x[i] = float(i);
    y[i] = 0.5f;
  }
  Argument args[] = {Argument::tensor(uintptr_t(x), DType::FP32),
                     Argument::tensor(uintptr_t(y), DType::FP32),
                     Argument::tensor(uintptr_t(out), DType::FP32),
                     Argument::integer(16)};
  auto result = (*kernel)->launch(LaunchConfig(), args);
  if (!result.ok()) {
    std::fprintf(stderr, "error: %s\n",
                 std::string(result.status().message()).c_str());
    return 1;
  }
  std::printf("out =");
  for (float value : out)
    std::printf(" %g", value);
  std::printf("\ncompiled: %s\n", result->compiled ? "yes" : "no");
  return 0;
}
