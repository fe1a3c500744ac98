//===- Dependencies.h - kernel keys and the globals they read ---*- C++ -*-===//
//
// The dependency analysis: for every function of a module, a content hash of
// its IR and of everything it transitively calls, the globals it (or a
// callee) reads with the values seen, and the cache key built from both.
// It mirrors DependenciesFinder / used_global_vals of Triton's runtime; the
// rationale is docs/Dependencies.md.
//
// The analysis is written against FunctionOpInterface, CallOpInterface and
// SymbolTable, so it also works on modules of func.func / func.call. Globals
// are `kjit.global` symbols, whatever op refers to them.
//
//===----------------------------------------------------------------------===//

#ifndef KJIT_ANALYSIS_DEPENDENCIES_H
#define KJIT_ANALYSIS_DEPENDENCIES_H

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SmallVector.h"

#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace kjit {

/// One global read by a function or its callees, with the value seen when
/// the function was first analysed.
struct GlobalUse {
  /// The global's symbol, as a path from the analysed root module
  /// (`@SCALE`, or `@inner::@SCALE` for a global of a nested module): the
  /// pair (symbol, owning module) that identifies it.
  mlir::SymbolRefAttr name;
  /// Its value. Attributes are uniqued bit for bit, so two values compare
  /// equal exactly when their bits and types do (a NaN equals itself).
  mlir::TypedAttr value;
};

/// The runtime's name of the global a symbol path denotes: "SCALE" for
/// @SCALE, "inner::SCALE" for @inner::@SCALE (kjit/Model/GlobalPath.h).
std::string getGlobalPathName(mlir::SymbolRefAttr name);

/// What the analysis knows about one function.
struct DependencyRecord {
  /// SHA-256 (hex) of the function's canonical IR, its start line, and the
  /// content hash and `noinline` flag of every function it calls. Depends on
  /// the IR only.
  std::string contentHash;
  /// SHA-256 (hex) of the content hash and the recorded global values: the
  /// function's cache key.
  std::string key;
  /// Every global the function and its transitive callees read, sorted by
  /// name.
  llvm::SmallVector<GlobalUse> globals;
};

/// A recorded global whose current value differs from the recorded one.
struct GlobalChange {
  mlir::SymbolRefAttr name;
  mlir::TypedAttr recorded;
  /// The current value, or null when the global no longer exists.
  mlir::TypedAttr current;
};

/// Computes dependency records for the functions under a root module.
///
/// Records are memoized per function for the lifetime of the analysis (use
/// it through MLIR's AnalysisManager, which drops it when a pass changes the
/// IR). A function may also carry a record persisted by an earlier analysis
/// (the attributes below, written by `persist`); it is reused as long as the
/// function's content hash still matches, which keeps the key and the global
/// values from the first analysis, as the reference runtime does. A caller
/// analysed afresh whose reads disagree with a callee's reused record is an
/// error that names the global, both values, the caller and the callee.
class DependencyAnalysis {
public:
  /// Attribute names of a persisted record.
  static constexpr llvm::StringLiteral kContentHashAttrName =
      "kjit.content_hash";
  static constexpr llvm::StringLiteral kKeyAttrName = "kjit.key";
  static constexpr llvm::StringLiteral kUsedGlobalsAttrName =
      "kjit.used_globals";

  /// `root` is the outermost symbol table (normally the top-level module);
  /// global names are recorded relative to it.
  explicit DependencyAnalysis(mlir::Operation *root);
  ~DependencyAnalysis();

  /// The record of `fn`, computed on first request. Fails, after emitting an
  /// error, when a global's values conflict.
  mlir::FailureOr<const DependencyRecord *>
  getRecord(mlir::FunctionOpInterface fn);

  /// The records of every function under the root, in walk order. Fails
  /// after emitting errors if any record cannot be computed.
  using FunctionRecords = llvm::SmallVector<
      std::pair<mlir::FunctionOpInterface, const DependencyRecord *>>;
  mlir::FailureOr<FunctionRecords> getAllRecords();

  /// `fn` and every function it names, transitively (callees and functions
  /// referenced as values), each as (symbol name, hex digest of its own IR
  /// alone), sorted by name: unlike the content hashes, a digest changes
  /// only with its own function, so comparing two lists says which function
  /// changed. Fails where getRecord(fn) fails.
  mlir::FailureOr<std::vector<std::pair<std::string, std::string>>>
  getSourceDigests(mlir::FunctionOpInterface fn);

  /// Number of functions whose IR has been hashed so far (each at most once
  /// per analysis).
  unsigned getNumFunctionsHashed() const;

  /// Writes `record` onto `fn` as the three attributes above.
  static void persist(mlir::FunctionOpInterface fn,
                      const DependencyRecord &record);

  /// Drops a persisted record from `fn`, if any.
  static void forget(mlir::FunctionOpInterface fn);

  /// The globals of `record` whose values differ from the current ones of
  /// the globals under `root`.
  static llvm::SmallVector<GlobalChange>
  findChangedGlobals(mlir::Operation *root, const DependencyRecord &record);

  /// The record persisted on `fn`, if it has a complete, well-formed one.
  static std::optional<DependencyRecord> readPersisted(mlir::Operation *fn);

private:
  struct Impl;
  std::unique_ptr<Impl> impl;
};

} // namespace kjit

#endif // KJIT_ANALYSIS_DEPENDENCIES_H
