//===- CudaTarget.h - the cuda compile target -------------------*- C++ -*-===//
//
// The `cuda` target: kernels as PTX text (artifact format "ptx") for an
// NVIDIA GPU, loaded by a CUDA backend with cuModuleLoadData. Its pipeline
// is kjit-strip-asserts (outside debug mode), kjit-bake-globals,
// canonicalization, kjit-convert-to-gpu and the upstream NVVM lowering and
// serialization; its options (arch, ptx, libdevice) are checked against
// LLVM 22's NVPTX before LLVM sees them. docs/CudaTarget.md explains the
// choices and the contract with the backend.
//
//===----------------------------------------------------------------------===//

#ifndef KJIT_TARGET_CUDA_CUDATARGET_H
#define KJIT_TARGET_CUDA_CUDATARGET_H

#include "kjit/Compiler/Target.h"

#include <optional>

namespace mlir {
class DialectRegistry;
} // namespace mlir

namespace kjit {

/// A new cuda target (the registry holds the one every compile uses).
std::unique_ptr<Target> createCudaTarget();

/// Registers the cuda target's passes: its lowering (Passes.td:
/// kjit-convert-to-gpu, kjit-finalize-nvvm) and kjit-serialize-to-ptx, the
/// last step of the cuda pipeline (gpu.module with an #nvvm.target ->
/// gpu.binary holding its PTX), so that kjit-opt and mlir-opt run them on
/// their own. registerKjitConversionPasses calls it.
void registerCudaTargetPasses();

/// The cuda target's needs: the ConvertToLLVM interfaces of arith, cf,
/// func, index, math, memref, nvvm, ub and vector, the NVVM target
/// attribute's model and the builtin, gpu, llvm and nvvm translations to
/// LLVM IR (this adds the nvvm dialect to the registry).
void registerKjitCudaSupport(mlir::DialectRegistry &registry);

/// One chip LLVM 22's NVPTX back end knows.
struct CudaChip {
  const char *name;
  /// The oldest PTX ISA version (80 for 8.0) that supports it.
  int minPtx;
};

/// The chips, sorted by name.
llvm::ArrayRef<CudaChip> getCudaChips();

/// The PTX ISA versions LLVM 22 can emit, ascending (the last is the
/// newest).
llvm::ArrayRef<int> getCudaPtxVersions();

/// What a cuda compile uses once its options are checked.
struct CudaConfig {
  std::string chip;
  int ptx = 0;
  /// Empty: no libdevice.
  std::string libdevice;
};

/// The chip, PTX version and libdevice `options` ask for, defaults filled
/// in (sm_90; PTX 8.0, or the chip's oldest if newer; no libdevice; a
/// `ptx_version` launch option wins over the backend's `ptx`), or an error
/// naming the bad value and what would be accepted.
llvm::Expected<CudaConfig> resolveCudaConfig(const TargetOptions &options);

} // namespace kjit

#endif // KJIT_TARGET_CUDA_CUDATARGET_H
