//===- RecompileLog.h - why did a kernel compile again? ----------*- C++
//-*-===//
//
// KJIT_LOG=recompiles (RuntimeOptions::logRecompiles): every compile of a
// kernel that already has compiled specializations says in one line which
// parts differ from the nearest of them: a parameter's type or spec key, a
// constexpr, a launch option, a baked global's value, the device (whose
// backend fingerprint differs). Triton users print keys by hand for this;
// PyTorch has TORCH_LOGS=recompiles.
//
//===----------------------------------------------------------------------===//

#ifndef KJIT_LIB_RUNTIME_RECOMPILELOG_H
#define KJIT_LIB_RUNTIME_RECOMPILELOG_H

#include "kjit/Model/Specialization.h"

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace kjit::rt {

/// One compiled specialization as (part, value) pairs in a fixed order:
/// every launch option, every parameter, every baked global, the device.
using SpecializationFacts = std::vector<std::pair<std::string, std::string>>;

SpecializationFacts specializationFacts(
    const SpecializationRecord &record,
    const std::vector<std::pair<std::string, uint64_t>> &globals,
    int32_t device);

/// "recompiling K: n: i32 -> i32 (D), num_warps 4 -> 8 (nearest of 2
/// compiled specializations)"; empty when `previous` is empty.
std::string explainRecompile(std::string_view kernel,
                             const SpecializationFacts &now,
                             const std::vector<SpecializationFacts> &previous);

} // namespace kjit::rt

#endif // KJIT_LIB_RUNTIME_RECOMPILELOG_H
