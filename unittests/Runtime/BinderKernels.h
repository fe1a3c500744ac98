//===- BinderKernels.h - kernels of 1, 8 and 32 parameters ------*- C++ -*-===//
//
// Shared by the allocation test and bench/BinderBench.cpp so that the test
// proves "no allocation" for exactly the launches the benchmark times.
//
//===----------------------------------------------------------------------===//

#ifndef KJIT_UNITTESTS_RUNTIME_BINDERKERNELS_H
#define KJIT_UNITTESTS_RUNTIME_BINDERKERNELS_H

#include "kjit/Model/Binder.h"

#include <string>
#include <vector>

namespace kjit::rt::testing {

/// A kernel of `count` parameters cycling through the common kinds (typed
/// pointers, unannotated tensors and ints, declared scalars, a constexpr, a
/// const pointer, a bool) and one launch's arguments for it.
struct BenchKernel {
  KernelManifest manifest;
  std::vector<Argument> args;
};

inline BenchKernel makeBenchKernel(int count) {
  BenchKernel k;
  k.manifest.name = "kernel" + std::to_string(count);
  for (int i = 0; i < count; ++i) {
    KernelParam p;
    p.name = "p" + std::to_string(i);
    Argument a;
    switch (i % 8) {
    case 0:
      p.type = ParamType::pointer(DType::FP32);
      a = Argument::tensor(0x7f0000000000 + 256 * i, DType::FP32);
      break;
    case 1:
      a = Argument::tensor(0x7f0000100000 + 256 * i, DType::FP16);
      break;
    case 2:
      a = Argument::integer(4096);
      break;
    case 3:
      p.type = ParamType::scalar(DType::I32);
      a = Argument::integer(1);
      break;
    case 4:
      p.type = ParamType::scalar(DType::FP32);
      a = Argument::fp(0.5);
      break;
    case 5:
      p.isConstexpr = true;
      a = Argument::integer(1024);
      break;
    case 6:
      p.type = ParamType::pointer(DType::BF16);
      p.isConst = true;
      a = Argument::tensor(0x7f0000200004 + 256 * i, DType::BF16);
      break;
    case 7:
      a = Argument::boolean(true);
      break;
    }
    k.manifest.params.push_back(p);
    k.args.push_back(a);
  }
  return k;
}

} // namespace kjit::rt::testing

#endif // KJIT_UNITTESTS_RUNTIME_BINDERKERNELS_H
