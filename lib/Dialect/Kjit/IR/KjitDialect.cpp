//===- KjitDialect.cpp - kjit dialect, types and parameter attributes -----===//
//
// Dialect registration, the !kjit.ptr / !kjit.any types, the
// #kjit.signature attribute and the verifier of the `kjit.*` parameter
// attributes.
//
//===----------------------------------------------------------------------===//

#include "kjit/Dialect/Kjit/IR/Kjit.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSwitch.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace kjit;

#include "kjit/Dialect/Kjit/IR/KjitEnums.cpp.inc"
#include "kjit/Dialect/Kjit/IR/KjitOpsDialect.cpp.inc"

#define GET_TYPEDEF_CLASSES
#include "kjit/Dialect/Kjit/IR/KjitOpsTypes.cpp.inc"

#define GET_ATTRDEF_CLASSES
#include "kjit/Dialect/Kjit/IR/KjitAttrs.cpp.inc"

/// The constants kjit's folders produce (the zero of a masked-off load)
/// are arith constants.
Operation *KjitDialect::materializeConstant(OpBuilder &builder, Attribute value,
                                            Type type, Location loc) {
  return arith::ConstantOp::materialize(builder, value, type, loc);
}

void KjitDialect::initialize() {
  registerTypes();
  registerAttributes();
  addOperations<
#define GET_OP_LIST
#include "kjit/Dialect/Kjit/IR/KjitOps.cpp.inc"
      >();
}

void KjitDialect::registerTypes() {
  addTypes<
#define GET_TYPEDEF_LIST
#include "kjit/Dialect/Kjit/IR/KjitOpsTypes.cpp.inc"
      >();
}

void KjitDialect::registerAttributes() {
  addAttributes<
#define GET_ATTRDEF_LIST
#include "kjit/Dialect/Kjit/IR/KjitAttrs.cpp.inc"
      >();
}

//===----------------------------------------------------------------------===//
// Types
//===----------------------------------------------------------------------===//

bool kjit::isValidPointeeType(Type type) {
  if (auto intType = dyn_cast<IntegerType>(type))
    return !intType.isSigned() &&
           llvm::is_contained(ArrayRef<unsigned>{1, 8, 16, 32, 64},
                              intType.getWidth());
  return isa<FloatType>(type);
}

Type kjit::getValueTypeForPointee(Type elementType) {
  if (auto intType = dyn_cast<IntegerType>(elementType))
    if (intType.isUnsigned())
      return IntegerType::get(intType.getContext(), intType.getWidth());
  return elementType;
}

bool kjit::isScalarType(Type type) {
  if (type.isSignlessInteger())
    return llvm::is_contained(ArrayRef<unsigned>{1, 8, 16, 32, 64},
                              type.getIntOrFloatBitWidth());
  return type.isF16() || type.isBF16() || type.isF32() || type.isF64();
}

//===----------------------------------------------------------------------===//
// #kjit.signature
//===----------------------------------------------------------------------===//

/// #kjit.signature<[const] TYPE>.
Attribute SignatureTypeAttr::parse(AsmParser &parser, Type) {
  if (parser.parseLess())
    return {};
  bool isConst = succeeded(parser.parseOptionalKeyword("const"));
  SMLoc loc = parser.getCurrentLocation();
  Type type;
  if (parser.parseType(type) || parser.parseGreater())
    return {};
  return parser.getChecked<SignatureTypeAttr>(loc, parser.getContext(), type,
                                              isConst);
}

void SignatureTypeAttr::print(AsmPrinter &printer) const {
  printer << '<';
  if (getIsConst())
    printer << "const ";
  printer << getType() << '>';
}

/// A kjit pointer (read-only or not) or a scalar the runtime binds, signless
/// or unsigned (the launch's u8..u64).
LogicalResult
SignatureTypeAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                          Type type, bool isConst) {
  if (isa<PointerType>(type))
    return success();
  bool scalar =
      isScalarType(type) ||
      (type.isUnsignedInteger() && type.getIntOrFloatBitWidth() >= 8 &&
       isScalarType(getValueTypeForPointee(type)));
  if (!scalar)
    return emitError() << "a signature type is a !kjit.ptr or a scalar "
                          "(i1, i8..i64, ui8..ui64, f16, bf16, f32, f64), "
                          "not "
                       << type;
  if (isConst)
    return emitError() << "only a pointer signature type is const, not "
                       << type;
  return success();
}

bool kjit::isValidParamName(StringRef name) {
  if (name.empty() || !(llvm::isAlpha(name.front()) || name.front() == '_'))
    return false;
  return llvm::all_of(name,
                      [](char c) { return llvm::isAlnum(c) || c == '_'; });
}

LogicalResult kjit::verifyUpstreamVerifierHazards(Operation *root) {
  WalkResult result = root->walk([&](Operation *op) {
    // Matched by name and read generically: the op is not verified yet,
    // so its typed accessors need not hold.
    if (op->getName().getStringRef() != "arith.select" ||
        op->getNumOperands() != 3 || op->getNumResults() != 1)
      return WalkResult::advance();
    // (A null operand is the verifier's own error, found after this.)
    Value conditionValue = op->getOperand(0);
    if (!conditionValue)
      return WalkResult::advance();
    Type condition = conditionValue.getType();
    Type result = op->getResult(0).getType();
    if (!isa<ShapedType>(condition) || isa<ShapedType>(result))
      return WalkResult::advance();
    op->emitOpError() << "has a condition of type " << condition
                      << " but a result of type " << result
                      << ": a vector condition selects element by element, "
                         "so the values and the result must be vectors of "
                         "its shape";
    return WalkResult::interrupt();
  });
  return failure(result.wasInterrupted());
}

LogicalResult
kjit::verifyUpstreamVerifierHazardsOutsideKjitFunctions(Operation *module) {
  for (Region &region : module->getRegions())
    for (Block &block : region)
      for (Operation &op : block)
        if (!isa<KernelOp, FuncOp>(op) &&
            failed(verifyUpstreamVerifierHazards(&op)))
          return failure();
  return success();
}

LogicalResult PointerType::verify(function_ref<InFlightDiagnostic()> emitError,
                                  Type elementType) {
  if (!isValidPointeeType(elementType))
    return emitError() << "'!kjit.ptr' element type must be i1, i8, i16, "
                          "i32, i64, their unsigned forms or a float type, "
                          "not "
                       << elementType;
  return success();
}

unsigned PointerType::getElementByteWidth() const {
  unsigned bits = getElementType().getIntOrFloatBitWidth();
  return bits < 8 ? 1 : bits / 8;
}

//===----------------------------------------------------------------------===//
// Parameter attributes
//===----------------------------------------------------------------------===//

/// Checks the form of one `kjit.*` attribute on a function argument. The
/// rules that relate an attribute to the parameter's type or to other
/// parameters live in KernelOp::verify, where the parameter's name is known.
LogicalResult KjitDialect::verifyRegionArgAttribute(Operation *op,
                                                    unsigned regionIndex,
                                                    unsigned argIndex,
                                                    NamedAttribute attribute) {
  StringRef name = attribute.getName().getValue();
  bool isUnitFlag = llvm::StringSwitch<bool>(name)
                        .Cases({kConstexprAttrName, kDoNotSpecializeAttrName,
                                kDoNotSpecializeOnAlignmentAttrName,
                                kConstAttrName, kUnsignedAttrName},
                               true)
                        .Default(false);
  if (!isUnitFlag && name != kDefaultAttrName &&
      name != kDivisibilityAttrName && name != kSignatureTypeAttrName &&
      name != kSpecAttrsAttrName)
    return op->emitOpError()
           << "unknown parameter attribute '" << name << "' on parameter #"
           << argIndex << "; kjit knows " << kConstexprAttrName << ", "
           << kDoNotSpecializeAttrName << ", "
           << kDoNotSpecializeOnAlignmentAttrName << ", " << kConstAttrName
           << ", " << kUnsignedAttrName << ", " << kDefaultAttrName << ", "
           << kDivisibilityAttrName << ", " << kSignatureTypeAttrName << " and "
           << kSpecAttrsAttrName;
  if (!isa<KernelOp>(op))
    return op->emitOpError()
           << "'" << name << "' applies to kernel parameters only";
  if (isUnitFlag && !isa<UnitAttr>(attribute.getValue()))
    return op->emitOpError() << "'" << name << "' on parameter #" << argIndex
                             << " is a flag and takes no value";
  if (name == kSignatureTypeAttrName &&
      !isa<SignatureTypeAttr>(attribute.getValue()))
    return op->emitOpError()
           << "'" << name << "' on parameter #" << argIndex
           << " must be a signature type (#kjit.signature<const "
              "!kjit.ptr<f32>>), not "
           << attribute.getValue();
  if (name == kSpecAttrsAttrName) {
    auto names = dyn_cast<ArrayAttr>(attribute.getValue());
    bool wellFormed = names && !names.empty();
    for (Attribute entry : names ? names.getValue() : ArrayRef<Attribute>()) {
      auto text = dyn_cast<StringAttr>(entry);
      wellFormed &= text && !text.empty();
    }
    if (!wellFormed)
      return op->emitOpError()
             << "'" << name << "' on parameter #" << argIndex
             << " must be a non-empty array of attribute names "
                "([\"pointer_range_32\"]), not "
             << attribute.getValue();
  }
  if (name == kDivisibilityAttrName) {
    auto divisor = dyn_cast<IntegerAttr>(attribute.getValue());
    if (!divisor || divisor.getValue().isNonPositive() ||
        !divisor.getValue().isPowerOf2())
      return op->emitOpError() << "'" << name << "' on parameter #" << argIndex
                               << " must be a positive power of two, not "
                               << attribute.getValue();
    Type type = cast<KernelOp>(op).getArgumentTypes()[argIndex];
    if (!isa<PointerType, IntegerType>(type))
      return op->emitOpError()
             << "'" << name << "' applies to pointer and integer parameters; "
             << "parameter #" << argIndex << " has type " << type;
  }
  return success();
}
