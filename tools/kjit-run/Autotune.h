//===- Autotune.h - kjit-run's --autotune file ------------------*- C++ -*-===//
//
// Reads the configurations and key of `kjit-run --autotune FILE.json`
// (docs/KjitRun.md) into the runtime's AutotuneSpec.
//
//===----------------------------------------------------------------------===//

#ifndef KJIT_TOOLS_KJIT_RUN_AUTOTUNE_H
#define KJIT_TOOLS_KJIT_RUN_AUTOTUNE_H

#include "kjit/Runtime/Autotuner.h"

#include "absl/status/statusor.h"

#include <string>

namespace kjit::run {

/// `{"configs": [{"NAME": value, ...}, ...], "key": ["NAME", ...]}`: each
/// configuration's constexpr values and launch options (integers, floats,
/// booleans), and the parameters whose values key the choice. Errors name
/// the file and the member: "--autotune t.json: configs[1].SLOTS: a value
/// is an integer, a float or a boolean, not a string".
absl::StatusOr<rt::AutotuneSpec> readAutotuneFile(const std::string &path);

/// One line on what a tuning found: "autotune: key [n=8; o=i32]: 3
/// configurations, 1 skipped, 44 trial launches; chose config 2 (C=3,
/// num_warps=1): 2.1 us (host clock)".
std::string describeOutcome(const rt::AutotuneSpec &spec,
                            const rt::TuningOutcome &outcome);

} // namespace kjit::run

#endif // KJIT_TOOLS_KJIT_RUN_AUTOTUNE_H
