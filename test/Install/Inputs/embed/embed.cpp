//===- embed.cpp - the installed runtime, embedded ------------------------===//
//
// Creates a runtime from the installed library and asks it for the host
// backend, which it finds beside itself (lib/libkjit-host.so).
#include "kjit/Runtime/Runtime.h"

#include <cstdio>

int main() {
  auto runtime = kjit::rt::Runtime::create();
  if (!runtime.ok()) {
    std::fprintf(stderr, "create: %s\n",
                 std::string(runtime.status().message()).c_str());
    return 1;
  }
  auto backend = (*runtime)->backend("host");
  if (!backend.ok()) {
    std::fprintf(stderr, "backend: %s\n",
                 std::string(backend.status().message()).c_str());
    return 1;
  }
  std::printf("embedded runtime: target %s, backend %s (%s)\n",
              (*runtime)->target().c_str(), (*backend)->target.c_str(),
              (*backend)->arch.c_str());
  return 0;
}
