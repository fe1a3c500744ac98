//===- DependenciesTest.cpp - the dependency analysis from C++ ------------===//
//
// What the lit tests cannot see: memoization counts, independence from the
// order in which a call cycle is entered, and the conflict between a
// persisted callee record and new values, driven through the C++ API the
// runtime uses.
//
//===----------------------------------------------------------------------===//

#include "kjit/Analysis/Dependencies.h"
#include "kjit/Compiler/Registration.h"
#include "kjit/Dialect/Kjit/IR/Kjit.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"

#include <gtest/gtest.h>

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

} // namespace
