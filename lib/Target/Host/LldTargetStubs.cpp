//===- LldTargetStubs.cpp - lld's other targets, for the static module ----===//
//
// lld's ELF driver initializes every LLVM target it was built with
// (InitializeAllTargets and friends, for LTO of bitcode inputs). The bundle's
// static compiler module links only the X86 and NVPTX targets
// (cmake/StaticLLVM.cmake), so it defines the other targets' initializers
// here as doing nothing: the host link never gives lld bitcode, so no other
// target is ever looked up. The same holds for Polly, which LLVM's LTO
// backend registers with its pass builder and Debian ships only as a plugin.
// Only the static module compiles this file (the host target's
// STATIC_MODULE_SOURCES, lib/Target/Host/CMakeLists.txt); the dev module's
// libLLVM.so has every target.
//
//===----------------------------------------------------------------------===//

#include <cstdint>

namespace llvm {
class PassBuilder;
} // namespace llvm

#define KJIT_NO_TARGET(T)                                                      \
  extern "C" void LLVMInitialize##T##TargetInfo() {}                           \
  extern "C" void LLVMInitialize##T##Target() {}                               \
  extern "C" void LLVMInitialize##T##TargetMC() {}                             \
  extern "C" void LLVMInitialize##T##AsmPrinter() {}                           \
  extern "C" void LLVMInitialize##T##AsmParser() {}

KJIT_NO_TARGET(AArch64)
KJIT_NO_TARGET(AMDGPU)
KJIT_NO_TARGET(ARM)
KJIT_NO_TARGET(AVR)
KJIT_NO_TARGET(BPF)
KJIT_NO_TARGET(Hexagon)
KJIT_NO_TARGET(Lanai)
KJIT_NO_TARGET(LoongArch)
KJIT_NO_TARGET(M68k)
KJIT_NO_TARGET(MSP430)
KJIT_NO_TARGET(Mips)
KJIT_NO_TARGET(PowerPC)
KJIT_NO_TARGET(RISCV)
KJIT_NO_TARGET(SPIRV)
KJIT_NO_TARGET(Sparc)
KJIT_NO_TARGET(SystemZ)
KJIT_NO_TARGET(VE)
KJIT_NO_TARGET(WebAssembly)
KJIT_NO_TARGET(XCore)
KJIT_NO_TARGET(Xtensa)

/// llvm::PassPluginLibraryInfo's layout (llvm/Passes/PassPlugin.h, which
/// Debian's llvm-22-dev does not install); only LTO calls it.
struct PollyPluginInfo {
  uint32_t apiVersion;
  const char *pluginName;
  const char *pluginVersion;
  void (*registerPassBuilderCallbacks)(llvm::PassBuilder &);
};

PollyPluginInfo getPollyPluginInfo() {
  return {1, "Polly", "none", [](llvm::PassBuilder &) {}};
}
