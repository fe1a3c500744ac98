//===- DTypeIRTypesTest.cpp - the dtype table against MLIR's types --------===//
//
// Parses the MLIR element type of every dtype (kjit::rt::kernelIRTypeName)
// and checks the table's width, kind and mantissa against what MLIR and
// APFloat know about that type.
//
//===----------------------------------------------------------------------===//

#include "kjit/Model/DType.h"

#include "mlir/AsmParser/AsmParser.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/MLIRContext.h"

#include <gtest/gtest.h>

#include <set>
#include <string>

using kjit::rt::DType;
using kjit::rt::DTypeKind;

namespace {

TEST(DTypeIRTypes, EveryElementTypeAgreesWithMLIR) {
  mlir::MLIRContext context;
  std::set<std::string_view> seen;
  for (int i = 0; i < kjit::rt::kNumDTypes; ++i) {
    auto dtype = static_cast<DType>(i);
    std::string_view spelling = kjit::rt::kernelIRTypeName(dtype);
    SCOPED_TRACE(std::string(kjit::rt::canonicalName(dtype)));
    if (spelling.empty()) {
      // Only Triton's E4M3 with exponent bias 15 has no MLIR type.
      EXPECT_EQ(dtype, DType::FP8E4B15);
      continue;
    }
    EXPECT_TRUE(seen.insert(spelling).second) << spelling << " twice";
    mlir::Type type = mlir::parseType(
        llvm::StringRef(spelling.data(), spelling.size()), &context);
    ASSERT_TRUE(type) << spelling;
    EXPECT_EQ(type.getIntOrFloatBitWidth(), kjit::rt::bitWidth(dtype));
    if (auto floatType = mlir::dyn_cast<mlir::FloatType>(type)) {
      EXPECT_TRUE(kjit::rt::isFloat(dtype));
      // APFloat's precision counts the implicit leading bit.
      EXPECT_EQ(floatType.getFPMantissaWidth() - 1,
                kjit::rt::mantissaBits(dtype));
      continue;
    }
    auto intType = mlir::dyn_cast<mlir::IntegerType>(type);
    ASSERT_TRUE(intType) << spelling;
    // kjit spells signed integers and i1 signless, unsigned ones ui*.
    EXPECT_EQ(intType.isUnsigned(),
              kjit::rt::kindOf(dtype) == DTypeKind::UnsignedInt);
    EXPECT_EQ(intType.isSignless(), !intType.isUnsigned());
    EXPECT_EQ(intType.getWidth() == 1, kjit::rt::isBool(dtype));
    EXPECT_FALSE(kjit::rt::isFloat(dtype));
  }
}

} // namespace
