//===- CompilerService.h - what the runtime asks the compiler ---*- C++ -*-===//
//
// The typed boundary between the runtime and the compiler library. The
// runtime owns this interface (it is the consumer); libkjit-compiler.so
// implements it and exports one factory, `kjit_compiler_create_service`,
// with every other symbol hidden. Everything that crosses is a model type
// (include/kjit/Model): no JSON, no MLIR, no parameter type as text.
//
// Not a stable ABI: the runtime and the compiler of one kjit build go
// together, and the factory refuses a runtime whose interface version
// differs (kCompilerServiceVersion). The stable ABI is include/kjit-c.
//
//===----------------------------------------------------------------------===//

#ifndef KJIT_RUNTIME_COMPILERSERVICE_H
#define KJIT_RUNTIME_COMPILERSERVICE_H

#include "kjit/Model/DType.h"
#include "kjit/Model/KernelManifest.h"
#include "kjit/Model/Specialization.h"

#include "absl/status/statusor.h"
#include "absl/types/span.h"

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace kjit::rt {

/// Bumped on every change to this header.
inline constexpr uint32_t kCompilerServiceVersion = 4;

/// A module global as the analysis found it.
struct GlobalInfo {
  /// The symbol, with enclosing named modules: "SCALE", "inner::SCALE".
  std::string name;
  DType type = DType::I32;
  /// The bit pattern of its value in `type` (zero-extended).
  uint64_t bits = 0;
};

/// One kernel as the runtime sees it without IR.
struct KernelAnalysis {
  KernelManifest manifest;
  /// Content of the kernel and its callees, its line, the globals' values.
  std::string dependencyKey;
  /// The globals it (or a callee) reads, by GlobalInfo::name.
  std::vector<std::string> usedGlobals;
  /// The kernel and every function it uses, each with the digest of its own
  /// IR, sorted by name: the recompile log's "source of @f" parts.
  std::vector<std::pair<std::string, std::string>> sourceDigests;
};

/// A module after one parse.
struct ModuleAnalysis {
  std::vector<KernelAnalysis> kernels;
  /// Kernels that failed verification, by name, with the message that says
  /// why; the module's other kernels stay usable.
  std::vector<std::pair<std::string, std::string>> invalidKernels;
  std::vector<GlobalInfo> globals;
  /// The parsed module as MLIR bytecode. Compiles read it back instead of
  /// parsing the text again (opaque to the runtime).
  std::string bytecode;
};

/// A global's value to bake into a compile.
struct GlobalValue {
  std::string_view name;
  uint64_t bits = 0;
};

/// One compile: a kernel of an analysed module, specialized by a record,
/// for a target whose artifact the chosen backend accepts.
struct CompileRequest {
  /// ModuleAnalysis::bytecode.
  std::string_view bytecode;
  /// Names the module in diagnostics.
  std::string_view sourceName;
  /// The specialization; `record->name` is the kernel.
  const SpecializationRecord *record = nullptr;
  /// Values of the globals the kernel reads; others keep the module's.
  absl::Span<const GlobalValue> globals;
  /// The compiler target (the backend's described target).
  std::string_view target;
  /// Artifact formats the backend accepts, most preferred first.
  absl::Span<const std::string> acceptedFormats;
  /// The device's architecture, as the backend describes it ("sm_90").
  std::string_view arch;
  /// The backend's compile options (describe's compile_options).
  absl::Span<const std::pair<std::string, std::string>> backendOptions;
};

/// What a compile produces, before the backend finalizes it.
struct CompiledArtifact {
  std::string format;
  std::string bytes;
  /// A JSON object (target, triple, cpu, ...), shown to compiled hooks.
  std::string metadataJson;
};

/// A compiler target: its name and the artifact format it produces.
struct TargetDescription {
  std::string name;
  std::string artifactFormat;
};

/// What a runtime adds to its compiler (kjit-run --load-pass-plugin,
/// --load-dialect-plugin, --extra-passes; docs/Runtime.md "MLIR pass
/// plugins"). Every field joins the artifact key (RuntimeOptions).
struct CompilerExtensions {
  /// Out-of-tree MLIR pass plugins (mlirGetPassPluginInfo), in order.
  std::vector<std::string> passPlugins;
  /// Out-of-tree MLIR dialect plugins (mlirGetDialectPluginInfo): their
  /// dialects are registered in every analysis and compile.
  std::vector<std::string> dialectPlugins;
  /// Pass pipeline elements ("count-kernel-ops,canonicalize", as inside
  /// builtin.module(...)) run on the specialized module of one kernel,
  /// before the target's lowering; empty: none.
  std::string extraPasses;
};

/// The compiler as the runtime uses it. Thread-safe: concurrent analyses and
/// compiles are isolated from one another.
///
/// Errors: InvalidArgument when the user's input is at fault (the message
/// carries `file:line:col` locations), FailedPrecondition when the request
/// does not fit the compiler (unknown target, no accepted format), Internal
/// for a fault of the compiler itself.
class CompilerService {
public:
  virtual ~CompilerService() = default;

  /// Parses and analyses a module: manifests, keys, globals, bytecode.
  virtual absl::StatusOr<ModuleAnalysis>
  analyze(std::string_view text, std::string_view sourceName) = 0;

  /// Specializes and lowers one kernel for a target.
  virtual absl::StatusOr<CompiledArtifact>
  compile(const CompileRequest &request) = 0;

  /// The registered targets.
  virtual std::vector<TargetDescription> targets() const = 0;

  /// Loads the plugins and checks the extra passes (an error names the
  /// plugin or the pass). Called once, before any analysis or compile; the
  /// plugins stay loaded for the life of the process, as in mlir-opt.
  virtual absl::Status extend(const CompilerExtensions &extensions) = 0;
};

} // namespace kjit::rt

/// The factory libkjit-compiler.so exports: a new service, or null with
/// `*error` set (static text) when `version` is not the compiler's
/// kCompilerServiceVersion. The caller deletes the service.
extern "C" {
using kjit_compiler_create_service_fn =
    kjit::rt::CompilerService *(*)(uint32_t version, const char **error);
}

/// The factory's symbol name.
inline constexpr const char *kCompilerServiceEntry =
    "kjit_compiler_create_service";

#endif // KJIT_RUNTIME_COMPILERSERVICE_H
