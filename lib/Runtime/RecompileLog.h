//===- RecompileLog.h - why did a kernel compile again? ---------*- C++ -*-===//
//
// KJIT_LOG=recompiles (RuntimeOptions::logRecompiles): every compile of a
// kernel that already has compiled specializations in this runtime (also
// ones of an earlier load of the same file) says in one line which parts
// differ from the nearest of them: a parameter's type or spec key, a
// constexpr, a launch option, a baked global's value, the device, the
// backend's fingerprint, or the source of a function the kernel uses.
// Triton users print keys by hand for this; PyTorch has
// TORCH_LOGS=recompiles.
//
//===----------------------------------------------------------------------===//

#ifndef KJIT_LIB_RUNTIME_RECOMPILELOG_H
#define KJIT_LIB_RUNTIME_RECOMPILELOG_H

#include "kjit/Model/Specialization.h"

#include "absl/container/flat_hash_map.h"

#include <cstdint>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

namespace kjit::rt {

/// One compiled specialization as (part, value) pairs: every launch option,
/// every parameter, every baked global, the device, the backend fingerprint
/// and each function of the kernel's source.
using SpecializationFacts = std::vector<std::pair<std::string, std::string>>;

/// What makes one compile of a kernel: `fingerprint` is the backend's
/// fingerprint bytes (shown as a short digest), `sourceDigests` (function,
/// digest of its own IR) from the dependency analysis.
struct CompileFacts {
  const SpecializationRecord *record = nullptr;
  const std::vector<std::pair<std::string, uint64_t>> *globals = nullptr;
  int32_t device = 0;
  std::string_view fingerprint;
  const std::vector<std::pair<std::string, std::string>> *sourceDigests =
      nullptr;
};

SpecializationFacts specializationFacts(const CompileFacts &facts);

/// "recompiling K: n: i32 -> i32 (D), num_warps 4 -> 8 (nearest of 2
/// compiled specializations)"; empty when `previous` is empty. Parts are
/// matched by name: one that only the nearest has shows as "... -> none".
std::string explainRecompile(std::string_view kernel,
                             const SpecializationFacts &now,
                             const std::vector<SpecializationFacts> &previous);

/// The compiles of a runtime, by kernel (its file and name), so that a
/// kernel of a reloaded file is compared with the earlier load's. Thread-
/// safe.
class RecompileHistory {
public:
  /// Says what differs from the nearest earlier compile of `kernel` in
  /// `file` (empty for the first) and remembers `facts`.
  std::string add(std::string_view file, std::string_view kernel,
                  SpecializationFacts facts);

private:
  std::mutex mutex_;
  absl::flat_hash_map<std::string, std::vector<SpecializationFacts>> byKernel_;
};

} // namespace kjit::rt

#endif // KJIT_LIB_RUNTIME_RECOMPILELOG_H
