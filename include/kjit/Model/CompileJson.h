//===- CompileJson.h - the compile_json that hooks receive ------*- C++ -*-===//
//
// The JSON document the cache and compiled hooks see as `compile_json`,
// written by one function for the runtime (launch, warmup, preload) and the
// hook passes of kjit-opt alike, so that a plugin reads one schema
// (docs/Specialization.md, "What hooks receive"; CompileJsonTest pins it):
//
//   {"schema": "kjit.compile/1", "kernel": "add", "key": "<cache key>",
//    "target": "host", "device": 0, "warmup": false,
//    "signature": {"x": "*fp32", "n": "i32"},
//    "record": <the specialization record (toJson)> | null}
//
// `record` is null where no specialization is known (hook passes over IR
// that kjit-specialize did not specialize from a record). Part of the model
// library: no LLVM or MLIR header here.
//
//===----------------------------------------------------------------------===//

#ifndef KJIT_MODEL_COMPILEJSON_H
#define KJIT_MODEL_COMPILEJSON_H

#include "kjit/Model/Specialization.h"

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace kjit::rt {

/// The schema name and version of compile_json.
inline constexpr std::string_view kCompileJsonSchema = "kjit.compile/1";

/// What one compile is, for the hooks.
struct CompileDescription {
  std::string_view kernel;
  std::string_view key;
  std::string_view target;
  int32_t device = 0;
  bool isWarmup = false;
  /// (name, signature type) of every non-constexpr parameter, in order.
  std::vector<std::pair<std::string, std::string>> signature;
  /// The specialization, when there is one; its signature is used then.
  const SpecializationRecord *record = nullptr;
};

/// The compile_json document of `description`.
std::string compileJson(const CompileDescription &description);

} // namespace kjit::rt

#endif // KJIT_MODEL_COMPILEJSON_H
