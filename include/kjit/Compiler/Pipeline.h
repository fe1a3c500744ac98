//===- Pipeline.h - the compile pipeline of one kernel ----------*- C++ -*-===//
//
// The one pipeline a launch's compile runs, also registered as
// `kjit-<target>-pipeline` so that kjit-opt replays it:
//
//   kjit-opt k.mlir --kjit-host-pipeline='kernel=add record=R.json'
//
// prints the LLVM-dialect module the runtime compiles for that launch (R.json
// is the record `kjit-run --warmup --record-out R.json` wrote; the runtime
// writes the module it lowered where KJIT_DUMP_LOWERED_IR says).
//
//   kjit-specialize (the record)  ->  kjit-keep-kernel  ->  the extra
//   passes (kjit-run --extra-passes, extra-passes=...) and a verification
//   of what they left (docs/Runtime.md, "Verification")  ->  the target's
//   buildPipeline (host: kjit-bake-globals, kjit-expand-masks,
//   kjit-strip-asserts unless debug, canonicalize, kjit-convert-host-to-llvm)
//
//===----------------------------------------------------------------------===//

#ifndef KJIT_COMPILER_PIPELINE_H
#define KJIT_COMPILER_PIPELINE_H

#include "kjit/Compiler/Target.h"

#include "llvm/Support/LogicalResult.h"

#include <memory>
#include <string>

namespace llvm {
class raw_ostream;
} // namespace llvm

namespace kjit {

namespace rt {
struct SpecializationRecord;
} // namespace rt

/// What the pipeline of one kernel's compile needs besides its target.
struct KernelPipelineOptions {
  /// The kernel to compile; the module's other kernels are erased. The
  /// record must be for it.
  std::string kernel;
  /// The specialization of the launch (shared by the pass and its clones).
  std::shared_ptr<const rt::SpecializationRecord> record;
  /// Usually getTargetOptions(*record), debug perhaps forced on.
  TargetOptions target;
  /// Pipeline elements, as inside builtin.module(...), run on the
  /// specialized module of the one kernel before the target lowers it: the
  /// point where a user's passes (from an MLIR pass plugin) see kernel IR
  /// with the specialization applied. Empty: none.
  std::string extraPasses;
};

/// Adds the whole compile of `options.kernel` for `target` to `pm`: what the
/// runtime's compile runs and what kjit-<target>-pipeline replays. Fails,
/// with MLIR's message on `errors`, when extraPasses does not parse (an
/// unknown pass, a bad option).
llvm::LogicalResult buildKernelPipeline(mlir::OpPassManager &pm,
                                        const Target &target,
                                        const KernelPipelineOptions &options,
                                        llvm::raw_ostream &errors);

/// The target options a record's launch options ask for (debug,
/// enable_fp_fusion).
TargetOptions getTargetOptions(const rt::SpecializationRecord &record);

/// The options of kjit-<target>-pipeline: the record read from
/// `recordPath` (JSON, as the runtime writes it), `kernel` defaulting to
/// the record's, debug on when `debug` or the record says so. An error
/// names the file and what is wrong with it.
llvm::Expected<KernelPipelineOptions>
readKernelPipelineOptions(llvm::StringRef kernel, llvm::StringRef recordPath,
                          bool debug);

/// Registers `kjit-<name>-pipeline` for every registered target, with the
/// options `kernel`, `record` and `debug`. Tools call it once.
void registerKernelPipelines();

} // namespace kjit

#endif // KJIT_COMPILER_PIPELINE_H
