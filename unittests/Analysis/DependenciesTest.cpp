//===- DependenciesTest.cpp - the dependency analysis from C++ ------------===//
//
// What the lit tests cannot see: memoization counts, independence from the
// order in which a call cycle is entered, the conflict between a persisted
// callee record and new values, and single edits of the IR that no source
// text isolates (a block argument's type alone, a forward reference),
// driven through the C++ API the runtime uses.
//
//===----------------------------------------------------------------------===//

#include "kjit/Analysis/Dependencies.h"
#include "kjit/Compiler/Registration.h"
#include "kjit/Dialect/Kjit/IR/Kjit.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"

#include <gtest/gtest.h>

#include <functional>
#include <map>
#include <set>
#include <string>

using namespace mlir;

namespace {

class DependenciesTest : public testing::Test {
protected:
  DependenciesTest() {
    DialectRegistry registry;
    kjit::registerKjitDialects(registry);
    context.appendDialectRegistry(registry);
    context.loadAllAvailableDialects();
  }

  OwningOpRef<ModuleOp> parse(StringRef text) {
    OwningOpRef<ModuleOp> module =
        parseSourceString<ModuleOp>(text, ParserConfig(&context));
    EXPECT_TRUE(module);
    return module;
  }

  static FunctionOpInterface lookup(ModuleOp module, StringRef name) {
    return cast<FunctionOpInterface>(module.lookupSymbol(name));
  }

  MLIRContext context;
};

// A diamond: @k calls @a and @b, both call @shared.
constexpr StringLiteral kDiamond = R"mlir(
kjit.global @G : i32 = 1
kjit.func @shared(%x: i32) -> i32 {
  %g = kjit.get_global @G : i32
  %r = arith.addi %x, %g : i32
  kjit.return %r : i32
}
kjit.func @a(%x: i32) -> i32 {
  %r = kjit.call @shared(%x) : (i32) -> i32
  kjit.return %r : i32
}
kjit.func @b(%x: i32) -> i32 {
  %r = kjit.call @shared(%x) : (i32) -> i32
  kjit.return %r : i32
}
kjit.kernel @k(%x: i32) {
  %a = kjit.call @a(%x) : (i32) -> i32
  %b = kjit.call @b(%x) : (i32) -> i32
  kjit.return
}
)mlir";

TEST_F(DependenciesTest, EachFunctionIsHashedOnce) {
  OwningOpRef<ModuleOp> module = parse(kDiamond);
  kjit::DependencyAnalysis analysis(*module);
  auto record = analysis.getRecord(lookup(*module, "k"));
  ASSERT_TRUE(succeeded(record));
  EXPECT_EQ(analysis.getNumFunctionsHashed(), 4u);
  // Later requests, for the kernel or its callees, are answered from memory.
  auto again = analysis.getRecord(lookup(*module, "k"));
  ASSERT_TRUE(succeeded(again));
  EXPECT_EQ(*again, *record);
  ASSERT_TRUE(succeeded(analysis.getRecord(lookup(*module, "shared"))));
  ASSERT_TRUE(succeeded(analysis.getAllRecords()));
  EXPECT_EQ(analysis.getNumFunctionsHashed(), 4u);
  ASSERT_EQ((*record)->globals.size(), 1u);
  EXPECT_EQ((*record)->globals[0].name.getLeafReference(), "G");
}

TEST_F(DependenciesTest, CycleKeysDoNotDependOnTheEntryPoint) {
  constexpr StringLiteral cycle = R"mlir(
kjit.func @ping(%x: i32) -> i32 {
  %r = kjit.call @pong(%x) : (i32) -> i32
  kjit.return %r : i32
}
kjit.func @pong(%x: i32) -> i32 {
  %y = arith.addi %x, %x : i32
  %r = kjit.call @ping(%y) : (i32) -> i32
  kjit.return %r : i32
}
)mlir";
  OwningOpRef<ModuleOp> module = parse(cycle);
  kjit::DependencyAnalysis fromPing(*module), fromPong(*module);
  auto pingFirst = fromPing.getRecord(lookup(*module, "ping"));
  auto pongSecond = fromPing.getRecord(lookup(*module, "pong"));
  auto pongFirst = fromPong.getRecord(lookup(*module, "pong"));
  auto pingSecond = fromPong.getRecord(lookup(*module, "ping"));
  ASSERT_TRUE(succeeded(pingFirst) && succeeded(pongSecond) &&
              succeeded(pongFirst) && succeeded(pingSecond));
  EXPECT_EQ((*pingFirst)->key, (*pingSecond)->key);
  EXPECT_EQ((*pongFirst)->key, (*pongSecond)->key);
  EXPECT_NE((*pingFirst)->key, (*pongFirst)->key);
}

TEST_F(DependenciesTest, PersistedCalleeRecordConflictsWithNewValues) {
  OwningOpRef<ModuleOp> module = parse(R"mlir(
kjit.global @G : i32 = 1
kjit.func @shared(%x: i32) -> i32 {
  %g = kjit.get_global @G : i32
  %r = arith.addi %x, %g : i32
  kjit.return %r : i32
}
kjit.kernel @k(%x: i32) {
  %g = kjit.get_global @G : i32
  %r = kjit.call @shared(%g) : (i32) -> i32
  kjit.return
}
)mlir");
  // First analysis: persist every record, as kjit-find-dependencies does.
  {
    kjit::DependencyAnalysis first(*module);
    auto records = first.getAllRecords();
    ASSERT_TRUE(succeeded(records));
    for (auto [fn, record] : *records)
      kjit::DependencyAnalysis::persist(fn, *record);
  }
  // The host changes @G, and the kernel is edited so that its own record is
  // stale while the callee's still matches its content.
  auto global = module->lookupSymbol<kjit::GlobalOp>("G");
  global.setValueAttr(IntegerAttr::get(IntegerType::get(&context, 32), 2));
  FunctionOpInterface kernel = lookup(*module, "k");
  kernel->setAttr("edited", UnitAttr::get(&context));

  std::string message;
  ScopedDiagnosticHandler handler(&context, [&](Diagnostic &diag) {
    if (diag.getSeverity() == DiagnosticSeverity::Error)
      message = diag.str();
    return success();
  });
  kjit::DependencyAnalysis second(*module);
  EXPECT_TRUE(failed(second.getRecord(kernel)));
  EXPECT_EQ(message,
            "global @G has value 2 : i32 when analysing '@k', but its callee "
            "'@shared' was analysed with value 1 : i32; a function's record "
            "keeps the values of its first analysis, so re-analyse '@shared' "
            "or restore the value");
  // A failed record stays failed rather than being recomputed half-way.
  EXPECT_TRUE(failed(second.getRecord(kernel)));

  // Dropping the callee's record (what on-change=recompile does) resolves
  // it: both are analysed with the new value.
  kjit::DependencyAnalysis::forget(lookup(*module, "shared"));
  kjit::DependencyAnalysis third(*module);
  auto record = third.getRecord(kernel);
  ASSERT_TRUE(succeeded(record));
  EXPECT_EQ((*record)->globals[0].value,
            IntegerAttr::get(IntegerType::get(&context, 32), 2));
}

TEST_F(DependenciesTest, ChangedAndMissingGlobalsAreFound) {
  OwningOpRef<ModuleOp> module = parse(kDiamond);
  kjit::DependencyAnalysis analysis(*module);
  auto record = analysis.getRecord(lookup(*module, "k"));
  ASSERT_TRUE(succeeded(record));
  EXPECT_TRUE(
      kjit::DependencyAnalysis::findChangedGlobals(*module, **record).empty());

  Type i32 = IntegerType::get(&context, 32);
  kjit::DependencyRecord edited = **record;
  edited.globals.push_back(
      {SymbolRefAttr::get(&context, "MISSING"), IntegerAttr::get(i32, 5)});
  module->lookupSymbol<kjit::GlobalOp>("G").setValueAttr(
      IntegerAttr::get(i32, 7));
  auto changes = kjit::DependencyAnalysis::findChangedGlobals(*module, edited);
  ASSERT_EQ(changes.size(), 2u);
  EXPECT_EQ(changes[0].recorded, IntegerAttr::get(i32, 1));
  EXPECT_EQ(changes[0].current, IntegerAttr::get(i32, 7));
  EXPECT_EQ(changes[1].name.getLeafReference(), "MISSING");
  EXPECT_FALSE(changes[1].current);
}

TEST_F(DependenciesTest, MalformedPersistedRecordsAreIgnored) {
  OwningOpRef<ModuleOp> module = parse(R"mlir(
kjit.kernel @k() attributes {kjit.content_hash = "x", kjit.key = 3 : i32,
                             kjit.used_globals = [1]} {
  kjit.return
}
)mlir");
  FunctionOpInterface kernel = lookup(*module, "k");
  EXPECT_FALSE(kjit::DependencyAnalysis::readPersisted(kernel).has_value());
  kjit::DependencyAnalysis analysis(*module);
  auto record = analysis.getRecord(kernel);
  ASSERT_TRUE(succeeded(record));
  EXPECT_EQ((*record)->key.size(), 64u);
}

TEST_F(DependenciesTest, NanGlobalsCompareBitForBit) {
  OwningOpRef<ModuleOp> module = parse(R"mlir(
kjit.global @N : f32 = 0x7FC00000
kjit.kernel @k() {
  %n = kjit.get_global @N : f32
  kjit.return
}
)mlir");
  kjit::DependencyAnalysis analysis(*module);
  auto record = analysis.getRecord(lookup(*module, "k"));
  ASSERT_TRUE(succeeded(record));
  // The same NaN is not a change; another NaN payload is.
  EXPECT_TRUE(
      kjit::DependencyAnalysis::findChangedGlobals(*module, **record).empty());
  auto global = module->lookupSymbol<kjit::GlobalOp>("N");
  Type f32 = Float32Type::get(&context);
  global.setValueAttr(FloatAttr::get(
      f32, APFloat(APFloat::IEEEsingle(), APInt(32, 0x7FC00001))));
  EXPECT_EQ(
      kjit::DependencyAnalysis::findChangedGlobals(*module, **record).size(),
      1u);
}

// Functions for the edits below: @f has a region, two successors and a block
// argument outside the entry block; @g uses, in ^bb1, values that ^bb2
// defines (a forward reference in walk order).
constexpr StringLiteral kEdits = R"mlir(
kjit.func @f(%a: i32, %b: i32, %c: i1) -> i32 {
  %one = arith.constant 1 : i32
  %s = arith.subi %a, %b : i32
  %t = arith.trunci %s : i32 to i16
  %r = scf.if %c -> (i32) {
    %u = arith.addi %s, %one : i32
    scf.yield %u : i32
  } else {
    scf.yield %s : i32
  }
  %m = arith.muli %r, %r : i32
  cf.cond_br %c, ^bb1, ^bb2(%m : i32)
^bb1:
  kjit.return %one : i32
^bb2(%x: i32):
  kjit.return %x : i32
}
kjit.func @g(%a: i32, %b: i32) -> i32 {
  cf.br ^bb2
^bb1:
  %u = arith.subi %x, %y : i32
  kjit.return %u : i32
^bb2:
  %x = arith.addi %a, %b : i32
  %y = arith.muli %a, %b : i32
  cf.br ^bb1
}
)mlir";

/// The `n`th op named `name` in `fn`, in walk order.
Operation *findOp(FunctionOpInterface fn, StringRef name, unsigned n = 0) {
  Operation *found = nullptr;
  fn->walk<WalkOrder::PreOrder>([&](Operation *op) {
    if (op->getName().getStringRef() != name)
      return WalkResult::advance();
    if (n-- == 0) {
      found = op;
      return WalkResult::interrupt();
    }
    return WalkResult::advance();
  });
  EXPECT_TRUE(found) << name.str();
  return found;
}

TEST_F(DependenciesTest, EveryStructuralEditChangesTheContentHash) {
  // Each edit touches one thing (some leave the IR invalid, which the hash
  // does not care about); each must give a content hash of its own.
  using Edit = std::function<void(FunctionOpInterface)>;
  Type i64 = IntegerType::get(&context, 64);
  std::vector<std::pair<std::string, Edit>> edits = {
      {"f: none", [](FunctionOpInterface) {}},
      {"f: property value",
       [&](FunctionOpInterface fn) {
         findOp(fn, "arith.constant")
             ->setAttr("value",
                       IntegerAttr::get(IntegerType::get(&context, 32), 2));
       }},
      {"f: discardable attribute",
       [&](FunctionOpInterface fn) {
         findOp(fn, "arith.subi")
             ->setAttr("kjit.test", UnitAttr::get(&context));
       }},
      {"f: discardable attribute value",
       [&](FunctionOpInterface fn) {
         findOp(fn, "arith.subi")
             ->setAttr("kjit.test", StringAttr::get(&context, "x"));
       }},
      {"f: operand order",
       [](FunctionOpInterface fn) {
         Operation *sub = findOp(fn, "arith.subi");
         Value lhs = sub->getOperand(0), rhs = sub->getOperand(1);
         sub->setOperand(0, rhs);
         sub->setOperand(1, lhs);
       }},
      {"f: result type",
       [&](FunctionOpInterface fn) {
         findOp(fn, "arith.trunci")->getResult(0).setType(i64);
       }},
      {"f: block argument type",
       [&](FunctionOpInterface fn) {
         // ^bb2's argument: not part of the signature.
         Block &last = fn.getFunctionBody().back();
         last.getArgument(0).setType(i64);
       }},
      {"f: successor order",
       [](FunctionOpInterface fn) {
         Operation *br = findOp(fn, "cf.cond_br");
         Block *first = br->getSuccessor(0), *second = br->getSuccessor(1);
         br->setSuccessor(second, 0);
         br->setSuccessor(first, 1);
       }},
      {"f: operand segments",
       [&](FunctionOpInterface fn) {
         // The operand passed to ^bb2 is now passed to ^bb1: same operands,
         // other groups (a property that is not an attribute in storage).
         findOp(fn, "cf.cond_br")
             ->setAttr("operandSegmentSizes",
                       DenseI32ArrayAttr::get(&context, {1, 1, 0}));
       }},
      {"f: into a region",
       [](FunctionOpInterface fn) {
         // The truncation moves into the then-region of scf.if.
         Operation *trunc = findOp(fn, "arith.trunci");
         Operation *add = findOp(fn, "arith.addi");
         trunc->moveBefore(add);
       }},
      {"f: other region",
       [](FunctionOpInterface fn) {
         // The addition moves from the then-region to the else-region.
         Operation *add = findOp(fn, "arith.addi");
         Operation *elseYield = findOp(fn, "scf.yield", 1);
         add->moveBefore(elseYield);
       }},
      {"f: out of a region",
       [](FunctionOpInterface fn) {
         // The multiplication after scf.if becomes the last op of its
         // else-region: only the end of the region tells them apart.
         findOp(fn, "arith.muli")->moveAfter(findOp(fn, "scf.yield", 1));
       }},
      {"f: op order",
       [](FunctionOpInterface fn) {
         findOp(fn, "arith.trunci")->moveBefore(findOp(fn, "arith.subi"));
       }},
      {"f: block order",
       [](FunctionOpInterface fn) {
         Region &body = fn.getFunctionBody();
         body.back().moveBefore(&*std::next(body.begin()));
       }},
      {"g: none", [](FunctionOpInterface) {}},
      {"g: forward operand order",
       [](FunctionOpInterface fn) {
         Operation *sub = findOp(fn, "arith.subi");
         Value lhs = sub->getOperand(0), rhs = sub->getOperand(1);
         sub->setOperand(0, rhs);
         sub->setOperand(1, lhs);
       }},
      {"g: forward definition order",
       [](FunctionOpInterface fn) {
         findOp(fn, "arith.muli")->moveBefore(findOp(fn, "arith.addi"));
       }},
  };
  std::set<std::string> hashes;
  for (auto &[name, edit] : edits) {
    OwningOpRef<ModuleOp> module = parse(kEdits);
    FunctionOpInterface fn = lookup(*module, name.substr(0, 1));
    edit(fn);
    kjit::DependencyAnalysis analysis(*module);
    auto record = analysis.getRecord(fn);
    ASSERT_TRUE(succeeded(record)) << name;
    EXPECT_TRUE(hashes.insert((*record)->contentHash).second)
        << name << " has the content hash of another edit";
  }
}

TEST_F(DependenciesTest, LocationsBelowTheFirstLineDoNotChangeTheHash) {
  auto contentHash = [&](bool relocate) {
    OwningOpRef<ModuleOp> module = parse(kEdits);
    FunctionOpInterface fn = lookup(*module, "f");
    if (relocate) {
      auto elsewhere = FileLineColLoc::get(&context, "elsewhere.py", 99, 1);
      fn->walk([&](Operation *op) {
        if (op != fn)
          op->setLoc(elsewhere);
      });
      for (Block &block : fn.getFunctionBody())
        for (BlockArgument arg : block.getArguments())
          arg.setLoc(elsewhere);
    }
    kjit::DependencyAnalysis analysis(*module);
    auto record = analysis.getRecord(fn);
    EXPECT_TRUE(succeeded(record));
    return succeeded(record) ? (*record)->contentHash : std::string();
  };
  EXPECT_EQ(contentHash(false), contentHash(true));
}

TEST_F(DependenciesTest, KeysDoNotDependOnTheAnalysisOrderOrTheContext) {
  // Types and attributes are printed once per analysis and memoized by
  // their uniqued pointers: which function is hashed first, and where the
  // context put its objects, must not show in the keys.
  auto keys = [&](MLIRContext &ctx, bool reverse) {
    OwningOpRef<ModuleOp> module =
        parseSourceString<ModuleOp>(kEdits, ParserConfig(&ctx));
    EXPECT_TRUE(module);
    kjit::DependencyAnalysis analysis(*module);
    SmallVector<StringRef> names = {"f", "g"};
    if (reverse)
      std::reverse(names.begin(), names.end());
    std::map<std::string, std::string> result;
    for (StringRef name : names) {
      auto record = analysis.getRecord(lookup(*module, name));
      EXPECT_TRUE(succeeded(record));
      if (succeeded(record))
        result[name.str()] = (*record)->key;
    }
    return result;
  };
  MLIRContext other;
  DialectRegistry registry;
  kjit::registerKjitDialects(registry);
  other.appendDialectRegistry(registry);
  other.loadAllAvailableDialects();
  auto forward = keys(context, false);
  EXPECT_EQ(forward, keys(context, true));
  EXPECT_EQ(forward, keys(other, true));
  EXPECT_NE(forward["f"], forward["g"]);
}

TEST_F(DependenciesTest, UnregisteredOpsAreHashedByTheirContents) {
  context.allowUnregisteredDialects();
  auto contentHash = [&](StringRef op) {
    std::string text =
        "kjit.func @f() {\n  " + op.str() + "\n  kjit.return\n}\n";
    OwningOpRef<ModuleOp> module = parse(text);
    kjit::DependencyAnalysis analysis(*module);
    auto record = analysis.getRecord(lookup(*module, "f"));
    EXPECT_TRUE(succeeded(record));
    return succeeded(record) ? (*record)->contentHash : std::string();
  };
  std::string base =
      contentHash(R"("test.op"() <{p = 1 : i32}> {d = 1} : () -> ())");
  EXPECT_EQ(base,
            contentHash(R"("test.op"() <{p = 1 : i32}> {d = 1} : () -> ())"));
  EXPECT_NE(base,
            contentHash(R"("test.op"() <{p = 2 : i32}> {d = 1} : () -> ())"));
  EXPECT_NE(base,
            contentHash(R"("test.op"() <{p = 1 : i32}> {d = 2} : () -> ())"));
  EXPECT_NE(base,
            contentHash(R"("test.op"() {p = 1 : i32, d = 1} : () -> ())"));
  EXPECT_NE(base, contentHash(
                      R"("test.other"() <{p = 1 : i32}> {d = 1} : () -> ())"));
}

} // namespace
