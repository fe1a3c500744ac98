//===- GlobalPath.h - how a module global is named --------------*- C++ -*-===//
//
// The runtime names a module global by its module path and its symbol
// joined by "::": "SCALE" for a global of the top module, "inner::SCALE"
// for one of the nested module @inner (docs/Dependencies.md). MLIR spells
// the same global @inner::@SCALE. These are the rules for both spellings,
// shared by the compiler (which writes the names into the manifest and the
// messages of kjit-track-globals) and the runtime (which looks them up and
// reports them). Part of the model library: no LLVM or MLIR header may be
// included here.
//
//===----------------------------------------------------------------------===//

#ifndef KJIT_MODEL_GLOBALPATH_H
#define KJIT_MODEL_GLOBALPATH_H

#include <string>
#include <string_view>
#include <vector>

namespace kjit::rt {

/// What joins the module names and the symbol of a global's runtime name.
/// No symbol on the path may contain it (the verifier of kjit.global
/// rejects such names).
inline constexpr std::string_view kGlobalPathSeparator = "::";

/// Appends one symbol to a runtime global name: `name` becomes "a::b" from
/// "a" and "b", or "b" from "" and "b".
void appendGlobalPathPart(std::string &name, std::string_view part);

/// The symbols of a runtime global name, outermost module first:
/// {"inner", "SCALE"} for "inner::SCALE". Empty parts are kept.
std::vector<std::string_view> splitGlobalPath(std::string_view name);

/// A runtime global name split at its last separator.
struct GlobalPathLeaf {
  /// The module path ("inner", "a::b"); empty for a global of the top
  /// module.
  std::string_view module;
  /// The global's own symbol.
  std::string_view symbol;
};
GlobalPathLeaf splitGlobalPathLeaf(std::string_view name);

/// Whether `name` is a well-formed runtime global name: symbols joined by
/// "::", none empty and none holding a ':' of its own.
bool isGlobalPath(std::string_view name);

/// A module path ("a::b") as MLIR prints the symbol path: "@a::@b".
std::string spellModulePath(std::string_view module);

/// A global's runtime name ("SCALE", "inner::SCALE") as messages spell it:
/// "SCALE", "SCALE of module @inner" (the global of a nested module is
/// another global than the top module's of the same symbol).
std::string describeGlobal(std::string_view name);

} // namespace kjit::rt

#endif // KJIT_MODEL_GLOBALPATH_H
