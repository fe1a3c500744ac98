//===- KernelBuilderTest.cpp - build kjit IR through the C++ API ----------===//
//
// Builds a kernel that reads a global and calls a noinline device function,
// verifies it, prints it, parses the text back and checks the round trip;
// then checks that the verifier's messages reach a C++ caller.
//
//===----------------------------------------------------------------------===//

#include "kjit/Compiler/Registration.h"
#include "kjit/Dialect/Kjit/IR/Kjit.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Parser/Parser.h"

#include <gtest/gtest.h>

#include <string>

using namespace mlir;

namespace {

class KernelBuilderTest : public testing::Test {
protected:
  KernelBuilderTest() {
    DialectRegistry registry;
    kjit::registerKjitDialects(registry);
    context.appendDialectRegistry(registry);
    context.loadAllAvailableDialects();
  }

  static std::string print(Operation *op) {
    std::string text;
    llvm::raw_string_ostream os(text);
    op->print(os);
    return text;
  }

  /// Builds:
  ///   kjit.global @SCALE : f32 = 2.0
  ///   kjit.func noinline @scale(%v: f32) -> f32   (v * SCALE)
  ///   kjit.kernel @scale_copy(%x {kjit.const}, %y, %n, %BLOCK {constexpr})
  ///     y[pid * BLOCK + tid] = scale(x[pid * BLOCK + tid]) where in bounds
  OwningOpRef<ModuleOp> buildScaleCopy() {
    OpBuilder b(&context);
    Location loc = b.getUnknownLoc();
    OwningOpRef<ModuleOp> module = ModuleOp::create(loc);
    b.setInsertionPointToEnd(module->getBody());
    Type f32 = b.getF32Type();
    Type i32 = b.getI32Type();
    auto ptr = kjit::PointerType::get(&context, f32);

    kjit::GlobalOp::create(b, loc, "SCALE", f32, b.getF32FloatAttr(2.0f));

    auto scale =
        kjit::FuncOp::create(b, loc, "scale", b.getFunctionType({f32}, {f32}),
                             /*noinline=*/true);
    Block *fnEntry = scale.addEntryBlock();
    b.setInsertionPointToStart(fnEntry);
    Value factor = kjit::GetGlobalOp::create(
        b, loc, f32, SymbolRefAttr::get(b.getContext(), "SCALE"));
    Value scaled =
        arith::MulFOp::create(b, loc, fnEntry->getArgument(0), factor);
    kjit::ReturnOp::create(b, loc, ValueRange{scaled});

    b.setInsertionPointToEnd(module->getBody());
    NamedAttribute constFlag(b.getStringAttr("kjit.const"), b.getUnitAttr());
    NamedAttribute constexprFlag(b.getStringAttr("kjit.constexpr"),
                                 b.getUnitAttr());
    NamedAttribute blockDefault(b.getStringAttr("kjit.default"),
                                b.getI32IntegerAttr(1024));
    SmallVector<DictionaryAttr> argAttrs = {
        b.getDictionaryAttr(constFlag), b.getDictionaryAttr({}),
        b.getDictionaryAttr({}),
        b.getDictionaryAttr({constexprFlag, blockDefault})};
    auto kernel = kjit::KernelOp::create(
        b, loc, "scale_copy", b.getFunctionType({ptr, ptr, i32, i32}, {}),
        ArrayRef<StringRef>{"x", "y", "n", "BLOCK"}, argAttrs);
    Block *entry = kernel.addEntryBlock();
    b.setInsertionPointToStart(entry);
    Value x = entry->getArgument(0), y = entry->getArgument(1);
    Value n = entry->getArgument(2), block = entry->getArgument(3);
    Value pid = kjit::ProgramIdOp::create(b, loc, kjit::Axis::x);
    Value tid = gpu::ThreadIdOp::create(b, loc, gpu::Dimension::x);
    Value tid32 = arith::IndexCastOp::create(b, loc, i32, tid);
    Value base = arith::MulIOp::create(b, loc, pid, block);
    Value offset = arith::AddIOp::create(b, loc, base, tid32);
    Value inBounds =
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, offset, n);
    Value loaded = kjit::LoadOp::create(b, loc, f32, x, offset, inBounds,
                                        /*other=*/Value());
    auto call = kjit::CallOp::create(b, loc, scale, ValueRange{loaded});
    kjit::StoreOp::create(b, loc, call.getResult(0), y, offset, inBounds);
    kjit::ReturnOp::create(b, loc);
    return module;
  }

  /// Verifies `module`, which must fail, and returns the error's text.
  std::string verifyError(ModuleOp module) {
    std::string message;
    ScopedDiagnosticHandler handler(&context, [&](Diagnostic &diag) {
      message = diag.str();
      return success();
    });
    EXPECT_TRUE(failed(verify(module)));
    return message;
  }

  MLIRContext context;
};

TEST_F(KernelBuilderTest, BuildsVerifiesAndRoundTrips) {
  OwningOpRef<ModuleOp> module = buildScaleCopy();
  ASSERT_TRUE(succeeded(verify(*module)));

  std::string text = print(*module);
  EXPECT_NE(text.find("kjit.global @SCALE : f32 = 2.000000e+00"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("kjit.func noinline @scale(%arg0: f32) -> f32"),
            std::string::npos)
      << text;
  // Parameters print under their names, with their attributes.
  EXPECT_NE(text.find("kjit.kernel @scale_copy(%x: !kjit.ptr<f32> "
                      "{kjit.const}, %y: !kjit.ptr<f32>, %n: i32, %BLOCK: "
                      "i32 {kjit.constexpr, kjit.default = 1024 : i32})"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("kjit.load %x["), std::string::npos) << text;
  EXPECT_NE(text.find("kjit.call @scale("), std::string::npos) << text;

  OwningOpRef<ModuleOp> reparsed =
      parseSourceString<ModuleOp>(text, ParserConfig(&context));
  ASSERT_TRUE(reparsed);
  EXPECT_EQ(print(*reparsed), text);

  auto kernel = reparsed->lookupSymbol<kjit::KernelOp>("scale_copy");
  ASSERT_TRUE(kernel);
  EXPECT_EQ(kernel.getParamName(3), "BLOCK");
  EXPECT_TRUE(kernel.hasParamFlag(3, kjit::KjitDialect::kConstexprAttrName));
  EXPECT_TRUE(kernel.hasParamFlag(0, kjit::KjitDialect::kConstAttrName));
  EXPECT_FALSE(kernel.hasParamFlag(1, kjit::KjitDialect::kConstAttrName));
}

TEST_F(KernelBuilderTest, VerifierMessagesReachTheCaller) {
  OwningOpRef<ModuleOp> module = buildScaleCopy();
  auto kernel = module->lookupSymbol<kjit::KernelOp>("scale_copy");
  // Mark the pointer `y` constexpr: the verifier must name the parameter.
  kernel.setArgAttr(1, kjit::KjitDialect::kConstexprAttrName,
                    UnitAttr::get(&context));
  EXPECT_EQ(verifyError(*module),
            "'kjit.kernel' op constexpr parameter 'y' cannot have "
            "pointer type '!kjit.ptr<f32>'; a constexpr is a "
            "compile-time value");
}

TEST_F(KernelBuilderTest, StoreThroughConstPointerIsRejected) {
  OwningOpRef<ModuleOp> module = buildScaleCopy();
  auto kernel = module->lookupSymbol<kjit::KernelOp>("scale_copy");
  kernel.setArgAttr(1, kjit::KjitDialect::kConstAttrName,
                    UnitAttr::get(&context));
  EXPECT_EQ(verifyError(*module),
            "'kjit.store' op stores through parameter 'y', which is "
            "marked 'kjit.const'");
}

/// The kernel checks how its body reads a '!kjit.any' parameter by walking
/// the body, not the parameter's uses: an operation a rewrite has built but
/// not inserted yet uses it too, and is no part of the kernel.
TEST_F(KernelBuilderTest, AnyParameterRulesReadOnlyTheBody) {
  OpBuilder b(&context);
  Location loc = b.getUnknownLoc();
  OwningOpRef<ModuleOp> module = ModuleOp::create(loc);
  b.setInsertionPointToEnd(module->getBody());
  auto any = kjit::AnyValueType::get(&context);
  auto kernel = kjit::KernelOp::create(
      b, loc, "k", b.getFunctionType({any}, {}), ArrayRef<StringRef>{"a"});
  Block *entry = kernel.addEntryBlock();
  b.setInsertionPointToStart(entry);
  kjit::CastOp::create(b, loc, b.getI32Type(), entry->getArgument(0));
  kjit::ReturnOp::create(b, loc);

  OperationState state(loc, "kjit.print");
  state.addOperands(entry->getArgument(0));
  state.addAttribute("prefix", b.getStringAttr("a"));
  Operation *detached = Operation::create(state);
  EXPECT_TRUE(succeeded(verify(*module)));

  b.setInsertionPoint(entry->getTerminator());
  b.insert(detached);
  EXPECT_EQ(verifyError(*module),
            "'kjit.print' op uses parameter 'a' of type '!kjit.any' "
            "directly; read it through 'kjit.cast' to a concrete type");
}

/// An arith.select that MLIR 22's own verifier crashes on (a vector
/// condition, a scalar result) is reported by the kernel's verifier, which
/// runs first; one with a null operand (what a broken pass could leave) is
/// left to the verifier's own "null operand" error, not read.
TEST_F(KernelBuilderTest, SelectsUpstreamVerifiersCrashOnAreReported) {
  OpBuilder b(&context);
  Location loc = b.getUnknownLoc();
  Type i32 = b.getI32Type();
  auto buildSelect = [&](bool nullCondition) {
    OwningOpRef<ModuleOp> module = ModuleOp::create(loc);
    b.setInsertionPointToEnd(module->getBody());
    auto ptr = kjit::PointerType::get(&context, i32);
    SmallVector<DictionaryAttr> argAttrs(3, b.getDictionaryAttr({}));
    auto kernel = kjit::KernelOp::create(
        b, loc, "k", b.getFunctionType({ptr, i32, b.getI1Type()}, {}),
        ArrayRef<StringRef>{"out", "a", "flag"}, argAttrs);
    Block *entry = kernel.addEntryBlock();
    b.setInsertionPointToStart(entry);
    Value condition = vector::BroadcastOp::create(
        b, loc, VectorType::get({2}, b.getI1Type()), entry->getArgument(2));
    OperationState state(loc, "arith.select");
    state.addOperands(
        {condition, entry->getArgument(1), entry->getArgument(1)});
    state.addTypes(i32);
    Operation *select = b.create(state);
    if (nullCondition)
      select->getOpOperand(0).drop(); // as erasing its producer leaves it
    kjit::ReturnOp::create(b, loc);
    return module;
  };
  OwningOpRef<ModuleOp> bad = buildSelect(/*nullCondition=*/false);
  {
    ScopedDiagnosticHandler quiet(&context, [](Diagnostic &) {});
    EXPECT_TRUE(failed(kjit::verifyUpstreamVerifierHazards(*bad)));
  }
  EXPECT_EQ(verifyError(*bad),
            "'arith.select' op has a condition of type 'vector<2xi1>' but a "
            "result of type 'i32': a vector condition selects element by "
            "element, so the values and the result must be vectors of its "
            "shape");
  OwningOpRef<ModuleOp> null = buildSelect(/*nullCondition=*/true);
  EXPECT_TRUE(succeeded(kjit::verifyUpstreamVerifierHazards(*null)));
  EXPECT_EQ(verifyError(*null), "null operand found");
}

} // namespace
