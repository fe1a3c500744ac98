//===- RuntimeImpl.h - internals shared by Module and Kernel ----*- C++ -*-===//

#ifndef KJIT_LIB_RUNTIME_RUNTIMEIMPL_H
#define KJIT_LIB_RUNTIME_RUNTIMEIMPL_H

#include "kjit/Runtime/CompilerService.h"
#include "kjit/Runtime/Runtime.h"

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"

#include <atomic>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

namespace kjit::rt {

/// A module global: its type and the bit pattern of its current value.
/// Values compare bit for bit.
struct GlobalSlot {
  std::string name;
  DType type = DType::I32;
  uint64_t bits = 0;
};

struct Module::Impl {
  Runtime *runtime = nullptr;
  /// The module as the compiler parsed it (MLIR bytecode, opaque here).
  /// Empty when the module came from a manifest in the disk cache: the
  /// first compile parses `text` then (ensureBytecode).
  std::string bytecode;
  std::string text;
  std::once_flag bytecodeOnce;
  absl::Status bytecodeStatus;
  /// The key of the module's manifest in the disk cache (empty: none).
  std::string manifestKey;
  /// For a module made from a manifest entry, until its first compile:
  /// the analysis it was made from, which ensureBytecode compares with a
  /// fresh one, and whether the entry came from the fleet cache.
  std::optional<ModuleAnalysis> cachedAnalysis;
  bool manifestFromRemote = false;
  /// Fills `bytecode` (once) when it is empty.
  absl::Status ensureBytecode();
  std::string sourceName;
  std::vector<GlobalSlot> globals;
  absl::flat_hash_map<std::string, size_t> globalIndex;
  /// The index of the global called `name` (its runtime name: "SCALE",
  /// "inner::SCALE"), or an error that says which part of the name is
  /// wrong and lists the globals. Call with globalsMutex held.
  absl::StatusOr<size_t> findGlobal(std::string_view name) const;
  /// Bumped whenever a global's value changes: the launch-time check is one
  /// atomic load when nothing changed.
  std::atomic<uint64_t> globalsVersion{0};
  mutable std::mutex globalsMutex;
  std::vector<std::unique_ptr<Kernel>> kernels;
  /// Kernels that cannot be used (they failed verification or their
  /// manifest is invalid), by name, with why: Module::kernel says so, and
  /// the module's other kernels are unaffected.
  std::vector<std::pair<std::string, std::string>> invalidKernels;
};

/// Builds a Kernel of `module` from the compiler's analysis.
absl::StatusOr<std::unique_ptr<Kernel>> makeKernel(Module::Impl *module,
                                                   KernelAnalysis analysis);

/// A module's analysis without its bytecode, as a warm-start manifest's
/// metadata (JSON), and back; reading checks every member and fails with
/// DataLoss ("manifest entry: ...") on what a kjit could not have written.
/// The entry holds the name of the file the writer analysed; the messages
/// read back name `sourceName`, the file this process loaded, instead (the
/// key leaves the path out, so another checkout's file may have written
/// it).
std::string analysisToJson(const ModuleAnalysis &analysis,
                           std::string_view sourceName);
absl::StatusOr<ModuleAnalysis> analysisFromJson(std::string_view text,
                                                std::string_view sourceName);

/// The bits of `value` as a global of type `type`, or an error naming the
/// global.
absl::StatusOr<uint64_t> globalBits(std::string_view name, DType type,
                                    const Argument &value);

/// A global's value for messages: "0.5", "2.0", "-3", "True".
std::string formatGlobalValue(DType type, uint64_t bits);

} // namespace kjit::rt

#endif // KJIT_LIB_RUNTIME_RUNTIMEIMPL_H
