//===- NvptxCodeGenerator.cpp - a thread's NVPTX code generator -----------===//

#include "NvptxCodeGenerator.h"

#include "llvm/IR/IntrinsicInst.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/IR/Module.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/TargetParser/Triple.h"

using namespace kjit;

NvptxCodeGenerator::~NvptxCodeGenerator() {
  // The passes write through the stream, which writes to ptx_.
  passes_.reset();
  stream_.reset();
}

llvm::Expected<std::shared_ptr<NvptxCodeGenerator>>
NvptxCodeGenerator::forThread(llvm::StringRef triple, llvm::StringRef chip,
                              llvm::StringRef features) {
  // One per thread: a target machine and its passes are not safe to share
  // between threads that compile at once.
  thread_local std::shared_ptr<NvptxCodeGenerator> last;
  std::string key = (triple + "|" + chip + "|" + features).str();
  if (last && last->key_ == key && last->uses_ < kMaxUses)
    return last;
  std::string error;
  llvm::Triple parsed(triple);
  const llvm::Target *target =
      llvm::TargetRegistry::lookupTarget(parsed, error);
  if (!target)
    return llvm::createStringError("no LLVM target for " + triple + ": " +
                                   error);
  std::shared_ptr<NvptxCodeGenerator> made(new NvptxCodeGenerator());
  made->key_ = std::move(key);
  made->machine_.reset(
      target->createTargetMachine(parsed, chip, features, {}, {}));
  if (!made->machine_)
    return llvm::createStringError("no LLVM target machine for " + triple +
                                   " (" + chip + ")");
  last = made;
  return made;
}

llvm::Expected<llvm::SmallVector<char, 0>>
NvptxCodeGenerator::generatePtx(llvm::Module &module) {
  // Code generation at Default, not at the IR pipeline's level: at
  // Aggressive NVPTX's pass configuration runs GVN (with memory dependence
  // analysis) in two places where Default runs EarlyCSE, and nothing else
  // differs. Coming after O3's own GVN, those two found nothing on kjit's
  // kernels (the same PTX for every test artifact) and cost 4% of a later
  // kernel's compile (docs/CudaTarget.md, "Code generation at Default").
  // Set before the passes are made (their configuration reads it) and
  // before each run (some passes read it as they run).
  machine_->setOptLevel(llvm::CodeGenOptLevel::Default);
  if (!passes_) {
    stream_ = std::make_unique<llvm::raw_svector_ostream>(ptx_);
    passes_ = std::make_unique<llvm::legacy::PassManager>();
    if (machine_->addPassesToEmitFile(*passes_, *stream_, nullptr,
                                      llvm::CodeGenFileType::AssemblyFile)) {
      passes_.reset();
      return llvm::createStringError(
          "the NVPTX target machine cannot emit assembly");
    }
  }
  // NVPTX numbers the calls it lowers with a counter of the target machine
  // that no module resets ("// callseq N" in the PTX, and the names of
  // indirect calls' prototypes). A module with a call is this generator's
  // last, so that every module gets the numbers a fresh target machine
  // would give it: a kernel's PTX never depends on what its thread
  // compiled before.
  if (makesCalls(module))
    uses_ = kMaxUses;
  else
    ++uses_;
  ptx_.clear();
  passes_->run(module);
  return llvm::SmallVector<char, 0>(ptx_.begin(), ptx_.end());
}

bool NvptxCodeGenerator::makesCalls(const llvm::Module &module) {
  for (const llvm::Function &function : module)
    for (const llvm::BasicBlock &block : function)
      for (const llvm::Instruction &instruction : block)
        if (const auto *call = llvm::dyn_cast<llvm::CallBase>(&instruction);
            call && !llvm::isa<llvm::IntrinsicInst>(call))
          return true;
  return false;
}
