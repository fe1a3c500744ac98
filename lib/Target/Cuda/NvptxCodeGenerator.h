//===- NvptxCodeGenerator.h - a thread's NVPTX code generator ---*- C++ -*-===//
//
// The NVPTX target machine and the code generation passes that turn an
// optimized LLVM module into PTX, kept per thread between compiles: making
// them anew for each kernel was 12% of a later kernel's compile
// (docs/CudaTarget.md, "One code generator per thread").
//
//===----------------------------------------------------------------------===//

#ifndef KJIT_LIB_TARGET_CUDA_NVPTXCODEGENERATOR_H
#define KJIT_LIB_TARGET_CUDA_NVPTXCODEGENERATOR_H

#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <memory>
#include <string>

namespace llvm {
class Module;
class TargetMachine;
class raw_svector_ostream;
namespace legacy {
class PassManager;
} // namespace legacy
} // namespace llvm

namespace kjit {

class NvptxCodeGenerator {
public:
  /// This thread's generator for the triple, chip and features: the one of
  /// the thread's last compile if that was for the same three and may be
  /// used again (below), else a new one, which replaces it. Shared, so that
  /// a caller holding one never sees it destroyed.
  static llvm::Expected<std::shared_ptr<NvptxCodeGenerator>>
  forThread(llvm::StringRef triple, llvm::StringRef chip,
            llvm::StringRef features);

  ~NvptxCodeGenerator();

  /// The target machine, for the module's data layout and LLVM's IR
  /// pipeline (which may set its optimization level: generatePtx sets it
  /// back).
  llvm::TargetMachine &machine() const { return *machine_; }

  /// The module's PTX, with code generation at CodeGenOptLevel::Default.
  llvm::Expected<llvm::SmallVector<char, 0>> generatePtx(llvm::Module &module);

  /// A generator is made anew after this many modules, so that what NVPTX
  /// keeps per target machine between modules (its pool of unique
  /// strings) stays bounded in a long-lived process; and after a module
  /// with a call (generatePtx says why).
  static constexpr unsigned kMaxUses = 256;

private:
  NvptxCodeGenerator() = default;

  /// Whether code generation lowers a call in the module (a call of a
  /// function, not of an intrinsic).
  static bool makesCalls(const llvm::Module &module);

  std::string key_;
  std::unique_ptr<llvm::TargetMachine> machine_;
  /// The code generation passes write to `stream_`, over `ptx_`, which is
  /// cleared before each run: how `llc --compile-twice` runs one pass
  /// manager on two modules.
  llvm::SmallString<0> ptx_;
  std::unique_ptr<llvm::raw_svector_ostream> stream_;
  std::unique_ptr<llvm::legacy::PassManager> passes_;
  unsigned uses_ = 0;
};

} // namespace kjit

#endif // KJIT_LIB_TARGET_CUDA_NVPTXCODEGENERATOR_H
